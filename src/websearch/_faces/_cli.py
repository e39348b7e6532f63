"""The `websearch` command: a thin shell over the client.

Exit status: 0 success, 1 the search failed, 2 usage or configuration error, 130 interrupted, 141
the output's reader went away (`EXIT_STATUSES`, which `--help` shows). The `search` command's
options are generated from the parameter table (`websearch._core._params`), as is the README's
command-line block (`usage_block`, kept in step by a test). Nothing heavy is imported at module
level: `--help`, `providers` and argument errors never load the HTTP stack or a provider module,
and every action goes through `WebSearch`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, NoReturn

from .._core._params import PARAMS, Param, check
from .._core._registry import PROVIDERS, SEARCH_PROVIDER_ORDER
from .._core._version import __version__
from ..errors import ConfigError, InvalidSearchParams
from ._cli_read import add_read_commands, add_replay_options, fetch_command, research_command
from ._exit import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_READER_GONE, EXIT_USAGE

if TYPE_CHECKING:
    from .._client._client import WebSearch
    from .._state import StoreUnavailable

__all__ = ["build_parser", "main", "usage_block"]

#: What each exit status means, as `--help` lists them (a test holds it to every EXIT_ above).
EXIT_STATUSES: Final = (
    (EXIT_OK, "success"),
    (
        EXIT_FAILED,
        "the search failed (or the page was not read, or the research found nothing), or the state store that "
        "cache and providers --reset act on is unavailable",
    ),
    (EXIT_USAGE, "usage or configuration error"),
    (EXIT_INTERRUPTED, "interrupted"),
    (EXIT_READER_GONE, "the output's reader went away (| head -1)"),
)
FORMATS: Final = ("summary", "blocks", "json")
SCHEMA_FORMATS: Final = ("mcp", "openai", "openai-responses", "anthropic")  # as websearch._faces._tool.SCHEMA_FORMATS
STRICT_FORMATS: Final = ("openai", "openai-responses")
_SERVE_PACKAGES: Final = ("mcp", "mcp_types", "starlette", "uvicorn", "prometheus_client")


def _typed(param: Param) -> Callable[[str], Any]:
    """The argparse `type` of a numeric parameter: parse the text (a whole number exactly, as
    typed), then the table's check, whose words it says."""

    def parse(text: str) -> Any:
        try:
            value: Any = int(text)
        except ValueError:
            try:
                value = None if param.kind == "integer" else float(text)
            except ValueError:
                value = None
            if value is None:
                raise argparse.ArgumentTypeError(f"must be {param.requirement()}; got {text!r}") from None
            if param.kind == "lenient_number" and value.is_integer():
                value = int(value)
        try:
            return check(param, value)
        except InvalidSearchParams as exc:
            said = str(exc).removeprefix(f"{param.name} ").rsplit("; got ", 1)[0]
            raise argparse.ArgumentTypeError(f"{said}; got {text}") from None

    parse.__name__ = param.kind  # what argparse names in "invalid <type> value"
    return parse


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds greater than 0; got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds greater than 0; got {text}")
    return value


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 < value < 65536:
        raise argparse.ArgumentTypeError(f"must be between 1 and 65535, got {value}")
    return value


