"""The richer parameters, normalised once: mode, text size, the date ladder, category, domains.

`resolve_filters(params, now)` is pure. It applies the rules of mcp-web_search-tool.md that do
not depend on the provider and says, in notices, everything it changed or dropped:

- mode: legacy `neural` / `keyword` search as `auto`;
- text_chars: clamped to 200..8000;
- dates, a precedence ladder: a valid `start_published_date`, else `recency_hours`, else
  `recency_days` (then each provider's own `recency` mapping). An unusable rung falls through
  with a notice, never an error; a rung below the one used is reported as overridden; an end
  before the start is dropped;
- category: `research paper` is renamed `publication`, `tweet` is dropped (the search is
  unscoped), `pdf` / `github` pass through as deprecated (that `company` / `people` take no
  date filter and no `exclude_domains` is Exa's rule, applied by Exa's plan: another provider
  serving the search keeps them);
- domain lists: a URL given for a domain is its host; at most 20 entries each;
- query operators (`websearch._core._operators`), read from the query even when no richer
  parameter is set: `site:` is `include_domains`, `-site:` joins `exclude_domains`, `after:` /
  `before:` are the start and end dates, so every provider's own mapping of those applies. An
  explicit parameter wins over an operator that contradicts it (a `site:` outside the given
  `include_domains`, `after:` beside a start date or `recency`), with a notice; the rest combine.
  What came from the query is kept apart (`query_sites`, `query_excludes`, `query_start`,
  `query_end`): the chain enforces it leniently, and the explicit lists strictly.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Final, Literal
from urllib.parse import urlsplit

from ._dates import parse_date
from ._notices import Notice, approximated, clamped, dropped, overridden, replaced
from ._operators import QueryOperators, may_have_operators, parse_operators
from ._params import LEGACY_MODES, TEXT_CHARS_RANGE
from ._types import SearchParams, SearchSource

__all__ = [
    "MAX_DOMAINS",
    "Filters",
    "on_domains",
    "positive_number",
    "query_filters",
    "recency_start",
    "resolve_filters",
    "source_on_domains",
]

MAX_DOMAINS: Final = 20
_RENAMED: Final = {"research paper": "publication"}
_DROPPED: Final = frozenset({"tweet"})
_DEPRECATED: Final = frozenset({"pdf", "github"})
_KNOWN: Final = _DEPRECATED | {"company", "people", "news", "publication", "financial report", "personal site"}
_RECENCY_DAYS: Final = {"day": 1, "week": 7, "month": 30, "year": 365}

_HOST_RE: Final = re.compile(r"(?:[a-z0-9-]+\.)+[a-z]{2,}")
_NOT_A_DATE: Final = "it is not an ISO date or timestamp"

StartSource = Literal["start_published_date", "recency_hours", "recency_days"]


@dataclass(frozen=True, slots=True)
class Filters:
    """The richer parameters after normalisation (None / empty where not set or dropped)."""

    mode: str | None = None
    text_chars: int | None = None
    start: datetime | None = None  # UTC
    end: datetime | None = None  # UTC
    start_source: StartSource | None = None
    start_has_time: bool = False  # the start is a timestamp (hours, or an explicit timestamp), not a date
    end_has_time: bool = False
    category: str | None = None
    include_domains: tuple[str, ...] = ()
    exclude_domains: tuple[str, ...] = ()
    summary: bool = False
    sort_by_date: bool = False
    #: The query's operators, when it holds one that constrains the results (else None).
    operators: QueryOperators | None = None
    #: `include_domains` taken from `site:` (none was given); `exclude_domains` entries taken from `-site:`.
    query_sites: tuple[str, ...] = ()
    query_excludes: tuple[str, ...] = ()
    #: The `after:` / `before:` operator the start / end came from (its `start_source` reads
    #: "start_published_date": a whole day, as a date given there would be).
    query_start: str | None = None
    query_end: str | None = None

    @property
    def explicit_include(self) -> tuple[str, ...]:
        """`include_domains` as the caller gave them (none when they came from `site:`)."""
        return () if self.query_sites else self.include_domains

    @property
    def explicit_exclude(self) -> tuple[str, ...]:
        """`exclude_domains` as the caller gave them (without those from `-site:`)."""
        return tuple(d for d in self.exclude_domains if d not in self.query_excludes)

    def start_given(self, params: SearchParams) -> tuple[str, object]:
        """The parameter the start came from and its value as given (`query` and the `after:`
        operator, for a start read from the query), for notices."""
        if self.query_start is not None:
            return "query", self.query_start
        name = self.start_source or "start_published_date"
        return name, getattr(params, name)

    def domains_given(self, params: SearchParams, name: str) -> tuple[str, object]:
        """The parameter a domain list (`include_domains` or `exclude_domains`) came from and its
        value as given: the caller's list, else `query` and its `site:` / `-site:` operators."""
        if name == "include_domains" and self.query_sites:
            return "query", " OR ".join(f"site:{d}" for d in self.query_sites)
        given = getattr(params, name)
        if name == "exclude_domains" and not given and self.query_excludes:
            return "query", " ".join(f"-site:{d}" for d in self.query_excludes)
        return name, given

    def end_given(self, params: SearchParams) -> tuple[str, object]:
        """The same for the end: `end_published_date`, or `query` and the `before:` operator."""
        if self.query_end is not None:
            return "query", self.query_end
        return "end_published_date", params.end_published_date


