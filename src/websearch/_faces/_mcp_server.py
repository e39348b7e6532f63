"""The MCP server: `web_search`, `web_fetch` and `web_research`, over stdio or streamable HTTP.

Built on the low-level `Server` of the official MCP SDK (2.x) so that the tool's schema is exactly
`websearch._faces._tool.input_schema` (its `provider` enum computed when the server starts) and argument
errors say what `websearch._faces._tool` says. One `WebSearch` client serves every call for the server's
life. Output is the `blocks` layout unless the setting `mcp.format` is `summary`; beside that text,
the tool returns the response as `structuredContent`, lean (no null, empty or false field: some
clients, pydantic-ai among them, hand the model this object instead of the text), and declares its
`outputSchema` (generated from the dataclasses), as MCP 2025-06-18 defines them. The setting
`mcp.structured_output = false` turns both off. Clients that ignore both still get the text.

The HTTP stack (`websearch._http._transport`, which imports aiohttp) loads in a worker thread:
over HTTP when the server starts, over stdio once it has first listed its tools (an import beside
the handshake slowed a spawned server's answer to `tools/list` by a tenth). `initialize` and
`tools/list` never wait for it (they took 1.3x the SDK's minimal server's start-up when they did);
a call made before it ends waits for it without stalling the event loop.

A provider failure is tool text (`SEARCH_FAILED: ...`), never a protocol error; bad arguments are a
tool error result (`isError`) naming the argument and what it allows. The same holds for the
reading tools: a page not read is `FETCH_FAILED (<kind>): ...`, a research that found nothing
`RESEARCH_FAILED: ...` (`websearch._faces._render_pages`), each with its response as
`structuredContent` under an `outputSchema` of its own.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import types as pytypes
import typing
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, Final

import mcp_types as types
from mcp.server import Server, ServerRequestContext

from .._client._client import WebSearch
from .._core._pages import FetchResponse, ResearchResponse
from .._core._types import SearchResponse
from .._core._version import __version__
from .._http._deferred import preload
from ..errors import ConfigError, InvalidSearchParams, WebSearchError
from ._read_tools import (
    FETCH_TOOL,
    RESEARCH_TOOL,
    fetch_description,
    fetch_input_schema,
    parse_fetch,
    parse_research,
    research_description,
    research_input_schema,
)
from ._render_pages import render_fetch, render_research
from ._rendering import render
from ._tool import TOOL_NAME, description, failure_text, input_schema, offered_providers, parse_arguments

__all__ = [
    "DEFAULT_HTTP_PORT",
    "MCP_FORMATS",
    "ReadingTools",
    "WebSearchTool",
    "build_server",
    "output_format",
    "output_schema",
    "serve_http",
    "serve_stdio",
    "structured_content",
    "structured_output",
    "tool_text",
]

MCP_FORMATS: Final = ("blocks", "summary")
DEFAULT_HTTP_PORT: Final = 8000
HTTP_PATH: Final = "/mcp"
_INSTRUCTIONS: Final = (
    "web_search searches the web through the providers configured on this machine and returns one block per "
    "result with a Sources list. web_fetch reads one page as text (start=K reads on); web_research answers a "
    "question with cited passages from several pages. Cite results by URL."
)


def output_format(client: WebSearch) -> str:
    """The setting `mcp.format`: `blocks` (default) or `summary`."""
    value = client.settings.get_str("mcp.format") or "blocks"
    if value not in MCP_FORMATS:
        raise ConfigError(f"setting mcp.format is {value!r}; use one of: {', '.join(MCP_FORMATS)}")
    return value


def structured_output(client: WebSearch) -> bool:
    """The setting `mcp.structured_output` (default true): return `structuredContent` and declare
    the `outputSchema`; false returns the text alone."""
    return client.settings.get_bool("mcp.structured_output", True)


def tool_text(response: SearchResponse, format: str = "blocks", *, text_chars: int = 1200) -> str:
    """What the tool returns for a response: the rendered results, or the SEARCH_FAILED line.

    Notices are `[...]` lines: the `blocks` header already carries them; the `summary` layout has
    no place for them, so they go above it; after SEARCH_FAILED they follow on their own lines.
    """
    notices = [f"[{notice}]" for notice in response.notices]
    if response.error is not None:
        failed = [(attempt.provider, attempt.error) for attempt in response.attempts]
        return "\n".join([failure_text(response.query, failed, response.error), *notices])
    if format == "summary":
        return "\n".join([*notices, render(response, "summary")])
    return render(response, "blocks", text_chars=text_chars)


_JSON_TYPES: Final = {str: "string", int: "integer", float: "number", bool: "boolean"}
#: What a field typed `Any` holds (a notice's value, as the caller gave it): any JSON value.
_ANY_JSON: Final = {"anyOf": [{"type": t} for t in ("string", "number", "boolean", "array", "object", "null")]}


def _optional(hint: Any) -> bool:
    """Whether the lean structured content may leave a field of this type out: it may be null
    (optional or `Any`), empty (a tuple) or false (a flag)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    nullable = origin in (typing.Union, pytypes.UnionType) and type(None) in args
    return nullable or hint is Any or hint is bool or origin is tuple


