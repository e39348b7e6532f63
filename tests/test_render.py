"""The renderers, on exact expected text."""

from __future__ import annotations

import json

import pytest

from websearch import Attempt, SearchCitation, SearchResponse, SearchSource, SearchUsage, render
from websearch._faces._rendering import canonical_url, format_age, truncate

LONG = "x" * 300


def test_format_age_units() -> None:
    assert [format_age(s) for s in (None, 0, 30, 90, 7200, 90_000, 700_000, 2_600_000, 40_000_000, -5)] == [
        "",
        "",
        "just now",
        "1m ago",
        "2h ago",
        "1d ago",
        "1w ago",
        "1mo ago",
        "15mo ago",
        "just now",
    ]


def test_truncate_is_exact_length_with_ellipsis() -> None:
    assert truncate("abc", 3) == "abc"
    assert truncate("abcd", 3) == "ab…"
    assert len(truncate(LONG, 240)) == 240


def test_summary_with_answer_matches_the_spec_example() -> None:
    response = SearchResponse(
        "perplexity",
        answer="QUIC is a UDP-based transport…",
        sources=(
            SearchSource(
                "RFC 9000",
                "https://www.rfc-editor.org/rfc/rfc9000",
                snippet="QUIC: A UDP-Based Multiplexed and Secure Transport…",
                age_seconds=8_000_000,
            ),
            SearchSource("Cloudflare blog", "https://blog.cloudflare.com/quic", published_date="2024-05-02"),
        ),
        related_questions=("What is 0-RTT?",),
        search_queries=("quic vs tcp",),
    )
    assert render(response, "summary") == (
        "QUIC is a UDP-based transport…\n"
        "\n## Sources\n"
        "2 sources\n"
        "[1] RFC 9000 (3mo ago)\n"
        "    https://www.rfc-editor.org/rfc/rfc9000\n"
        "    QUIC: A UDP-Based Multiplexed and Secure Transport…\n"
        "[2] Cloudflare blog (2024-05-02)\n"
        "    https://blog.cloudflare.com/quic\n"
        "\n## Related\n"
        "1 question\n"
        "- What is 0-RTT?\n"
        "Search queries: 1\n"
        "- quic vs tcp"
    )


def test_summary_without_answer_starts_with_sources_and_cuts_snippets() -> None:
    response = SearchResponse(
        "brave", sources=(SearchSource("Title", "https://a.example", snippet=LONG, age_seconds=3 * 86400),)
    )
    assert render(response) == f"[1] Title (3d ago)\n    https://a.example\n    {'x' * 239}…"


def test_summary_citations_and_query_caps() -> None:
    response = SearchResponse(
        "anthropic",
        answer="A.",
        citations=(SearchCitation("https://c.example", "", cited_text=LONG), SearchCitation("https://d.example", "D")),
        search_queries=("q1", "q" * 200, "q3", "q4"),
    )
    assert render(response) == (
        "A.\n"
        "\n## Citations\n2 citations\n"
        "[1] https://c.example\n    https://c.example\n    " + "x" * 239 + "…\n"
        "[2] D\n    https://d.example\n"
        "Search queries: 4\n- q1\n- " + "q" * 119 + "…\n- q3"
    )


def test_failed_summary_is_error_text() -> None:
    assert render(SearchResponse("none", error="No web search provider configured.")) == (
        "Error: No web search provider configured."
    )


def test_blocks_layout() -> None:
    response = SearchResponse(
        "exa",
        query="rust async",
        answer="Async Rust uses futures.",
        citations=(SearchCitation("https://a.example/1", "A"), SearchCitation("https://a.example/1", "A again")),
        sources=(
            SearchSource(
                "Book",
                "https://Rust-Lang.github.io/async-book/?utm_source=x&page=2",
                snippet="Body text.",
                published_date="2026-11-27T10:00:00Z",
                highlights=("Body text.", "A highlight.", " "),
            ),
            SearchSource("Same book", "https://rust-lang.github.io/async-book/?page=2&utm_medium=y"),
            SearchSource("Tokio", "https://tokio.rs", snippet="y" * 250, published_date="last week"),
        ),
        notices=("limit=50 exceeds Exa's maximum of 20; at most 20 results returned",),
    )
    assert (
        render(response, "blocks", text_chars=20)
        == (  # clamped to 200
            "# Web search: rust async\n"
            "[limit=50 exceeds Exa's maximum of 20; at most 20 results returned]\n"
            "[served by: exa]\n"
            "\n## Synthesized answer\nAsync Rust uses futures.\nGrounding: https://a.example/1\n"
            "\n## 1. Book\nURL: https://Rust-Lang.github.io/async-book/?utm_source=x&page=2 · 2026-11-27\n"
            "- A highlight.\nBody text.\n"
            "\n## 2. (duplicate of [1]: https://rust-lang.github.io/async-book/?page=2&utm_medium=y)\n"
            "\n## 3. Tokio\nURL: https://tokio.rs · last week\n" + "y" * 199 + "…\n"
            "\nSources:\n"
            "[1] https://Rust-Lang.github.io/async-book/?utm_source=x&page=2\n"
            "[2] https://rust-lang.github.io/async-book/?page=2&utm_medium=y\n"
            "[3] https://tokio.rs"
        )
    )


