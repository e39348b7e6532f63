"""`websearch fetch URL` and `websearch research QUERY`: the reading commands of the CLI.

Split from `_cli` to keep each module readable; as light at import (argparse only), so `--help`
loads no HTTP stack. Exit status as `search`: 0 read, 1 the page was not read (or the research
found nothing), 2 a usage error (`InvalidSearchParams`, said by `main`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from .._core._pages import FORMATS
from .._core._params import CACHE_MODES
from ._exit import EXIT_FAILED, EXIT_OK, EXIT_USAGE

__all__ = ["add_read_commands", "add_replay_options", "fetch_command", "research_command"]


def _whole(least: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number of at least {least}; got {text!r}") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"must be a whole number of at least {least}; got {value}")
        return value

    parse.__name__ = "whole number"
    return parse


def add_replay_options(command: argparse.ArgumentParser) -> None:
    """`--record PATH` and `--replay PATH` (both, one path: replay what it holds, record the rest)."""
    command.add_argument("--record", metavar="PATH", help="append this call and its answer to a JSON Lines recording")
    command.add_argument(
        "--replay",
        metavar="PATH",
        help="answer from a recording only, never the network (with --record PATH too: the rest live, recorded)",
    )


def add_read_commands(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    seconds: Callable[[str], float],
    provider_list: Callable[[str], list[str]],
    provider_ids: tuple[str, ...],
) -> None:
    """Add `fetch` and `research` to the command line (`seconds` and `provider_list` are `_cli`'s
    argument types, `provider_ids` the `--provider` choices)."""
    f = commands.add_parser(
        "fetch",
        help="read one web page as clean text (markdown by default)",
        description="Read one page as text: its main content, in a window of --max-chars from --start (the header "
        "says where to continue). Private and local addresses are refused unless [fetch] allow_hosts or "
        "allow_private allow them; robots.txt is obeyed.",
    )
    f.add_argument("url", help="the http or https address")
    f.add_argument(
        "--max-chars", type=_whole(1), default=20000, metavar="N", help="the most characters (default 20000)"
    )
    f.add_argument("--start", type=_whole(0), default=0, metavar="N", help="where in the text to begin (default 0)")
    f.add_argument("--format", choices=FORMATS, default="markdown", help="the text's format (default markdown)")
    f.add_argument("--cache", choices=CACHE_MODES, default="use", help="use, refresh or off (default use)")
    f.add_argument(
        "--deadline", type=seconds, metavar="SECONDS", help="the most the fetch may take (default: fetch.deadline, 30)"
    )
    f.add_argument("--json", action="store_true", help="print {text, response, error} as JSON")
    add_replay_options(f)

    r = commands.add_parser(
        "research",
        help="search, read the top pages, and print the passages that answer a question, cited",
        description="Search for QUERY, read the top --pages at once, and print the passages that answer it as one "
        "context citing [1], [2]... with its Sources, within a budget of characters or tokens; answer engines' "
        "answers follow, then the pages not used and why.",
    )
    r.add_argument("query", nargs="+", help="the question (several words are joined with spaces)")
    budget = r.add_mutually_exclusive_group()
    budget.add_argument(
        "--budget-chars", type=_whole(1), metavar="N", help="the most characters of context (default 12000)"
    )
    budget.add_argument("--budget-tokens", type=_whole(1), metavar="N", help="the most tokens of context instead")
    r.add_argument("--pages", type=_whole(1), metavar="N", help="how many of the top pages to read (default 5)")
    r.add_argument(
        "--provider", choices=("auto", "public", *provider_ids), metavar="ID", help="search with this provider"
    )
    r.add_argument(
        "--fanout", type=provider_list, metavar="A,B,C", help="search with these providers at once, results fused"
    )
    r.add_argument("--deadline", type=seconds, metavar="SECONDS", help="the most the research may take (default 60)")
    r.add_argument("--json", action="store_true", help="print {text, response, error} as JSON")
    add_replay_options(r)


def _print(text: str, failed: bool, as_json: bool) -> None:
    print(text, file=sys.stderr if failed and not as_json else sys.stdout)


def fetch_command(args: argparse.Namespace) -> int:
    """`websearch fetch`: print the page (or FETCH_FAILED on stderr); 1 if it was not read."""
    import asyncio

    from .._client._client import WebSearch
    from ._render_pages import render_fetch, render_fetch_json
    from ._spinner import Spinner

    client = WebSearch(record=args.record, replay=args.replay)

    async def run() -> Any:
        async with client, Spinner(sys.stderr, "fetching"):
            return await client.afetch(
                args.url,
                max_chars=args.max_chars,
                start=args.start,
                format=args.format,
                cache=args.cache,
                deadline=args.deadline,
            )

    page = asyncio.run(run())
    _print(render_fetch_json(page) if args.json else render_fetch(page), page.error is not None, args.json)
    return EXIT_OK if page.error is None else EXIT_FAILED


def research_command(args: argparse.Namespace) -> int:
    """`websearch research`: print the cited context (or RESEARCH_FAILED on stderr); 1 if none."""
    import asyncio

    from .._client._client import WebSearch
    from ._render_pages import render_research, render_research_json
    from ._spinner import Spinner

    query = " ".join(args.query)
    if not query.strip():
        print("websearch: error: the query is empty", file=sys.stderr)
        return EXIT_USAGE
    search: dict[str, Any] = {}
    if args.fanout:
        search["fanout"] = args.fanout
    if args.provider:
        search["provider"] = args.provider
    client = WebSearch(record=args.record, replay=args.replay)

    async def run() -> Any:
        async with client, Spinner(sys.stderr, "researching"):
            return await client.aresearch(
                query,
                budget_chars=args.budget_chars,
                budget_tokens=args.budget_tokens,
                pages=args.pages,
                search=search,
                deadline=args.deadline,
            )

    response = asyncio.run(run())
    failed = response.error is not None
    _print(render_research_json(response) if args.json else render_research(response), failed, args.json)
    return EXIT_OK if not failed else EXIT_FAILED
