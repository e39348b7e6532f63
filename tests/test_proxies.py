"""Proxies against real proxies on loopback (tests/loopback_proxies.py): every provider's traffic
through the proxy configured for it, the order of the settings and the environment, NO_PROXY,
trust_env, socks5 and socks5h, proxy logins that work and never leak, a dead proxy, the missing
socks extra, and the page reader's fetches through each way a proxy applies to them."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import FakeClock, key_env, make_client
from loopback_proxies import HttpProxy, Socks5Proxy
from websearch import WebSearch, render
from websearch._core._settings import Settings
from websearch._http._proxies import Proxies, Proxy
from websearch._http._transport import Transport
from websearch.errors import ConfigError, ConfigWarning, NetworkUnreachable, ProviderConnectionError
from websearch.providers import PROVIDERS, HttpRequest
from websearch.state import MemoryStore
from websearch.testing import FAKES, FakeDuckDuckGo, FakeResolver, FakeSite, Reply

KEY = "sk-proxytest-5e1d9c3a7b"
USER = "alice"
PASSWORD = "pr0xy-Secret-4471"
#: Port 1 (tcpmux): reserved, nothing listens there; a connection to it is refused.
DEAD = "127.0.0.1:1"
FAKE_HOST = "fake.test"  # a name only the proxies know: the client never looks it up
SCHEMES = {"http": HttpProxy, "socks5h": Socks5Proxy}


def write_settings(config_dir: Path, text: str) -> None:
    (config_dir / "settings.toml").write_text(text, encoding="utf-8")


def named(env: dict[str, str], host: str = FAKE_HOST) -> dict[str, str]:
    """`env` with every fake's base URL on `host` instead of 127.0.0.1."""
    return {k: v.replace("127.0.0.1", host) if k.endswith("_BASE_URL") else v for k, v in env.items()}


@pytest.fixture
def http_proxy() -> Iterator[HttpProxy]:
    with HttpProxy(names={FAKE_HOST: "127.0.0.1", "site.test": "127.0.0.1"}) as proxy:
        yield proxy


@pytest.fixture
def socks_proxy() -> Iterator[Socks5Proxy]:
    with Socks5Proxy(names={FAKE_HOST: "127.0.0.1", "site.test": "127.0.0.1"}) as proxy:
        yield proxy


# -- every provider ----------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", list(SCHEMES))
@pytest.mark.parametrize("provider", sorted(PROVIDERS))
async def test_every_provider_goes_through_the_proxy_configured_for_it(
    provider: str, scheme: str, config_dir: Path
) -> None:
    """`[proxy] <id>` wins over `[http] proxy` and the environment (both dead here): whatever the
    provider sends reaches its fake through its own proxy, named as the client wrote it."""
    with SCHEMES[scheme](names={FAKE_HOST: "127.0.0.1"}) as proxy, FAKES[provider]() as fake:
        write_settings(config_dir, f'[http]\nproxy = "http://{DEAD}"\n\n[proxy]\n{provider} = "{proxy.url(scheme)}"\n')
        env = {**key_env(provider, config_dir, KEY), **named(fake.env), "HTTP_PROXY": f"http://{DEAD}"}
        async with make_client(env=env, clock=FakeClock(), providers=[provider], timeout=5) as ws:
            response = await ws.asearch("proxied search", provider=provider)
        assert fake.requests, f"{provider} sent nothing: {response.error}"
        assert proxy.passed, "nothing went through the proxy"
        assert {(p.host, p.port) for p in proxy.passed} == {(FAKE_HOST, fake.port)}
        if scheme == "http":  # absolute-form requests: one through the proxy for each the fake saw
            assert [p.how for p in proxy.passed] == [r.method for r in fake.requests]
        else:  # connections, pooled: never more than the requests
            assert {p.address_kind for p in proxy.passed} == {"name"}  # socks5h: the proxy resolved it
            assert len(proxy.passed) <= len(fake.requests)


# -- the order of the settings and the environment ---------------------------------------------


