"""What fetch may reach: every barred address range and name, the public addresses it may, and how
`allow_hosts` and `allow_private` open them; URLs with a password never show it."""

from __future__ import annotations

import pytest

from websearch._core._checks import without_userinfo
from websearch._reading._policy import (
    DEFAULT_USER_AGENT,
    FetchPolicy,
    SystemResolver,
    check_address,
    check_url,
    refusal,
    vetted,
)
from websearch.errors import FetchConnectionError, UrlNotAllowed
from websearch.testing import FakeResolver

STRICT = FetchPolicy()
PRIVATE_OK = FetchPolicy(allow_private=True)

#: Opened by `allow_private`: loopback, RFC 1918, CGNAT, unique-local, and their IPv6 wrappings.
PRIVATE = [
    "127.0.0.1",
    "127.255.255.254",
    "10.0.0.5",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "100.64.0.1",
    "100.127.255.255",
    "::1",
    "fc00::1",
    "fd12:3456::1",
    "::ffff:127.0.0.1",  # IPv4-mapped
    "::ffff:10.1.2.3",
    "::127.0.0.1",  # IPv4-compatible
    "::ffff:0:192.168.0.1",  # SIIT
    "64:ff9b::127.0.0.1",  # NAT64 to loopback
    "2002:0a00:0001::1",  # 6to4 wrapping 10.0.0.1
    "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo whose client is 127.0.0.1 (stored inverted)
]
#: Never opened but by `allow_hosts`: link-local, metadata, multicast, 0/8, broadcast, reserved.
NEVER = [
    "169.254.169.254",
    "169.254.0.1",
    "0.0.0.0",
    "0.1.2.3",
    "224.0.0.1",
    "239.255.255.250",
    "255.255.255.255",
    "240.0.0.1",
    "::",
    "fe80::1",
    "fe80::1%eth0",
    "ff02::1",
    "fd00:ec2::254",
    "::ffff:169.254.169.254",
    "64:ff9b::169.254.169.254",
    "2002:a9fe:a9fe::1",  # 6to4 wrapping 169.254.169.254
]
PUBLIC = ["93.184.216.34", "8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::8.8.8.8"]


@pytest.mark.parametrize("ip", PRIVATE + NEVER)
def test_barred_addresses_are_refused(ip: str) -> None:
    with pytest.raises(UrlNotAllowed) as caught:
        check_address(ip, "site.test", STRICT)
    assert caught.value.url == "site.test"  # no URL given: the host is named
    assert caught.value.message.startswith("site.test leads to ") and "[fetch] allow_hosts" in caught.value.message


@pytest.mark.parametrize("ip", PUBLIC)
def test_public_addresses_pass(ip: str) -> None:
    check_address(ip, "site.test", STRICT)
    assert refusal(ip, STRICT) is None


@pytest.mark.parametrize("ip", PRIVATE)
def test_allow_private_opens_private_ranges_to_every_host(ip: str) -> None:
    check_address(ip, "any.test", PRIVATE_OK)
    assert refusal(ip, STRICT) is not None and refusal(ip, STRICT)[1] is True  # type: ignore[index]


@pytest.mark.parametrize("ip", NEVER)
def test_allow_private_never_opens_link_local_metadata_or_multicast(ip: str) -> None:
    with pytest.raises(UrlNotAllowed):
        check_address(ip, "any.test", PRIVATE_OK)


@pytest.mark.parametrize("ip", ["169.254.169.254", "127.0.0.1", "10.0.0.5", "fe80::1"])
def test_allow_hosts_opens_any_address_to_the_hosts_it_names(ip: str) -> None:
    policy = FetchPolicy(allow_hosts=frozenset({"docs.internal", "*.corp.example"}))
    check_address(ip, "docs.internal", policy)
    check_address(ip, "DOCS.internal.", policy)  # one spelling of a name
    check_address(ip, "wiki.corp.example", policy)
    check_address(ip, "a.b.corp.example", policy)
    for other in ("corp.example", "docs.internal.evil.test", "evilcorp.example", "other.test"):
        with pytest.raises(UrlNotAllowed):
            check_address(ip, other, policy)


