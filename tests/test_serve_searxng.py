"""`/search`, SearXNG's API: a real SearXNG client library from PyPI (langchain-community's
`SearxSearchWrapper`, sync over requests and async over aiohttp) and websearch's own SearXNG
provider get SearXNG's answer shape from websearch serve, with its parameters mapped and its
errors in SearXNG's words."""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

import pytest

from conftest import TAVILY_KEY, make_client
from serve_helper import TOKEN, InProcess, http
from websearch import WebSearch
from websearch._clock import SystemClock
from websearch._state import MemoryStore
from websearch.testing import DdgResult, FakeDuckDuckGo, FakeSearXNG, FakeTavily, Reply
from websearch.testing.tavily import tavily_results_body

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # langchain-community says it is being sunset
    from langchain_community.utilities import SearxSearchWrapper

RESULTS = [DdgResult(f"Title {i}", f"https://site{i}.example/page", f"snippet {i}") for i in range(15)]
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)  # requests reads them; the server is on loopback


@pytest.fixture
def many(ddg: FakeDuckDuckGo) -> FakeDuckDuckGo:
    ddg.results = RESULTS
    return ddg


def serving(env: dict[str, str]) -> InProcess:
    return InProcess(make_client(env=env, store=MemoryStore(SystemClock())))


def test_langchain_searx_wrapper_reads_results_from_websearch(many: FakeDuckDuckGo, env: dict[str, str]) -> None:
    with serving(env) as server:
        searx = SearxSearchWrapper(searx_host=server.url, headers=AUTH)  # the base URL: / redirects to /search
        results = searx.results("rust async", num_results=3)
        text = searx.run("rust async")
        week = searx.results("tide tables", num_results=2, time_range="week")
        page_two = searx.results("page two", num_results=10, pageno=2)
        news = searx.results("news today", num_results=1, categories=["news"])
        fresh = asyncio.run(searx.aresults("async path", num_results=2))
        refused = SearxSearchWrapper(searx_host=server.url)  # no token
        with pytest.raises(ValueError, match="Searx API returned an error"):
            refused.results("q", num_results=1)
    assert results == [
        {
            "snippet": f"snippet {i}",
            "title": f"Title {i}",
            "link": f"https://site{i}.example/page",
            "engines": ["duckduckgo"],
            "category": "general",
        }
        for i in range(3)
    ]
    assert text == "\n\n".join(f"snippet {i}" for i in range(10))  # its k=10 contents
    assert [r["title"] for r in week] == ["Title 0", "Title 1"]
    assert [r["title"] for r in page_two] == [f"Title {i}" for i in range(10, 15)]  # results 11-15
    assert news[0]["category"] == "news"
    assert [r["link"] for r in fresh] == ["https://site0.example/page", "https://site1.example/page"]
    asked = [dict(request.form()) for request in many.requests]
    assert [a["q"] for a in asked] == [
        "rust async",
        "rust async",
        "tide tables",
        "page two",
        "news today",
        "async path",
    ]
    assert asked[2]["df"] == "w"  # time_range=week became recency=week


@pytest.mark.parametrize(
    "credentials",
    [{"SEARXNG_TOKEN": TOKEN}, {"SEARXNG_BASIC_USERNAME": "team", "SEARXNG_BASIC_PASSWORD": TOKEN}],
    ids=["bearer", "basic"],
)
async def test_websearch_own_searxng_provider_reads_websearch_serve(
    many: FakeDuckDuckGo, env: dict[str, str], credentials: dict[str, str]
) -> None:
    with serving(env) as server:
        client_env = {"WEBSEARCH_CONFIG_DIR": env["WEBSEARCH_CONFIG_DIR"], "SEARXNG_ENDPOINT": server.url}
        client_env.update(credentials)  # Basic auth, as SearXNG instances are usually behind
        async with WebSearch(env=client_env, providers=["searxng"], engine=False) as downstream:
            response = await downstream.asearch("chained", recency="day", limit=4)
    assert response.error is None and response.provider == "searxng"
    assert [s.url for s in response.sources] == [f"https://site{i}.example/page" for i in range(4)]
    assert dict(many.last.form())["df"] == "d"


