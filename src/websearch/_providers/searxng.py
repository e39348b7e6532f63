"""SearXNG: a self-hosted metasearch instance, reached at `searxng.endpoint` / `SEARXNG_ENDPOINT`.

GET <endpoint>/search?q=...&format=json[&pageno=N][&time_range=...][&categories=...][&language=...],
with Basic auth (`searxng.basicUsername` / `basicPassword`, validated per RFC 7617) or a bearer
token (`searxng.token`). SearXNG has no API key, so a refused login says which settings to check.

Where the spec's literal rule is wrong this module follows the real server (searx/webadapter.py and
searx/webapp.py, as a running instance confirmed):

- `time_range` is day, week, month or year: SearXNG has accepted `week` since 2020 (only its API
  doc omits it), so `recency` is sent as asked and is not widened to `month`;
- SearXNG has no result-count parameter and no maximum ("clamped to 1..20" is not SearXNG's): a
  page holds what its engines merged (about 10, sometimes fewer, sometimes 30). A count within one
  page (PAGE_SIZE) asks for page 1; a larger one asks for pages 1, 2, ... up to MAX_PAGES (our
  cap, not SearXNG's, and a notice says so when it bites) until the count is met, a page adds no
  new URL, or a page fails (a notice; the pages before it are kept). The plan holds every page's
  request (`state`); the results are cut to the count.

The richer parameters are approximated: the ladder's start (which wins over `recency`) becomes the
narrowest `time_range` covering it (none past a year); domains `site:` / `-site:` operators in
`q`, which most engines honour; `category` one of SearXNG's categories (news as `news`,
publication as `science`, github as `it`, and a SearXNG category name as itself) added to the
`searxng.categories` setting, de-duplicated; a category picks the engines asked, so every mapped
one gets a notice, and one with no counterpart is not applied. Sources are `results[]` whose URL
is http(s) (SearXNG passes an engine's other schemes through: magnet:, ftp:, ...), each URL once,
with `publishedDate` or `published_date` as the date; related questions are the `suggestions`.

Errors: the instance answers `{"error": "..."}`; an instance whose settings.yml lacks `json` in
`search.formats` answers 403, and the auth hint says so. `unresponsive_engines` ([engine, reason]
pairs) is a partial notice whenever it lists one; with no results at all it is
UpstreamUnavailable (503): every engine behind the instance failed.
"""

from __future__ import annotations

import base64
import dataclasses
import re
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, Final
from urllib.parse import urlsplit

from .._core._notices import Notice, approximated, clamped, cut_short, not_applied, partial
from .._core._registry import PROVIDERS
from .._core._types import ProviderResult, SearchParams, SearchSource
from .._core._wire import HttpRequest, HttpResponse
from ..errors import ConfigError, MissingCredentialError, SearchProviderError, UpstreamUnavailable
from ._base import (
    HttpProvider,
    Plan,
    Support,
    as_list,
    as_str,
    bucket_notices,
    count,
    honours,
    make_source,
    recency_bucket,
    redact_detail,
    site_operator_notices,
    with_site_operators,
)
from ._errors import ErrorEnvelope
from ._html import WINDOWED
from ._locale import LOCALE_NATIVE, searxng_locale

if TYPE_CHECKING:
    from .._core._context import ProviderContext

DEFAULT_RESULTS: Final = 10
#: About how many results a SearXNG page holds: a larger count asks for further pages.
PAGE_SIZE: Final = 10
#: The most pages websearch asks one search for (our cap: SearXNG has none).
MAX_PAGES: Final = 5
#: SearXNG's categories (its default UI tabs, searx/settings.yml `categories_as_tabs`).
CATEGORIES: Final = ("general", "images", "videos", "news", "map", "music", "it", "science", "files", "social media")
#: Our categories with a SearXNG counterpart; a SearXNG category name also goes as itself.
CATEGORY_MAP: Final = {"news": "news", "publication": "science", "github": "it"}
_CONTROL_RE: Final = re.compile(r"[\x00-\x1f\x7f-\x9f]")
NOT_CONFIGURED: Final = (
    "SearXNG endpoint not configured. Set searxng.endpoint in settings or SEARXNG_ENDPOINT in environment."
)
AUTH_HINT: Final = (
    "Check searxng.basicUsername/basicPassword or searxng.token. If the instance has JSON output disabled, "
    "add `json` to `search.formats` in its settings.yml."
)
ONLY_BUCKETS: Final = "SearXNG only filters by the past day, week, month or year"
NO_CATEGORY: Final = (
    "SearXNG has no matching category (its categories are " + ", ".join(CATEGORIES[:-1]) + f" and {CATEGORIES[-1]})"
)
ENGINES_NOT_KIND: Final = "a SearXNG category picks the engines it asks, not the kind of result"