def test_allow_hosts_accepts_an_address_and_any_iterable() -> None:
    policy = FetchPolicy(allow_hosts=["10.0.0.5", "[FD00::1]"])  # type: ignore[arg-type]
    assert policy.allow_hosts == frozenset({"10.0.0.5", "fd00::1"})
    check_url("http://10.0.0.5:8080/x", policy)
    check_url("http://[fd00:0::1]/", policy)
    with pytest.raises(UrlNotAllowed):
        check_url("http://10.0.0.6/", policy)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://[::1]:8080/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::ffff:7f00:1]/",
        "http://[fe80::1%25eth0]/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[fd00:ec2::254]/",
        "http://100.100.100.200/",
        "http://0.0.0.0:8000/",
        "https://224.0.0.251/",
        # numeric forms of 127.0.0.1 that getaddrinfo and browsers read as an address
        "http://2130706433/",
        "http://0x7f.0.0.1/",
        "http://0x7f000001/",
        "http://127.1/",
        "http://0177.0.0.1/",
        "http://017700000001/",
        "http://127.0.0.1./",
        # names of this machine and of the metadata service
        "http://localhost/",
        "http://LOCALHOST.:8080/",
        "http://app.localhost/",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://metadata/",
    ],
)
def test_urls_to_barred_addresses_and_names_are_refused(url: str) -> None:
    with pytest.raises(UrlNotAllowed) as caught:
        check_url(url, STRICT)
    assert caught.value.url == url
    assert caught.value.message.startswith(url)


def test_a_numeric_host_is_read_as_its_address() -> None:
    assert check_url("http://2130706433:8080/a?b", PRIVATE_OK).geturl() == "http://127.0.0.1:8080/a?b"
    assert check_url("http://0x08.0x08.010.8/", STRICT).hostname == "8.8.8.8"  # octal 010 is 8
    assert check_url("http://134744072/", STRICT).hostname == "8.8.8.8"


@pytest.mark.parametrize("url", ["http://1.2.3.4.5/", "http://256.1.1.1/", "http://1.2.3.0x100/", "http://08.1.1.1/"])
def test_a_host_ending_in_a_number_that_is_no_address_is_refused(url: str) -> None:
    with pytest.raises(UrlNotAllowed, match="neither a name nor an IPv4 address"):
        check_url(url, STRICT)


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "ftp://example.com/x",
        "gopher://example.com:70/",
        "javascript:alert(1)",
        "data:text/html,<b>x</b>",
        "//example.com/",
        "example.com/page",
        "http:///nohost",
        "http://example.com:0/",
        "http://example.com:99999/",
        "http://[::1/",
    ],
)
def test_other_schemes_and_malformed_urls_are_refused(url: str) -> None:
    with pytest.raises(UrlNotAllowed):
        check_url(url, STRICT)


@pytest.mark.parametrize(
    "url", ["http://example.com/", "https://Example.COM:8443/a/b?c=d#e", "http://8.8.8.8/", "https://[2606:4700::1]/"]
)
def test_public_urls_pass(url: str) -> None:
    parts = check_url(url, STRICT)
    assert parts.scheme in ("http", "https") and parts.hostname


@pytest.mark.parametrize(
    "url",
    [
        "http://alice:hunter2-secret@10.0.0.5/x",
        "https://alice:hunter2-secret@localhost/",
        "ftp://alice:hunter2-secret@example.com/",
        "http://alice:hunter2-secret@1.2.3.4.5/",
        "http://alice:hunter2-secret@[::1/",
        "http://alice:hunter2@secret@10.0.0.5/",  # an unescaped @ in the password
    ],
)
def test_a_password_in_the_url_never_appears_in_the_error(url: str) -> None:
    with pytest.raises(UrlNotAllowed) as caught:
        check_url(url, STRICT)
    error = caught.value
    for text in (error.url, error.message, str(error), repr(error)):
        assert "hunter2" not in text and "secret" not in text and "alice" not in text


def test_the_user_and_password_are_stripped_from_an_allowed_url() -> None:
    parts = check_url("https://alice:hunter2@example.com:8443/p?q=1", STRICT)
    assert parts.netloc == "example.com:8443"
    assert parts.geturl() == "https://example.com:8443/p?q=1"
    assert without_userinfo("https://alice:hunter2@example.com/p") == "https://***@example.com/p"
    assert without_userinfo("//alice:hunter2@example.com/p") == "//***@example.com/p"  # scheme-relative too
    assert without_userinfo("https://example.com/a@b") == "https://example.com/a@b"  # an @ in the path is no password


def test_the_policy_defaults_and_checks() -> None:
    policy = FetchPolicy()
    assert (policy.allow_private, policy.max_bytes, policy.max_redirects, policy.robots) == (
        False,
        10 * 2**20,
        10,
        True,
    )
    assert policy.user_agent == DEFAULT_USER_AGENT
    assert DEFAULT_USER_AGENT.startswith("websearch/") and "github.com/websearch-hub/websearch" in DEFAULT_USER_AGENT
    with pytest.raises(ValueError, match="max_bytes"):
        FetchPolicy(max_bytes=0)
    with pytest.raises(ValueError, match="max_redirects"):
        FetchPolicy(max_redirects=-1)


