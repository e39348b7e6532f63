"""`/search`, SearXNG's API: a real SearXNG client library from PyPI (langchain-community's
`SearxSearchWrapper`, sync over requests and async over aiohttp) and websearch's own SearXNG
provider get SearXNG's answer shape from websearch serve, with its parameters mapped and its
errors in SearXNG's words."""

from __future__ import annotations

import asyncio
import csv
import io
import warnings
from typing import Any
from xml.etree import ElementTree

import pytest

from conftest import TAVILY_KEY, make_client
from serve_helper import TOKEN, InProcess, http
from websearch import Attempt, SearchResponse, WebSearch, __version__
from websearch._core._clock import SystemClock
from websearch._faces._serve._searxng import REASONS, searxng_answer
from websearch._state import MemoryStore
from websearch.errors import SearchProviderError
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
        # digits str.isdigit takes and int() does not, and a number too long to convert: were 500s
        ({"q": "q", "pageno": "²"}, 'Invalid value "²" for parameter pageno'),
        ({"q": "q", "pageno": "١"}, 'Invalid value "١" for parameter pageno'),
        ({"q": "q", "pageno": "9" * 5000}, f'Invalid value "{"9" * 5000}" for parameter pageno'),
        ({"q": "q", "pageno": "1000000"}, 'Invalid value "1000000" for parameter pageno'),
        ({"q": "q", "safesearch": "3"}, 'Invalid value "3" for parameter safesearch'),
    ],
)
def test_bad_values_get_searxng_400(
    many: FakeDuckDuckGo, env: dict[str, str], params: dict[str, Any], error: str
) -> None:
    with serving(env) as server, http(server.url) as client:
        reply = client.get("/search", params=params)
    assert (reply.status_code, reply.json()) == (400, {"error": error})
    assert many.requests == []


@pytest.mark.parametrize("fmt", ["html", "xml", "JSON"])
def test_a_format_not_served_is_searxng_403(many: FakeDuckDuckGo, env: dict[str, str], fmt: str) -> None:
    with serving(env) as server, http(server.url) as client:
        reply = client.get("/search", params={"q": "q", "format": fmt})
        no_query = client.get("/search", params={"format": fmt})  # the format is checked first, as SearXNG does
    assert (reply.status_code, no_query.status_code) == (403, 403)
    assert reply.json() == {"error": f"format {fmt} is not served here (the formats are: json, csv, rss)"}
    assert many.requests == []


def test_csv_is_searxng_table(ddg: FakeDuckDuckGo, tavily: FakeTavily, env: dict[str, str]) -> None:
    ddg.results = [DdgResult('Say "hi", then', "https://a.example/x?y=1", "one, two"), *RESULTS[1:3]]
    env = {**env, **tavily.env, "TAVILY_API_KEY": TAVILY_KEY}
    tavily.enqueue(Reply(200, tavily_results_body("asked", 1, answer="Forty-two.")))
    with serving(env) as server, http(server.url) as client:
        reply = client.get("/search", params={"q": "café, now", "format": "csv", "engines": "duckduckgo"})
        answered = client.get("/search", params={"q": "asked", "format": "csv", "engines": "tavily"})
        bad = client.get("/search", params={"format": "csv"})
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "application/csv"
    assert reply.headers["content-disposition"] == "attachment;Filename=searx_-_caf%C3%A9, now.csv"
    rows = list(csv.reader(io.StringIO(reply.text)))
    assert reply.text.startswith("title,url,content,host,engine,score,type\r\n")  # the excel dialect
    assert rows == [
        ["title", "url", "content", "host", "engine", "score", "type"],
        ['Say "hi", then', "https://a.example/x?y=1", "one, two", "a.example", "duckduckgo", "1.0", "result"],
        ["Title 1", "https://site1.example/page", "snippet 1", "site1.example", "duckduckgo", "0.5", "result"],
        ["Title 2", "https://site2.example/page", "snippet 2", "site2.example", "duckduckgo", str(1 / 3), "result"],
    ]
    assert list(csv.reader(io.StringIO(answered.text)))[-1] == ["", "", "Forty-two.", "", "tavily", "", "answer"]
    assert (bad.status_code, bad.text, bad.headers["content-type"]) == (400, "", "application/csv")
    assert bad.headers["content-disposition"] == "attachment;Filename=searx.csv"