@dataclass(frozen=True, slots=True)
class Page:
    """What one page gave: its http(s) results, its failed engines and its suggestions."""

    results: tuple[dict[str, Any], ...]
    failed: tuple[str, ...]  # "engine: reason"
    suggestions: tuple[str, ...]


class SearXNG(HttpProvider):
    info = PROVIDERS["searxng"]
    #: Query operators: The query goes as it was written (its engines read the operators); only the caller's domain
    #: lists are added.
    operators = honours(approximate="site -site after before filetype intitle inurl")
    #: The keyless engines' coarse windows and `site:` operators, and SearXNG's categories (news,
    #: publication, github and its own category names).
    supports: ClassVar[dict[str, Support]] = {
        **WINDOWED,
        "category": "approximate",
        **LOCALE_NATIVE,
        "country": "approximate",
    }
    envelope = ErrorEnvelope(message=(("error",),), code=(), auth_hint=AUTH_HINT)

    def plan(self, params: SearchParams, ctx: ProviderContext) -> Plan:
        """Page 1's request, and in `state` every page's request (page 1's first)."""
        endpoint = ctx.settings.get_str("searxng.endpoint")
        if not endpoint:
            raise MissingCredentialError(self.id, NOT_CONFIGURED)
        headers = {"Accept": "application/json"}
        secrets: tuple[str, ...] = ()
        auth = _authorization(ctx)
        if auth is not None:
            headers["Authorization"], secrets = auth
        plan = self.new_plan(params, ctx)
        plan.limit, plan.notices = count(params, DEFAULT_RESULTS, None, self.label)
        f = plan.filters
        q = with_site_operators(params.query, f.explicit_include, f.explicit_exclude)  # its operators pass through
        query = [("q", q), ("format", "json")]
        if params.count:
            query.append(("pageno", "1"))
        if f.start is not None:
            bucket = recency_bucket(f.start, plan.now)
            if bucket is not None:
                query.append(("time_range", bucket))
            applied = f"time_range={bucket} (the past {bucket})" if bucket else None
            plan.notices += bucket_notices(plan, applied, "SearXNG's longest (a year)", ONLY_BUCKETS)
        elif params.recency:
            query.append(("time_range", params.recency))
        plan.notices += site_operator_notices(plan, self.label, " (most of its engines honour the operators)")
        categories, notices = _categories(plan, ctx.settings.get_str("searxng.categories"))
        plan.notices += notices
        if categories:
            query.append(("categories", categories))
        locale, notices = searxng_locale(params, ctx.settings.get_str("searxng.language"), self.label)
        query += locale
        plan.notices += notices
        url = ctx.endpoint(self.id, endpoint.rstrip("/") + "/search")
        plan.request = HttpRequest("GET", url, headers=headers, params=query, secrets=secrets)
        pages = MAX_PAGES if params.count and plan.limit > PAGE_SIZE else 1
        plan.state = tuple(_page_request(plan.request, n) for n in range(1, pages + 1))
        return plan

    def parse(self, response: HttpResponse, plan: Plan) -> ProviderResult:
        """One page as results (pure; `search` asks for the further pages)."""
        return self.merge([self.page(response, plan)], plan)

    def requests_only(self) -> bool:
        return True  # its pages, one request after another

    async def search(self, plan: Plan, ctx: ProviderContext) -> ProviderResult:
        requests: tuple[HttpRequest, ...] = plan.state
        assert requests and plan.limit is not None, "searxng: plan() made no request"
        pages: list[Page] = []
        notices: list[Notice] = []
        seen: set[str] = set()
        for n, request in enumerate(requests, 1):
            try:
                page = self.page(await ctx.send(self.id, request), plan)
            except SearchProviderError as exc:
                if n == 1:
                    raise
                stop = f"so the results stop at page {n - 1}"
                notices.append(cut_short(f"SearXNG page {n} failed, {stop}: {exc.message}"))
                break
            pages.append(page)
            fresh = {r["url"] for r in page.results} - seen
            seen |= fresh
            if not fresh or len(seen) >= plan.limit:
                break
        else:
            if len(requests) > 1:
                name = "num_search_results" if plan.params.num_search_results is not None else "limit"
                why = f"websearch asks SearXNG for at most {MAX_PAGES} pages"
                notices.append(clamped(name, plan.params.count, f"{len(seen)} results", why))
        return self.merge(pages, plan, notices)

    def page(self, response: HttpResponse, plan: Plan) -> Page:
        """One page's http(s) results, failed engines and suggestions; an error status raises."""
        data = self.answer_object(response, plan)
        results = tuple(r for r in as_list(data.get("results")) if isinstance(r, dict) and _http_url(r.get("url")))
        failed = tuple(
            redact_detail(response, ": ".join(str(part) for part in engine[:2] if part not in (None, "")))
            for engine in as_list(data.get("unresponsive_engines"))
            if isinstance(engine, list) and engine and as_str(engine[0])
        )
        suggestions = tuple(s for s in as_list(data.get("suggestions")) if isinstance(s, str))
        return Page(results, failed, suggestions)

    def merge(self, pages: list[Page], plan: Plan, notices: list[Notice] | None = None) -> ProviderResult:
        """The pages as one result: each URL once, cut to the count; failed engines a notice."""
        results: dict[str, dict[str, Any]] = {}
        for page in pages:
            for result in page.results:
                results.setdefault(result["url"], result)
        sources = [_source(r, plan.now) for r in results.values()][: plan.limit]
        failed = dict.fromkeys(engine for page in pages for engine in page.failed)
        detail = "; ".join(failed)
        if not sources and failed:
            message = f"SearXNG returned no usable results; upstream engines failed: {detail}"
            raise UpstreamUnavailable(self.id, message, 503)
        found = [partial(f"some SearXNG engines did not answer, so the results come from the others: {detail}")]
        suggestions = tuple(dict.fromkeys(s for page in pages for s in page.suggestions))
        return ProviderResult(
            sources=tuple(sources),
            related_questions=suggestions,
            notices=(*(found if failed else ()), *(notices or ())),
        )


