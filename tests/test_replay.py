"""Replay: real upstream answers, recorded by other projects, served on loopback and read by websearch.

Each `<provider>/<name>.json` under RECORDINGS (../shared/realworld/recordings beside the checkout,
or the folder `$WEBSEARCH_RECORDINGS` names, for a clone elsewhere; never copied here: some
licences differ from ours) is one case, found when the tests are collected,
so a recording dropped there is picked up without code changes. `Replay` serves its responses in
order, whatever path the provider asks for; one real search with that provider chosen explicitly
runs against it, and what websearch returns is checked against ground truth read out of the
recorded bytes by one small extractor per wire format (EXTRACTORS), never against websearch's own
output. Where websearch deliberately differs from the raw data (deduplication, its default count),
the extractor or the check says so. Without the folder (a user's clone) one skipped case says so.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from importlib import import_module
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from conftest import key_env, search_once
from websearch.testing import FakeServer, RecordedRequest, Reply

RECORDINGS = Path(os.environ.get("WEBSEARCH_RECORDINGS") or Path(__file__).parents[2] / "shared/realworld/recordings")


# -- the recordings ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Recorded:
    """One recorded HTTP answer."""

    status: int
    content_type: str
    sse: bool
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True)
class Recording:
    provider: str
    name: str
    query: str
    responses: tuple[Recorded, ...]


def load(path: Path) -> Recording:
    """The recording described by the metadata file `path`, its bodies read from beside it."""
    meta = json.loads(path.read_text(encoding="utf-8"))
    bodies = [(path.parent / r["body_file"]).read_bytes() for r in meta["responses"]]
    responses = [
        Recorded(r["status"], r["content_type"], r["sse"], r.get("headers") or {}, body)
        for r, body in zip(meta["responses"], bodies, strict=True)
    ]
    if _paused(responses[-1]):  # Anthropic's pause_turn: the turn goes on in the cassette's next interaction
        responses += _continuation(path, meta["source"])
    return Recording(meta["provider"], meta["name"], meta["query"], tuple(responses))


def _paused(response: Recorded) -> bool:
    try:
        data = json.loads(response.body)
    except ValueError:
        return False
    return isinstance(data, dict) and data.get("stop_reason") == "pause_turn"


def _continuation(path: Path, source: dict[str, Any]) -> list[Recorded]:
    """The responses of the same cassette's next interaction (the second half of a paused turn)."""
    if source.get("interaction") is None:
        return []
    for other in sorted(path.parent.glob("*.json")):
        theirs = json.loads(other.read_text(encoding="utf-8"))["source"]
        same = (theirs.get("repo"), theirs.get("path")) == (source.get("repo"), source.get("path"))
        if same and theirs.get("interaction") == source["interaction"] + 1:
            return list(load(other).responses)
    return []


def _cases() -> list[Any]:
    paths = sorted(RECORDINGS.glob("*/*.json")) if RECORDINGS.is_dir() else []
    if not paths:
        reason = (
            f"no recordings at {RECORDINGS} (../shared/realworld/recordings beside the checkout,"
            " or set WEBSEARCH_RECORDINGS to the folder)"
        )
        return [pytest.param(None, id="no-recordings", marks=pytest.mark.skip(reason=reason))]
    return [pytest.param(path, id=f"{path.parent.name}/{path.stem}") for path in paths]


class Replay(FakeServer):
    """Answers every request, on any path, with the recording's next response; then a 404."""

    def __init__(self, recording: Recording) -> None:
        super().__init__()
        self.provider_id = recording.provider
        self.enqueue(*map(_reply, recording.responses))

    def default_reply(self, request: RecordedRequest) -> Reply:
        return Reply(404, "replay: no recorded response left", content_type="text/plain")


def _reply(r: Recorded) -> Reply:
    if r.sse:  # streamed as sent, one chunk per event
        chunks = [chunk for chunk in re.split(rb"(?<=\n\n)", r.body) if chunk]
        return Reply(r.status, headers=r.headers, content_type=r.content_type, chunks=chunks)
    return Reply(r.status, r.body, headers=r.headers, content_type=r.content_type)


