"""`/search`, `/config` and `/autocompleter`: SearXNG's API, so tools that speak it (chat UIs,
agent frameworks, MCP servers built for SearXNG) get every websearch provider, the cache and
failover unchanged.

Like searx/webapp.py: GET query or POST form; `q` (400 `No query` without one), `format` (json,
csv or rss; any other is SearXNG's 403 for a format not in `search.formats`, html included:
there is no HTML page here; missing means json, where SearXNG would answer html), `categories`,
`language`, `time_range` (day/week/month/year), `pageno` (1, 2, ...; anything but ASCII digits,
or more than six of them, is a 400 where SearXNG's `str.isdigit` let `²` or a 5,000-digit number
through to a 500), `safesearch` (0, 1, 2) and `engines`; a bad value is SearXNG's 400 `Invalid
value "x" for parameter y`, in the format asked (json: `{"error": ...}`; csv: an empty
attachment; rss: a feed whose one item is the error). How each maps:

- `time_range` → `recency`; `categories` news → `category="news"`, science → "research paper"
  (searched as publication), any other → an unscoped web search (reported as `general`);
- `pageno` → a window of 10 results: page p asks for 10·p and answers the last ten (within
  `[serve] max_limit`; a page past it is empty, as past SearXNG's last page);
- `engines` naming websearch providers → that provider, or a fan-out over several; names it
  does not know are ignored, as SearXNG ignores engines it has not enabled;
- `language` → `language`, and a locale's region → `country` (`de` is German; `de-DE` and `de_DE`
  are German and Germany; `all`, `auto` and none ask for nothing; anything else is a 400, as
  SearXNG refuses a language it does not know); `safesearch` 0, 1, 2 → off, moderate, strict
  (left out: not given, so the `[search] safesearch` setting, if any, holds).

The JSON answer has SearXNG's shape: `query`, `number_of_results`, `results[]` (`url`, `title`,
`content`, `publishedDate`, `engine`, `engines`, `positions`, `score`, `category`, ...),
`answers` (an answer engine's answer), `suggestions` (related questions), `corrections`,
`infoboxes`, `unresponsive_engines` (`[provider, reason]` of each that failed or was passed
over, sorted by provider, in SearXNG's words: every attempt error kind has one, a provider
cooling down or paced is `Suspended: ...`, one cut because another answered first is
`timeout`). A search every provider failed is SearXNG's answer too: no results, every engine
unresponsive, 200. `GET /?q=...` redirects here (308), as SearXNG's index does.

csv is SearXNG's table (`title,url,content,host,engine,score,type`: results, then answers, then
suggestions; an answer's text goes in `content`, where SearXNG leaves it empty), served as
`application/csv` with its `Content-Disposition` (the query percent-encoded beyond ASCII, so any
query fits in a header). rss is SearXNG's OpenSearch RSS 2.0 feed (`text/xml`), titled for
websearch, without the stylesheet and OpenSearch description links (neither is served here).

`/config` is SearXNG's configuration document: `categories`, `engines` (each provider offered,
with the categories it can scope a search to and whether it takes a time range), `version`
(websearch's), and the other keys with what is true here (no plugins, locales or autocompleter).
`/autocompleter` answers SearXNG's shape with no suggestions: `[]` to its own search form
(`X-Requested-With: XMLHttpRequest`), `[q, []]` (OpenSearch suggestions) to anyone else.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import parse_qsl, quote, urlencode, urlsplit
from xml.sax.saxutils import escape, quoteattr

import orjson
from starlette.responses import RedirectResponse, Response

from ..._core._dates import parse_date
from ..._core._version import __version__
from ..._engine._lineup import load_provider
from ...errors import InvalidSearchParams, WebSearchError
from ._api import error_response, json_response, note_search, prepared

if TYPE_CHECKING:
    from starlette.requests import Request

    from ..._client._client import WebSearch
    from ..._core._types import SearchResponse, SearchSource
    from ._config import ServeConfig

__all__ = ["FORMATS", "PAGE_SIZE", "REASONS", "SearxngApi", "searxng_answer"]

PAGE_SIZE: Final = 10
TIME_RANGES: Final = ("day", "week", "month", "year")
#: SearXNG categories websearch can scope a search to, and the `category` it searches as.
CATEGORIES: Final = {"news": "news", "science": "research paper"}
#: The formats served; SearXNG answers 403 to any other (its `search.formats` leaves it out).
FORMATS: Final = ("json", "csv", "rss")
#: A `pageno` longer than this many digits is refused (400), not searched.
_PAGENO_DIGITS: Final = 6
#: An attempt's error kind in the words SearXNG uses for an unresponsive engine (its
#: `exception_classname_to_text`): every kind of `websearch.errors`, and the chain's own.
REASONS: Final = {
    "timeout": "timeout",
    "connection": "network error",
    "rate_limited": "too many requests",
    "quota": "too many requests",
    "auth": "access denied",
    "missing_credential": "access denied",
    "blocked": "CAPTCHA",
    "unavailable": "HTTP error",
    "rejected": "HTTP error",
    "invalid_response": "parsing error",
    "no_results": "no results",
    "cancelled": "timeout",  # another provider answered first: not waited for, as SearXNG's slow engines
    "paced": "too many requests",  # its next request slot was after the deadline
    "error": "unexpected crash",  # a provider error of no known kind: SearXNG's own words for it
}
#: Why a provider was passed over, when SearXNG would call it suspended.
_SUSPENDED: Final = frozenset({"cooldown", "circuit_open", "paced"})
_CSV_COLUMNS: Final = ("title", "url", "content", "host", "engine", "score", "type")


class SearxngApi:
    """`/search`, `/config`, `/autocompleter` (and the `/` redirect) bound to one client."""

    def __init__(self, client: WebSearch, config: ServeConfig, providers: Sequence[str]) -> None:
        self.client = client
        self.limits = config.limits
        self.engines = frozenset(p for p in providers if p != "public")
        self.config_document = _config_document([p for p in providers if p != "public"], config)

    async def index(self, request: Request) -> Response:
        """SearXNG's index: a search goes to /search (308 keeps the method and the form)."""
        form = await _form(request)
        if form.get("q"):
            query = request.url.query
            return RedirectResponse("/search" + (f"?{query}" if query else ""), status_code=308)
        routes = [
            "/v1/search",
            "/v1/fetch",
            "/v1/research",
            "/search",
            "/mcp",
            "/healthz",
            "/readyz",
            "/metrics",
            "/openapi.json",
        ]
        routes += ["/config", "/autocompleter"]
        return json_response(200, {"service": "websearch", "routes": routes})

    async def config(self, request: Request) -> Response:
        """SearXNG's `/config`."""
        return json_response(200, self.config_document)

    async def autocompleter(self, request: Request) -> Response:
        """SearXNG's `/autocompleter`, with no suggestions (no provider gives them)."""
        form = await _form(request)
        if request.headers.get("x-requested-with") == "XMLHttpRequest":
            return Response(b"[]", media_type="application/json")
        return Response(orjson.dumps([form.get("q", ""), []]), media_type="application/x-suggestions+json")

    async def search(self, request: Request) -> Response:
        form = await _form(request)
        fmt = form.get("format") or "json"
        if fmt not in FORMATS:
            why = f"format {fmt} is not served here (the formats are: {', '.join(FORMATS)})"
            return error_response(403, why)
        query = form.get("q", "").strip()
        if not query:
            return _error(request, fmt, 400, "No query", form.get("q", ""))
        pageno = form.get("pageno") or "1"
        if not (pageno.isascii() and pageno.isdigit()) or len(pageno) > _PAGENO_DIGITS or int(pageno) < 1:
            return _invalid(request, fmt, query, "pageno", pageno)
        time_range = form.get("time_range") or ""
        if time_range not in ("", "None", *TIME_RANGES):
            return _invalid(request, fmt, query, "time_range", time_range)
        safesearch = form.get("safesearch") or ""
        if safesearch not in ("", *SAFESEARCH):
            return _invalid(request, fmt, query, "safesearch", safesearch)
        language = form.get("language") or ""
        locale = _locale(language)
        if locale is None:
            return _invalid(request, fmt, query, "language", language)
        asked = [c.strip() for c in (form.get("categories") or "").split(",") if c.strip()]
        category = next((c for c in asked if c in CATEGORIES), None)
        kwargs: dict[str, Any] = dict(locale)
        if safesearch:
            kwargs["safesearch"] = SAFESEARCH[safesearch]
        if time_range in TIME_RANGES:
            kwargs["recency"] = time_range
        if category is not None:
            kwargs["category"] = CATEGORIES[category]
        engines = [e.strip() for e in (form.get("engines") or "").split(",") if e.strip() in self.engines]
        engines = list(dict.fromkeys(engines))
        if len(engines) == 1:
            kwargs["provider"] = engines[0]
        elif engines:
            kwargs["fanout"] = engines
        page = int(pageno)
        start = (page - 1) * PAGE_SIZE
        kwargs["limit"] = min(page * PAGE_SIZE, self.limits.max_limit)
        try:
            prepared(self.client, self.limits, query, kwargs)
            if start >= self.limits.max_limit:  # past the last page this server gives
                return _answer(request, fmt, _empty(query), page)
            response = await self.client.asearch(query, **kwargs)
        except InvalidSearchParams as exc:
            return _error(request, fmt, 400, f"Invalid value for parameter {exc.param}: {exc.message}", query)
        except WebSearchError as exc:
            return _error(request, fmt, 500, f"websearch could not run: {exc}", query)
        note_search(request, response, query)
        answer = searxng_answer(response, query, category or "general", start, self.client.clock.now())
        return _answer(request, fmt, answer, page)


