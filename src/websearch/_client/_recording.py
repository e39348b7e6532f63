"""Record and replay: the same call gives the same answer next week, without the network.

A recording is a JSON Lines file. Each line is one call a client answered (a search, a fetch or
a research): its `kind`, its `key` (the key the cache knows the request by: `Engine.search_key`
for a search, the page key and the window for a fetch, the research's search key with its pages
and budget for a research), the `request` as a person reads it (normalised, no secret), the
`response` in its one JSON form (`websearch._core._json`), the `provider`, when it was recorded
and the websearch version.

Modes: "record" answers every call live and appends it; "replay" answers from the file only, and
a call it does not hold raises `ReplayMiss` without touching the network; "replay_or_live"
answers from the file, else live, and appends. A replayed response says `replayed: true`; the
last line of a key wins.

The file is appended to, never rewritten: each line is one `write` on a descriptor opened with
`O_APPEND`, so two processes appending to one file interleave whole lines; it is created 0600.
No secret is written: the request holds none, the responses' errors are redacted where they are
made, and every line is also scrubbed of the credentials the client knows (keys, tokens,
passwords, a proxy's user and password) and of any URL's `user:password@` before it is written.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

from .._core._json import response_from, response_json
from .._core._pages import FetchResponse, ResearchResponse
from .._core._types import SearchResponse
from .._core._version import __version__
from ..errors import ConfigError, ReplayMiss

if TYPE_CHECKING:
    from .._core._clock import Clock
    from .._core._credentials import CredentialStore
    from .._core._registry import ProviderInfo
    from .._core._settings import Settings
    from .._core._types import SearchParams
    from .._engine._fanout import Fanout

__all__ = [
    "INSIDE",
    "MODES",
    "Recording",
    "fetch_key",
    "fetch_request",
    "known_secrets",
    "recording_for",
    "research_key",
    "research_request",
    "search_request",
]

#: How a recording is used (the setting `[replay] mode`).
MODES: Final = ("record", "replay", "replay_or_live")
Response = SearchResponse | FetchResponse | ResearchResponse
R = TypeVar("R", SearchResponse, FetchResponse, ResearchResponse)
_KINDS: Final[dict[type, str]] = {SearchResponse: "search", FetchResponse: "fetch", ResearchResponse: "research"}
_CLASSES: Final[dict[str, type]] = {kind: cls for cls, kind in _KINDS.items()}
#: How the file is opened for a line: appended to, created 0600, not inherited by a child program.
_APPEND: Final = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
#: The proxy variables whose user and password a recording never holds.
_PROXY_ENV: Final = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")
#: A secret shorter than this is not scrubbed from the text (it would take words with it).
_SHORTEST_SECRET: Final = 8
_USERINFO: Final = re.compile(rb"(?<=://)[^/?#@\s\"\\]+@")
#: Set while a research runs its own search: the research is the call recorded, not its search.
INSIDE: Final[ContextVar[bool]] = ContextVar("websearch_inside_research", default=False)


class Recording:
    """One recording file and its `mode`; `secrets` gives the values no line may hold (asked
    once, when the first line is written). Shared by every loop and thread of a client."""

    def __init__(self, path: Path, mode: str, clock: Clock, secrets: Callable[[], Iterable[str]]) -> None:
        if mode not in MODES:
            raise ConfigError(f"the replay mode is {mode!r}; use one of: {', '.join(MODES)}")
        self.path = path
        self.mode = mode
        self._clock = clock
        self._secrets = secrets
        self._scrub: list[tuple[bytes, bytes]] | None = None
        self._lines: dict[tuple[str, str], Mapping[str, Any]] = {}
        self._read_to = 0  # bytes of the file indexed so far (whole lines only)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Recording({str(self.path)!r}, mode={self.mode!r})"

    def after_fork(self) -> None:
        """In a child made by `fork`: a lock another thread of the parent held stays held here."""
        self._lock = threading.Lock()

    def lookup(self, cls: type[R], key: str, asked: str) -> R | None:
        """The recorded response of `key`, marked replayed; None when it is to be answered live
        (mode "record", or a miss in "replay_or_live"); `ReplayMiss` naming `asked` (the query
        or URL) on a miss in mode "replay"."""
        if self.mode == "record":
            return None
        kind = _KINDS[cls]
        with self._lock:
            line = self._lines.get((kind, key))
            if line is None:
                self._read_more()  # another process may have appended it
                line = self._lines.get((kind, key))
        if line is None:
            if self.mode == "replay":
                raise ReplayMiss(kind, repr(asked), key, str(self.path))
            return None
        try:
            response = response_from(cls, line["response"])
        except (ValueError, KeyError) as exc:
            raise ConfigError(f"{self.path}: the recorded {kind} of key {key} cannot be read ({exc})") from None
        response.replayed = True
        return response

    def add(self, key: str, request: Mapping[str, Any], response: Response) -> None:
        """Append `response` to the file as the answer to `key` (a live call in mode "record" or
        "replay_or_live"), and replay it from now on."""
        import orjson

        kind = _KINDS[type(response)]
        line = {
            "kind": kind,
            "key": key,
            "request": request,
            "response": orjson.Fragment(response_json(response)),
            "provider": getattr(response, "provider", None),
            "recorded_at": self._clock.now().isoformat().replace("+00:00", "Z"),
            "websearch_version": __version__,
        }
        data = self._scrubbed(orjson.dumps(line, default=str)) + b"\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, _APPEND, 0o600)
        try:
            written = os.write(fd, data)  # one write: appended whole, beside another process's lines
            while written < len(data):  # a regular file takes it all at once; a short write goes on
                written += os.write(fd, data[written:])
        finally:
            os.close(fd)
        if self.mode != "record":
            with self._lock:
                self._lines[(kind, key)] = orjson.loads(data)

    def _read_more(self) -> None:
        """Index the lines appended since the last read (every line, the first time)."""
        import orjson

        try:
            with open(self.path, "rb") as file:
                file.seek(self._read_to)
                data = file.read()
        except FileNotFoundError:
            if self.mode == "replay":
                raise ConfigError(f"the recording {self.path} does not exist") from None
            return
        except OSError as exc:
            raise ConfigError(f"cannot read the recording {self.path}: {exc.strerror}") from None
        end = data.rfind(b"\n") + 1  # a line still being written is read next time
        for raw in data[:end].splitlines():
            if not raw.strip():
                continue
            try:
                line = orjson.loads(raw)
                kind, key = line["kind"], line["key"]
            except (ValueError, TypeError, KeyError):
                raise ConfigError(f"{self.path}: a line is not a recorded call ({raw[:60]!r}...)") from None
            if kind in _CLASSES and isinstance(key, str):
                self._lines[(kind, key)] = line
        self._read_to += end

    def _scrubbed(self, data: bytes) -> bytes:
        """`data` without a known secret or a URL's user and password."""
        if self._scrub is None:
            self._scrub = _scrub_pairs(self._secrets())
        for secret, shown in self._scrub:
            if secret in data:
                data = data.replace(secret, shown)
        return _USERINFO.sub(b"***@", data)