def on_domains(url: str, domains: tuple[str, ...]) -> bool:
    """Is the host of `url` one of `domains` or below one of them? (`www.`, a scheme, a port or
    a path in a domain are ignored: `https://www.example.org:8443/x` names example.org; a final
    dot, the fully qualified spelling, is ignored on both sides.)"""
    try:
        host = (urlsplit(url).hostname or "").lower().rstrip(".")
    except ValueError:
        return False
    names = (_domain_name(d) for d in domains)
    return any(host == name or host.endswith("." + name) for name in names if name)


def _domain_name(domain: str) -> str:
    """The host a domain filter's entry names. A port is dropped: a domain given as a URL with
    one is searched as `host:port`, and enforced as that it matched no result at all."""
    name = domain.lower().split("//")[-1].split("/")[0]
    head, colon, port = name.rpartition(":")
    if colon and (not port or (port.isascii() and port.isdigit())):
        name = head
    return name.rstrip(".").removeprefix("www.")


def source_on_domains(source: SearchSource, domains: tuple[str, ...]) -> bool:
    """Is a source on `domains`: its URL's host, or the host its title names when the title is a
    bare host name (what Gemini's grounding gives for its redirect links)?"""
    if on_domains(source.url, domains):
        return True
    title = source.title.strip().lower()
    return bool(_HOST_RE.fullmatch(title)) and on_domains(f"https://{title}/", domains)


def recency_start(recency: str | None, now: datetime) -> datetime | None:
    """The start of a `recency` window (day 1, week 7, month 30, year 365 days before `now`)."""
    return now - timedelta(days=_RECENCY_DAYS[recency]) if recency in _RECENCY_DAYS else None


