"""`POST /v1/search` and `/openapi.json`: the REST face of the same search the library, the CLI
and the MCP tool make.

The body is the MCP tool's arguments (checked by `websearch._faces._tool.parse_arguments`, so a
refusal reads the same everywhere; `text_chars` defaults to the tool's 1200, but without
`num_results` the search takes the library's default, not the tool's 8, so a body of only a
query answers what `websearch search --format json` answers) plus four fields the tool leaves
to the operator: `exclude`, `providers`, `cache` and `hedge`, checked by the one validator of
the parameter table (`websearch._core._params.check`). The OpenAPI document is derived from the same
table (through `input_schema`), with the server's limits written into it.

Answers: 200 with the `--format json` object (`text`, `response`, `error`), or the tool's text
with `?format=blocks|summary`. A failed search is an answer (200, `error` set) unless
`?strict=true` asks for 502. Invalid parameters: 422 `{"error": <why>, "param": <name>}`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import orjson
from starlette.responses import Response

from ..._core._params import CACHE_MODES, Param, check, got
from ..._core._types import SearchParams
from ..._core._version import __version__
from ...errors import InvalidSearchParams, ReplayMiss, WebSearchError
from .._mcp_server import output_schema, tool_text
from .._rendering import json_answer
from .._tool import ARGUMENTS, input_schema, parse_arguments
from ._logging import request_info

if TYPE_CHECKING:
    from starlette.requests import Request

    from ..._client._client import WebSearch
    from ..._core._types import SearchResponse
    from ._config import Limits, ServeConfig

__all__ = [
    "EXTRA_PARAMS",
    "BoundApi",
    "SearchApi",
    "could_not_run",
    "error_response",
    "extra_property",
    "json_response",
    "openapi_document",
    "prepared",
]

FORMATS: Final = ("json", "blocks", "summary")
#: The body fields beyond the MCP tool's arguments.
EXTRA_PARAMS: Final = (
    Param("exclude", "ids", "Providers the automatic chain must skip for this search."),
    Param("providers", "ids", "Only these providers, in this order, for this search (the chain narrowed)."),
    Param(
        "cache",
        "enum",
        "use: serve a fresh cached answer (default); refresh: search anew, then cache; off: neither read nor "
        "write the cache.",
        default="use",
        choices=CACHE_MODES,
    ),
    Param(
        "hedge",
        "number",
        "Start the next provider beside one that has not answered within this many seconds; the first answer wins.",
        minimum=0.1,
        maximum=600,
    ),
)
_EXTRA: Final = {p.name: p for p in EXTRA_PARAMS}
_FIELDS: Final = (*(arg.name for arg in ARGUMENTS), *_EXTRA)


def json_response(status: int, body: Any, headers: Mapping[str, str] | None = None) -> Response:
    """A JSON answer (orjson: fast, and never NaN)."""
    return Response(orjson.dumps(body), status, headers=dict(headers or {}), media_type="application/json")


def error_response(status: int, message: str, param: str | None = None) -> Response:
    """`{"error": <why>}`, with `param` naming the parameter at fault when there is one."""
    return json_response(status, {"error": message} if param is None else {"error": message, "param": param})


def could_not_run(exc: WebSearchError) -> Response:
    """A configuration problem (settings.toml, a stored credential) is the server's (500); a call
    its replay recording does not hold is a 404 that names the call, not the server's file."""
    if isinstance(exc, ReplayMiss):
        return error_response(404, f"not in the replay recording: no recorded {exc.kind} of {exc.request}")
    return error_response(500, f"websearch could not run: {exc}")


def answer_json(response: SearchResponse) -> bytes:
    """The `--format json` object: the summary text, the response, and its error (`json_answer`:
    the bytes `websearch search --format json` prints). orjson writes the dataclasses itself
    (what `SearchResponse.to_dict()` gives, without its deep copy: a quarter of a request's
    time), a non-finite number as null."""
    return json_answer(response)


def note_search(request: Request, response: SearchResponse, query: str) -> None:
    """What the access log says of a search (the query only if `log_queries` lets it)."""
    info = request_info(request.scope)
    info.update(provider=response.provider, outcome="failed" if response.error else "ok", cached=response.cached)
    info["query"] = query