def _scrub_pairs(secrets: Iterable[str]) -> list[tuple[bytes, bytes]]:
    """Each secret as a line holds it (JSON-escaped, and as written), longest first."""
    import orjson

    pairs: dict[bytes, bytes] = {}
    for secret in secrets:
        if not isinstance(secret, str) or len(secret) < _SHORTEST_SECRET:
            continue
        pairs[orjson.dumps(secret)[1:-1]] = b"[redacted]"
        pairs[secret.encode()] = b"[redacted]"
    return sorted(pairs.items(), key=lambda pair: -len(pair[0]))


def known_secrets(
    env: Mapping[str, str],
    settings: Settings,
    api_keys: Iterable[str],
    credentials: CredentialStore,
    infos: Iterable[ProviderInfo],
) -> list[str]:
    """Every credential a client knows: the keys given and in the environment (`infos`' variables),
    the stored logins, the secret settings, `serve`'s tokens, the proxies' users and passwords."""
    from urllib.parse import urlsplit

    found: list[str] = [*api_keys]
    for info in infos:
        found += [env.get(name) or "" for name in info.env_keys]
    for key in ("searxng.basicPassword", "searxng.token", "state.url", "serve.tokens"):
        value = settings.get(key)
        found += [value] if isinstance(value, str) else [str(v) for v in value or ()]
    found += [token.strip() for token in (env.get("WEBSEARCH_SERVE_TOKENS") or "").split(",")]
    proxies = [env.get(name) or "" for name in _PROXY_ENV]
    proxies += [v for k, v in settings.items("").items() if "proxy" in k and isinstance(v, str)]
    for proxy in proxies:
        with contextlib.suppress(ValueError):
            parts = urlsplit(proxy)
            if parts.password:
                found += [parts.password, f"{parts.username}:{parts.password}"]
    with contextlib.suppress(Exception):  # an unreadable agent.db holds nothing to write
        for credential in credentials.list():
            found += [v for v in credential.data.values() if isinstance(v, str)]
    return [value for value in found if value]