def test_rss_is_searxng_opensearch_feed(tavily: FakeTavily, env: dict[str, str]) -> None:
    env = {**env, **tavily.env, "TAVILY_API_KEY": TAVILY_KEY}
    tavily.enqueue(Reply(200, tavily_results_body("tides & <moons>", 2, news=True)))
    with serving(env) as server, http(server.url) as client:
        reply = client.get("/search", params={"q": "tides & <moons>", "format": "rss", "engines": "tavily"})
        bad = client.get("/search", params={"q": "q", "format": "rss", "pageno": "0"})
    assert (reply.status_code, reply.headers["content-type"]) == (200, "text/xml; charset=utf-8")
    channel = ElementTree.fromstring(reply.content).find("channel")
    assert channel is not None
    assert channel.findtext("title") == "websearch search: tides & <moons>"
    assert channel.findtext("link") == f"{server.url}/search?q=tides+%26+%3Cmoons%3E"
    assert channel.findtext("{http://a9.com/-/spec/opensearch/1.1/}startIndex") == "1"
    query = channel.find("{http://a9.com/-/spec/opensearch/1.1/}Query")
    assert query is not None and query.get("searchTerms") == "tides & <moons>"
    items = [{child.tag: child.text for child in item} for item in channel.findall("item")]
    assert [(i["type"], i["pubDate"]) for i in items] == [
        ("result", "2026-11-29 18:00:00+0000"),
        ("result", "2026-11-27 09:30:00+0000"),
    ]
    assert all(i["title"] and i["link"] and i["link"].startswith("https://") for i in items)
    assert bad.status_code == 400
    error = ElementTree.fromstring(bad.content).find("channel/item")
    assert error is not None
    assert (error.findtext("title"), error.findtext("description")) == (
        "Error",
        'Invalid value "0" for parameter pageno',
    )


def test_config_and_autocompleter_in_searxng_shape(
    ddg: FakeDuckDuckGo, tavily: FakeTavily, env: dict[str, str]
) -> None:
    env = {**env, **tavily.env, "TAVILY_API_KEY": TAVILY_KEY}
    with serving(env) as server, http(server.url) as client:
        config = client.get("/config")
        browser = client.get("/autocompleter", params={"q": "rust"})
        form = client.post("/autocompleter", data={"q": "rust"}, headers={"X-Requested-With": "XMLHttpRequest"})
        anonymous = client.get("/config", headers={"Authorization": ""})
    body = config.json()
    assert body["categories"] == ["general", "news", "science"]
    assert body["version"] == __version__
    engines = {e["name"]: e for e in body["engines"]}
    assert set(engines) == {"duckduckgo", "tavily"}
    assert engines["duckduckgo"]["categories"] == ["general"]  # it cannot scope a search to news
    assert engines["tavily"]["categories"] == ["general", "news", "science"]
    assert engines["tavily"]["time_range_support"] is True and engines["tavily"]["enabled"] is True
    assert (body["plugins"], body["autocomplete"], body["instance_name"]) == ([], "", "websearch")
    assert (browser.headers["content-type"], browser.json()) == ("application/x-suggestions+json", ["rust", []])
    assert (form.headers["content-type"], form.json()) == ("application/json", [])
    assert anonymous.status_code == 401  # behind the token like every route but /healthz
    assert ddg.requests == [] and tavily.requests == []


def test_unresponsive_engines_word_every_error_kind() -> None:
    """Each attempt error kind (every class of `websearch.errors`, and the chain's own
    `cancelled` and `paced`) in SearXNG's words; none reads "unexpected crash" but the generic one."""
    kinds = sorted({cls.kind for cls in {SearchProviderError, *_subclasses(SearchProviderError)}} - {"no_results"})
    attempts = [Attempt(f"p-{kind}", None, "failed", 1.0, kind) for kind in (*kinds, "cancelled", "paced")]
    attempts += [
        Attempt("s-cooldown", None, "cooling", 0.0, "rate_limited", skipped="cooldown"),
        Attempt("s-circuit", None, "open", 0.0, "unavailable", skipped="circuit_open"),
        Attempt("s-paced", None, "paced", 0.0, "paced", skipped="paced"),
        Attempt("s-deadline", None, "late", 0.0, "timeout", skipped="deadline"),
        Attempt("z-empty", 200, "nothing found", 1.0, "no_results"),  # it answered: not unresponsive
    ]
    response = SearchResponse(provider="p-auth", query="q", error="all failed", attempts=tuple(attempts))
    words = dict(searxng_answer(response, "q", "general", 0, SystemClock().now())["unresponsive_engines"])
    assert list(words) == sorted(words)  # sorted by engine, as SearXNG sorts them
    assert words == {
        "p-auth": "access denied",
        "p-blocked": "CAPTCHA",
        "p-cancelled": "timeout",
        "p-connection": "network error",
        "p-error": "unexpected crash",
        "p-invalid_response": "parsing error",
        "p-missing_credential": "access denied",
        "p-paced": "too many requests",
        "p-quota": "too many requests",
        "p-rate_limited": "too many requests",
        "p-rejected": "HTTP error",
        "p-timeout": "timeout",
        "p-unavailable": "HTTP error",
        "s-circuit": "Suspended: HTTP error",
        "s-cooldown": "Suspended: too many requests",
        "s-deadline": "timeout",
        "s-paced": "Suspended: too many requests",
    }
    assert set(REASONS) >= {*kinds, "cancelled", "paced"}


def _subclasses(cls: type) -> set[type]:
    found = set(cls.__subclasses__())
    return found.union(*(_subclasses(sub) for sub in found))