#: SearXNG's safesearch levels as websearch's.
SAFESEARCH: Final = {"0": "off", "1": "moderate", "2": "strict"}
_LOCALE_RE: Final = re.compile(r"([A-Za-z]{2})(?:[-_]([A-Za-z]{2}))?")


def _locale(language: str) -> dict[str, str] | None:
    """SearXNG's `language` as websearch's `language` and `country` ({} for none, all or auto;
    None for a value that is no locale)."""
    if language in ("", "all", "auto"):
        return {}
    match = _LOCALE_RE.fullmatch(language)
    if match is None:
        return None
    lang, region = match.groups()
    return {"language": lang.lower(), **({"country": region.upper()} if region else {})}


def _invalid(request: Request, fmt: str, query: str, name: str, value: str) -> Response:
    return _error(request, fmt, 400, f'Invalid value "{value}" for parameter {name}', query)


def _error(request: Request, fmt: str, status: int, message: str, query: str) -> Response:
    """An error in the format asked, as SearXNG's `index_error` gives it."""
    if fmt == "csv":
        headers = {"content-disposition": "attachment;Filename=searx.csv"}
        return Response(b"", status, headers=headers, media_type="application/csv")
    if fmt == "rss":
        return Response(_rss(request, query, [], 1, error=message), status, media_type="text/xml")
    return error_response(status, message)


