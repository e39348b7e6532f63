"""Serper: Google's results through serper.dev, keyed by `SERPER_API_KEY` or a stored credential.

POST https://google.serper.dev/search with the key in `X-API-KEY` and the JSON body
`{q, num}`: `num` is the collapsed count clamped to 1..100, default 10. The richer parameters
add fields only when given:
- dates: Google's `tbs`, built by `_tbs` as for Google itself: `recency` is `qdr:d/w/m/y`,
  `recency_hours` / `recency_days` a relative window (`qdr:hN`, `qdr:dN`), a start or an end
  date the custom range `cdr:1,cd_min:M/D/YYYY,cd_max:M/D/YYYY` in whole days (notices say what
  was rounded);
- `include_domains` / `exclude_domains`: Serper has no domain filter, so they are `site:` /
  `-site:` operators in `q` (a notice), and the chain enforces them on the results.
`country` and `language` are `gl` (lower case) and `hl`; Serper documents no safe-search
field, so `safesearch` is not applied (the chain's notice). `page` is never sent: one page of up
to 100 results is enough for any count.

The answer: `organic[]` ({title, link, snippet, date, position, sitelinks}) in `position`
order are the sources, after the answer box's and the knowledge graph's links (each URL once,
all cut to the count). The answer box (`answerBox`: {title, answer | snippet |
snippetHighlighted, link}) is the answer: its `answer` after its title ("France / Capital:
Paris"), else its snippet. `peopleAlsoAsk[].question` then `relatedSearches[].query` are the
related questions. A result's `date` ("Mar 5, 2024", "3 days ago") is its published date.
Sitelinks and `credits` (what the request cost) are not surfaced.

Errors are `{"message": "...", "statusCode": N}`: 403 `Unauthorized.` for a bad key (auth),
429 rate limited, 400 for a refused request. Serper reports an exhausted account as a 400
"Not enough credits", told from other 400s only by that text; websearch never decides by
message text, so it is a rejected request (kind `rejected`) whose message carries Serper's words.

Where these facts come from (facts only; no code copied):
- the endpoint, `X-API-KEY`, the body fields `q`/`num`/`gl`/`hl`/`tbs`/`page`, the fields of
  `organic`, `answerBox`, `knowledgeGraph`, `peopleAlsoAsk`, `relatedSearches`: the upstream
  tool's provider module (oh-my-pi, packages/coding-agent/src/web/search/providers/serper.ts:
  `num` at most 100, default 10, recency as `qdr:`, the answer box and knowledge graph as the
  first sources, people-also-ask and related searches as related questions), LangChain's
  GoogleSerperAPIWrapper (`gl`/`hl`/`num`/`tbs`/`page`, answerBox and knowledgeGraph fields) and
  public type declarations of the response (organic `position`, `date`, `sitelinks`;
  peopleAlsoAsk `question`/`snippet`/`title`/`link`; relatedSearches `query`).
- errors: `{"message": "Unauthorized.", "statusCode": 403}` quoted in crewAI issue #633;
  `{"message": "Not enough credits", "statusCode": 400}` quoted verbatim by several projects'
  tests of Serper.
Guessed: the 429 body (same envelope, "Too many requests"), a request-id header (read as
upstream does, `x-request-id`), that `tbs` takes Google's own custom-range syntax unpadded
(Serper passes it to Google), and that `hl` takes a language code as Google does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Final

from .._core._registry import PROVIDERS
from .._core._types import ProviderResult, SearchParams, SearchSource
from .._core._wire import HttpRequest, HttpResponse
from ._base import (
    HttpProvider,
    Plan,
    Support,
    as_dict,
    as_int,
    as_list,
    as_str,
    count,
    honours,
    make_source,
    require_key,
    site_operator_notices,
    with_site_operators,
)
from ._errors import ErrorEnvelope
from ._tbs import TbsWords, tbs_parts

if TYPE_CHECKING:
    from .._core._context import ProviderContext

__all__ = ["PROVIDER", "Serper"]

URL: Final = "https://google.serper.dev/search"
DEFAULT_RESULTS: Final = 10
MAX_RESULTS: Final = 100
WHOLE_DAYS: Final = "Serper's custom date range (Google's tbs) takes whole days"
RANGE_FOR_END: Final = "with end_published_date Serper needs Google's custom date range, which takes whole days"
WHOLE_HOURS: Final = "Serper's relative windows (Google's tbs) count whole hours"
_TBS_WORDS: Final = TbsWords(WHOLE_DAYS, RANGE_FOR_END, WHOLE_HOURS, start_day="its start day")


def _locale_fields(country: str | None, language: str | None) -> dict[str, str]:
    """Serper's locale fields: `gl` the country (ISO 3166-1 alpha-2, lower case), `hl` the
    language (ISO 639-1, lower case). Each only when given: a language alone sets no country."""
    fields: dict[str, str] = {}
    if country and country.strip():
        fields["gl"] = country.strip().lower()
    if language and language.strip():
        fields["hl"] = language.strip().lower()
    return fields


class Serper(HttpProvider):
    info = PROVIDERS["serper"]
    supports: ClassVar[dict[str, Support]] = {
        "recency": "native",
        "limit": "native",
        "num_search_results": "native",
        "recency_days": "native",
        "recency_hours": "native",  # a fraction of an hour is rounded up (a notice)
        "start_published_date": "native",  # whole days: a timestamp loses its time (a notice)
        "end_published_date": "native",
        "include_domains": "approximate",  # site: operators in the query
        "exclude_domains": "approximate",  # -site: operators in the query
        "country": "native",
        "language": "native",
    }
    #: Query operators: the results are Google's, which honours these in the query.
    operators = honours(native="site -site filetype intitle inurl")
    envelope = ErrorEnvelope(message=(("message",),), code=())

    def plan(self, params: SearchParams, ctx: ProviderContext) -> Plan:
        key = require_key(ctx, self.info)
        plan = self.new_plan(params, ctx)
        plan.limit, plan.notices = count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)
        f = plan.filters
        body: dict[str, Any] = {
            "q": with_site_operators(self.query_text(plan), f.include_domains, f.exclude_domains),
            "num": plan.limit,
            **_locale_fields(params.country, params.language),
        }
        parts, notices = tbs_parts(plan, _TBS_WORDS)
        if parts:
            body["tbs"] = ",".join(parts)
        plan.notices += notices
        plan.notices += site_operator_notices(plan, self.label)
        headers = {"X-API-KEY": key, "Content-Type": "application/json", "Accept": "application/json"}
        plan.request = HttpRequest("POST", ctx.endpoint(self.id, URL), headers=headers, json=body, secrets=(key,))
        return plan

    def parse(self, response: HttpResponse, plan: Plan) -> ProviderResult:
        data = self.answer_object(response, plan)
        box, graph = as_dict(data.get("answerBox")), as_dict(data.get("knowledgeGraph"))
        candidates: list[SearchSource | None] = [
            _source(box, plan) if box else None,
            _graph_source(graph, plan) if graph else None,
            *(_source(r, plan) for r in _organic(data)),
        ]
        sources: list[SearchSource] = []
        seen: set[str] = set()
        for source in candidates:
            if source is not None and source.url not in seen:
                seen.add(source.url)
                sources.append(source)
        request_id = response.headers.get("x-request-id") or response.headers.get("request-id") or None
        return ProviderResult(
            answer=_answer(box),
            sources=tuple(sources[: plan.limit]),
            related_questions=_related(data),
            request_id=request_id,
            auth_mode="api_key",
        )


def _organic(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The organic results in `position` order (those without one keep their place at the end)."""
    results = [r for r in as_list(data.get("organic")) if isinstance(r, dict)]
    last = len(results) + 1
    return sorted(results, key=lambda r: p if (p := as_int(r.get("position"))) is not None else last)


