"""A fake google.serper.dev: POST /search with `X-API-KEY`, Google's results as Serper's JSON, and its errors."""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from ._server import FakeServer, RecordedRequest, Reply, honour_domains, site_domains

__all__ = [
    "FakeSerper",
    "serper_error",
    "serper_organic",
    "serper_results_body",
]

#: What `tbs` may hold: relative windows and Google's custom range, comma-separated.
_TBS_PART = re.compile(r"qdr:[hdwmy]\d*|cdr:1|cd_(?:min|max):\d{1,2}/\d{1,2}/\d{4}|sbd:1")
_DATES = ("Nov 27, 2026", "2 days ago", None, "Mar 3, 2025")


def serper_error(status: int, message: str) -> Reply:
    """Serper's error envelope: `{"message": ..., "statusCode": status}`."""
    return Reply(status, {"message": message, "statusCode": status})


def serper_organic(i: int, query: str, *, date: str | None = None, sitelinks: bool = False) -> dict[str, Any]:
    """One `organic[]` entry (`date` and `sitelinks` only when given, as Serper sends them)."""
    slug = query.replace(" ", "-")
    result: dict[str, Any] = {
        "title": f"{query.title()} - result {i}",
        "link": f"https://www.site{i}.example.com/{slug}/{i}",
        "snippet": f"All about {query}, part {i}: what it is, how it works and what to watch for.",
        "position": i,
    }
    if date is not None:
        result["date"] = date
    if sitelinks:
        result["sitelinks"] = [
            {"title": "Docs", "link": f"https://www.site{i}.example.com/docs"},
            {"title": "Blog", "link": f"https://www.site{i}.example.com/blog"},
        ]
    return result


def serper_results_body(
    query: str, n: int = 10, *, rich: bool = True, parameters: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A 200 body with `n` organic results; `rich` adds an answer box, a knowledge graph, people
    also ask and related searches, as a popular query gets them."""
    body: dict[str, Any] = {
        "searchParameters": {"q": query, "type": "search", "engine": "google", **(parameters or {})},
        "organic": [
            serper_organic(i, query, date=_DATES[(i - 1) % len(_DATES)], sitelinks=i == 1) for i in range(1, n + 1)
        ],
        "credits": 1,
    }
    if rich:
        body["answerBox"] = {
            "title": f"{query.title()} / Summary",
            "answer": f"The short answer about {query}",
            "link": "https://answers.example.org/" + query.replace(" ", "-"),
        }
        body["knowledgeGraph"] = {
            "title": query.title(),
            "type": "Topic",
            "website": "https://www.topic.example.org/",
            "description": f"{query.capitalize()} is a topic with an encyclopaedia entry.",
            "descriptionSource": "Wikipedia",
            "descriptionLink": "https://en.wikipedia.org/wiki/" + query.replace(" ", "_"),
            "attributes": {"Founded": "2009"},
        }
        body["peopleAlsoAsk"] = [
            {
                "question": f"What is {query}?",
                "snippet": f"{query.capitalize()} is explained here.",
                "title": f"What is {query}",
                "link": "https://faq.example.org/what",
            },
            {
                "question": f"Is {query} free?",
                "snippet": "Mostly.",
                "title": "Pricing",
                "link": "https://faq.example.org/free",
            },
        ]
        body["relatedSearches"] = [{"query": f"{query} tutorial"}, {"query": f"{query} vs alternatives"}]
    return body


class FakeSerper(FakeServer):
    """Answers POST /search like Serper: `num` organic results (1..100, default 10) for `q`.

    `valid_keys`, when given, are the only keys accepted (else 403 `Unauthorized.`); `credits`,
    when given, is how many searches the account has left (then 400 `Not enough credits`).
    `rich` adds the answer box, knowledge graph, people-also-ask and related searches. The body's
    fields are checked; `site:` / `-site:` operators in `q` are honoured.
    """

    provider_id = "serper"

    def __init__(
        self, valid_keys: Collection[str] | None = None, *, credits: int | None = None, rich: bool = True
    ) -> None:
        super().__init__()
        self.valid_keys = valid_keys
        self.credits = credits
        self.rich = rich

    def default_reply(self, request: RecordedRequest) -> Reply:
        if request.path != "/search":
            return serper_error(404, "Not found.")
        if request.method != "POST":
            return serper_error(405, "Method not allowed.")
        key = request.headers.get("x-api-key", "")
        if not key or (self.valid_keys is not None and key not in self.valid_keys):
            return serper_error(403, "Unauthorized.")
        try:
            body = request.json()
        except (ValueError, UnicodeDecodeError):
            return serper_error(400, "Invalid JSON body.")
        if not isinstance(body, dict):
            return serper_error(400, "Invalid JSON body.")
        problem = _invalid(body)
        if problem is not None:
            return serper_error(400, problem)
        if self.credits is not None:
            if self.credits <= 0:
                return serper_error(400, "Not enough credits")
            self.credits -= 1
        query, num = body["q"], body.get("num", 10)
        parameters = {name: body[name] for name in ("q", "num", "gl", "hl", "tbs", "page") if name in body}
        words = " ".join(w for w in query.split() if "site:" not in w) or query  # the text, without operators
        results = serper_results_body(words, num, rich=self.rich, parameters=parameters)
        return Reply(200, honour_domains(results, *site_domains(query)))


def _invalid(body: dict[str, Any]) -> str | None:
    """What is wrong with a search body, in Serper's words where known (None: nothing)."""
    q = body.get("q")
    if not isinstance(q, str) or not q.strip():
        return "Query not allowed."
    num = body.get("num", 10)
    if not isinstance(num, int) or isinstance(num, bool) or not 1 <= num <= 100:
        return "num must be between 1 and 100."
    for name in ("gl", "hl"):
        value = body.get(name, "us")
        if not isinstance(value, str) or not re.fullmatch(r"[a-z]{2}(?:-[a-z]{2})?", value):
            return f"Invalid {name}."
    tbs = body.get("tbs", "qdr:d")
    if not isinstance(tbs, str) or not all(_TBS_PART.fullmatch(part) for part in tbs.split(",")):
        return "Invalid tbs."
    return None