def resolve_filters(params: SearchParams, now: datetime) -> tuple[Filters, list[Notice]]:
    """Normalise the richer parameters of `params`; return them with a notice per change."""
    notices: list[Notice] = []
    mode = params.mode
    if mode in LEGACY_MODES:
        notices.append(replaced("mode", mode, f'mode="{LEGACY_MODES[mode]}"', "the legacy search types are gone"))
        mode = LEGACY_MODES[mode]

    text_chars = params.text_chars
    if text_chars is not None:
        low, high = TEXT_CHARS_RANGE
        bounded = min(high, max(low, text_chars))
        if bounded != text_chars:
            notices.append(clamped("text_chars", text_chars, bounded, f"allowed {low}-{high}"))
        text_chars = bounded

    start, start_source, start_has_time = _ladder(params, now, notices)
    end, end_has_time = _end(params, notices)
    if start is not None and end is not None and end < start:
        notices.append(dropped("end_published_date", params.end_published_date, "it is before the start"))
        end, end_has_time = None, False

    category = _category(params.category, notices)
    exclude = _capped("exclude_domains", _hosts("exclude_domains", params.exclude_domains, notices), notices)
    include = _capped("include_domains", _hosts("include_domains", params.include_domains, notices), notices)
    filters = Filters(
        mode=mode,
        text_chars=text_chars,
        start=start,
        end=end,
        start_source=start_source,
        start_has_time=start_has_time,
        end_has_time=end_has_time,
        category=category,
        include_domains=include,
        exclude_domains=exclude,
        summary=bool(params.summary),
        sort_by_date=bool(params.sort_by_date),
    )
    if may_have_operators(params.query):
        filters = query_filters(params, filters, notices)
    return filters, notices


def query_filters(params: SearchParams, filters: Filters, notices: list[Notice]) -> Filters:
    """`filters` with the query's operators merged in (the explicit parameters win a conflict,
    with a notice in `notices`); `filters` itself when the query holds none."""
    ops = parse_operators(params.query)
    if not ops.has_filters:
        return filters
    include, exclude = filters.include_domains, filters.exclude_domains
    query_sites: tuple[str, ...] = ()
    if ops.sites:
        texts = dict(zip(ops.values("site"), ops.texts("site"), strict=False))
        if include:
            for site in ops.sites:
                if site not in include:
                    notices.append(overridden("query", texts.get(site, site), "include_domains"))
        else:
            kept = []
            for site in ops.sites:
                if on_domains(f"https://{site}/", exclude):
                    notices.append(overridden("query", texts.get(site, site), "exclude_domains"))
                else:
                    kept.append(site)
            include = query_sites = _capped("include_domains", tuple(kept), notices)
    query_excludes: list[str] = []
    texts = dict(zip(ops.values("-site"), ops.texts("-site"), strict=False))
    for site in ops.not_sites:
        if any(on_domains(f"https://{domain}/", (site,)) for domain in filters.include_domains):
            notices.append(overridden("query", texts.get(site, site), "include_domains"))
        elif site not in exclude and len(exclude) < MAX_DOMAINS:
            exclude += (site,)
            query_excludes.append(site)
    start, start_source, query_start = filters.start, filters.start_source, None
    after = ops.after
    if after is not None:
        text = f"after:{after.isoformat()}"
        if start_source is not None or params.recency is not None:
            notices.append(overridden("query", text, start_source or "recency"))
        else:
            start, start_source, query_start = (
                datetime(after.year, after.month, after.day, tzinfo=UTC),
                "start_published_date",
                text,
            )
    end, query_end = filters.end, None
    before = ops.before
    if before is not None:
        text = f"before:{before.isoformat()}"
        day = datetime(before.year, before.month, before.day, tzinfo=UTC)
        if end is not None:
            notices.append(overridden("query", text, "end_published_date"))
        elif start is not None and day < start:
            notices.append(dropped("query", text, "it is before the start"))
        else:
            end, query_end = day, text
    return replace(
        filters,
        start=start,
        start_source=start_source,
        start_has_time=filters.start_has_time if query_start is None else False,
        end=end,
        include_domains=include,
        exclude_domains=exclude,
        operators=ops,
        query_sites=query_sites,
        query_excludes=tuple(query_excludes),
        query_start=query_start,
        query_end=query_end,
    )


