"""robots.txt through the safe fetcher: the rules for `websearch`, RFC 9309's answers to a missing
or failing file, and the per-origin cache on the injected clock."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator

import pytest

from conftest import FakeClock
from websearch._core._budget import Budget
from websearch._core._clock import SystemClock
from websearch._reading._fetcher import Fetcher
from websearch._reading._policy import FetchPolicy
from websearch._reading._robots import AGENT, Robots
from websearch.errors import FetchConnectionError, FetchTimeout, UrlNotAllowed
from websearch.testing import FakeServer, RecordedRequest, Reply

RULES = """\
User-agent: *
Disallow: /private

User-agent: websearch
Disallow: /no-ws
Allow: /no-ws/ok
Crawl-delay: 2
"""
POLICY = FetchPolicy(allow_hosts=frozenset({"site.test", "other.test"}))


class NamesResolver:
    """Every name it knows resolves to loopback, where the fake site listens."""

    async def resolve(self, host: str, port: int) -> list[str]:
        return ["127.0.0.1"]


class RobotsSite(FakeServer):
    """A site whose robots.txt is `robots` (a Reply), every other page a small HTML page."""

    provider_id = "robots-site"

    def __init__(self) -> None:
        super().__init__()
        self.robots = Reply(200, RULES, content_type="text/plain")

    def default_reply(self, request: RecordedRequest) -> Reply:
        if request.path == "/robots.txt":
            return self.robots
        return Reply(200, "<html><body>page</body></html>", content_type="text/html")

    def robots_requests(self) -> int:
        return sum(r.path == "/robots.txt" for r in self.requests)


@pytest.fixture
def site() -> Iterator[RobotsSite]:
    with RobotsSite() as fake:
        yield fake


def budget(seconds: float = 10.0) -> Budget:
    return Budget.start(SystemClock(), seconds)


def fetcher(policy: FetchPolicy = POLICY) -> Fetcher:
    return Fetcher(policy, resolver=NamesResolver())


async def test_the_websearch_group_decides(site: RobotsSite) -> None:
    base = f"http://site.test:{site.port}"
    async with fetcher() as f:
        robots = Robots(f, FakeClock())
        assert await robots.allowed(f"{base}/public/page", budget())
        assert not await robots.allowed(f"{base}/no-ws/secret", budget())
        assert await robots.allowed(f"{base}/no-ws/ok/page", budget())  # the longer Allow wins
        assert await robots.allowed(f"{base}/private", budget())  # only the most specific group applies
        assert robots.crawl_delay(f"{base}/anything") == 2.0
    assert site.robots_requests() == 1
    assert site.requests[0].headers["user-agent"].startswith(AGENT + "/")


async def test_the_star_group_applies_when_websearch_has_none(site: RobotsSite) -> None:
    site.robots = Reply(200, "User-agent: *\nDisallow: /\nAllow: /open$\n", content_type="text/plain")
    async with fetcher() as f:
        robots = Robots(f, FakeClock())
        assert not await robots.allowed(f"http://site.test:{site.port}/page", budget())
        assert await robots.allowed(f"http://site.test:{site.port}/open", budget())
        assert robots.crawl_delay(f"http://site.test:{site.port}/page") is None


@pytest.mark.parametrize(
    ("status", "allowed"), [(404, True), (410, True), (403, True), (500, False), (503, False), (429, False)]
)
async def test_a_missing_file_allows_all_and_a_failing_server_nothing(
    site: RobotsSite, status: int, allowed: bool
) -> None:
    site.robots = Reply(status, "no robots here")
    async with fetcher() as f:
        robots = Robots(f, FakeClock())
        assert await robots.allowed(f"http://site.test:{site.port}/page", budget()) is allowed
        assert await robots.allowed(f"http://site.test:{site.port}/other", budget()) is allowed
    assert site.robots_requests() == 1


async def test_a_site_that_cannot_be_reached_is_a_connection_error_not_a_robots_refusal() -> None:
    # Told "disallowed by robots.txt", a caller blamed the site's rules for a site that was down.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    async with fetcher() as f:
        robots = Robots(f, FakeClock())
        with pytest.raises(FetchConnectionError):
            await robots.allowed(f"http://site.test:{port}/page", budget())


async def test_the_cache_lasts_the_ttl_on_the_clock(site: RobotsSite) -> None:
    clock = FakeClock()
    url = f"http://site.test:{site.port}/no-ws/x"
    site.robots = Reply(500, "down")
    async with fetcher() as f:
        robots = Robots(f, clock, ttl=600)
        assert not await robots.allowed(url, budget())
        await clock.sleep(599)
        site.robots = Reply(200, "User-agent: *\nAllow: /\n", content_type="text/plain")
        assert not await robots.allowed(url, budget())  # the failure is remembered for the TTL
        assert site.robots_requests() == 1
        await clock.sleep(1)
        assert await robots.allowed(url, budget())  # read again once it passed
        assert site.robots_requests() == 2
        await clock.sleep(599)
        assert await robots.allowed(url, budget())
    assert site.robots_requests() == 2


async def test_each_origin_has_its_own_robots(site: RobotsSite) -> None:
    async with fetcher() as f:
        robots = Robots(f, FakeClock())
        await robots.allowed(f"http://site.test:{site.port}/a", budget())
        await robots.allowed(f"http://SITE.test:{site.port}/b#frag", budget())
        await robots.allowed(f"http://other.test:{site.port}/a", budget())
    assert [r.headers["host"] for r in site.requests] == [f"site.test:{site.port}", f"other.test:{site.port}"]


async def test_callers_at_once_share_one_read(site: RobotsSite) -> None:
    site.robots = Reply(200, RULES, content_type="text/plain", delay=0.2)
    async with fetcher() as f:
        robots = Robots(f, FakeClock())
        answers = await asyncio.gather(
            *(robots.allowed(f"http://site.test:{site.port}/no-ws/{i}", budget()) for i in range(5))
        )
    assert answers == [False] * 5
    assert site.robots_requests() == 1


async def test_redirects_are_followed(site: RobotsSite) -> None:
    site.enqueue(Reply(301, b"", headers={"Location": "/real-robots.txt"}))
    site.enqueue(Reply(200, "User-agent: websearch\nDisallow: /x\n", content_type="text/plain"))
    async with fetcher() as f:
        robots = Robots(f, FakeClock())
        assert not await robots.allowed(f"http://site.test:{site.port}/x/1", budget())
        assert await robots.allowed(f"http://site.test:{site.port}/y", budget())
    assert [r.path for r in site.requests] == ["/robots.txt", "/real-robots.txt"]


async def test_a_long_file_is_read_up_to_its_cap(site: RobotsSite) -> None:
    filler = "# " + "x" * 1000 + "\n"
    site.robots = Reply(200, "User-agent: websearch\nDisallow: /x\n" + filler * 1000, content_type="text/plain")
    async with fetcher() as f:
        robots = Robots(f, FakeClock())
        assert not await robots.allowed(f"http://site.test:{site.port}/x", budget())


async def test_robots_off_fetches_nothing(site: RobotsSite) -> None:
    async with fetcher(FetchPolicy(allow_hosts=frozenset({"site.test"}), robots=False)) as f:
        robots = Robots(f, FakeClock())
        assert await robots.allowed(f"http://site.test:{site.port}/no-ws/x", budget())
    assert site.requests == []


async def test_a_barred_origin_and_the_deadline_raise_and_are_not_cached(site: RobotsSite) -> None:
    site.robots = Reply(200, RULES, content_type="text/plain", delay=5)
    async with fetcher() as f:
        robots = Robots(f, FakeClock())
        with pytest.raises(UrlNotAllowed):
            await robots.allowed("http://10.0.0.1/page", budget())
        with pytest.raises(FetchTimeout):
            await robots.allowed(f"http://site.test:{site.port}/page", budget(0.2))
        site.robots = Reply(200, RULES, content_type="text/plain")
        assert not await robots.allowed(f"http://site.test:{site.port}/no-ws/x", budget())
    assert site.robots_requests() == 2
