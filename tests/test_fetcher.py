"""The safe fetcher against real HTTP on loopback: pinned resolution (DNS rebinding), redirects into
private space, compression bombs, caps, the budget, error statuses, challenge pages, a proxy."""

from __future__ import annotations

import gzip
import socket
import zlib
from collections.abc import Iterator
from datetime import timedelta
from email.utils import format_datetime

import pytest

import netguard
from conftest import NOW, FakeClock
from websearch._core._budget import NO_DEADLINE, Budget
from websearch._core._clock import SystemClock
from websearch._http._proxies import FETCH, Proxies
from websearch._http._proxies import Proxy as ProxySetting
from websearch._reading._fetcher import DEFAULT_ACCEPT, Fetcher, RawPage
from websearch._reading._policy import FetchPolicy
from websearch.errors import (
    FetchConnectionError,
    FetchHttpError,
    FetchTimeout,
    FetchTooLarge,
    PageBlocked,
    TooManyRedirects,
    UnsupportedContent,
    UrlNotAllowed,
)
from websearch.testing import FakeResolver, FakeServer, RecordedRequest, Reply

PUBLIC = "93.184.216.34"
HTML = "<html><head><title>T</title></head><body><p>hello</p></body></html>"
SITE = FetchPolicy(allow_hosts=frozenset({"site.test"}))


class Site(FakeServer):
    """A web site: an HTML page unless a reply is queued."""

    provider_id = "site"

    def default_reply(self, request: RecordedRequest) -> Reply:
        return Reply(200, HTML, content_type="text/html; charset=UTF-8", headers={"X-Seen": request.path})


class Proxy(FakeServer):
    """A forward proxy that answers every request itself (its `last.headers['host']` is the target)."""

    provider_id = "proxy"

    def default_reply(self, request: RecordedRequest) -> Reply:
        return Reply(200, "<html><body>via proxy</body></html>", content_type="text/html")


@pytest.fixture
def site() -> Iterator[Site]:
    with Site() as fake:
        yield fake


def budget(seconds: float = 10.0) -> Budget:
    return Budget.start(SystemClock(), seconds)


def resolver() -> FakeResolver:
    return FakeResolver({"site.test": ["127.0.0.1"], "internal.test": ["127.0.0.1"]})


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_a_page_is_fetched_through_the_pinned_name(site: Site) -> None:
    names = resolver()
    async with Fetcher(SITE, resolver=names) as fetcher:
        page = await fetcher.fetch(f"http://site.test:{site.port}/docs/page?x=1#part", budget())
    assert isinstance(page, RawPage)
    assert page.url == f"http://site.test:{site.port}/docs/page?x=1"
    assert (page.status, page.redirects, page.proxied) == (200, (), False)
    assert (page.content_type, page.charset) == ("text/html", "utf-8")
    assert page.body == HTML.encode()
    assert page.headers["x-seen"] == "/docs/page" and "X-Seen" not in page.headers
    assert names.calls == ["site.test"]
    sent = site.last.headers
    assert sent["host"] == f"site.test:{site.port}"  # the name's Host, though the connection went to 127.0.0.1
    assert sent["user-agent"] == SITE.user_agent and sent["user-agent"].startswith("websearch/")
    assert sent["accept"] == DEFAULT_ACCEPT and sent["accept"].startswith("text/markdown")
    assert sent["accept-encoding"] == "gzip, deflate"


async def test_the_loopback_server_is_refused_without_allow_hosts(site: Site) -> None:
    async with Fetcher(FetchPolicy(), resolver=resolver()) as fetcher:
        with pytest.raises(UrlNotAllowed) as caught:
            await fetcher.fetch(f"http://site.test:{site.port}/", budget())
        with pytest.raises(UrlNotAllowed):
            await fetcher.fetch(f"http://127.0.0.1:{site.port}/", budget())
        with pytest.raises(UrlNotAllowed):
            await fetcher.fetch(f"http://2130706433:{site.port}/", budget())  # 127.0.0.1 as a number
        with pytest.raises(UrlNotAllowed):
            await fetcher.fetch(f"http://localhost:{site.port}/", budget())
    assert site.requests == []
    assert caught.value.url == f"http://site.test:{site.port}/"
    assert caught.value.message == (
        f"http://site.test:{site.port}/ leads to a loopback address (127.0.0.1); add the host to "
        "[fetch] allow_hosts, or set [fetch] allow_private to fetch private addresses"
    )