class BoundApi:
    """Routes bound to one client, with the server's limits and the providers it offers (and
    why the others are not available) fixed at start."""

    def __init__(
        self, client: WebSearch, config: ServeConfig, providers: Sequence[str], unavailable: Mapping[str, str]
    ) -> None:
        self.client = client
        self.limits = config.limits
        self.providers = tuple(providers)
        self.unavailable = dict(unavailable)


class SearchApi(BoundApi):
    """`/v1/search`."""

    def __init__(
        self, client: WebSearch, config: ServeConfig, providers: Sequence[str], unavailable: Mapping[str, str]
    ) -> None:
        super().__init__(client, config, providers, unavailable)
        self.lineup = tuple(client.lineup.ids)

    async def search(self, request: Request) -> Response:
        params = request.query_params
        fmt = params.get("format", "json")
        if fmt not in FORMATS:
            return error_response(422, f"format must be one of: {', '.join(FORMATS)}; got {got(fmt)}", "format")
        strict_text = params.get("strict", "false").lower()
        if strict_text not in ("true", "false", "1", "0"):
            return error_response(422, f"strict must be true or false; got {got(strict_text)}", "strict")
        try:
            data = orjson.loads(await request.body())
        except orjson.JSONDecodeError as exc:
            why = f"the body must be a JSON object of search parameters; it is not JSON ({exc})"
            return error_response(400, why, "body")
        if not isinstance(data, dict):
            return error_response(400, f"the body must be a JSON object of search parameters; got {got(data)}", "body")
        try:
            query, provider, kwargs, text_chars = self.parse(data)
            response = await self.client.asearch(query, provider=provider, **kwargs)
        except InvalidSearchParams as exc:
            return error_response(422, exc.message, exc.param)
        except WebSearchError as exc:
            return could_not_run(exc)
        note_search(request, response, query)
        status = 502 if response.error is not None and strict_text in ("true", "1") else 200
        if fmt == "json":
            return Response(answer_json(response), status, media_type="application/json")
        return Response(tool_text(response, fmt, text_chars=text_chars), status, media_type="text/plain; charset=utf-8")

    def parse(self, data: Mapping[str, Any]) -> tuple[str, str | None, dict[str, Any], int]:
        """(query, provider, the other `asearch` arguments, text_chars) of a body; InvalidSearchParams
        naming the field otherwise."""
        unknown = sorted(set(data) - set(_FIELDS))
        if unknown:
            from ..._core._closest import meant

            name = unknown[0]
            fields = ", ".join(_FIELDS)
            raise InvalidSearchParams(
                name, f"{name} must be left out{meant(name, _FIELDS)} (the fields are: {fields}); got {got(data[name])}"
            )
        call = parse_arguments({k: v for k, v in data.items() if k not in _EXTRA}, self.providers, self.unavailable)
        kwargs = dict(call.params)
        for name, value in data.items():
            param = _EXTRA.get(name)
            if param is None or value is None:
                continue
            value = check(param, value)
            if param.kind == "ids":
                if not value or any(i not in self.lineup for i in value):
                    raise InvalidSearchParams(
                        name, f"{name} must be a list of: {', '.join(self.lineup)}; got {got(data[name])}"
                    )
                value = list(value)
            kwargs[name] = value
        if data.get("num_results") is None and data.get("limit") is None:
            del kwargs["limit"]  # the library's default, as `websearch search`, not the MCP tool's 8
        self.limits.check(call.query, {"num_results": data.get("num_results"), **kwargs})
        return call.query, call.provider, prepared(self.client, self.limits, call.query, kwargs), call.text_chars


