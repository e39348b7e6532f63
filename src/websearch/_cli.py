"""The `websearch` command: a thin shell over the library.

Exit status: 0 success, 1 the search failed, 2 usage or configuration error, 130 interrupted.
Nothing heavy is imported at module level: `--help`, `providers` and argument errors never load
the HTTP stack or a provider module.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from . import __version__
from ._params import LEGACY_MODES, MODE_VALUES, RECENCY_VALUES
from ._registry import SEARCH_PROVIDER_ORDER
from .errors import ConfigError, InvalidSearchParams

if TYPE_CHECKING:
    from ._client import WebSearch

__all__ = ["main"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
RICH_ARGS = (
    "mode",
    "text_chars",
    "recency_days",
    "recency_hours",
    "start_published_date",
    "end_published_date",
    "category",
    "include_domains",
    "exclude_domains",
    "summary",
    "sort_by_date",
)
#: Providers whose official CLI keeps a login that `websearch auth import` can copy.
IMPORTABLE = ("codex", "gemini")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, got {text}")
    return value


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 < value < 65536:
        raise argparse.ArgumentTypeError(f"must be between 1 and 65535, got {value}")
    return value


def _temperature(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 <= value <= 2:
        raise argparse.ArgumentTypeError(f"must be between 0 and 2, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="websearch",
        description="Search the web through the first configured provider that answers.",
        epilog="Exit status: 0 success, 1 search failed, 2 usage or configuration error, 130 interrupted.",
    )
    parser.add_argument("--version", action="version", version=f"websearch {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    s = commands.add_parser("search", help="run one search and print the result")
    s.add_argument("query", nargs="+", help="the search query (several words are joined with spaces)")
    s.add_argument(
        "--provider",
        choices=("auto", *SEARCH_PROVIDER_ORDER),
        metavar="ID",
        help="use this provider (falls back to the automatic chain when it is not available); "
        "'auto' ignores the providers.webSearch preference",
    )
    s.add_argument(
        "--exclude",
        action="append",
        default=[],
        choices=SEARCH_PROVIDER_ORDER,
        metavar="ID",
        help="never use this provider in the automatic chain (repeatable)",
    )
    s.add_argument("--limit", "--num-results", type=_positive_int, metavar="N", help="maximum number of results")
    s.add_argument("--recency", choices=RECENCY_VALUES, help="only results from the last day, week, month or year")
    s.add_argument("--num-search-results", type=_positive_int, metavar="N", help="search breadth asked of the provider")
    s.add_argument("--max-tokens", type=_positive_int, metavar="N", help="answer length cap (answer engines)")
    s.add_argument("--temperature", type=_temperature, metavar="F", help="sampling temperature (answer engines)")
    rich = s.add_argument_group("richer parameters (mcp-web_search-tool.md)")
    rich.add_argument(
        "--mode", choices=(*MODE_VALUES, *LEGACY_MODES), help="search mode (Exa types; deep-* synthesize)"
    )
    rich.add_argument("--text-chars", type=_positive_int, metavar="N", help="per-result body length (200-8000)")
    rich.add_argument("--recency-days", metavar="N", help="only results published in the last N days")
    rich.add_argument("--recency-hours", metavar="N", help="only results published in the last N hours")
    rich.add_argument("--start-published-date", metavar="DATE", help="ISO date or timestamp lower bound")
    rich.add_argument("--end-published-date", metavar="DATE", help="ISO date or timestamp upper bound")
    rich.add_argument("--category", help="news, publication, company, people, financial report, personal site, ...")
    rich.add_argument(
        "--include-domain",
        action="append",
        dest="include_domains",
        metavar="DOMAIN",
        help="only results from this domain (repeatable, at most 20)",
    )
    rich.add_argument(
        "--exclude-domain",
        action="append",
        dest="exclude_domains",
        metavar="DOMAIN",
        help="no results from this domain (repeatable, at most 20)",
    )
    rich.add_argument("--summary", action="store_true", default=None, help="per-result summaries instead of text")
    rich.add_argument("--sort-by-date", action="store_true", default=None, help="newest first (where supported)")
    s.add_argument("--format", choices=("summary", "blocks", "json"), default="summary", help="output layout")
    s.add_argument(
        "--timeout",
        type=_positive_float,
        metavar="SECONDS",
        help="per-request timeout (default: setting http.timeout, else 60)",
    )

    p = commands.add_parser("providers", help="list the providers in chain order and whether each is available")
    p.add_argument("--format", choices=("text", "json"), default="text")

    m = commands.add_parser(
        "mcp",
        help="serve the web_search tool over MCP (stdio, or streamable HTTP with --http)",
        description="Serve the web_search tool to MCP clients. Needs the mcp extra: "
        "pip install 'websearch[mcp]'. Output layout: setting mcp.format "
        "(blocks or summary; default blocks).",
    )
    m.add_argument("--http", action="store_true", help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio")
    m.add_argument("--host", default="127.0.0.1", help="interface for --http (default 127.0.0.1; no authentication)")
    m.add_argument("--port", type=_port, default=8000, help="port for --http (default 8000)")

    sc = commands.add_parser("schema", help="print the web_search tool's JSON schema for an agent framework")
    sc.add_argument(
        "--format",
        choices=("mcp", "openai", "anthropic"),
        default="mcp",
        help="envelope: an MCP tools/list entry, an OpenAI function or an Anthropic tool",
    )
    sc.add_argument(
        "--available",
        action="store_true",
        help="list only the providers available on this machine in the provider enum (default: auto and all eighteen)",
    )

    a = commands.add_parser("auth", help="manage stored API keys in agent.db")
    auth = a.add_subparsers(dest="auth_command", metavar="ACTION", required=True)
    auth_set = auth.add_parser(
        "set",
        help="store a key for a provider, read from stdin (or prompted); a JSON object with access_token, "
        "refresh_token, expires_at, account_id, project_id is stored as an OAuth login",
    )
    auth_set.add_argument("provider", choices=SEARCH_PROVIDER_ORDER, metavar="ID")
    auth_import = auth.add_parser(
        "import", help="copy a login from the official Codex or Gemini CLI (~/.codex/auth.json, ~/.gemini/)"
    )
    auth_import.add_argument("provider", choices=IMPORTABLE, metavar="ID", help=" or ".join(IMPORTABLE))
    auth.add_parser("list", help="list providers with a stored credential (secrets masked)")
    auth_rm = auth.add_parser("remove", help="delete a provider's stored credential")
    auth_rm.add_argument("provider", choices=SEARCH_PROVIDER_ORDER, metavar="ID")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (the console script's entry point)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    _utf8_stdio()
    try:
        if args.command == "search":
            return _search(args)
        if args.command == "providers":
            return _providers(args)
        if args.command == "mcp":
            return _mcp(args)
        if args.command == "schema":
            return _schema(args)
        return _auth(args)
    except KeyboardInterrupt:
        print("websearch: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (InvalidSearchParams, ConfigError) as exc:
        print(f"websearch: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _client(timeout: float | None = None) -> WebSearch:
    from ._client import WebSearch

    return WebSearch(timeout=timeout)


def _search(args: argparse.Namespace) -> int:
    import asyncio

    from ._rendering import DEFAULT_TEXT_CHARS, render

    query = " ".join(args.query)
    if not query.strip():
        print("websearch: error: the query is empty", file=sys.stderr)
        return EXIT_USAGE
    params: dict[str, Any] = {
        "recency": args.recency,
        "limit": args.limit,
        "num_search_results": args.num_search_results,
        "max_tokens": args.max_tokens,
        "temperature": args.temperature,
        **{name: getattr(args, name) for name in RICH_ARGS},
    }
    client = _client(args.timeout)

    async def run() -> Any:
        async with client:
            return await client.asearch(query, provider=args.provider, exclude=args.exclude, **params)

    response = asyncio.run(run())
    text = render(response, args.format, text_chars=args.text_chars or DEFAULT_TEXT_CHARS)
    if response.error is not None and args.format != "json":
        print(text, file=sys.stderr)
    else:
        print(text)
    if args.format == "summary":  # the spec's layout has no place for notices: say them aside
        for notice in response.notices:
            print(f"note: {notice}", file=sys.stderr)
    return EXIT_OK if response.error is None else EXIT_FAILED


def _providers(args: argparse.Namespace) -> int:
    rows = _client().provider_status()
    if args.format == "json":
        print(json.dumps([row.to_dict() for row in rows], indent=2))
        return EXIT_OK
    width = max(len(r.id) for r in rows)
    for i, row in enumerate(rows, 1):
        state = "available" if row.available else "unavailable"
        marks = "".join((" [preferred]" if row.preferred else "", " [excluded]" if row.excluded else ""))
        detail = "" if row.available else f"  ({row.reason})"
        print(f"{i:2}. {row.id:<{width}}  {row.label:<11} {state}{marks}{detail}")
    return EXIT_OK


def _mcp(args: argparse.Namespace) -> int:
    import asyncio

    try:
        from . import _mcp_server as mcp_server
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] not in ("mcp", "mcp_types", "uvicorn"):
            raise
        print("websearch: error: the MCP server needs the mcp extra: pip install 'websearch[mcp]'", file=sys.stderr)
        return EXIT_USAGE
    if args.http:
        asyncio.run(mcp_server.serve_http(args.host, args.port))
    else:
        asyncio.run(mcp_server.serve_stdio())
    return EXIT_OK


def _schema(args: argparse.Namespace) -> int:
    from ._tool import offered_providers, tool_definition

    providers = offered_providers(_client().provider_status()) if args.available else SEARCH_PROVIDER_ORDER
    print(json.dumps(tool_definition(args.format, providers), indent=2, ensure_ascii=False))
    return EXIT_OK


def _auth(args: argparse.Namespace) -> int:
    store = _client().credentials
    if args.auth_command == "list":
        creds = store.list()
        if not creds:
            print(f"no stored credentials ({store.path})")
        for cred in creds:
            print(f"{cred.provider:<12} {cred.kind:<8} {cred.masked()}")
        return EXIT_OK
    if args.auth_command == "remove":
        if store.remove(args.provider):
            print(f"removed the stored credential for {args.provider}")
            return EXIT_OK
        print(f"websearch: no stored credential for {args.provider}", file=sys.stderr)
        return EXIT_FAILED
    if args.auth_command == "import":
        import importlib
        from pathlib import Path

        module = importlib.import_module(f"websearch._providers.{args.provider}")
        token = module.import_credentials(Path.home())
        store.set(args.provider, "oauth", token.to_dict())
        print(f"imported the {args.provider} login into {store.path}")
        return EXIT_OK
    secret = _read_secret(args.provider)
    if not secret:
        print("websearch: error: no secret given on stdin", file=sys.stderr)
        return EXIT_USAGE
    if secret.startswith("{"):
        from ._oauth import OAuthToken

        try:
            data = json.loads(secret)
        except ValueError:
            raise ConfigError("the input starts with '{' but is not valid JSON") from None
        store.set(args.provider, "oauth", OAuthToken.from_dict(data).to_dict())
        kind = "an OAuth login"
    else:
        store.set(args.provider, "api_key", {"api_key": secret})
        kind = "an API key"
    print(f"stored {kind} for {args.provider} in {store.path}")
    return EXIT_OK


def _read_secret(provider: str) -> str:
    if sys.stdin.isatty():
        import getpass

        return getpass.getpass(f"{provider} API key: ").strip()
    return sys.stdin.read().strip()


def _utf8_stdio() -> None:
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(encoding="utf-8", errors="replace")