async def test_http_proxy_carries_every_provider_without_its_own(
    config_dir: Path, http_proxy: HttpProxy, socks_proxy: Socks5Proxy, ddg: FakeDuckDuckGo
) -> None:
    write_settings(config_dir, f'[http]\nproxy = "{http_proxy.url()}"\n')
    env = {"WEBSEARCH_CONFIG_DIR": str(config_dir), **named(ddg.env), "ALL_PROXY": socks_proxy.url()}
    async with make_client(env=env, clock=FakeClock(), providers=["duckduckgo"]) as ws:
        assert (await ws.asearch("q")).ok
    assert http_proxy.passed and not socks_proxy.passed


@pytest.mark.parametrize("variable", ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"])
async def test_the_environment_proxy_is_used_and_no_proxy_holds(
    config_dir: Path, http_proxy: HttpProxy, ddg: FakeDuckDuckGo, variable: str
) -> None:
    base = {"WEBSEARCH_CONFIG_DIR": str(config_dir), **ddg.env, variable: http_proxy.url()}
    async with make_client(env=base, clock=FakeClock(), providers=["duckduckgo"]) as ws:
        assert (await ws.asearch("via the proxy")).ok
    assert len(http_proxy.passed) == len(ddg.requests) == 1
    for no_proxy in ({"NO_PROXY": "127.0.0.1"}, {"no_proxy": "localhost,127.0.0.1"}, {"NO_PROXY": "*"}):
        async with make_client(env={**base, **no_proxy}, clock=FakeClock(), providers=["duckduckgo"]) as ws:
            assert (await ws.asearch(f"direct {no_proxy}")).ok
    assert len(http_proxy.passed) == 1 and len(ddg.requests) == 4


async def test_no_proxy_leaves_a_configured_proxy_alone(
    config_dir: Path, http_proxy: HttpProxy, ddg: FakeDuckDuckGo
) -> None:
    """The documented choice: NO_PROXY exempts hosts from the environment's proxies only."""
    write_settings(config_dir, f'[proxy]\nduckduckgo = "{http_proxy.url()}"\n')
    env = {"WEBSEARCH_CONFIG_DIR": str(config_dir), **ddg.env, "NO_PROXY": "127.0.0.1"}
    async with make_client(env=env, clock=FakeClock(), providers=["duckduckgo"]) as ws:
        assert (await ws.asearch("q")).ok
    assert len(http_proxy.passed) == 1


async def test_trust_env_false_ignores_the_environment(config_dir: Path, ddg: FakeDuckDuckGo) -> None:
    write_settings(config_dir, "[http]\ntrust_env = false\n")
    env = {
        "WEBSEARCH_CONFIG_DIR": str(config_dir),
        **ddg.env,
        **{name: f"http://{DEAD}" for name in ("HTTP_PROXY", "https_proxy", "ALL_PROXY")},
    }
    async with make_client(env=env, clock=FakeClock(), providers=["duckduckgo"]) as ws:
        assert (await ws.asearch("direct")).ok
    assert len(ddg.requests) == 1


# -- socks5 and socks5h ------------------------------------------------------------------------


async def test_socks5h_sends_the_name_and_socks5_an_address(
    config_dir: Path, socks_proxy: Socks5Proxy, ddg: FakeDuckDuckGo
) -> None:
    env = {"WEBSEARCH_CONFIG_DIR": str(config_dir), **named(ddg.env), "ALL_PROXY": socks_proxy.url("socks5h")}
    async with make_client(env=env, clock=FakeClock(), providers=["duckduckgo"]) as ws:
        assert (await ws.asearch("by name")).ok
    env = {**env, **named(ddg.env, "localhost"), "ALL_PROXY": socks_proxy.url("socks5")}
    async with make_client(env=env, clock=FakeClock(), providers=["duckduckgo"]) as ws:
        await ws.asearch("by address")  # localhost may resolve to ::1, where no fake listens
    (by_name, by_address) = socks_proxy.passed
    assert (by_name.host, by_name.address_kind) == (FAKE_HOST, "name")
    assert by_address.address_kind in ("ipv4", "ipv6") and by_address.host in ("127.0.0.1", "::1")


# -- proxy logins ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["http", "socks5h"])
async def test_a_proxy_login_is_used_and_never_shown(
    kind: str, config_dir: Path, ddg: FakeDuckDuckGo, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    proxy_type = HttpProxy if kind == "http" else Socks5Proxy
    with proxy_type(user=USER, password=PASSWORD, names={FAKE_HOST: "127.0.0.1"}) as proxy:
        good = proxy.url(kind, user=USER, password=PASSWORD.replace("-", "%2D"))  # percent-encoded is decoded
        write_settings(config_dir, f'[proxy]\nduckduckgo = "{good}"\n')
        env = {"WEBSEARCH_CONFIG_DIR": str(config_dir), **named(ddg.env)}
        async with make_client(env=env, clock=FakeClock(), providers=["duckduckgo"]) as ws:
            assert (await ws.asearch("logged in")).ok
        assert [p.user for p in proxy.passed] == [USER]
        wrong = "Wr0ng-" + PASSWORD
        write_settings(config_dir, f'[proxy]\nduckduckgo = "{proxy.url(kind, user=USER, password=wrong)}"\n')
        async with make_client(env=env, clock=FakeClock(), providers=["duckduckgo"]) as ws:
            failed = await ws.asearch("refused")
            shown = [repr(ws), repr(ws._proxies), repr(ws.settings)]
    assert proxy.refused == 1 and not failed.ok and failed.error is not None
    assert [a.error_kind for a in failed.attempts] == ["connection"]  # the proxy's refusal blames no provider
    assert f"the proxy {kind}://127.0.0.1:{proxy.port}" in failed.error
    out = "\n".join([*shown, failed.error, repr(failed), render(failed, "json"), render(failed, "blocks"), caplog.text])
    out += "\n".join(repr(a) for a in failed.attempts)
    assert PASSWORD not in out and wrong not in out and "Wr0ng" not in out


@pytest.mark.parametrize("scheme", ["http", "socks5", "socks5h"])
async def test_a_dead_proxy_is_a_typed_error_naming_it_without_its_login(config_dir: Path, scheme: str) -> None:
    url = f"{scheme}://{USER}:{PASSWORD}@{DEAD}"
    transport = Transport(timeout=5, proxies=Proxies({"duckduckgo": Proxy.parse(url, "proxy.duckduckgo")}))
    try:
        with pytest.raises(NetworkUnreachable) as caught:
            await transport.send("duckduckgo", HttpRequest("GET", f"http://{FAKE_HOST}/html/"))
    finally:
        await transport.aclose()
    text = str(caught.value) + repr(caught.value)
    assert f"proxy {scheme}://{DEAD}" in text or f"proxy {DEAD}" in text, text
    assert PASSWORD not in text and USER not in text
    write_settings(config_dir, f'[http]\nproxy = "{url}"\n')
    env = {"WEBSEARCH_CONFIG_DIR": str(config_dir), "WEBSEARCH_DUCKDUCKGO_BASE_URL": f"http://{FAKE_HOST}"}
    async with make_client(env=env, clock=FakeClock(), providers=["duckduckgo"]) as ws:
        response = await ws.asearch("q")
    (attempt,) = response.attempts
    assert attempt.error_kind == "connection" and attempt.error is not None and "127.0.0.1:1" in attempt.error
    assert PASSWORD not in render(response, "json")


def test_proxy_logins_stay_out_of_reprs_and_cache_keys(config_dir: Path) -> None:
    url = f"socks5h://{USER}:{PASSWORD}@127.0.0.1:1080"
    proxy = Proxy.parse(url, "proxy.brave")
    assert proxy.shown == "socks5h://127.0.0.1:1080" and str(proxy) == proxy.shown
    assert PASSWORD not in repr(proxy) + repr(Proxies({"brave": proxy}, proxy))
    bare = Settings({}, {}).answer_print()
    for key in ("proxy.brave", "proxy.fetch", "http.proxy", "fetch.proxy"):
        assert Settings({key: url}, {}).answer_print() == bare, key


@pytest.mark.parametrize(
    "text", ["ftp://127.0.0.1:21", "socks4://127.0.0.1", f"http://{USER}:{PASSWORD}@127.0.0.1:port", "http://"]
)
def test_a_malformed_proxy_is_a_config_error_without_its_login(config_dir: Path, text: str) -> None:
    write_settings(config_dir, f'[http]\nproxy = "{text}"\n')
    with pytest.raises(ConfigError, match=r"setting http\.proxy must be a proxy URL") as caught:
        WebSearch(env={"WEBSEARCH_CONFIG_DIR": str(config_dir)})
    assert PASSWORD not in str(caught.value)
    with pytest.raises(ConfigError, match=r"^HTTPS_PROXY must be a proxy URL"):
        WebSearch(env={"WEBSEARCH_CONFIG_DIR": str(config_dir / "none"), "HTTPS_PROXY": text})


def test_a_socks_proxy_without_the_socks_extra_names_the_extra(
    config_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "aiohttp_socks", None)  # as if not installed
    write_settings(config_dir, '[proxy]\nbrave = "socks5h://127.0.0.1:1080"\n')
    with pytest.raises(ConfigError, match=r"proxy\.brave names a SOCKS proxy .*pip install 'websearch-hub\[socks\]'"):
        WebSearch(env={"WEBSEARCH_CONFIG_DIR": str(config_dir)})
    with pytest.raises(ConfigError, match=r"^ALL_PROXY names a SOCKS proxy"):
        WebSearch(env={"WEBSEARCH_CONFIG_DIR": str(config_dir / "none"), "ALL_PROXY": "socks5://127.0.0.1:1080"})
    write_settings(config_dir, "[http]\ntrust_env = false\n")  # the environment's is not used: no error
    WebSearch(env={"WEBSEARCH_CONFIG_DIR": str(config_dir), "ALL_PROXY": "socks5://127.0.0.1:1080"})


# -- the page reader ---------------------------------------------------------------------------

ARTICLE = "<html><head><title>Proxied</title></head><body><article>" + "<p>Read through a proxy.</p>" * 40


def reader(config_dir: Path, settings: str, env: dict[str, str] | None = None) -> WebSearch:
    write_settings(config_dir, f'[fetch]\nallow_hosts = ["site.test"]\nhost_rate = "50/s"\n{settings}')
    names = FakeResolver({"site.test": [["127.0.0.1"]], "intranet.example": [["10.1.2.3"]]})
    clock = FakeClock()
    return WebSearch(
        env={"WEBSEARCH_CONFIG_DIR": str(config_dir), **(env or {})},
        clock=clock,
        store=MemoryStore(clock),
        resolver=names,
        engine=True,
        providers=[],
    )


@pytest.mark.parametrize(
    ("way", "kind"),
    [
        ("proxy.fetch", "socks5h"),
        ("proxy.fetch", "http"),
        ("fetch.proxy", "socks5h"),
        ("http.proxy", "http"),
        ("HTTP_PROXY", "http"),
        ("ALL_PROXY", "socks5h"),
    ],
)
async def test_every_way_a_proxy_applies_to_fetch_keeps_the_address_checks_and_says_so(
    config_dir: Path, http_proxy: HttpProxy, socks_proxy: Socks5Proxy, way: str, kind: str
) -> None:
    proxy = http_proxy if kind == "http" else socks_proxy
    url = proxy.url(kind)
    table, _, key = way.partition(".")
    settings, env = (f'[{table}]\n{key} = "{url}"\n' if key else ""), ({} if key else {way: url})
    if table == "fetch":  # the older spelling sits in the [fetch] table already written
        settings, env = f'proxy = "{url}"\n', {}
    with FakeSite({"/article": Reply(200, ARTICLE, content_type="text/html")}) as site:
        async with reader(config_dir, settings, env) as ws:
            read = await ws.afetch(f"http://site.test:{site.port}/article")
            refused = await ws.afetch("http://intranet.example/")
    assert read.ok, read.error
    assert [(n.param, n.kind) for n in read.notices] == [(way, "not_applied")]
    assert refused.error_kind == "not_allowed"  # the name's own addresses were checked first
    assert proxy.passed and {p.host for p in proxy.passed} == {"site.test"}
    assert {r.path for r in site.requests} == {"/robots.txt", "/article"}


@pytest.mark.parametrize("kind", ["http", "socks5h"])
async def test_a_fetch_proxy_login_never_shows_and_no_proxy_reads_directly(config_dir: Path, kind: str) -> None:
    proxy_type = HttpProxy if kind == "http" else Socks5Proxy
    with (
        proxy_type(user=USER, password=PASSWORD, names={"site.test": "127.0.0.1"}) as proxy,
        FakeSite({"/article": Reply(200, ARTICLE, content_type="text/html")}) as site,
    ):
        good = proxy.url(kind, user=USER, password=PASSWORD)
        async with reader(config_dir, f'[proxy]\nfetch = "{good}"\n') as ws:
            read = await ws.afetch(f"http://site.test:{site.port}/article")
        assert read.ok and {p.user for p in proxy.passed} == {USER}
        wrong = proxy.url(kind, user=USER, password="x" + PASSWORD)
        async with reader(config_dir, f'[proxy]\nfetch = "{wrong}"\n') as ws:
            failed = await ws.afetch(f"http://site.test:{site.port}/other")
        assert failed.error_kind == "connection" and failed.error is not None
        assert PASSWORD not in failed.error + repr(failed) and f"proxy {kind}://127.0.0.1:{proxy.port}" in failed.error
        passed = len(proxy.passed)
        env = {"HTTP_PROXY": proxy.url(kind), "NO_PROXY": "site.test"}
        async with reader(config_dir, "", env) as ws:
            direct = await ws.afetch(f"http://site.test:{site.port}/article")
        assert direct.ok and not any(n.kind == "not_applied" for n in direct.notices)
        assert proxy.refused >= 1 and len(proxy.passed) == passed


async def test_https_goes_through_an_http_proxy_by_connect_with_the_login_on_the_connect(ddg: FakeDuckDuckGo) -> None:
    """The tunnel is asked for with the login (the fake speaks no TLS, so the handshake then
    fails: what is checked is the CONNECT); a wrong login is the proxy's refusal, named."""
    with HttpProxy(user=USER, password=PASSWORD, names={FAKE_HOST: "127.0.0.1"}) as proxy:
        for password, error in ((PASSWORD, ProviderConnectionError), ("x" + PASSWORD, NetworkUnreachable)):
            chosen = Proxy.parse(proxy.url(user=USER, password=password), "proxy.duckduckgo")
            transport = Transport(timeout=5, proxies=Proxies({"duckduckgo": chosen}))
            try:
                with pytest.raises(error) as caught:
                    await transport.send("duckduckgo", HttpRequest("GET", f"https://{FAKE_HOST}:{ddg.port}/html/"))
            finally:
                await transport.aclose()
            assert type(caught.value) is error and PASSWORD not in str(caught.value) + repr(caught.value)
    assert [(p.how, p.host, p.port, p.user) for p in proxy.passed] == [("CONNECT", FAKE_HOST, ddg.port, USER)]
    assert proxy.refused == 1 and "refused the tunnel (HTTP 407)" in str(caught.value)


def test_a_proxy_for_a_provider_websearch_does_not_know_is_warned_of_and_unused(config_dir: Path) -> None:
    """A misspelt id would otherwise send that provider's traffic past the proxy meant for it, silently."""
    write_settings(config_dir, '[proxy]\nduckduckgoo = "http://127.0.0.1:3128"\n')
    with pytest.warns(ConfigWarning, match=r"proxy\.duckduckgoo.*proxy\.duckduckgo"):
        ws = WebSearch(env={"WEBSEARCH_CONFIG_DIR": str(config_dir)})
    assert ws._proxies.configured == {}