def recording_for(
    record: str | os.PathLike[str] | None,
    replay: str | os.PathLike[str] | None,
    settings: Settings,
    env: Mapping[str, str],
    clock: Clock,
    secrets: Callable[[], Iterable[str]],
) -> Recording | None:
    """The recording a client uses: `record=` (mode "record"), `replay=` ("replay"), both with
    one path ("replay_or_live"); else `WEBSEARCH_REPLAY` (a path: mode "replay"), which is how
    the MCP server and `serve` are told; else the settings `[replay] path` and `mode` (default
    "replay"); None when there is none."""
    if record is not None and replay is not None:
        if Path(record).expanduser().resolve() != Path(replay).expanduser().resolve():
            raise ConfigError("record= and replay= name two files; give one, or the same file for replay_or_live")
        return Recording(Path(replay).expanduser(), "replay_or_live", clock, secrets)
    if record is not None:
        return Recording(Path(record).expanduser(), "record", clock, secrets)
    replay = replay if replay is not None else env.get("WEBSEARCH_REPLAY") or None
    if replay is not None:
        return Recording(Path(replay).expanduser(), "replay", clock, secrets)
    path = settings.get_str("replay.path")
    if not path:
        return None
    mode = settings.get_str("replay.mode") or "replay"
    return Recording(Path(path).expanduser(), mode, clock, secrets)


# -- the requests and their keys ----------------------------------------------------------------


def search_request(
    params: SearchParams, provider: str | None, asked: list[str] | None, excluded: Iterable[str], plan: Fanout | None
) -> dict[str, Any]:
    """A search as a person reads it: the query as the cache compares it, the parameters given,
    and the providers chosen."""
    from .._engine._cache import normalised

    request: dict[str, Any] = {"query": normalised(params.query), **params.given()}
    if provider is not None:
        request["provider"] = provider
    if asked is not None:
        request["providers"] = asked
    if excluded:
        request["exclude"] = sorted(excluded)
    if plan is not None:
        request["fanout"] = list(plan.ids)
    return request


def fetch_key(url: str, fmt: str, start: int, max_chars: int) -> str:
    """A fetch's key: the page's cache key (the normalised URL and the format) and the window."""
    from .._reading._page_cache import page_key

    return f"{page_key(url, fmt)}:{start}:{max_chars}"


def fetch_request(url: str, fmt: str, start: int, max_chars: int) -> dict[str, Any]:
    """A fetch as a person reads it (the URL as the cache knows it: no user or password)."""
    from .._reading._page_cache import normalised_url

    return {"url": normalised_url(url), "format": fmt, "start": start, "max_chars": max_chars}


def research_key(search_key: str, pages: int, budget_chars: int | None, budget_tokens: int | None) -> str:
    """A research's key: its search's key, the pages it reads and its budget."""
    text = f"{search_key}\n{pages}\n{budget_chars}\n{budget_tokens}"
    return "research:" + hashlib.sha256(text.encode()).hexdigest()


def research_request(
    query: str, options: Mapping[str, Any], pages: int, budget_chars: int | None, budget_tokens: int | None
) -> dict[str, Any]:
    """A research as a person reads it: the question, its search's options and its budget."""
    from .._engine._cache import normalised

    request: dict[str, Any] = {"query": normalised(query), "pages": pages}
    if budget_tokens is not None:
        request["budget_tokens"] = budget_tokens
    else:
        request["budget_chars"] = budget_chars
    if options:
        request["search"] = dict(options)
    return request