async def test_allow_private_reaches_loopback_by_name_and_by_number(site: Site) -> None:
    async with Fetcher(FetchPolicy(allow_private=True), resolver=resolver()) as fetcher:
        assert (await fetcher.fetch(f"http://site.test:{site.port}/a", budget())).status == 200
        page = await fetcher.fetch(f"http://2130706433:{site.port}/b", budget())
    assert page.url == f"http://127.0.0.1:{site.port}/b"
    assert [r.path for r in site.requests] == ["/a", "/b"]


async def test_a_rebinding_name_never_reaches_loopback(site: Site) -> None:
    # public to the first lookup, loopback to every later one: a fetcher that checked one lookup
    # and connected by another would reach the server. The connection goes where the checked
    # lookup said (the public address, which the test's network guard refuses), never to loopback.
    names = FakeResolver({"rebind.test": [[PUBLIC], ["127.0.0.1"]]})
    before = len(netguard.blocked)
    async with Fetcher(FetchPolicy(), resolver=names) as fetcher:
        with pytest.raises(FetchConnectionError):
            await fetcher.fetch(f"http://rebind.test:{site.port}/", budget(3))
        with pytest.raises(UrlNotAllowed, match=r"loopback address \(127\.0\.0\.1\)"):
            await fetcher.fetch(f"http://rebind.test:{site.port}/", budget(3))
    attempted = netguard.blocked[before:]
    del netguard.blocked[before:]  # the one public connection, refused by the guard on purpose
    assert attempted == [PUBLIC]
    assert names.calls == ["rebind.test", "rebind.test"]  # one lookup per connection: no cache
    assert site.requests == []


async def test_a_name_with_one_private_address_among_public_ones_is_refused(site: Site) -> None:
    names = FakeResolver({"mixed.test": [PUBLIC, "127.0.0.1"]})
    async with Fetcher(FetchPolicy(), resolver=names) as fetcher:
        with pytest.raises(UrlNotAllowed, match=r"127\.0\.0\.1"):
            await fetcher.fetch(f"http://mixed.test:{site.port}/", budget())
    assert site.requests == []


async def test_a_name_that_does_not_resolve_is_a_connection_error() -> None:
    async with Fetcher(SITE, resolver=resolver()) as fetcher:
        with pytest.raises(FetchConnectionError) as caught:
            await fetcher.fetch("http://nowhere.test/page", budget())
    assert caught.value.url == "http://nowhere.test/page"


async def test_redirects_are_followed_and_recorded(site: Site) -> None:
    base = f"http://site.test:{site.port}"
    site.enqueue(
        Reply(301, b"", headers={"Location": "/second"}),
        Reply(303, b"", headers={"Location": f"{base}/third?q=1"}),
        Reply(307, b"", headers={"Location": "fourth"}),
    )
    async with Fetcher(SITE, resolver=resolver()) as fetcher:
        page = await fetcher.fetch(f"{base}/first", budget())
    assert page.url == f"{base}/fourth"
    assert page.redirects == (f"{base}/first", f"{base}/second", f"{base}/third?q=1")
    assert [(r.method, r.path) for r in site.requests] == [
        ("GET", "/first"),
        ("GET", "/second"),
        ("GET", "/third"),
        ("GET", "/fourth"),
    ]


@pytest.mark.parametrize(
    ("location", "shown"),
    [
        ("http://internal.test:{port}/admin", "http://internal.test:{port}/admin"),  # resolves to 127.0.0.1
        ("http://169.254.169.254/latest/meta-data/", "http://169.254.169.254/latest/meta-data/"),
        ("http://[::ffff:169.254.169.254]/", "http://[::ffff:169.254.169.254]/"),
        ("file:///etc/passwd", "file:///etc/passwd"),
        ("gopher://site.test:{port}/", "gopher://site.test:{port}/"),
        ("http://alice:hunter2@localhost:{port}/", "http://***@localhost:{port}/"),
    ],
)
async def test_a_redirect_into_private_space_or_another_scheme_is_refused(
    site: Site, location: str, shown: str
) -> None:
    site.enqueue(Reply(302, b"", headers={"Location": location.format(port=site.port)}))
    async with Fetcher(SITE, resolver=resolver()) as fetcher:
        with pytest.raises(UrlNotAllowed) as caught:
            await fetcher.fetch(f"http://site.test:{site.port}/start", budget())
    assert len(site.requests) == 1
    assert caught.value.url == shown.format(port=site.port)
    assert caught.value.message.endswith(f"(a redirect from http://site.test:{site.port}/start)")
    assert "hunter2" not in str(caught.value) and "alice" not in str(caught.value)


class Loop(FakeServer):
    provider_id = "loop"

    def default_reply(self, request: RecordedRequest) -> Reply:
        return Reply(302, b"", headers={"Location": f"/hop{len(self.requests)}"})