# -- ground truth, read from the recorded bytes ------------------------------------------------


@dataclass
class Truth:
    """What the recording says websearch must return."""

    # (url, title, snippet pieces): the sources in order, before websearch's default count
    sources: list[tuple[str, str | None, tuple[str, ...]]] = field(default_factory=list)
    also_urls: list[str] = field(default_factory=list)  # among the sources too, anywhere
    answer: list[str] = field(default_factory=list)  # passages the answer contains; none: no answer
    citations: int | None = None  # how many, when the format has citations
    cited_per_source: bool = False  # one citation per source kept (the count cuts both)
    blocked: bool = False  # a bot challenge, not a result page


def payloads(recording: Recording) -> list[Any]:
    """Every JSON document of the responses: a body, or each SSE event's data (`[DONE]` skipped)."""
    out = []
    for response in recording.responses:
        blocks = re.split(r"\r?\n\r?\n", response.body.decode()) if response.sse else [response.body.decode()]
        for block in blocks:
            lines = block.splitlines()
            data = "\n".join(line[5:].strip() for line in lines if line.startswith("data:")) if response.sse else block
            try:
                out.append(json.loads(data))
            except ValueError:
                continue
    return out


def first_per_url(sources: list[Any]) -> list[Any]:
    """websearch lists each URL once (documented for Anthropic, Codex, Gemini, xAI, DuckDuckGo)."""
    kept: dict[str, Any] = {}
    for source in sources:
        kept.setdefault(source[0], source)
    return list(kept.values())


def brave(rec: Recording) -> Truth:
    # the snippet is the description, then the extra snippets, one per line
    results = [r for p in payloads(rec) for r in (p.get("web") or {}).get("results") or [] if r.get("url")]
    snippets = [(r.get("description") or "", *r.get("extra_snippets", [])) for r in results]
    return Truth([(r["url"], r.get("title"), pieces) for r, pieces in zip(results, snippets, strict=True)])


def exa(rec: Recording) -> Truth:
    # the snippet is the summary, else the text; the answer is the first three summaries
    results = [r for p in payloads(rec) for r in p.get("results") or [] if (r.get("url") or "").strip()]
    sources = [(r["url"].strip(), r.get("title"), (r.get("summary") or r.get("text") or "",)) for r in results]
    return Truth(sources, answer=[r["summary"] for r in results[:3] if r.get("summary")])


def tavily(rec: Recording) -> Truth:
    data = payloads(rec)[0]
    sources = [(r["url"], r.get("title"), (r.get("content") or "",)) for r in data.get("results") or [] if r.get("url")]
    return Truth(sources, answer=[data["answer"]] if (data.get("answer") or "").strip() else [])


def firecrawl(rec: Recording) -> Truth:
    data = payloads(rec)[0].get("data")
    items = data if isinstance(data, list) else (data or {}).get("web") or []  # v2 data.web, v1 data
    return Truth([(i["url"], i.get("title"), (i.get("description") or "",)) for i in items if i.get("url")])


def anthropic(rec: Recording) -> Truth:
    # a paused turn is continued: sources and citations come from every reply, the answer from the
    # last one, as the module documents (a paused reply's text is narration: "Let me begin:")
    replies = payloads(rec)
    blocks = [b for reply in replies for b in reply.get("content") or []]
    tool_results = [b["content"] for b in blocks if b["type"] == "web_search_tool_result"]
    results = [i for content in tool_results if isinstance(content, list) for i in content]
    sources = [(i["url"], i.get("title"), ()) for i in results if i.get("type") == "web_search_result"]
    texts = [b for b in blocks if b["type"] == "text"]
    answer = [b["text"] for b in replies[-1].get("content") or [] if b["type"] == "text"]
    cited = sum(1 for b in texts for c in b.get("citations") or [] if c.get("url"))
    return Truth(first_per_url(sources), answer=answer, citations=cited)