async def test_vetted_refuses_a_name_when_any_of_its_addresses_is_barred() -> None:
    resolver = FakeResolver({"mixed.test": [["93.184.216.34", "10.0.0.1"]], "ok.test": [["93.184.216.34", "2606::1"]]})
    with pytest.raises(UrlNotAllowed, match=r"10\.0\.0\.1"):
        await vetted(resolver, "mixed.test", 80, STRICT, url="http://mixed.test/page")
    assert await vetted(resolver, "ok.test", 443, STRICT) == ["93.184.216.34", "2606::1"]
    assert await vetted(resolver, "mixed.test", 80, PRIVATE_OK) == ["93.184.216.34", "10.0.0.1"]


async def test_vetted_names_the_url_and_passes_a_name_that_does_not_resolve() -> None:
    resolver = FakeResolver({"private.test": [["192.168.0.7"]]})
    with pytest.raises(UrlNotAllowed) as caught:
        await vetted(resolver, "private.test", 80, STRICT, url="http://private.test/x")
    assert caught.value.url == "http://private.test/x"
    assert caught.value.message.startswith("http://private.test/x leads to a private address (192.168.0.7)")
    with pytest.raises(FetchConnectionError) as missing:
        await vetted(resolver, "nowhere.test", 80, STRICT, url="http://nowhere.test/")
    assert missing.value.url == "http://nowhere.test/"


async def test_vetted_looks_up_no_literal_address_and_no_barred_name() -> None:
    resolver = FakeResolver({})
    with pytest.raises(UrlNotAllowed):
        await vetted(resolver, "127.0.0.1", 80, STRICT)
    with pytest.raises(UrlNotAllowed):
        await vetted(resolver, "[::1]", 80, STRICT)
    with pytest.raises(UrlNotAllowed):
        await vetted(resolver, "localhost", 80, STRICT)
    assert await vetted(resolver, "8.8.8.8", 80, STRICT) == ["8.8.8.8"]
    assert resolver.calls == []


async def test_the_system_resolver_resolves_offline_and_vetted_refuses_loopback() -> None:
    addresses = await SystemResolver().resolve("localhost", 80)
    assert addresses and all(a in ("127.0.0.1", "::1") for a in addresses)
    with pytest.raises(UrlNotAllowed):
        await vetted(SystemResolver(), "localhost.", 80, STRICT)  # the name check, then the addresses
    assert await vetted(SystemResolver(), "localhost", 80, PRIVATE_OK) == addresses


@pytest.mark.parametrize(
    "url",
    [
        "http://１２７.０.０.１/",  # fullwidth digits: IDNA maps them to 127.0.0.1
        "http://①②⑦.⓪.⓪.①/",
        "http://ｌｏｃａｌｈｏｓｔ:8080/",
        "http://ｍｅｔａｄａｔａ.google.internal/",
        "http://１６９.２５４.１６９.２５４/",
    ],
)
def test_a_host_is_checked_as_the_connection_reads_it(url: str) -> None:
    with pytest.raises(UrlNotAllowed):
        check_url(url, STRICT)


def test_an_international_name_is_sent_in_its_ascii_form() -> None:
    parts = check_url("https://Bücher.example:8443/a", STRICT)
    assert (parts.hostname, parts.netloc) == ("xn--bcher-kva.example", "xn--bcher-kva.example:8443")
    policy = FetchPolicy(allow_hosts=frozenset({"xn--bcher-kva.example"}))
    check_address("10.0.0.1", "xn--bcher-kva.example", policy)


def test_allow_private_opens_the_names_of_this_machine_but_never_the_metadata_service() -> None:
    check_url("http://localhost:8080/", PRIVATE_OK)
    check_url("http://app.localhost/", PRIVATE_OK)
    for url in ("http://metadata.google.internal/", "http://metadata/"):
        with pytest.raises(UrlNotAllowed, match="never fetches"):
            check_url(url, PRIVATE_OK)
    check_url("http://metadata.google.internal/", FetchPolicy(allow_hosts=frozenset({"metadata.google.internal"})))


def test_the_policy_and_robots_modules_load_no_http_stack() -> None:
    import subprocess
    import sys

    code = (
        "import sys, websearch._reading._policy, websearch._reading._robots\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('aiohttp', 'yarl', 'multidict', 'idna')))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]"