async def test_more_redirects_than_the_limit_end_in_too_many_redirects() -> None:
    names = FakeResolver({"loop.test": ["127.0.0.1"]})
    with Loop() as loop:
        async with Fetcher(FetchPolicy(allow_hosts=frozenset({"loop.test"})), resolver=names) as fetcher:
            with pytest.raises(TooManyRedirects) as caught:
                await fetcher.fetch(f"http://loop.test:{loop.port}/", budget())
        assert len(loop.requests) == 11  # the page and 10 hops followed; the 11th redirect is refused
        async with Fetcher(FetchPolicy(allow_hosts=frozenset({"loop.test"}), max_redirects=2), resolver=names) as f:
            with pytest.raises(TooManyRedirects, match="more than 2 times"):
                await f.fetch(f"http://loop.test:{loop.port}/", budget())
    assert caught.value.message.startswith(f"http://loop.test:{loop.port}/ redirected more than 10 times")


@pytest.mark.parametrize("encoding", ["gzip", "deflate-zlib", "deflate-raw"])
async def test_a_compressed_body_is_decompressed(site: Site, encoding: str) -> None:
    text = ("<p>compressed page</p>" * 2000).encode()
    if encoding == "gzip":
        body, header = gzip.compress(text), "gzip"
    elif encoding == "deflate-zlib":
        body, header = zlib.compress(text), "deflate"
    else:
        squeeze = zlib.compressobj(wbits=-zlib.MAX_WBITS)
        body, header = squeeze.compress(text) + squeeze.flush(), "deflate"
    site.enqueue(Reply(200, body, headers={"Content-Encoding": header}, content_type="text/html"))
    async with Fetcher(SITE, resolver=resolver()) as fetcher:
        page = await fetcher.fetch(f"http://site.test:{site.port}/", budget())
    assert page.body == text


async def test_a_gzip_bomb_ends_at_the_cap_without_waiting_for_the_rest(site: Site) -> None:
    bomb = gzip.compress(b"\0" * (16 * 2**20))  # 16 KB that inflate to 16 MB
    assert len(bomb) < 64 * 1024
    # the bomb, then a pause far past the budget: a reader that read on would time out instead
    site.enqueue(Reply(200, chunks=[bomb, bomb], chunk_delay=60, headers={"Content-Encoding": "gzip"}))
    policy = FetchPolicy(allow_hosts=frozenset({"site.test"}), max_bytes=2**20)
    async with Fetcher(policy, resolver=resolver()) as fetcher:
        with pytest.raises(FetchTooLarge) as caught:
            await fetcher.fetch(f"http://site.test:{site.port}/bomb", budget(30))
    assert (
        caught.value.message
        == f"http://site.test:{site.port}/bomb is larger than the 1 MB limit; raise [fetch] max_mb to read it"
    )


async def test_a_content_length_past_the_cap_fails_at_once(site: Site) -> None:
    site.enqueue(Reply(200, chunks=[b"x" * 100], chunk_delay=60, headers={"Content-Length": str(2**30)}))
    async with Fetcher(SITE, resolver=resolver()) as fetcher:
        with pytest.raises(FetchTooLarge):
            await fetcher.fetch(f"http://site.test:{site.port}/huge", budget(30))


async def test_a_plain_body_past_the_cap_fails_and_truncate_keeps_its_start(site: Site) -> None:
    policy = FetchPolicy(allow_hosts=frozenset({"site.test"}), max_bytes=1000)
    long = b"a" * 600 + b"b" * 600
    site.enqueue(
        Reply(200, chunks=[b"a" * 600, b"b" * 600]), Reply(200, long), Reply(200, long), Reply(200, b"a" * 1000)
    )
    url = f"http://site.test:{site.port}/"
    async with Fetcher(policy, resolver=resolver()) as fetcher:
        with pytest.raises(FetchTooLarge, match="1000 bytes limit"):
            await fetcher.fetch(url, budget())
        page = await fetcher.fetch(url, budget(), max_bytes=700, truncate=True)
        with pytest.raises(FetchTooLarge):  # the policy's cap bounds a wider max_bytes
            await fetcher.fetch(url, budget(), max_bytes=5000)
        exact = await fetcher.fetch(url, budget())
    assert page.body == b"a" * 600 + b"b" * 100
    assert exact.body == b"a" * 1000  # the cap itself is allowed


