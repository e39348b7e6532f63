"""The lenient pass: the query's operators enforced on the sources a provider returned.

Whatever a provider did with `site:`, `-site:`, `filetype:`, `intitle:`, `inurl:`, `after:` and
`before:` (a native filter, the operator left in its query, nothing), the chain checks the
sources against them here, one constraint after another:

- `site:` keeps the sources on any of its hosts (or below them), `-site:` drops those on its;
- `filetype:` keeps URLs whose path ends in one of its extensions;
- `intitle:` / `inurl:` keep sources whose title / URL holds the words (case aside);
- `after:` / `before:` keep sources published that day or after / that day or before; a source
  with no date it can read is kept.

A constraint that would remove every source is relaxed instead, with a `relaxed` notice ("no
results matched site:docs.python.org; the constraint was relaxed"): an operator is a wish the
provider may have met another way, and nothing is the worst answer to give. One that removes
some says how many (a `dropped` notice on `query`).

Explicit `include_domains` / `exclude_domains` are not this pass's: the chain enforces those
strictly, as a promise (`_chain._enforce_domains`), even when nothing is left.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING
from urllib.parse import unquote

from .._core._dates import parse_date
from .._core._filters import source_on_domains
from .._core._notices import Notice, relaxed, results_dropped
from .._core._types import ProviderResult, SearchSource

if TYPE_CHECKING:
    from .._providers._base import Plan

__all__ = ["enforce_operators"]

Check = Callable[[SearchSource], bool]


def enforce_operators(result: ProviderResult, plan: Plan) -> list[Notice]:
    """Filter `result.sources` by the query's operators (in place); the notices of what it did."""
    f = plan.filters
    ops = f.operators
    if ops is None or not result.sources:
        return []
    checks: list[tuple[str, str, Check]] = []
    if f.query_sites:
        sites = f.query_sites
        checks.append((" OR ".join(ops.texts("site")), "outside these hosts", lambda s: source_on_domains(s, sites)))
    for site in f.query_excludes:
        text = next((t.text for t in ops.tokens if t.kind == "-site" and t.value == site), f"-site:{site}")
        checks.append((text, "on this host", _off((site,))))
    if ops.filetypes:
        exts = tuple(f".{ext}" for ext in ops.filetypes)
        what = " OR ".join(ops.texts("filetype"))
        checks.append((what, "of other file types", lambda s: _path(s.url).endswith(exts)))
    for token in ops.tokens:
        if token.kind == "intitle":
            checks.append((token.text, "without it in the title", _holds(token.value, lambda s: s.title)))
        elif token.kind == "inurl":
            checks.append((token.text, "without it in the URL", _holds(token.value, lambda s: unquote(s.url))))
    if f.query_start is not None and f.start is not None:
        checks.append((f.query_start, "published before it", _dated(plan.now, f.start.date(), after=True)))
    if f.query_end is not None and f.end is not None:
        checks.append((f.query_end, "published after it", _dated(plan.now, f.end.date(), after=False)))
    notices: list[Notice] = []
    for text, where, check in checks:
        kept = tuple(s for s in result.sources if check(s))
        if not kept:
            notices.append(relaxed(text))
        elif len(kept) < len(result.sources):
            notices.append(results_dropped("query", text, len(result.sources) - len(kept), where))
            result.sources = kept
    return notices


def _off(domains: tuple[str, ...]) -> Check:
    """A check that a source is not on `domains`."""
    return lambda source: not source_on_domains(source, domains)


def _path(url: str) -> str:
    """The URL's path, lowercased (query and fragment left out)."""
    return url.split("#", 1)[0].split("?", 1)[0].split("://", 1)[-1].partition("/")[2].lower()


def _holds(words: str, field: Callable[[SearchSource], str]) -> Check:
    """A check that `field` of a source holds every word of `words`, case aside."""
    wanted = words.lower().split()
    return lambda source: all(word in field(source).lower() for word in wanted)


def _dated(now: datetime, bound: date, *, after: bool) -> Check:
    """A check that a source was published on or after (else on or before) `bound`; a source
    with no readable date passes."""

    def check(source: SearchSource) -> bool:
        day = _day(source, now)
        return day is None or (day >= bound if after else day <= bound)

    return check


def _day(source: SearchSource, now: datetime) -> date | None:
    """The day a source was published: its date as given, else now less its age, else None."""
    when = parse_date(source.published_date) if source.published_date else None
    if when is not None:
        return (when if when.tzinfo is None else when.astimezone(UTC)).date()
    if source.age_seconds is not None:
        try:
            return (now - timedelta(seconds=source.age_seconds)).date()
        except OverflowError:
            return None
    return None