def _source(result: dict[str, Any], plan: Plan) -> SearchSource | None:
    """An organic result or the answer box as a source (None without a link)."""
    url = as_str(result.get("link"))
    if url is None or not url.startswith(("http://", "https://")):
        return None
    text = as_str(result.get("snippet")) or as_str(result.get("answer"))
    return make_source(url, result.get("title"), text, result.get("date"), plan.now)


def _graph_source(graph: dict[str, Any], plan: Plan) -> SearchSource | None:
    """The knowledge graph as a source: its description, linked to where it comes from (else its website)."""
    url = as_str(graph.get("descriptionLink")) or as_str(graph.get("website"))
    if url is None or not url.startswith(("http://", "https://")):
        return None
    return make_source(url, graph.get("title"), graph.get("description"), None, plan.now)


def _answer(box: dict[str, Any]) -> str | None:
    """The answer box as text: "<title>: <answer>" for a direct answer, else its snippet (or its
    highlighted lines)."""
    title, answer = (as_str(box.get("title")) or "").strip(), (as_str(box.get("answer")) or "").strip()
    if answer:
        return f"{title}: {answer}" if title else answer
    snippet = (as_str(box.get("snippet")) or "").strip()
    if snippet:
        return snippet
    lines = [line.strip() for line in as_list(box.get("snippetHighlighted")) if isinstance(line, str) and line.strip()]
    return "\n".join(lines) or None


def _related(data: dict[str, Any]) -> tuple[str, ...]:
    """People-also-ask questions, then related searches, each once, in order."""
    found: dict[str, None] = {}
    for items, field in ((data.get("peopleAlsoAsk"), "question"), (data.get("relatedSearches"), "query")):
        for item in as_list(items):
            text = (as_str(as_dict(item).get(field)) or "").strip()
            if text:
                found.setdefault(text)
    return tuple(found)


PROVIDER: Final = Serper()