def positive_number(value: object) -> float | None:
    """A lenient number parameter as a positive float (`"7"` is 7), or None when it is none."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, (int, float)) and math.isfinite(value) and value > 0:
        return float(value)
    return None


def _ladder(
    params: SearchParams, now: datetime, notices: list[Notice]
) -> tuple[datetime | None, StartSource | None, bool]:
    """The first usable rung of start, hours, days; notices for unusable and overridden rungs."""
    chosen: tuple[datetime, StartSource, bool] | None = None
    if params.start_published_date is not None:
        parsed = _parse(params.start_published_date)
        if parsed is None:
            notices.append(dropped("start_published_date", params.start_published_date, _NOT_A_DATE))
        else:
            chosen = (parsed[0], "start_published_date", parsed[1])
    rungs: tuple[tuple[StartSource, float], ...] = (("recency_hours", 3600.0), ("recency_days", 86400.0))
    for name, seconds in rungs:
        raw = getattr(params, name)
        if raw is None:
            continue
        amount = positive_number(raw)
        if amount is None:
            notices.append(dropped(name, raw, "it is not a positive number"))
        elif chosen is not None:
            notices.append(overridden(name, raw, chosen[1]))
        else:
            try:
                chosen = (now - timedelta(seconds=amount * seconds), name, name == "recency_hours")
            except (OverflowError, ValueError):  # reaches before year 1
                notices.append(dropped(name, raw, "it reaches before any date"))
    if chosen is None:
        return None, None, False
    return chosen


def _end(params: SearchParams, notices: list[Notice]) -> tuple[datetime | None, bool]:
    if params.end_published_date is None:
        return None, False
    parsed = _parse(params.end_published_date)
    if parsed is None:
        notices.append(dropped("end_published_date", params.end_published_date, _NOT_A_DATE))
        return None, False
    return parsed


def _parse(value: object) -> tuple[datetime, bool] | None:
    """An ISO date ("2026-01-15") or timestamp, as UTC; and whether it carried a time."""
    if not isinstance(value, str) or len(value.strip()) < 10 or not value.strip()[:4].isdigit():
        return None
    when = parse_date(value)
    if when is None:
        return None
    try:
        return when.astimezone(UTC), len(value.strip()) > 10
    except (OverflowError, ValueError):  # e.g. 0001-01-01 in a zone east of UTC
        return None


def _category(category: str | None, notices: list[Notice]) -> str | None:
    if category is None:
        return None
    key = category.strip().lower()
    if key in _RENAMED:
        notices.append(replaced("category", category, f'category="{_RENAMED[key]}"', "it was renamed"))
        return _RENAMED[key]
    if key in _DROPPED:
        notices.append(dropped("category", category, "it is no longer supported; the search is unscoped"))
        return None
    if key in _DEPRECATED:
        notices.append(approximated("category", category, "given", "it is deprecated and may stop working"))
    return key if key in _KNOWN else category.strip()


def _hosts(name: str, domains: tuple[str, ...] | None, notices: list[Notice]) -> tuple[str, ...]:
    """The host names of a domain list: a URL given for one (`https://example.org/docs`) is its
    host, said once; a name without a scheme is left as it is (`example.org/docs` may be meant).
    Sent as it was, a URL reached Exa and Tavily as a domain no page is on, and Brave and
    Firecrawl as a `site:https://...` operator: no results, or the wrong ones."""
    if not domains:
        return ()
    hosts = tuple(_host_of(d) for d in domains)
    if hosts != domains:
        notices.append(replaced(name, domains, f"{name}={json.dumps(hosts)}", "a domain filter takes host names"))
    return hosts


def _host_of(domain: str) -> str:
    url = _URL.match(domain)
    return url.group(1) if url is not None and url.group(1) else domain


#: A domain written as a URL: its scheme (and any user), its host (group 1), then anything.
_URL: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#@]*@)?([^/?#]*)")


def _capped(name: str, domains: tuple[str, ...], notices: list[Notice]) -> tuple[str, ...]:
    if len(domains) > MAX_DOMAINS:
        notices.append(clamped(name, domains, f"its first {MAX_DOMAINS} entries", f"at most {MAX_DOMAINS} are used"))
        return domains[:MAX_DOMAINS]
    return domains
