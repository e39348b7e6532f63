"""Reading a query's operators: what `parse_operators` and the merge into the filters cost, beside
building the search's parameters (`SearchParams`), which every search does anyway.

Run by hand: `python -m bench.bench_operators`. Printed as multiples of building `SearchParams`
for the same query; nothing is asserted. A query without a colon skips the parser altogether.
"""

from __future__ import annotations

from datetime import UTC, datetime

from bench._parse import compare
from websearch import SearchParams
from websearch._core._filters import resolve_filters
from websearch._core._operators import parse_operators

QUERY = 'site:docs.python.org -site:spam.org asyncio "event loop" filetype:pdf after:2025-01-01 intitle:guide'
NOW = datetime(2026, 11, 30, tzinfo=UTC)
KEPT = frozenset({"phrase", "-term", "OR", "filetype", "intitle"})


def main() -> None:
    params, ops = SearchParams(QUERY), parse_operators(QUERY)
    compare(
        {
            "SearchParams(query)": lambda: SearchParams(QUERY),
            "parse_operators": lambda: parse_operators(QUERY),
            "resolve_filters (merge)": lambda: resolve_filters(params, NOW),
            "render(a provider's kept)": lambda: ops.render(KEPT),
        },
        ours="SearchParams(query)",
        header=f"operators of a {len(QUERY)}-character query with 7 operators",
    )


if __name__ == "__main__":
    main()