def _workers(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1; got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1; got {value}")
    return value


def _provider_list(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in PROVIDERS]
    if unknown or not names:
        which = f", and {' and '.join(map(repr, unknown))} {'is not one' if len(unknown) == 1 else 'are not'}"
        raise argparse.ArgumentTypeError(
            f"must be provider ids separated by commas{which if unknown else ''} "
            f"({', '.join(SEARCH_PROVIDER_ORDER)}); got {text!r}"
        )
    return names


def _help(param: Param) -> str:
    text = param.short_help
    text = text[:-1] if text.endswith(".") and not text.endswith("...") else text
    return text[:1].lower() + text[1:]


def _add_param(group: argparse._ActionsContainer, param: Param) -> None:
    flags, name = param.cli, param.name
    if param.kind == "enum":
        group.add_argument(*flags, dest=name, choices=param.choices, help=_help(param))
    elif param.kind == "boolean":
        group.add_argument(*flags, dest=name, action="store_true", default=None, help=_help(param))
    elif param.kind == "domains":
        group.add_argument(*flags, dest=name, action="append", metavar=param.metavar, help=_help(param))
    elif param.kind in ("integer", "number", "lenient_number"):
        group.add_argument(*flags, dest=name, type=_typed(param), metavar=param.metavar, help=_help(param))
    else:
        group.add_argument(*flags, dest=name, metavar=param.metavar, help=_help(param))


def build_parser() -> argparse.ArgumentParser:
    """The command line, `search`'s options generated from the parameter table."""
    parser = argparse.ArgumentParser(
        prog="websearch",
        description="Search the web through the first configured provider that answers.",
        epilog="Exit status: " + ", ".join(f"{code} {meaning}" for code, meaning in EXIT_STATUSES) + ".",
    )
    parser.add_argument("--version", action="version", version=f"websearch {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    s = commands.add_parser("search", help="run one search and print the result")
    s.add_argument("query", nargs="+", help="the search query (several words are joined with spaces)")
    s.add_argument(
        "--provider",
        choices=("auto", "public", *SEARCH_PROVIDER_ORDER),
        metavar="ID",
        help="use this provider (falls back to the automatic chain when it is not available); "
        "'auto' ignores the providers.webSearch preference; 'public' asks every keyless engine at once",
    )
    s.add_argument(
        "--exclude",
        action="append",
        default=[],
        choices=SEARCH_PROVIDER_ORDER,
        metavar="ID",
        help="never use this provider in the automatic chain (repeatable)",
    )
    s.add_argument(
        "--providers",
        type=_provider_list,
        metavar="A,B,C",
        help="use exactly these providers, in this order (each still needs its key)",
    )
    s.add_argument(
        "--fanout",
        type=_provider_list,
        metavar="A,B,C",
        help="ask these providers at once and fuse their results (at most fanout.max_providers)",
    )
    rich = s.add_argument_group("richer parameters")
    for param in PARAMS:
        _add_param(rich if param.rich else s, param)
    s.add_argument("--format", choices=FORMATS, default="summary", help="output layout")
    s.add_argument(
        "--timeout",
        type=_positive_float,
        metavar="SECONDS",
        help="per-request timeout (default: setting http.timeout, else 60)",
    )
    s.add_argument(
        "--deadline",
        type=_positive_float,
        metavar="SECONDS",
        help=(
            "the most the whole search may take (default: setting search.deadline, else 30;"
            " deep modes: search.deep_deadline, else 120)"
        ),
    )
    s.add_argument(
        "--hedge",
        type=_positive_float,
        metavar="SECONDS",
        help="start the next provider beside one that has not answered within this; the first answer wins",
    )
    add_replay_options(s)
    fresh = s.add_mutually_exclusive_group()
    fresh.add_argument(
        "--no-cache", dest="cache", action="store_const", const="off", help="neither read nor write the cache"
    )
    fresh.add_argument("--refresh", dest="cache", action="store_const", const="refresh", help="search anew, then cache")

    add_read_commands(commands, _positive_float, _provider_list, SEARCH_PROVIDER_ORDER)

    p = commands.add_parser(
        "providers", help="list the providers in chain order, whether each is available, and its health"
    )
    p.add_argument("--format", choices=("text", "json"), default="text", help="output layout (default: text)")
    p.add_argument(
        "--reset",
        metavar="ID",
        choices=SEARCH_PROVIDER_ORDER,
        help="forget a provider's cooldown, open circuit and refused keys",
    )

    c = commands.add_parser("cache", help="the search cache: its size and hit rate, or clear it")
    cache = c.add_subparsers(dest="cache_command", metavar="ACTION", required=True)
    stats = cache.add_parser("stats", help="entries, bytes and the hit rate")
    stats.add_argument("--format", choices=("text", "json"), default="text", help="output layout (default: text)")
    clear = cache.add_parser("clear", help="drop cached answers")
    clear.add_argument(
        "--provider",
        choices=(*SEARCH_PROVIDER_ORDER, "public", "fanout"),
        metavar="ID",
        help="only those this provider served (public, fanout: the fused answers)",
    )

    m = commands.add_parser(
        "mcp",
        help="serve the web_search tool over MCP (stdio, or streamable HTTP with --http)",
        description="Serve the web_search tool to MCP clients. Needs the mcp extra: pip install 'websearch-hub[mcp]'. "
        "Output layout: setting mcp.format (blocks or summary; default blocks).",
    )
    m.add_argument("--http", action="store_true", help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio")
    m.add_argument("--host", default="127.0.0.1", help="interface for --http (default 127.0.0.1; no authentication)")
    m.add_argument("--port", type=_port, default=8000, help="port for --http (default 8000)")

    sv = commands.add_parser(
        "serve",
        help="one search service for many agents: REST, SearXNG-compatible /search, MCP, metrics, tokens",
        description="Serve POST /v1/search, a SearXNG-compatible /search, the web_search tool at /mcp, /healthz, "
        "/readyz, /metrics and /openapi.json. Needs the serve extra: pip install 'websearch-hub[serve]'. Tokens: "
        "setting serve.tokens, WEBSEARCH_SERVE_TOKENS or --token-file; limits, rate limit, CORS and logging: "
        "the [serve] settings. Share the cache, cooldowns and rate limits across replicas with [state] url.",
    )
    sv.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    sv.add_argument("--port", type=_port, default=8000, help="port (default 8000)")
    sv.add_argument("--workers", type=_workers, default=1, metavar="N", help="worker processes (default 1)")
    sv.add_argument(
        "--token-file", metavar="PATH", help="bearer tokens, one per line, accepted besides the setting serve.tokens"
    )
    sv.add_argument(
        "--no-auth",
        action="store_true",
        help="ask no token, even off loopback (anyone who can reach the port searches with this machine's keys)",
    )

    sc = commands.add_parser("schema", help="print the web_search tool's JSON schema for an agent framework")
    sc.add_argument(
        "--format",
        choices=SCHEMA_FORMATS,
        default="mcp",
        help="envelope: an MCP tools/list entry, an OpenAI function (Chat Completions), an OpenAI Responses API "
        "function or an Anthropic tool",
    )
    sc.add_argument(
        "--strict",
        action="store_true",
        help="the schema OpenAI's strict mode takes as it is: every property required, null for not given, "
        "no limit alias (with --format openai or openai-responses)",
    )
    sc.add_argument(
        "--available",
        action="store_true",
        help="list only the providers available on this machine in the provider enum (default: auto and all)",
    )

    a = commands.add_parser("auth", help="manage stored API keys in agent.db")
    auth = a.add_subparsers(dest="auth_command", metavar="ACTION", required=True)
    auth_set = auth.add_parser(
        "set",
        help="store a key for a provider, read from stdin (or prompted); a JSON object with access_token, "
        "refresh_token, expires_at, account_id, project_id is stored as an OAuth login",
    )
    keyed = tuple(row.id for row in PROVIDERS.values() if row.credential_ids)  # a keyless engine stores nothing
    auth_set.add_argument("provider", choices=keyed, metavar="ID")
    importable = tuple(row.id for row in PROVIDERS.values() if row.login_import)
    auth_import = auth.add_parser(
        "import",
        help="copy a login from the official CLI: "
        + "; ".join(f"{row.id} from {row.login_import}" for row in PROVIDERS.values() if row.login_import),
    )
    auth_import.add_argument("provider", choices=importable, metavar="ID", help=" or ".join(importable))
    auth.add_parser("list", help="list providers with a stored credential (secrets masked)")
    auth_rm = auth.add_parser("remove", help="delete a provider's stored credential")
    auth_rm.add_argument("provider", choices=SEARCH_PROVIDER_ORDER, metavar="ID")
    return parser


def usage_block() -> str:
    """The README's command-line block, from the same table as the parser."""
    items = ["QUERY", "[--provider ID]", "[--exclude ID]...", "[--providers A,B,C]"]
    for param in PARAMS:
        flag = param.cli[0]
        if param.kind == "enum" and len(param.choices) <= 4:
            items.append(f"[{flag} {'|'.join(param.choices)}]")
        elif param.kind == "boolean":
            items.append(f"[{flag}]")
        elif param.kind == "domains":
            items.append(f"[{flag} {param.metavar}]...")
        else:
            items.append(f"[{flag} {param.metavar or param.name.upper()}]")
    items += ["[--format summary|blocks|json]", "[--timeout SECONDS]", "[--deadline SECONDS]", "[--hedge SECONDS]"]
    items += ["[--no-cache | --refresh]", "[--fanout A,B,C]", "[--record PATH]", "[--replay PATH]"]
    lead = "websearch search "
    lines, line = [], lead
    for item in items:
        if len(line) + len(item) > 100 and line.strip():
            lines.append(line.rstrip())
            line = " " * len(lead)
        line += item + " "
    lines.append(line.rstrip())
    importable = "|".join(row.id for row in PROVIDERS.values() if row.login_import)
    rest = [
        "websearch fetch URL [--max-chars N] [--start N] [--format markdown|text|html] [--cache use|refresh|off]",
        "                    [--deadline SECONDS] [--json] [--record PATH] [--replay PATH]",
        "websearch research QUERY [--budget-chars N | --budget-tokens N] [--pages N] [--provider ID]",
        "                         [--fanout A,B,C] [--deadline SECONDS] [--json] [--record PATH] [--replay PATH]",
        "websearch providers [--format text|json] [--reset ID]",
        "                                             every provider in chain order: available or what makes it",
        "                                             so, and cooling down or not (--reset forgets that)",
        "websearch cache stats [--format text|json] | cache clear [--provider ID]",
        "websearch auth set ID                        store a key (read from stdin, or prompted without echo);",
        "                                             a JSON object {access_token, refresh_token, expires_at,",
        "                                             account_id, project_id} is stored as an OAuth login",
        f"websearch auth import {importable:<22} copy the login of the official CLI",
        "websearch auth list | auth remove ID",
        "websearch schema [--format mcp|openai|openai-responses|anthropic] [--strict] [--available]",
        "websearch mcp [--http] [--host HOST] [--port PORT]",
        "websearch serve [--host HOST] [--port PORT] [--workers N] [--token-file PATH] [--no-auth]",
    ]
    return "\n".join([*lines, *rest])


def _unrecognized(parser: argparse.ArgumentParser, args: argparse.Namespace, extra: list[str]) -> NoReturn:
    """Exit 2 on arguments no option takes, with the usage of the command they were given to
    (argparse shows the top level's) and the option meant, when one is close: `--json` is
    `--format json`."""
    from .._core._closest import closest

    command = parser
    while True:  # down to the innermost command given (`websearch cache clear`)
        chosen = next(
            (
                sub.choices[value]
                for sub in command._actions
                if isinstance(sub, argparse._SubParsersAction)
                and isinstance(value := getattr(args, str(sub.dest), None), str)
                and value in sub.choices
            ),
            None,
        )
        if chosen is None:
            break
        command = chosen
    options = [flag for action in command._actions for flag in action.option_strings]
    formats = next((a.choices for a in command._actions if "--format" in a.option_strings), None) or ()
    hints = []
    for word in extra:
        flag = word.split("=", 1)[0]
        if not flag.startswith("--"):
            continue
        if flag[2:] in formats:
            hints.append(f"{flag} is --format {flag[2:]}")
        elif found := closest(flag, options):
            hints.append(f"did you mean {found}?")
    hint = f" ({'; '.join(hints)})" if hints else ""
    command.error(f"unrecognized arguments: {' '.join(extra)}{hint}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (the console script's entry point)."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        _unrecognized(parser, args, extra)
    _utf8_stdio()
    _plain_warnings()
    try:
        status = _command(args)
        if sys.stdout is not None:  # None: started with stdout closed (`>&-`), printing nothing
            sys.stdout.flush()  # a reader gone shows here, not as a traceback at exit
        return status
    except BrokenPipeError:
        return _reader_gone()
    except KeyboardInterrupt:
        print("websearch: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (InvalidSearchParams, ConfigError) as exc:
        print(f"websearch: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _command(args: argparse.Namespace) -> int:
    commands: dict[str, Callable[[argparse.Namespace], int]] = {
        "search": _search,
        "fetch": fetch_command,
        "research": research_command,
        "providers": _providers,
        "cache": _cache,
        "mcp": _mcp,
        "schema": _schema,
        "serve": _serve,
        "auth": _auth,
    }
    return commands[args.command](args)


def _reader_gone() -> int:
    """The output's reader went away (`websearch search q | head -1`): stop quietly, as a tool
    the shell's SIGPIPE ends. What is still buffered goes to /dev/null, or Python's own flush at
    exit would fail again, with a message of its own."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        for stream in (sys.stdout, sys.stderr):
            os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (AttributeError, OSError, ValueError):  # a stream with no file behind it (embedded, tests)
        pass
    return EXIT_READER_GONE


def _client(timeout: float | None = None, args: argparse.Namespace | None = None) -> WebSearch:
    from .._client._client import WebSearch

    if args is None:
        return WebSearch(timeout=timeout)
    return WebSearch(timeout=timeout, record=args.record, replay=args.replay)


def _search(args: argparse.Namespace) -> int:
    import asyncio

    from .._core._params import DEFAULT_TEXT_CHARS
    from ._rendering import cached_note, render
    from ._spinner import Spinner

    query = " ".join(args.query)
    if not query.strip():
        print("websearch: error: the query is empty", file=sys.stderr)
        return EXIT_USAGE
    params: dict[str, Any] = {param.name: getattr(args, param.name) for param in PARAMS}
    params |= {"cache": args.cache or "use", "deadline": args.deadline, "hedge": args.hedge}
    client = _client(args.timeout, args)

    async def run() -> Any:
        async with client, Spinner(sys.stderr, "searching"):
            return await client.asearch(
                query,
                provider=args.provider,
                exclude=args.exclude,
                providers=args.providers,
                fanout=args.fanout,
                **params,
            )

    response = asyncio.run(run())
    text = render(response, args.format, text_chars=args.text_chars or DEFAULT_TEXT_CHARS)
    if response.error is not None and args.format != "json":
        print(text, file=sys.stderr)
    else:
        print(text)
    if args.format == "summary":  # the spec's layout has no place for notices: say them aside
        if response.cached:
            print(f"note: {cached_note(response)}", file=sys.stderr)
        for notice in response.notices:
            print(f"note: {notice.message}", file=sys.stderr)
    return EXIT_OK if response.error is None else EXIT_FAILED


def _providers(args: argparse.Namespace) -> int:
    import asyncio

    client = _client()

    async def read_health() -> dict[str, str]:
        async with client:
            if args.reset:
                await client.reset_health(args.reset)
            states = await client.provider_health()
            degraded = client.engine.state().degraded
            if degraded:
                print(f"websearch: warning: {_UNAVAILABLE.format(degraded)}; cooldowns are not known", file=sys.stderr)
            return states

    from .._state import StoreUnavailable

    try:
        rows, states = client.provider_status(), asyncio.run(read_health())
    except StoreUnavailable as exc:
        return _store_out(exc, "its health record was not reset")
    if args.reset:
        print(f"forgot the health record of {args.reset}", file=sys.stderr)
    if args.format == "json":
        # `reason` says what would make a provider available: null for one that is (it read
        # "not configured" for the keyless engines), but public's, which says what it is.
        listed = [
            {**row.to_dict(), "reason": row.reason if not row.available or row.id == "public" else None}
            | {"health": states.get(row.id)}
            for row in rows
        ]
        print(json.dumps(listed, indent=2))
        return EXIT_OK
    width = max(len(r.id) for r in rows)
    for i, row in enumerate(rows, 1):
        state = "available" if row.available else "unavailable"
        if row.id == "public":  # not in the chain: the fan-out over the keyless engines
            print(f"    {row.id:<{width}}  {row.label:<11} {state}{' [preferred]' * row.preferred}  ({row.reason})")
            continue
        marks = "".join(
            (
                " [preferred]" if row.preferred else "",
                " [excluded]" if row.excluded else "",
                " [not in webSearchOrder]" if row.left_out else "",
            )
        )
        detail = "" if row.available else f"  ({row.reason})"
        health = f"  [{states[row.id]}]" if row.id in states else ""
        place = "   " if row.left_out else f"{i:2}."  # numbered: its place in the automatic chain
        print(f"{place} {row.id:<{width}}  {row.label:<11} {state}{marks}{detail}{health}")
    return EXIT_OK


def _cache(args: argparse.Namespace) -> int:
    import asyncio

    client = _client()

    async def run() -> Any:
        async with client:
            if args.cache_command == "clear":
                return await client.clear_cache(args.provider)
            return await client.cache_stats()

    from .._state import StoreUnavailable

    try:
        result = asyncio.run(run())
    except StoreUnavailable as exc:
        return _store_out(exc, "nothing was cleared in it" if args.cache_command == "clear" else "no cache statistics")
    if args.cache_command == "clear":
        which = f" served by {args.provider}" if args.provider else ""
        print(f"removed {_counted(result, 'cached answer')}{which}")
    elif args.format == "json":
        print(json.dumps(result, indent=2))
    else:
        rate = "n/a" if result["hit_rate"] is None else f"{result['hit_rate']:.0%}"
        size = f"{_counted(result['entries'], 'entry', 'entries')}, {_counted(result['bytes'], 'byte')}"
        looks = f"{_counted(result['hits'], 'hit')}, {_counted(result['misses'], 'miss', 'misses')}"
        print(f"{size} in the {result['store']} store; {looks} (hit rate {rate})")
    return EXIT_OK


_UNAVAILABLE: Final = "the shared state store is unavailable ({})"


def _store_out(exc: StoreUnavailable, outcome: str) -> int:
    """A command about the shared store, which could not serve it: why, and what did not happen."""
    print(f"websearch: error: {_UNAVAILABLE.format(exc.reason)}; {outcome}", file=sys.stderr)
    return EXIT_FAILED


def _counted(n: int, one: str, many: str | None = None) -> str:
    """`n` and the noun for it: "1 entry", "2 entries"."""
    return f"{n} {one if n == 1 else many or one + 's'}"


def _can_listen(command: str, host: str, port: int) -> bool:
    """Whether `host`:`port` can be listened on; else the one line saying why."""
    from ._serve import cannot_listen

    why = cannot_listen(host, port)
    if why is not None:
        print(f"websearch: error: {command} cannot listen on {host}:{port}: {why.lower()}", file=sys.stderr)
    return why is None


def _mcp(args: argparse.Namespace) -> int:
    import asyncio

    try:
        from . import _mcp_server as mcp_server
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] not in ("mcp", "mcp_types", "uvicorn"):
            raise
        print("websearch: error: the MCP server needs the mcp extra: pip install 'websearch-hub[mcp]'", file=sys.stderr)
        return EXIT_USAGE
    if args.http:
        if not _can_listen("mcp --http", args.host, args.port):
            return EXIT_FAILED
        asyncio.run(mcp_server.serve_http(args.host, args.port))
        return EXIT_OK
    try:
        asyncio.run(mcp_server.serve_stdio())
    except BaseExceptionGroup as group:  # the server's task group: a client gone is a broken pipe in it
        _, rest = group.split(BrokenPipeError)
        if rest is not None:
            raise
        return _reader_gone()
    return EXIT_OK


def _serve(args: argparse.Namespace) -> int:
    import os

    from .._core._settings import Settings, config_dir
    from . import _serve as serve  # light: the configuration only

    settings = Settings.load(config_dir(os.environ), os.environ)
    config = serve.ServeConfig.load(
        settings,
        os.environ,
        host=args.host,
        port=args.port,
        workers=args.workers,
        token_file=args.token_file,
        no_auth=args.no_auth,
    )
    try:
        serve.check_installed()
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] not in _SERVE_PACKAGES:
            raise
        print("websearch: error: serve needs the serve extra: pip install 'websearch-hub[serve]'", file=sys.stderr)
        return EXIT_USAGE
    if not _can_listen("serve", config.host, config.port):
        return EXIT_FAILED
    if args.no_auth:
        ignored = " (the configured tokens are ignored)" if config.tokens else ""
        print(
            f"websearch: warning: --no-auth: no token is asked for{ignored}; anyone who can reach "
            f"{args.host}:{args.port} searches with this machine's keys",
            file=sys.stderr,
        )
    serve.run(config)
    return EXIT_OK


def _schema(args: argparse.Namespace) -> int:
    from ._tool import offered_providers, tool_schema

    if args.strict and args.format not in STRICT_FORMATS:
        print(f"websearch: error: --strict needs --format {' or '.join(STRICT_FORMATS)}", file=sys.stderr)
        return EXIT_USAGE
    providers = offered_providers(_client().provider_status()) if args.available else None
    print(json.dumps(tool_schema(args.format, strict=args.strict, providers=providers), indent=2, ensure_ascii=False))
    return EXIT_OK


def _auth(args: argparse.Namespace) -> int:
    client = _client()
    where = client.credentials.path
    if args.auth_command == "list":
        creds = client.stored_credentials()
        if not creds:
            print(f"no stored credentials ({where})")
        for cred in creds:
            print(f"{cred.provider:<12} {cred.kind:<8} {cred.masked()}")
        return EXIT_OK
    if args.auth_command == "remove":
        if client.remove_credential(args.provider):
            print(f"removed the stored credential for {args.provider}")
            return EXIT_OK
        print(f"websearch: no stored credential for {args.provider}", file=sys.stderr)
        return EXIT_FAILED
    if args.auth_command == "import":
        client.import_login(args.provider)
        print(f"imported the {args.provider} login into {where}")
        return EXIT_OK
    secret = _read_secret(args.provider)
    if not secret:
        print("websearch: error: no secret given on stdin", file=sys.stderr)
        return EXIT_USAGE
    cred = client.store_credential(args.provider, secret)
    kind = "an OAuth login" if cred.kind == "oauth" else "an API key"
    print(f"stored {kind} for {args.provider} in {where}")
    return EXIT_OK


def _read_secret(provider: str) -> str:
    if sys.stdin.isatty():
        import getpass

        return getpass.getpass(f"{provider} API key: ").strip()
    return sys.stdin.read().strip()


def _plain_warnings() -> None:
    """websearch's own warnings as one `websearch: warning: ...` line on stderr."""
    import warnings

    from ..errors import ConfigWarning

    def show(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        if issubclass(category, ConfigWarning):
            print(f"websearch: warning: {message}", file=sys.stderr)
        else:
            default(message, category, *args, **kwargs)

    default = warnings.showwarning
    warnings.showwarning = show


def _utf8_stdio() -> None:
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(encoding="utf-8", errors="replace")