async def test_a_body_that_drips_forever_ends_at_the_budget(site: Site) -> None:
    site.enqueue(Reply(200, chunks=[b"<p>drip</p>"] * 100_000, chunk_delay=0.02, content_type="text/html"))
    async with Fetcher(SITE, resolver=resolver()) as fetcher:
        with pytest.raises(FetchTimeout) as caught:
            await fetcher.fetch(f"http://site.test:{site.port}/slow", budget(0.5))
    assert caught.value.url == f"http://site.test:{site.port}/slow"


async def test_the_fetchers_timeout_caps_a_fetch_without_a_deadline(site: Site) -> None:
    site.enqueue(Reply(hang=True))
    async with Fetcher(SITE, resolver=resolver(), timeout=0.3) as fetcher:
        with pytest.raises(FetchTimeout):
            await fetcher.fetch(f"http://site.test:{site.port}/", NO_DEADLINE)
        with pytest.raises(FetchTimeout):  # a budget already spent: nothing is sent
            await fetcher.fetch(f"http://site.test:{site.port}/", Budget.start(SystemClock(), -1))
    assert len(site.requests) == 1


async def test_error_statuses_carry_the_status_and_retry_after(site: Site) -> None:
    clock = FakeClock()
    later = format_datetime(NOW + timedelta(seconds=120), usegmt=True)
    site.enqueue(
        Reply(404, "<html><body>not here</body></html>", content_type="text/html"),
        Reply(503, "down", headers={"Retry-After": "30"}),
        Reply(429, "slow down", headers={"Retry-After": later}),
    )
    url = f"http://site.test:{site.port}/p"
    async with Fetcher(SITE, resolver=resolver()) as fetcher:
        with pytest.raises(FetchHttpError) as missing:
            await fetcher.fetch(url, Budget.start(clock, 10))
        with pytest.raises(FetchHttpError) as down:
            await fetcher.fetch(url, Budget.start(clock, 10))
        with pytest.raises(FetchHttpError) as busy:
            await fetcher.fetch(url, Budget.start(clock, 10))
    assert (missing.value.status, missing.value.retry_after, missing.value.url) == (404, None, url)
    assert missing.value.message == f"{url} answered HTTP 404 Not Found; check the URL"
    assert (down.value.status, down.value.retry_after) == (503, 30.0)
    assert (busy.value.status, busy.value.retry_after) == (429, 120.0)


@pytest.mark.parametrize(
    ("status", "headers", "body"),
    [
        (403, {"cf-mitigated": "challenge"}, "<html><body>Just a moment...</body></html>"),
        (
            403,
            {},
            '<html><head><script src="/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1?ray=1"></script>'
            "</head><body></body></html>",
        ),
        (503, {}, "<html><head><script>window._cf_chl_opt={cvId:'3',cType:'managed'};</script></head></html>"),
        (
            429,
            {},
            '<html><body><form action="/check"><div class="h-captcha" data-sitekey="k"></div></form></body></html>',
        ),
        (405, {}, '<html><body><form method="get" action="/errors/validateCaptcha"></form></body></html>'),
    ],
)
async def test_a_challenge_page_is_page_blocked(site: Site, status: int, headers: dict[str, str], body: str) -> None:
    site.enqueue(Reply(status, body, headers=headers, content_type="text/html"))
    async with Fetcher(SITE, resolver=resolver()) as fetcher:
        with pytest.raises(PageBlocked) as caught:
            await fetcher.fetch(f"http://site.test:{site.port}/", budget())
    assert caught.value.status == status


async def test_an_error_page_that_talks_about_challenges_is_no_challenge(site: Site) -> None:
    prose = (
        "<html><body><h1>Forbidden</h1><p>Solve the captcha challenge? Our challenge-platform and cf-chl "
        "notes explain _cf_chl_opt and g-recaptcha.</p></body></html>"
    )
    site.enqueue(Reply(403, prose, content_type="text/html"))
    async with Fetcher(SITE, resolver=resolver()) as fetcher:
        with pytest.raises(FetchHttpError) as caught:
            await fetcher.fetch(f"http://site.test:{site.port}/", budget())
    assert type(caught.value) is FetchHttpError and caught.value.status == 403


async def test_a_refused_connection_is_a_connection_error() -> None:
    port = closed_port()
    async with Fetcher(SITE, resolver=resolver()) as fetcher:
        with pytest.raises(FetchConnectionError) as caught:
            await fetcher.fetch(f"http://site.test:{port}/", budget())
    assert caught.value.message.startswith(f"could not connect to http://site.test:{port}/")


async def test_an_encoding_not_asked_for_is_unsupported(site: Site) -> None:
    site.enqueue(Reply(200, b"\x28\xb5\x2f\xfd", headers={"Content-Encoding": "zstd"}))
    async with Fetcher(SITE, resolver=resolver()) as fetcher:
        with pytest.raises(UnsupportedContent):
            await fetcher.fetch(f"http://site.test:{site.port}/", budget())