def codex(rec: Recording) -> Truth:
    # sources are the url_citation annotations (no citations of their own); every URL a
    # web_search_call lists as a source must be among them too
    truth = Truth()
    for item in (p["item"] for p in payloads(rec) if p.get("type") == "response.output_item.done"):
        if item.get("type") == "message":
            for part in (c for c in item.get("content") or [] if c.get("type") == "output_text"):
                truth.answer.append(part["text"])
                notes = [n for n in part.get("annotations") or [] if n.get("type") == "url_citation"]
                truth.sources += [(n["url"], n.get("title"), ()) for n in notes]
        elif item.get("type") == "web_search_call":
            listed = (item.get("action") or {}).get("sources") or []
            truth.also_urls += [s["url"] for s in listed if s.get("type") == "url" and s.get("url")]
    truth.sources = first_per_url(truth.sources)
    return truth


def gemini(rec: Recording) -> Truth:
    # Google's redirect URLs are kept as they are; a citation is one support's one chunk
    sources, text, cited = [], [], 0
    for chunk in payloads(rec):
        candidates = chunk.get("response", chunk).get("candidates") or [{}]
        parts = candidates[0].get("content", {}).get("parts", [])
        text += [p["text"] for p in parts if p.get("text") and not p.get("thought")]
        meta = candidates[0].get("groundingMetadata") or {}
        webs = [c.get("web") or {} for c in meta.get("groundingChunks") or []]
        sources += [(w["uri"], w.get("title"), ()) for w in webs if w.get("uri")]
        indices = [i for s in meta.get("groundingSupports") or [] for i in s.get("groundingChunkIndices") or []]
        cited += sum(1 for i in indices if i < len(webs) and webs[i].get("uri"))
    return Truth(first_per_url(sources), answer=["".join(text)], citations=cited)


def perplexity(rec: Recording) -> Truth:
    # the last non-empty citations / search_results win; one citation per cited URL
    text, cited, results = [], [], []
    for p in payloads(rec):
        parts = [part for c in p.get("choices") or [] for part in (c.get("delta"), c.get("message")) if part]
        text += [part["content"] for part in parts if part.get("content")]
        cited, results = p.get("citations") or cited, p.get("search_results") or results
    titles = {r["url"]: r.get("title") for r in reversed(results)}
    sources = [(u, titles.get(u), ()) for u in cited] or [(r["url"], r.get("title"), ()) for r in results]
    return Truth(sources, answer=["".join(text)], citations=len(cited))


def xai(rec: Recording) -> Truth:
    # url_citation annotations (top level, per output item, per content part), then bare `citations`
    truth = Truth(cited_per_source=True)
    for p in payloads(rec):
        items = p.get("output") or []
        parts = [part for item in items for part in item.get("content") or []]
        texts = [part for part in parts if part.get("type") in ("output_text", "text")]
        truth.answer += [part["text"] for part in texts if part.get("text")]
        notes = [*(p.get("annotations") or []), *(n for i in items for n in i.get("annotations") or [])]
        notes += [n for part in parts for n in part.get("annotations") or []]
        notes += [{"type": "url_citation", "url": u} for u in p.get("citations") or []]
        cited = [n for n in notes if n.get("type") == "url_citation" and n.get("url")]
        truth.sources += [(n["url"], n.get("title"), ()) for n in cited]
    truth.sources = first_per_url(truth.sources)
    return truth


class _DdgPage(HTMLParser):
    """`a.result__a` links (href, title) and the `.result__snippet` after each, in page order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.results: list[list[str]] = []  # [href, title, snippet]
        self.reading: list[Any] | None = None  # [tag, nesting depth, field]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.reading is not None:
            self.reading[1] += tag == self.reading[0]
            return
        classes = (dict(attrs).get("class") or "").split()
        if tag == "a" and "result__a" in classes:
            self.results.append([dict(attrs).get("href") or "", "", ""])
            self.reading = [tag, 0, 1]
        elif "result__snippet" in classes and self.results and not self.results[-1][2]:
            self.reading = [tag, 0, 2]

    def handle_endtag(self, tag: str) -> None:
        if self.reading is not None and tag == self.reading[0]:
            self.reading[1] -= 1
            if self.reading[1] < 0:
                self.reading = None

    def handle_data(self, data: str) -> None:
        if self.reading is not None:  # highlight tags (<b>) add no text of their own
            self.results[-1][self.reading[2]] += data


def _ddg_target(href: str) -> str:
    """A result link's target: `//duckduckgo.com/l/?uddg=<target>` redirects unwrapped."""
    parts = urlsplit(href)
    if parts.path == "/l/" and "uddg" in parse_qs(parts.query):
        return parse_qs(parts.query)["uddg"][0]
    return "https:" + href if href.startswith("//") else href