def _answer(request: Request, fmt: str, answer: dict[str, Any], page: int) -> Response:
    query: str = answer["query"]
    if fmt == "csv":
        name = quote(query, safe=" !#$&'()+,;=@[]^`{}~")
        headers = {"content-disposition": f"attachment;Filename=searx_-_{name}.csv"}
        return Response(_csv(answer), headers=headers, media_type="application/csv")
    if fmt == "rss":
        return Response(_rss(request, query, answer["results"], page), media_type="text/xml")
    return Response(orjson.dumps(answer), media_type="application/json")


def _csv(answer: dict[str, Any]) -> str:
    """SearXNG's CSV table: a header row, then results, answers and suggestions, one a row."""
    out = io.StringIO()
    writer = csv.writer(out)  # the excel dialect, as SearXNG's
    writer.writerow(_CSV_COLUMNS)
    for result in answer["results"]:
        host = urlsplit(result["url"]).netloc
        writer.writerow(
            [result["title"], result["url"], result["content"], host, result["engine"], result["score"], "result"]
        )
    for item in answer["answers"]:
        url = item["url"] or ""
        writer.writerow(["", url, item["answer"], urlsplit(url).netloc, item["engine"], "", "answer"])
    for suggestion in answer["suggestions"]:
        writer.writerow([suggestion, "", "", "", "", "", "suggestion"])
    return out.getvalue()


def _rss(request: Request, query: str, results: list[dict[str, Any]], page: int, error: str | None = None) -> str:
    """SearXNG's OpenSearch RSS feed of `results` (or of the one `error`)."""
    link = f"{request.base_url}search?{urlencode({'q': query})}"
    q = escape(query)
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<rss version="2.0"',
        '     xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/"',
        '     xmlns:atom="http://www.w3.org/2005/Atom">',
        "  <channel>",
        f"    <title>websearch search: {q}</title>",
        f"    <link>{escape(link)}</link>",
        f'    <description>Search results for "{q}" - websearch</description>',
        "    <opensearch:startIndex>1</opensearch:startIndex>",
        f'    <opensearch:Query role="request" searchTerms={quoteattr(query)} startPage="{page}" />',
    ]
    if error is not None:
        lines += [
            "    <item>",
            "      <title>Error</title>",
            f"      <description>{escape(error)}</description>",
            "    </item>",
        ]
    for result in results:
        lines += [
            "    <item>",
            f"      <title>{escape(result['title'])}</title>",
            "      <type>result</type>",
            f"      <link>{escape(result['url'])}</link>",
            f"      <description>{escape(result['content'])}</description>",
        ]
        if result["publishedDate"]:
            when = datetime.fromisoformat(result["publishedDate"])
            lines.append(f"      <pubDate>{when.strftime('%Y-%m-%d %H:%M:%S%z')}</pubDate>")
        lines.append("    </item>")
    lines += ["  </channel>", "</rss>", ""]
    return "\n".join(lines)