async def test_no_cookie_is_kept_and_the_callers_headers_are_sent(site: Site) -> None:
    site.enqueue(Reply(200, HTML, headers={"Set-Cookie": "session=abc; Path=/"}, content_type="text/html"))
    async with Fetcher(SITE, resolver=resolver()) as fetcher:
        await fetcher.fetch(f"http://site.test:{site.port}/", budget())
        extra = {"accept-language": "fr", "Host": "evil.test", "Accept-Encoding": "br", "user-agent": "Custom/1"}
        await fetcher.fetch(f"http://site.test:{site.port}/", budget(), accept="text/plain", headers=extra)
    sent = site.last.headers
    assert "cookie" not in sent
    assert (sent["accept-language"], sent["accept"], sent["user-agent"]) == ("fr", "text/plain", "Custom/1")
    assert sent["host"] == f"site.test:{site.port}" and sent["accept-encoding"] == "gzip, deflate"


async def test_a_password_in_the_url_is_never_sent_nor_shown(site: Site) -> None:
    async with Fetcher(SITE, resolver=resolver()) as fetcher:
        page = await fetcher.fetch(f"http://alice:hunter2@site.test:{site.port}/", budget())
        with pytest.raises(FetchConnectionError) as caught:
            await fetcher.fetch(f"http://alice:hunter2@site.test:{closed_port()}/", budget())
    assert page.url == f"http://site.test:{site.port}/"
    assert "authorization" not in site.last.headers
    assert "hunter2" not in str(caught.value) and "hunter2" not in caught.value.url


async def test_through_a_proxy_the_name_is_still_vetted_and_the_page_says_proxied() -> None:
    names = FakeResolver({"site.test": [PUBLIC], "internal.test": ["10.0.0.7"]})
    with Proxy() as proxy:
        proxies = Proxies({FETCH: ProxySetting.parse(proxy.base_url, "proxy.fetch")})
        async with Fetcher(FetchPolicy(), resolver=names, proxies=proxies) as fetcher:
            page = await fetcher.fetch("http://site.test/page", budget())
            with pytest.raises(UrlNotAllowed, match=r"private address \(10\.0\.0\.7\)"):
                await fetcher.fetch("http://internal.test/admin", budget())
            with pytest.raises(UrlNotAllowed):
                await fetcher.fetch("http://127.0.0.1/", budget())
            proxy.enqueue(Reply(302, b"", headers={"Location": "http://internal.test/"}))
            with pytest.raises(UrlNotAllowed, match=r"a redirect from http://site\.test/start"):
                await fetcher.fetch("http://site.test/start", budget())
        assert page.proxied is True and page.body == b"<html><body>via proxy</body></html>"
        assert [(r.path, r.headers["host"]) for r in proxy.requests] == [
            ("/page", "site.test"),
            ("/start", "site.test"),
        ]
    assert names.calls == ["site.test", "internal.test", "site.test", "internal.test"]


async def test_a_host_that_the_http_stack_reads_as_loopback_never_reaches_it(site: Site) -> None:
    # IDNA maps fullwidth and circled digits to ASCII ones: aiohttp would connect to 127.0.0.1
    async with Fetcher(FetchPolicy(), resolver=resolver()) as fetcher:
        for host in ("１２７.０.０.１", "①②⑦.⓪.⓪.①", "ｌｏｃａｌｈｏｓｔ"):
            with pytest.raises(UrlNotAllowed):
                await fetcher.fetch(f"http://{host}:{site.port}/", budget())
    assert site.requests == []


async def test_the_callers_credentials_do_not_follow_a_redirect_to_another_origin(site: Site) -> None:
    names = FakeResolver({"site.test": ["127.0.0.1"], "other.test": ["127.0.0.1"]})
    policy = FetchPolicy(allow_hosts=frozenset({"site.test", "other.test"}))
    site.enqueue(
        Reply(302, b"", headers={"Location": "/same"}),
        Reply(302, b"", headers={"Location": f"http://other.test:{site.port}/other"}),
    )
    async with Fetcher(policy, resolver=names) as fetcher:
        await fetcher.fetch(
            f"http://site.test:{site.port}/start", budget(), headers={"Authorization": "Bearer t0ken", "X-Keep": "1"}
        )
    seen = [(r.path, r.headers.get("authorization"), r.headers.get("x-keep")) for r in site.requests]
    assert seen == [("/start", "Bearer t0ken", "1"), ("/same", "Bearer t0ken", "1"), ("/other", None, "1")]