def _schema_of(hint: Any) -> dict[str, Any]:
    """The JSON schema of one field type of the response dataclasses: a field that may be null is
    `anyOf` it and null (not a list of types, which not every client reads); the fields the lean
    structured content may leave out are not required."""
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        hints = typing.get_type_hints(hint)
        names = [f.name for f in dataclasses.fields(hint)]
        properties = {name: _schema_of(hints[name]) for name in names}
        required = [name for name in names if not _optional(hints[name])]
        return {"type": "object", "properties": properties, "required": required}
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, pytypes.UnionType) and type(None) in args:
        (inner,) = (arg for arg in args if arg is not type(None))
        return {"anyOf": [_schema_of(inner), {"type": "null"}]}
    if origin is tuple:  # tuple[X, ...]: an array in JSON
        return {"type": "array", "items": _schema_of(args[0])}
    if origin is typing.Literal:
        return {"type": "string", "enum": list(args)}
    if hint is Any:
        return dict(_ANY_JSON)
    return {"type": _JSON_TYPES[hint]}


def output_schema(response: type = SearchResponse) -> dict[str, Any]:
    """A tool's `outputSchema`: `response` (`SearchResponse`, `FetchResponse` or `ResearchResponse`)
    as JSON. It holds for the lean structured content and for the whole response (`--format json`'s
    `response`, every field present, null when unset)."""
    return _schema_of(response)


def _json_safe(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # JSON has no inf or nan
    return value


def _lean(value: Any) -> Any:
    """A response value as JSON without the null, empty and false fields the output schema lets
    go (a field typed `Any`, a notice's value, is kept unless null: `[]` or `false` there is what
    the caller sent)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        optional = _optional_fields(type(value))
        out: dict[str, Any] = {}
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            any_value = optional.get(f.name)
            if any_value is not None and (item is None or (not any_value and not _present(item))):
                continue
            out[f.name] = _lean(item)
        return out
    if isinstance(value, (list, tuple)):
        return [_lean(v) for v in value]
    return value


def _present(item: Any) -> bool:
    return item is not False and item != "" and not (isinstance(item, (list, tuple)) and not item)


_OPTIONAL: Final[dict[type, dict[str, bool]]] = {}


def _optional_fields(cls: type) -> dict[str, bool]:
    """The fields of a response dataclass that the lean structured content may leave out, each
    with whether it is typed `Any` (left out only when null)."""
    fields = _OPTIONAL.get(cls)
    if fields is None:
        hints = typing.get_type_hints(cls)
        fields = _OPTIONAL[cls] = {
            f.name: hints[f.name] is Any for f in dataclasses.fields(cls) if _optional(hints[f.name])
        }
    return fields


def structured_content(response: SearchResponse | FetchResponse | ResearchResponse) -> dict[str, Any]:
    """The tool's `structuredContent`: the response as JSON, lean (no null, empty or false field;
    `output_schema` says which fields may be left out)."""
    data: dict[str, Any] = _json_safe(_lean(response))
    return data


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)


class WebSearchTool:
    """The tool bound to one client: its listing (fixed at start) and its calls."""

    def __init__(self, client: WebSearch) -> None:
        self.client = client
        self.format = output_format(client)
        statuses = client.provider_status()
        self.providers = offered_providers(statuses)
        self.unavailable = {
            s.id: s.reason if not s.available else "excluded by the setting providers.webSearchExclude"
            for s in statuses
            if s.id not in self.providers
        }
        self.schema = input_schema(self.providers)
        self.structured = structured_output(client)
        self.tool = types.Tool(
            name=TOOL_NAME,
            title="Web search",
            description=description(),
            input_schema=self.schema,
            output_schema=output_schema() if self.structured else None,
            annotations=types.ToolAnnotations(title="Web search", read_only_hint=True, open_world_hint=True),
        )

    async def call(self, arguments: Mapping[str, Any]) -> types.CallToolResult:
        """Run one search; provider failures are text, bad arguments an error result."""
        try:
            call = parse_arguments(arguments, self.providers, self.unavailable)
        except InvalidSearchParams as exc:
            return _error(f"Invalid argument `{exc.param}`: {exc.message}")
        try:
            response = await self.client.asearch(call.query, provider=call.provider, **call.params)
        except InvalidSearchParams as exc:
            said = call.as_called(exc)
            return _error(f"Invalid argument `{said.param}`: {said.message}")
        except WebSearchError as exc:  # a configuration problem: settings.toml, a stored credential
            return _error(f"web_search could not run: {exc}")
        text = tool_text(response, self.format, text_chars=call.text_chars)
        structured = structured_content(response) if self.structured else None
        return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=structured)


class ReadingTools:
    """`web_fetch` and `web_research` bound to one client (the providers of `web_research` are
    `web_search`'s)."""

    def __init__(self, search: WebSearchTool) -> None:
        self.client = search.client
        self.providers = search.providers
        self.unavailable = search.unavailable
        self.structured = search.structured
        self.schemas = {FETCH_TOOL: fetch_input_schema(), RESEARCH_TOOL: research_input_schema(self.providers)}
        self.tools = [
            types.Tool(
                name=FETCH_TOOL,
                title="Read a web page",
                description=fetch_description(),
                input_schema=self.schemas[FETCH_TOOL],
                output_schema=output_schema(FetchResponse) if self.structured else None,
                annotations=types.ToolAnnotations(title="Read a web page", read_only_hint=True, open_world_hint=True),
            ),
            types.Tool(
                name=RESEARCH_TOOL,
                title="Research a question",
                description=research_description(),
                input_schema=self.schemas[RESEARCH_TOOL],
                output_schema=output_schema(ResearchResponse) if self.structured else None,
                annotations=types.ToolAnnotations(
                    title="Research a question", read_only_hint=True, open_world_hint=True
                ),
            ),
        ]

    async def call(self, name: str, arguments: Mapping[str, Any]) -> types.CallToolResult:
        """Run one fetch or research; a page not read is text, bad arguments an error result."""
        response: FetchResponse | ResearchResponse
        try:
            if name == FETCH_TOOL:
                fetch = parse_fetch(arguments)
                response = await fetch.run(self.client)
                text = render_fetch(response)
            else:
                call = parse_research(arguments, self.providers, self.unavailable)
                response = await call.run(self.client)
                text = render_research(response)
        except InvalidSearchParams as exc:
            return _error(f"Invalid argument `{exc.param}`: {exc.message}")
        except WebSearchError as exc:  # a configuration problem: settings.toml, a stored credential
            return _error(f"{name} could not run: {exc}")
        structured = structured_content(response) if self.structured else None
        return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=structured)


