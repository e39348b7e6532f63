"""A fake web site on 127.0.0.1 for tests of `fetch` and `research`.

`fetch` refuses loopback addresses and resolves names itself, so a test site needs three things
besides a server: names that lead to it (`FakeSite.resolver`, an imitation DNS mapping each of
`hosts` to 127.0.0.1, given to `WebSearch(resolver=...)`), leave to reach it (`[fetch]
allow_hosts`: `settings()` or `write_settings(config_dir)`), and pages (`pages`, by path).
A subprocess (the CLI) cannot take a resolver: `url(path, host="127.0.0.1")` reaches the site
by its address, which the settings allow too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from .._core._settings import Settings
from ._server import FakeServer, RecordedRequest, Reply

__all__ = ["FakeResolver", "FakeSite"]

#: The pace `settings()` allows per host: a test site is no third party to be polite to.
TEST_HOST_RATE: Final = "1000/s"
_NOT_FOUND: Final = Reply(404, "<html><body><h1>Not found</h1></body></html>", content_type="text/html; charset=utf-8")


class FakeResolver:
    """Name lookups for `WebSearch(resolver=...)`, an imitation DNS: `answers` maps a name to its
    addresses, or to a list of answers given in turn, one per lookup, the last repeating (a name
    that rebinds: `{"evil.example": [["93.184.216.34"], ["127.0.0.1"]]}`). Any other name does not
    resolve. `calls` records each name looked up. Every address it gives is still checked."""

    def __init__(self, answers: Mapping[str, Sequence[str] | Sequence[Sequence[str]]]) -> None:
        self.answers: dict[str, list[list[str]]] = {name.lower().rstrip("."): _turns(g) for name, g in answers.items()}
        self.calls: list[str] = []

    async def resolve(self, host: str, port: int) -> list[str]:
        """The name's next answer; FetchConnectionError for a name it does not know."""
        from ..errors import FetchConnectionError

        self.calls.append(host)
        found = self.answers.get(host.lower().rstrip("."))
        if not found:
            raise FetchConnectionError(host, f"the name {host} does not resolve")
        return list(found.pop(0) if len(found) > 1 else found[0])


def _turns(given: Sequence[str] | Sequence[Sequence[str]]) -> list[list[str]]:
    """One answer (a list of addresses) or the answers in turn, as a list of answers."""
    if given and isinstance(given[0], str):
        return [[str(address) for address in given]]
    return [[str(address) for address in answer] for answer in given]


class FakeSite(FakeServer):
    """A web site serving `pages` by path (a `Reply`, or bytes / str sent as HTML), 404 for any
    other path; `/robots.txt` is `robots` when given (else 404, which allows everything).

        with FakeSite({"/a": "<html><title>A</title><body><p>Hello</p></body></html>"}) as site:
            with WebSearch(settings=site.settings(), resolver=site.resolver) as client:
                page = client.fetch(site.url("/a"))

    `pages` may be changed while the site serves; `requests` records every request.
    """

    provider_id = "site"

    def __init__(
        self,
        pages: Mapping[str, Reply | bytes | str] | None = None,
        *,
        hosts: Sequence[str] = ("site.test",),
        robots: str | None = None,
    ) -> None:
        super().__init__()
        self.pages: dict[str, Reply | bytes | str] = dict(pages or {})
        self.hosts = tuple(hosts)
        self.robots = robots
        self.resolver = FakeResolver({host: ["127.0.0.1"] for host in self.hosts})

    def default_reply(self, request: RecordedRequest) -> Reply:
        if request.path == "/robots.txt" and "/robots.txt" not in self.pages:
            if self.robots is None:
                return Reply(404, "not found", content_type="text/plain")
            return Reply(200, self.robots, content_type="text/plain; charset=utf-8")
        page = self.pages.get(request.path)
        if page is None:
            return _NOT_FOUND
        if isinstance(page, Reply):
            return page
        return Reply(200, page, content_type="text/html; charset=utf-8")

    def url(self, path: str = "/", host: str | None = None) -> str:
        """The address of `path` on this site, by the name `host` (default: the first of `hosts`;
        "127.0.0.1" needs no resolver)."""
        if not self.port:
            raise RuntimeError("FakeSite is not started: its URLs name its port")
        return f"http://{host or self.hosts[0]}:{self.port}/{path.lstrip('/')}"

    @property
    def allow_hosts(self) -> list[str]:
        """The `[fetch] allow_hosts` that let a client reach this site: its names and 127.0.0.1."""
        return [*self.hosts, "127.0.0.1"]

    def settings_values(self) -> dict[str, Any]:
        """The settings a client needs to fetch this site, as dotted keys: `fetch.allow_hosts`,
        and `fetch.host_rate` (`TEST_HOST_RATE`) so that a test reading many pages is not paced."""
        return {"fetch.allow_hosts": self.allow_hosts, "fetch.host_rate": TEST_HOST_RATE}

    def settings(self, env: Mapping[str, str] | None = None, **more: Any) -> Settings:
        """A `Settings` with `settings_values()` and `more` (dotted keys, e.g. `{"fetch.robots": False}`
        as `**{"fetch.robots": False}`), over `env` (default: none, not the process's)."""
        return Settings({**self.settings_values(), **more}, dict(env or {}))

    def settings_toml(self) -> str:
        """The `[fetch]` table of `settings_values()`, for a settings.toml."""
        return f"[fetch]\nallow_hosts = {json.dumps(self.allow_hosts)}\nhost_rate = {json.dumps(TEST_HOST_RATE)}\n"

    def write_settings(self, config_dir: Path | str) -> Path:
        """Write (or add to) `config_dir`/settings.toml the `[fetch]` table that lets a client,
        or the CLI run with `WEBSEARCH_CONFIG_DIR` there, fetch this site; returns its path.
        ValueError if the file has a `[fetch]` table already (TOML allows one)."""
        import tomllib

        path = Path(config_dir) / "settings.toml"
        path.parent.mkdir(parents=True, exist_ok=True)
        before = path.read_text(encoding="utf-8") if path.exists() else ""
        if "fetch" in tomllib.loads(before):
            raise ValueError(f"{path} has a [fetch] table already: add {self.settings_values()} to it yourself")
        path.write_text((before + "\n" if before else "") + self.settings_toml(), encoding="utf-8")
        return path

    @property
    def env(self) -> dict[str, str]:
        """The site's own state directory (`WEBSEARCH_CACHE_DIR`): a test's cached pages and
        pacing never reach the machine's store."""
        base = super().env
        return {"WEBSEARCH_CACHE_DIR": base["WEBSEARCH_CACHE_DIR"]}