def _categories(plan: Plan, configured: str | None) -> tuple[str | None, list[Notice]]:
    """`categories`: the setting's, then the one `category` maps to, each once; and its notice."""
    names = [name.strip() for name in (configured or "").split(",") if name.strip()]
    notices: list[Notice] = []
    category = plan.filters.category
    if category is not None:
        key = category.lower()
        mapped = CATEGORY_MAP.get(key) or (key if key in CATEGORIES else None)
        if mapped is None:
            notices.append(not_applied("category", plan.params.category, NO_CATEGORY))
        else:
            names.append(mapped)
            sent = list(dict.fromkeys(names))
            extra = [name for name in sent if name != mapped]
            why = [f'SearXNG\'s nearest category is "{mapped}"'] if mapped != key else []
            why += [f"searxng.categories adds {', '.join(extra)}"] if extra else []
            how = "categories=" + ",".join(sent)
            notices.append(approximated("category", plan.params.category, how, "; ".join([*why, ENGINES_NOT_KIND])))
    return ",".join(dict.fromkeys(names)) or None, notices


def _page_request(first: HttpRequest, n: int) -> HttpRequest:
    """Page `n` (1-based): page 1's request with its `pageno` replaced."""
    if n == 1:
        return first
    params = [(name, str(n) if name == "pageno" else value) for name, value in first.params]
    return dataclasses.replace(first, params=params)


def _http_url(value: object) -> bool:
    """An absolute http(s) URL with a host (SearXNG passes magnet:, ftp: and the like through)."""
    url = as_str(value)
    if url is None:
        return False
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def _authorization(ctx: ProviderContext) -> tuple[str, tuple[str, ...]] | None:
    """The Authorization header and the secrets in it: Basic wins over bearer."""
    user = ctx.settings.get_str("searxng.basicUsername")
    password = ctx.settings.get_str("searxng.basicPassword")
    if user is not None or password is not None:
        if user is None or password is None:
            raise ConfigError(
                "SearXNG Basic auth needs both searxng.basicUsername and searxng.basicPassword "
                "(or SEARXNG_BASIC_USERNAME and SEARXNG_BASIC_PASSWORD)"
            )
        if ":" in user:
            raise ConfigError("SearXNG Basic auth username must not contain ':' (RFC 7617)")
        if _CONTROL_RE.search(user) or _CONTROL_RE.search(password):
            raise ConfigError("SearXNG Basic auth credentials must not contain control characters")
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        return f"Basic {token}", (password, token)
    bearer = ctx.settings.get_str("searxng.token")
    if bearer:
        return f"Bearer {bearer}", (bearer,)
    return None


def _source(result: dict[str, Any], now: datetime) -> SearchSource:
    published = result.get("publishedDate") or result.get("published_date")
    return make_source(result["url"], result.get("title"), result.get("content"), published, now)


PROVIDER: Final = SearXNG()