def test_blocks_caps_highlights_at_four() -> None:
    src = SearchSource("T", "https://t.example", highlights=tuple(f"h{i}" for i in range(6)))
    text = render(SearchResponse("exa", query="q", sources=(src,)), "blocks")
    assert [line for line in text.splitlines() if line.startswith("- ")] == ["- h0", "- h1", "- h2", "- h3"]


def test_blocks_error() -> None:
    response = SearchResponse("duckduckgo", query="q", error="DuckDuckGo HTML error (503)", notices=("n",))
    assert render(response, "blocks") == "# Web search: q\n[n]\nError: DuckDuckGo HTML error (503)"


def test_canonical_url() -> None:
    assert canonical_url("HTTPS://Example.COM/Path?utm_source=a&b=1#f") == "https://example.com/Path?b=1#f"


def test_json_is_snake_case_with_text_response_error() -> None:
    response = SearchResponse(
        "brave",
        query="q",
        sources=(SearchSource("T", "https://t.example", published_date="2026-01-01", age_seconds=5),),
        usage=SearchUsage(input_tokens=3),
        request_id="r1",
        auth_mode="api_key",
        attempts=(Attempt("brave", None, None, 12.5),),
    )
    payload = json.loads(render(response, "json"))
    assert set(payload) == {"text", "response", "error"}
    assert payload["error"] is None
    assert payload["text"] == render(response, "summary")
    r = payload["response"]
    assert r["request_id"] == "r1"
    assert r["auth_mode"] == "api_key"
    assert r["related_questions"] == []
    assert r["sources"][0] == {
        "title": "T",
        "url": "https://t.example",
        "snippet": None,
        "published_date": "2026-01-01",
        "age_seconds": 5,
        "author": None,
        "highlights": [],
        "engines": [],  # set by a fan-out: which engines returned it, at which rank
    }
    assert r["answers"] == []  # a fan-out's answers
    assert r["usage"] == {"input_tokens": 3, "output_tokens": None, "total_tokens": None, "search_requests": None}
    assert r["attempts"] == [
        {
            "provider": "brave",
            "status": None,
            "error": None,
            "duration_ms": 12.5,
            "error_kind": None,
            "retry_after_s": None,
            "notices": [],
            "skipped": None,
            "until": None,
        }
    ]
    assert (r["cached"], r["cached_age_s"]) == (False, None)  # present on every response


def test_json_failure() -> None:
    payload = json.loads(render(SearchResponse("none", query="q", error="No web search provider configured."), "json"))
    assert payload["error"] == "No web search provider configured."
    assert payload["text"] == "Error: No web search provider configured."


def test_render_stays_the_function_after_the_module_is_imported() -> None:
    import websearch
    import websearch._faces._rendering

    assert callable(websearch.render)
    assert websearch.render(SearchResponse("x", error="e")) == "Error: e"


def test_unknown_format() -> None:
    with pytest.raises(ValueError, match="unknown format"):
        render(SearchResponse("x"), "xml")  # type: ignore[arg-type]


def test_summary_keeps_a_multi_line_snippet_under_its_entry() -> None:
    response = SearchResponse(
        provider="brave",
        query="q",
        sources=(SearchSource("T", "https://t.example/", "First line.\nSecond line.\n\nAfter a blank."),),
        citations=(SearchCitation("https://c.example/", "C", "Cited one.\nCited two."),),
    )
    assert render(response, "summary") == (
        "[1] T\n"
        "    https://t.example/\n"
        "    First line.\n"
        "    Second line.\n"
        "    After a blank.\n"
        "\n## Citations\n"
        "1 citation\n"
        "[1] C\n"
        "    https://c.example/\n"
        "    Cited one.\n"
        "    Cited two."
    )


def test_blocks_show_the_passages_an_answer_engine_cited_from_each_result() -> None:
    # Anthropic's and Gemini's results come without a snippet: the cited passages were shown in
    # `summary` only, and the MCP tool's default `blocks` gave titles and URLs, no evidence.
    response = SearchResponse(
        "anthropic",
        query="weather",
        answer="Sunny later.",
        sources=(SearchSource("Forecast", "https://w.example/today"), SearchSource("Other", "https://o.example/")),
        citations=(
            SearchCitation("https://w.example/today", "Forecast", "Clouds give way\n  to sun."),
            SearchCitation("https://W.example/today?utm_source=x", "Forecast", "Highs near 20."),
            SearchCitation("https://w.example/today", "Forecast", "Clouds give way to sun."),  # the same again
        ),
    )
    blocks = {block.split("\n")[0]: block for block in render(response, "blocks").split("\n\n")}
    assert blocks["## 1. Forecast"] == (
        "## 1. Forecast\nURL: https://w.example/today\n- Clouds give way to sun.\n- Highs near 20."
    )
    assert blocks["## 2. Other"] == "## 2. Other\nURL: https://o.example/"


def test_a_title_with_a_newline_stays_on_its_entry_line() -> None:
    response = SearchResponse(
        "exa",
        query="q",
        sources=(SearchSource("Release notes\n  v2.0", "https://r.example/"),),
        citations=(SearchCitation("https://r.example/", "Cited\ttitle"),),
    )
    assert "## 1. Release notes v2.0\nURL: https://r.example/" in render(response, "blocks")
    summary = render(response, "summary")
    assert summary.startswith("[1] Release notes v2.0\n    https://r.example/")
    assert "[1] Cited title\n    https://r.example/" in summary