def duckduckgo(rec: Recording) -> Truth:
    body = rec.responses[0].body
    page = _DdgPage()
    page.feed(body.decode("utf-8", "replace"))
    sources = [
        (_ddg_target(href), title, (snippet,))
        for href, title, snippet in page.results
        if title.strip()
        and "duckduckgo.com/y.js" not in href  # an ad
        and not (fold(title) == "EOF" and "google.com/search" in href)  # the end-of-results row
    ]
    blocked = not page.results and (b"anomaly-modal" in body or b"challenge-form" in body)
    return Truth(first_per_url(sources), blocked=blocked)


EXTRACTORS: dict[str, Callable[[Recording], Truth]] = {
    f.__name__: f for f in (anthropic, brave, codex, duckduckgo, exa, firecrawl, gemini, perplexity, tavily, xai)
}


def fold(text: str | None) -> str:
    return " ".join((text or "").split())


def _bare(url: str) -> str:
    """The URL without the `utm_source=openai` that OpenAI appends to cited links."""
    return re.sub(r"[?&]utm_source=openai$", "", url)


# -- the replay ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", _cases())
async def test_replay(path: Path, config_dir: Path) -> None:
    recording = load(path)
    extract = EXTRACTORS.get(recording.provider)
    if extract is None:
        pytest.fail(f"no ground-truth extractor for {recording.provider!r}: add one to EXTRACTORS")
    truth = extract(recording)
    with Replay(recording) as fake:
        env = {**fake.env, **key_env(recording.provider, config_dir, "replay-key-0123456789")}
        response = await search_once(recording.provider, env, recording.query)
        asked = len(fake.requests)
    served = len(recording.responses)
    assert asked == served, f"websearch asked for {asked} of the {served} recorded responses: {response.error}"
    kind = response.attempts[-1].error_kind if response.attempts else None
    if truth.blocked:
        assert kind == "blocked", f"a bot challenge page, read as: {response.error or response.sources}"
        return

    # websearch keeps its default count of results (the providers that have one)
    cap = getattr(import_module(f"websearch._providers.{recording.provider}"), "DEFAULT_RESULTS", None)
    want = truth.sources[:cap]
    if want or truth.answer:
        assert response.ok, response.error
    else:  # a page of no results is that, not a block
        assert kind in (None, "no_results"), response.error
    urls = [s.url for s in response.sources]
    assert urls[: len(want)] == [url for url, _, _ in want], "the recorded result URLs, in order"
    if not truth.also_urls:
        assert len(urls) == len(want), f"sources beyond the recorded ones: {urls[len(want) :]}"
    for source, (url, title, pieces) in zip(response.sources, want, strict=False):
        assert fold(source.title) == (fold(title) or url), f"title of {url}"
        for piece in pieces:
            assert fold(piece) in fold(source.snippet), f"snippet of {url}"
    bare = {_bare(u) for u in urls}
    missing = [u for u in truth.also_urls if _bare(u) not in bare]
    assert not missing, f"{len(missing)} of the {len(truth.also_urls)} web_search_call source URLs missing: {missing}"

    if truth.answer:
        for passage in truth.answer:
            assert fold(passage) in fold(response.answer), "the recorded answer text"
    else:
        assert response.answer is None
    cited = len(want) if truth.cited_per_source else truth.citations
    if cited is not None:
        assert len(response.citations) == cited, "the recorded citation count"