@asynccontextmanager
async def _loading_at_start(server: Server[Any]) -> AsyncIterator[dict[str, Any]]:
    """On start, begin loading the HTTP stack in its thread, and serve meanwhile."""
    preload()
    yield {}


@asynccontextmanager
async def _loading_later(server: Server[Any]) -> AsyncIterator[dict[str, Any]]:
    yield {}


def build_server(client: WebSearch, *, load_at_start: bool = True) -> Server[Any]:
    """An MCP server offering `web_search`, `web_fetch` and `web_research` through `client` (which
    the caller closes).

    Building it loads nothing heavy. Starting it (HTTP, an in-memory client) begins loading the
    HTTP stack in a worker thread; without `load_at_start` (stdio), listing its tools first does:
    a client spawning the server waits for its handshake, which an import beside it slowed by a
    tenth, and lists the tools before it calls one.
    """
    tool = WebSearchTool(client)
    reading = ReadingTools(tool)
    names = (TOOL_NAME, FETCH_TOOL, RESEARCH_TOOL)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        listed = types.ListToolsResult(tools=[tool.tool, *reading.tools])
        preload()  # once (a call before any list loads it itself, in the same thread)
        return listed

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name == TOOL_NAME:
            return await tool.call(params.arguments or {})
        if params.name in reading.schemas:
            return await reading.call(params.name, params.arguments or {})
        return _error(f"Unknown tool {params.name!r}; this server's tools are: {', '.join(names)}")

    def schema_of(name: str) -> dict[str, Any] | None:
        return tool.schema if name == TOOL_NAME else reading.schemas.get(name)

    return Server(
        "websearch",
        version=__version__,
        instructions=_INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=schema_of,
        lifespan=_loading_at_start if load_at_start else _loading_later,
    )


@asynccontextmanager
async def _own_client(client: WebSearch | None) -> AsyncIterator[WebSearch]:
    """The caller's client (left open: it is theirs to close), or a new one closed at the end."""
    if client is not None:
        yield client
        return
    async with WebSearch() as own:
        yield own


async def serve_stdio(client: WebSearch | None = None) -> None:
    """Serve over stdin/stdout until the client closes stdin."""
    from mcp.server.stdio import stdio_server

    async with _own_client(client) as ws:
        server = build_server(ws, load_at_start=False)
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())


async def serve_http(host: str = "127.0.0.1", port: int = DEFAULT_HTTP_PORT, client: WebSearch | None = None) -> None:
    """Serve streamable HTTP at http://host:port/mcp until interrupted.

    On a loopback host the SDK's DNS-rebinding protection is on (Host and Origin must be local).
    There is no authentication: bind to another interface only behind something that provides it.
    """
    import uvicorn

    async with _own_client(client) as ws:
        app = build_server(ws).streamable_http_app(streamable_http_path=HTTP_PATH, host=host)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
        shown = f"[{host}]" if ":" in host else host
        print(f"websearch MCP server on http://{shown}:{port}{HTTP_PATH}", file=sys.stderr, flush=True)
        await uvicorn.Server(config).serve()
