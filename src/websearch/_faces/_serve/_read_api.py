"""`POST /v1/fetch` and `POST /v1/research`: the REST face of reading, beside `/v1/search`.

The bodies are the `web_fetch` and `web_research` tools' arguments (checked by
`websearch._faces._read_tools`, so a refusal reads the same everywhere) plus `deadline`, and for
fetch `cache`; the server's limits hold as for a search (`query` length, `fanout` size,
`deadline`, which is also the default when the setting's own would be longer). Auth, the body
size cap, the rate limit (one token a call), metrics and the access log are the app's gates, as
for `/v1/search`; the log names a fetch's host only when `[serve] log_queries` lets queries be
logged, never a URL's user or password.

Answers: 200 with the response's JSON (`to_json()`, the one form every face writes; a page not
read, or a research that found nothing, is an answer with `error` set); invalid input: 422
`{"error": <why>, "param": <name>}`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import orjson
from starlette.responses import Response

from ..._core._checks import without_userinfo
from ..._core._json import response_json
from ..._core._params import CACHE_MODES, CacheMode, Param, check, got
from ...errors import InvalidSearchParams, WebSearchError
from .._read_tools import parse_fetch, parse_research
from ._api import BoundApi, could_not_run, error_response, extra_property
from ._logging import request_info

if TYPE_CHECKING:
    from starlette.requests import Request


__all__ = ["FETCH_EXTRA", "RESEARCH_EXTRA", "ReadApi", "read_paths"]

_DEADLINE: Final = Param("deadline", "number", "The most seconds the call may take.", minimum=0.1, maximum=600)
_CACHE: Final = Param(
    "cache",
    "enum",
    "use: serve a fresh cached page (default); refresh: read anew, then cache; off: neither read nor write the cache.",
    default="use",
    choices=CACHE_MODES,
)
#: The body fields beyond each tool's arguments.
FETCH_EXTRA: Final = (_CACHE, _DEADLINE)
RESEARCH_EXTRA: Final = (_DEADLINE,)


class ReadApi(BoundApi):
    """`/v1/fetch` and `/v1/research`."""

    async def _body(self, request: Request) -> dict[str, Any] | Response:
        try:
            data = orjson.loads(await request.body())
        except orjson.JSONDecodeError as exc:
            return error_response(400, f"the body must be a JSON object; it is not JSON ({exc})", "body")
        if not isinstance(data, dict):
            return error_response(400, f"the body must be a JSON object; got {got(data)}", "body")
        return data

    def _deadline(self, value: Any, setting: str, default: float) -> float:
        """The call's deadline: the one given (within the server's limit) or the setting's, cut to the limit."""
        if value is None:
            return min(float(self.client.settings.get(setting, default)), self.limits.max_deadline)
        seconds = float(check(_DEADLINE, value))
        self.limits.check("", {"deadline": seconds})
        return seconds

    async def fetch(self, request: Request) -> Response:
        data = await self._body(request)
        if isinstance(data, Response):
            return data
        try:
            extra = _split(data, FETCH_EXTRA)
            call = parse_fetch(data)
            cache: CacheMode = check(_CACHE, extra["cache"]) if extra.get("cache") is not None else "use"
            deadline = self._deadline(extra.get("deadline"), "fetch.deadline", 30.0)
            page = await call.run(self.client, cache=cache, deadline=deadline)
        except InvalidSearchParams as exc:
            return error_response(422, exc.message, exc.param)
        except WebSearchError as exc:
            return could_not_run(exc)
        info = request_info(request.scope)
        info.update(outcome="failed" if page.error else "ok", cached=page.cached)
        info["query"] = without_userinfo(call.url)
        return Response(response_json(page), 200, media_type="application/json")

    async def research(self, request: Request) -> Response:
        data = await self._body(request)
        if isinstance(data, Response):
            return data
        try:
            extra = _split(data, RESEARCH_EXTRA)
            call = parse_research(data, self.providers, self.unavailable)
            self.limits.check(call.query, call.search)
            deadline = self._deadline(extra.get("deadline"), "research.deadline", 60.0)
            response = await call.run(self.client, deadline=deadline)
        except InvalidSearchParams as exc:
            return error_response(422, exc.message, exc.param)
        except WebSearchError as exc:
            return could_not_run(exc)
        info = request_info(request.scope)
        info.update(provider=response.provider, outcome="failed" if response.error else "ok")
        info["query"] = call.query
        return Response(response_json(response), 200, media_type="application/json")


def _split(data: dict[str, Any], extra: Sequence[Param]) -> dict[str, Any]:
    """Take the extra fields (`deadline`, `cache`) out of `data`, leaving the tool's arguments."""
    return {param.name: data.pop(param.name) for param in extra if param.name in data}


def read_paths(providers: Sequence[str], max_deadline: float) -> dict[str, Any]:
    """The OpenAPI paths of `/v1/fetch` and `/v1/research`."""
    from .._mcp_server import output_schema
    from .._read_tools import fetch_input_schema, research_input_schema

    def body(schema: dict[str, Any], extra: Sequence[Param]) -> dict[str, Any]:
        properties = dict(schema["properties"])
        for param in extra:
            properties[param.name] = extra_property(param, cap=max_deadline if param.name == "deadline" else None)
        return {**schema, "properties": properties}

    def errors(description: str) -> dict[str, Any]:
        return {
            "description": description,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        }

    def operation(name: str, summary: str, schema: dict[str, Any], answer: type) -> dict[str, Any]:
        return {
            "post": {
                "operationId": name,
                "summary": summary,
                "requestBody": {"required": True, "content": {"application/json": {"schema": schema}}},
                "responses": {
                    "200": {
                        "description": "The answer; error (with error_kind for a page) is set when nothing was read.",
                        "content": {"application/json": {"schema": output_schema(answer)}},
                    },
                    "400": errors("The body is not a JSON object."),
                    "401": errors("No bearer token, or not a valid one."),
                    "413": errors("The body is larger than the server allows."),
                    "422": errors("A parameter is not acceptable; param names it."),
                    "429": errors("The token's rate limit is reached."),
                    "503": errors("The server is shutting down."),
                },
            }
        }

    from ..._core._pages import FetchResponse, ResearchResponse

    return {
        "/v1/fetch": operation(
            "fetch", "Read one web page as clean text", body(fetch_input_schema(), FETCH_EXTRA), FetchResponse
        ),
        "/v1/research": operation(
            "research",
            "Answer a question with cited passages from several pages",
            body(research_input_schema(providers), RESEARCH_EXTRA),
            ResearchResponse,
        ),
    }