def prepared(client: WebSearch, limits: Limits, query: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """`kwargs` checked against the server's limits, with a deadline of `max_deadline` when the
    search's own default (`search.deadline`, 30 s; `search.deep_deadline`, 120 s) would be longer,
    so no search holds the server past the limit."""
    limits.check(query, kwargs)
    if kwargs.get("deadline") is None:
        default = client.engine.deadline_for(SearchParams(query, mode=kwargs.get("mode")), None)
        if default > limits.max_deadline:
            kwargs["deadline"] = limits.max_deadline
    return kwargs


def extra_property(param: Param, *, ids: Sequence[str] = (), cap: float | None = None) -> dict[str, Any]:
    """The OpenAPI property of a parameter `serve` takes beside the tool's (`deadline`, `cache`,
    ...): `ids` are the choices of a list of provider ids, `cap` the server's limit on its maximum."""
    prop: dict[str, Any] = {"type": param.json_type, "description": param.help}
    if param.kind == "ids":
        prop["items"] = {"type": "string", "enum": list(ids)}
        prop["minItems"] = 1
    if param.choices:
        prop["enum"] = list(param.choices)
    if param.default is not None:
        prop["default"] = param.default
    if param.minimum is not None:
        prop["minimum"] = param.minimum
    if param.maximum is not None:
        prop["maximum"] = param.maximum if cap is None else min(float(param.maximum), cap)
    return prop


def openapi_document(providers: Sequence[str], lineup: Sequence[str], limits: Limits, auth: bool) -> dict[str, Any]:
    """The OpenAPI 3.1 description of `/v1/search`, from the parameter table and the server's limits."""
    schema = input_schema(providers)
    properties: dict[str, Any] = {name: dict(prop) for name, prop in schema["properties"].items()}
    properties["query"]["maxLength"] = limits.max_query_chars
    properties["num_results"].pop("default", None)  # the tool's 8; here the library's default
    properties["num_results"]["description"] += " Left out: as many as `websearch search` returns."
    for name in ("num_results", "limit", "num_search_results"):
        if name in properties:
            properties[name]["maximum"] = limits.max_limit
    properties["fanout"]["maxItems"] = limits.max_fanout
    properties["deadline"]["maximum"] = min(float(properties["deadline"]["maximum"]), limits.max_deadline)
    for param in EXTRA_PARAMS:
        properties[param.name] = extra_property(param, ids=lineup)
    body = {"type": "object", "properties": properties, "required": ["query"], "additionalProperties": False}
    error = {
        "type": "object",
        "properties": {"error": {"type": "string"}, "param": {"type": "string"}},
        "required": ["error"],
    }
    answer = {
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "The summary layout of the response."},
            "response": output_schema(),
            "error": {"type": ["string", "null"], "description": "Why every provider failed, or null."},
        },
        "required": ["text", "response", "error"],
    }

    def errors(description: str) -> dict[str, Any]:
        return {
            "description": description,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        }

    answered = {
        "application/json": {"schema": {"$ref": "#/components/schemas/Answer"}},
        "text/plain": {"schema": {"type": "string"}},
    }
    operation: dict[str, Any] = {
        "operationId": "search",
        "summary": "Search the web through the server's providers, cache and failover",
        "parameters": [
            {
                "name": "format",
                "in": "query",
                "description": "json: the --format json object; blocks or summary: the web_search tool's text.",
                "schema": {"type": "string", "enum": list(FORMATS), "default": "json"},
            },
            {
                "name": "strict",
                "in": "query",
                "description": "true: a search every provider failed is a 502 instead of a 200 with error set.",
                "schema": {"type": "boolean", "default": False},
            },
        ],
        "requestBody": {"required": True, "content": {"application/json": {"schema": body}}},
        "responses": {
            "200": {"description": "The answer; error is set when every provider failed.", "content": answered},
            "400": errors("The body is not a JSON object."),
            "401": errors("No bearer token, or not a valid one."),
            "413": errors("The body is larger than the server allows."),
            "422": errors("A parameter is not acceptable; param names it."),
            "429": {
                **errors("The token's rate limit is reached."),
                "headers": {"Retry-After": {"schema": {"type": "integer"}, "description": "Seconds to wait."}},
            },
            "502": {"description": "Every provider failed (with ?strict=true).", "content": answered},
            "503": errors("The server is shutting down."),
        },
    }
    document: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": "websearch", "version": __version__, "description": "One search service for many agents."},
        "paths": {"/v1/search": {"post": operation}},
        "components": {"schemas": {"Answer": answer, "Error": error}},
    }
    if auth:
        document["components"]["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
        document["security"] = [{"bearer": []}]
    return document
