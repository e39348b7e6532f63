"""A fake api.search.brave.com: the web-search JSON, its rate-limit headers and its error envelopes."""

from __future__ import annotations

import html
import uuid
from collections.abc import Collection
from typing import Any

from ._server import FakeServer, RecordedRequest, Reply, honour_domains, site_domains

__all__ = [
    "FakeBrave",
    "brave_error",
    "brave_result",
    "brave_results_body",
    "invalid_token_reply",
    "quota_limited_reply",
    "rate_limited_reply",
]

RATE_HEADERS = {
    "X-RateLimit-Limit": "1, 15000",
    "X-RateLimit-Policy": "1;w=1, 15000;w=2592000",
    "X-RateLimit-Remaining": "1, 14230",
    "X-RateLimit-Reset": "1, 1419704",
}
_FRESHNESS = ("pd", "pw", "pm", "py")
#: Ages as Brave writes them: absolute dates for most pages, relative text for fresh ones.
_AGES = ("November 27, 2026", "2 days ago", None, "March 3, 2025")


def brave_result(i: int, query: str, *, age: str | None = None, extra: list[str] | None = None) -> dict[str, Any]:
    """One `web.results[]` entry with the fields Brave sends (`age`/`extra_snippets` only when given).
    Its title and description are display HTML, as Brave's: the text escaped, the query in `<strong>`."""
    slug = query.replace(" ", "-")
    shown = html.escape(query)
    host = f"www.site{i}.example.com"
    result: dict[str, Any] = {
        "type": "search_result",
        "subtype": "generic",
        "title": f"{html.escape(query.title())} - part {i}",
        "url": f"https://{host}/{slug}/{i}",
        "description": f"Everything about <strong>{shown}</strong>, part {i}: setup, pitfalls and examples.",
        "language": "en",
        "family_friendly": True,
        "is_source_local": False,
        "is_source_both": False,
        "is_live": False,
        "profile": {
            "name": f"Site {i}",
            "url": f"https://{host}",
            "long_name": host,
            "img": "https://imgs.search.brave.com/x.png",
        },
        "meta_url": {
            "scheme": "https",
            "netloc": host,
            "hostname": host,
            "favicon": "https://imgs.search.brave.com/f.png",
            "path": f"› {slug} › {i}",
        },
    }
    if age is not None:
        result["age"] = age
        result["page_age"] = "2026-11-27T00:00:00"
    if extra is not None:
        result["extra_snippets"] = extra
    return result


def brave_results_body(query: str, n: int = 20, *, extra_snippets: bool = True) -> dict[str, Any]:
    """A 200 body with `n` web results (no `web` block at all when `n` is 0, as Brave does)."""
    body: dict[str, Any] = {
        "type": "search",
        "query": {
            "original": query,
            "show_strict_warning": False,
            "is_navigational": False,
            "is_news_breaking": False,
            "spellcheck_off": False,
            "country": "us",
            "bad_results": False,
            "should_fallback": False,
            "more_results_available": n > 0,
        },
        "mixed": {
            "type": "mixed",
            "main": [{"type": "web", "index": i, "all": False} for i in range(n)],
            "top": [],
            "side": [],
        },
    }
    if n:
        results = [
            brave_result(
                i,
                query,
                age=_AGES[(i - 1) % len(_AGES)],
                extra=[f"Extra excerpt {i}a about {html.escape(query)}.", f"Extra excerpt {i}b."]
                if extra_snippets and i % 2
                else None,
            )
            for i in range(1, n + 1)
        ]
        body["web"] = {"type": "search", "family_friendly": True, "results": results}
    return body


def brave_error(status: int, code: str, detail: str, component: str, *, plural: bool = False) -> dict[str, Any]:
    """Brave's error envelope: `{"error": {...}}`, or the newer docs' `{"errors": [{...}]}`."""
    error = {
        "id": str(uuid.uuid4()),
        "status": status,
        "code": code,
        "detail": detail,
        "meta": {"component": component},
    }
    return {
        "type": "ErrorResponse",
        ("errors" if plural else "error"): [error] if plural else error,
        "time": 1663072993,
    }