def _config_document(engines: Sequence[str], config: ServeConfig) -> dict[str, Any]:
    """SearXNG's `/config` for the providers offered (see the module's docstring)."""
    listed = []
    for engine in engines:
        supports = load_provider(engine).supports
        scoped = supports.get("category", "no") != "no"
        listed.append(
            {
                "name": engine,
                "categories": ["general", *(CATEGORIES if scoped else ())],
                "shortcut": engine,
                "enabled": True,
                "paging": True,
                "language_support": "language" in supports,
                "languages": [],
                "regions": [],
                "safesearch": "safesearch" in supports,
                "time_range_support": supports.get("recency", "no") != "no",
                "timeout": config.limits.max_deadline,
            }
        )
    return {
        "categories": ["general", *CATEGORIES],
        "engines": listed,
        "plugins": [],
        "instance_name": "websearch",
        "locales": {},
        "default_locale": "",
        "autocomplete": "",
        "safe_search": 0,
        "default_theme": "",
        "version": __version__,
        "public_instance": False,
    }


async def _form(request: Request) -> dict[str, str]:
    """The query string's parameters, overridden by a POST's urlencoded form (as SearXNG reads them)."""
    form = dict(request.query_params)
    if request.method == "POST":
        body = (await request.body()).decode("utf-8", "replace")
        form.update(parse_qsl(body, keep_blank_values=True))
    return form


def _empty(query: str) -> dict[str, Any]:
    return {
        "query": query,
        "number_of_results": 0,
        "results": [],
        "answers": [],
        "corrections": [],
        "infoboxes": [],
        "suggestions": [],
        "unresponsive_engines": [],
    }


def searxng_answer(response: SearchResponse, query: str, category: str, start: int, now: Any) -> dict[str, Any]:
    """A response in SearXNG's JSON shape: its results `start` to `start + 10`."""
    results = [
        _result(i, source, response.provider, category, now)
        for i, source in enumerate(response.sources, 1)
        if start < i <= start + PAGE_SIZE
    ]
    body = _empty(query)
    body.update(
        number_of_results=len(response.sources),
        results=results,
        answers=_answers(response) if start == 0 else [],
        suggestions=[q for q in response.related_questions if q.strip()],
        unresponsive_engines=_unresponsive(response),
    )
    return body


def _result(i: int, source: SearchSource, provider: str, category: str, now: Any) -> dict[str, Any]:
    if source.engines:  # a fan-out: every engine that returned it, at its rank
        engines = [e.provider for e in source.engines]
        positions = [e.rank for e in source.engines]
    else:
        engines, positions = [provider], [i]
    weight = len(positions)  # SearXNG's score: each position counts, more engines count more
    parts = urlsplit(source.url)
    return {
        "url": source.url,
        "title": source.title,
        "content": source.snippet or (source.highlights[0] if source.highlights else ""),
        "publishedDate": _published(source, now),
        "engine": engines[0],
        "engines": engines,
        "positions": positions,
        "score": sum(weight / p for p in positions if p > 0),
        "category": category,
        "template": "default.html",
        "parsed_url": [parts.scheme, parts.netloc, parts.path, "", parts.query, parts.fragment],
        "thumbnail": "",
        "img_src": "",
        "priority": "",
        "author": source.author or "",
    }


def _published(source: SearchSource, now: Any) -> str | None:
    """ISO 8601, as SearXNG writes `publishedDate`: the date given, else now minus its age."""
    when = parse_date(source.published_date)
    if when is None and source.age_seconds is not None:
        from datetime import timedelta

        when = now - timedelta(seconds=source.age_seconds)
    return when.isoformat() if when is not None else None


def _answers(response: SearchResponse) -> list[dict[str, Any]]:
    """Answer engines' answers, as SearXNG's `answers` entries (the first cited URL as `url`)."""
    if response.answers:
        pairs = [(a.provider, a.answer, a.citations) for a in response.answers]
    elif response.answer and response.answer.strip():
        pairs = [(response.provider, response.answer, response.citations)]
    else:
        return []
    return [
        {
            "answer": text,
            "url": citations[0].url if citations else None,
            "engine": provider,
            "template": "answer/legacy.html",
        }
        for provider, text, citations in pairs
    ]


def _unresponsive(response: SearchResponse) -> list[list[str]]:
    """`[provider, reason]` for each provider that failed or was passed over (once each, sorted
    by provider as SearXNG sorts them), in SearXNG's words."""
    out: dict[str, str] = {}
    for attempt in response.attempts:
        if attempt.error is None and attempt.skipped is None:
            continue
        kind = attempt.error_kind or "error"
        if attempt.skipped is None and kind == "no_results":
            continue  # it answered, with nothing: not unresponsive
        if attempt.skipped == "deadline":
            reason = "timeout"
        elif attempt.skipped in _SUSPENDED:
            reason = "Suspended: " + REASONS.get(kind, "too many requests")
        else:
            reason = REASONS.get(kind, REASONS["error"])
        out.setdefault(attempt.provider, reason)
    return [[provider, out[provider]] for provider in sorted(out)]