def test_the_answer_has_searxng_shape(many: FakeDuckDuckGo, env: dict[str, str]) -> None:
    with serving(env) as server, http(server.url) as client:
        body = client.get(
            "/search", params={"q": "shape", "format": "json", "language": "de", "safesearch": "2"}
        ).json()
        posted = client.post("/search", data={"q": "shape", "format": "json"}).json()
    assert set(body) == {
        "query",
        "number_of_results",
        "results",
        "answers",
        "corrections",
        "infoboxes",
        "suggestions",
        "unresponsive_engines",
    }
    assert (body["query"], body["number_of_results"], len(body["results"])) == ("shape", 10, 10)
    first = body["results"][0]
    assert first == {
        "url": "https://site0.example/page",
        "title": "Title 0",
        "content": "snippet 0",
        "publishedDate": None,
        "engine": "duckduckgo",
        "engines": ["duckduckgo"],
        "positions": [1],
        "score": 1.0,
        "category": "general",
        "template": "default.html",
        "parsed_url": ["https", "site0.example", "/page", "", "", ""],
        "thumbnail": "",
        "img_src": "",
        "priority": "",
        "author": "",
    }
    assert [r["score"] for r in body["results"][:3]] == [1.0, 0.5, pytest.approx(1 / 3)]
    assert (body["answers"], body["corrections"], body["infoboxes"], body["unresponsive_engines"]) == ([], [], [], [])
    assert [r["url"] for r in posted["results"]] == [r["url"] for r in body["results"]]


def test_answers_dates_fanout_and_unresponsive_engines(
    ddg: FakeDuckDuckGo, tavily: FakeTavily, searx: FakeSearXNG, env: dict[str, str]
) -> None:
    env = {**env, **tavily.env, **searx.env, "TAVILY_API_KEY": TAVILY_KEY, "SEARXNG_ENDPOINT": "https://s.example.org"}
    tavily.enqueue(Reply(200, tavily_results_body("news today", 2, answer="Forty-two.", news=True)))
    ddg.enqueue(Reply(503, "down"))
    with serving(env) as server, http(server.url) as client:
        answered = client.get(
            "/search", params={"q": "news today", "categories": "news", "engines": "tavily", "format": "json"}
        ).json()
        fused = client.get("/search", params={"q": "fused", "engines": "duckduckgo,searxng,unknown"}).json()
        ddg.enqueue(Reply(503, "down"))
        failed = client.get("/search", params={"q": "nothing", "engines": "duckduckgo"}).json()
    assert answered["answers"] == [
        {"answer": "Forty-two.", "url": None, "engine": "tavily", "template": "answer/legacy.html"}
    ]
    assert [r["publishedDate"] for r in answered["results"]] == [
        "2026-11-29T18:00:00+00:00",
        "2026-11-27T09:30:00+00:00",
    ]
    assert {r["category"] for r in answered["results"]} == {"news"}
    assert dict(tavily.last.json())["topic"] == "news"
    assert {e for r in fused["results"] for e in r["engines"]} == {"searxng"}  # duckduckgo failed: 503
    assert fused["unresponsive_engines"] == [["duckduckgo", "HTTP error"]]
    assert (failed["results"], failed["unresponsive_engines"]) == ([], [["duckduckgo", "HTTP error"]])


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({}, "No query"),
        ({"q": "  "}, "No query"),
        ({"q": "q", "time_range": "decade"}, 'Invalid value "decade" for parameter time_range'),
        ({"q": "q", "pageno": "0"}, 'Invalid value "0" for parameter pageno'),
        ({"q": "q", "pageno": "two"}, 'Invalid value "two" for parameter pageno'),
        ({"q": "q", "safesearch": "3"}, 'Invalid value "3" for parameter safesearch'),
        ({"q": "q", "format": "rss"}, 'Invalid value "rss" for parameter format (this server answers json only)'),
    ],
)
def test_bad_values_get_searxng_400(
    many: FakeDuckDuckGo, env: dict[str, str], params: dict[str, Any], error: str
) -> None:
    with serving(env) as server, http(server.url) as client:
        reply = client.get("/search", params=params)
    assert (reply.status_code, reply.json()) == (400, {"error": error})
    assert many.requests == []