def invalid_token_reply(plural: bool = False) -> Reply:
    body = brave_error(
        422,
        "SUBSCRIPTION_TOKEN_INVALID",
        "The provided subscription token is invalid.",
        "authentication",
        plural=plural,
    )
    return Reply(422, body)


def rate_limited_reply(reset: str = "1, 1419704") -> Reply:
    body = brave_error(429, "RATE_LIMITED", "Request rate limit exceeded for plan.", "rate_limiter")
    return Reply(429, body, headers={**RATE_HEADERS, "X-RateLimit-Remaining": "0, 14230", "X-RateLimit-Reset": reset})


def quota_limited_reply() -> Reply:
    body = brave_error(429, "QUOTA_LIMITED", "Request quota limit exceeded for plan.", "rate_limiter")
    return Reply(429, body, headers={**RATE_HEADERS, "X-RateLimit-Remaining": "0, 0", "X-RateLimit-Reset": "1, 86400"})


def _validation(loc: list[str], msg: str) -> Reply:
    body = brave_error(422, "VALIDATION", "Unable to validate request parameter(s)", "validation")
    body["error"]["meta"]["errors"] = [{"type": "value_error", "loc": loc, "msg": msg}]
    return Reply(422, body)


class FakeBrave(FakeServer):
    """Answers GET /res/v1/web/search like Brave: `count` results (1..20), 422 on a bad token or parameter.

    `valid_keys`, when given, are the only tokens accepted; any other gets SUBSCRIPTION_TOKEN_INVALID.
    `plan` is the key's (per second, per month) limits its answers report in `X-RateLimit-Limit`
    and `X-RateLimit-Policy`, which the engine paces Brave at: by default a paid plan's 50 a
    second (the free plan's is `(1, 15000)`, which would space every test's searches a second
    apart); change it to move the key to another plan.
    """

    provider_id = "brave"

    def __init__(
        self, valid_keys: Collection[str] | None = None, n_available: int = 20, plan: tuple[int, int] = (50, 20_000_000)
    ) -> None:
        super().__init__()
        self.valid_keys = valid_keys
        self.n_available = n_available
        self.plan = plan

    def default_reply(self, request: RecordedRequest) -> Reply:
        if request.path != "/res/v1/web/search" or request.method not in ("GET", "POST"):
            return Reply(404, brave_error(404, "RESOURCE_NOT_FOUND", "Resource not found.", "routing"))
        token = request.headers.get("x-subscription-token")
        if not token:
            return _validation(["header", "x-subscription-token"], "field required")
        if self.valid_keys is not None and token not in self.valid_keys:
            return invalid_token_reply()
        args = request.args
        query = args.get("q", "")
        if not query.strip() or len(query) > 400:
            return _validation(["query", "q"], "ensure this value has at least 1 and at most 400 characters")
        count = args.get("count", "20")
        if not count.isdigit() or not 1 <= int(count) <= 20:
            return _validation(["query", "count"], "ensure this value is between 1 and 20")
        if args.get("freshness", "pd") not in _FRESHNESS and "to" not in args.get("freshness", ""):
            return _validation(["query", "freshness"], "invalid freshness")
        # Brave does not document a request-id header; upstream reads x-request-id, so the fake sends one.
        second, month = self.plan
        headers = {
            **RATE_HEADERS,
            "X-RateLimit-Limit": f"{second}, {month}",
            "X-RateLimit-Policy": f"{second};w=1, {month};w=2592000",
            "X-Request-Id": f"brave-{len(self.requests):04d}",
        }
        body = brave_results_body(
            query, min(int(count), self.n_available), extra_snippets=args.get("extra_snippets") == "true"
        )
        return Reply(200, honour_domains(body, *site_domains(query)), headers=headers)
