"""Renderers: pure functions from a `SearchResponse` to text an LLM reads well.

- `summary`: the spec's formatForLLM layout, byte for byte, except that every line of a
  multi-line snippet or cited text is indented under its entry (the spec indents only the
  first, which breaks the list apart when Brave's extra snippets or a citation span lines).
- `blocks`: one block per result with its own title, URL, highlights and text, plus a
  `Sources:` trailer (the layout of mcp-web_search-tool.md). The passages an answer engine
  cited from a result are among its highlights: Anthropic's and Gemini's results come with no
  snippet, and the evidence was shown only in `summary`.
- `json`: `{"text": <summary>, "response": {...}, "error": null | "..."}`.
"""

from __future__ import annotations

from typing import Final, Literal, get_args
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from .._core._dates import parse_date
from .._core._params import DEFAULT_TEXT_CHARS, LOCALE_PARAMS, TEXT_CHARS_RANGE
from .._core._types import Locale, SearchResponse

__all__ = [
    "DEFAULT_TEXT_CHARS",
    "RENDER_FORMATS",
    "RenderFormat",
    "age_words",
    "cached_note",
    "format_age",
    "locale_words",
    "render",
    "truncate",
]

RenderFormat = Literal["summary", "blocks", "json"]
RENDER_FORMATS: Final[tuple[str, ...]] = get_args(RenderFormat)
_MAX_HIGHLIGHTS: Final = 4


def truncate(text: str, limit: int) -> str:
    """`text` cut to exactly `limit` characters, the last one an ellipsis, when longer."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def format_age(seconds: int | None) -> str:
    """ "3d ago" style ages; "" for a missing or zero age (the raw date is shown instead)."""
    if not seconds:
        return ""
    mins = seconds // 60
    hours = mins // 60
    days = hours // 24
    for value, unit in ((days // 30, "mo"), (days // 7, "w"), (days, "d"), (hours, "h"), (mins, "m")):
        if value > 0:
            return f"{value}{unit} ago"
    return "just now"


def _plural(label: str, n: int) -> str:
    return f"{n} {label}" if n == 1 else f"{n} {label}s"


def render_summary(response: SearchResponse) -> str:
    """The spec's formatForLLM layout; `Error: <message>` for a failed search."""
    if response.error is not None:
        return f"Error: {response.error}"
    parts: list[str] = []
    if response.answer:
        parts.append(response.answer)
        if response.sources:
            parts.append("\n## Sources")
            parts.append(_plural("source", len(response.sources)))
    for i, src in enumerate(response.sources, 1):
        age = format_age(src.age_seconds) or src.published_date
        parts.append(f"[{i}] {_line(src.title)}" + (f" ({age})" if age else "") + f"\n    {src.url}")
        if src.snippet:
            parts.append(_indented(truncate(src.snippet, 240)))
    if response.citations:
        parts.append("\n## Citations")
        parts.append(_plural("citation", len(response.citations)))
        for i, cit in enumerate(response.citations, 1):
            parts.append(f"[{i}] {_line(cit.title or cit.url)}\n    {cit.url}")
            if cit.cited_text:
                parts.append(_indented(truncate(cit.cited_text, 240)))
    if response.related_questions:
        parts.append("\n## Related")
        parts.append(_plural("question", len(response.related_questions)))
        parts.extend(f"- {q}" for q in response.related_questions)
    if response.search_queries:
        parts.append(f"Search queries: {len(response.search_queries)}")
        parts.extend("- " + truncate(q, 120) for q in response.search_queries[:3])
    return "\n".join(parts)


def _line(text: str) -> str:
    """`text` on one line, its runs of whitespace folded: a title with a newline in it broke its
    entry's header (and the `summary` list) onto the left margin."""
    return " ".join(text.split())


def _indented(text: str) -> str:
    """Every line of `text` indented under its `[n]` entry (blank lines dropped): a multi-line
    snippet keeps its layout instead of breaking out to the left margin."""
    return "\n".join("    " + line.strip() for line in text.splitlines() if line.strip())


def canonical_url(url: str) -> str:
    """The URL used to spot duplicates: host lower-cased, `utm_*` parameters removed."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not k.startswith("utm_")])
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path, query, parts.fragment))


def _date_label(published: str | None) -> str | None:
    if not published:
        return None
    when = parse_date(published)
    return when.date().isoformat() if when else published


def cached_note(response: SearchResponse) -> str:
    """ "served from the cache (3 min old)": what a cached response says of itself."""
    age = response.cached_age_s or 0.0
    return f"served from the cache ({age_words(age)} old)"


def age_words(seconds: float) -> str:
    """ "42 s", "3 min", "2 h": how old a cached answer or page is."""
    if seconds < 60:
        return f"{int(seconds)} s"
    if seconds < 3600:
        return f"{int(seconds // 60)} min"
    return f"{int(seconds // 3600)} h"


def locale_words(locale: Locale) -> str:
    """ "country=DE, language=de (setting, not applied)": each locale value set, with where it came
    from when that is a setting and whether the serving provider applied it."""
    words = []
    for name in LOCALE_PARAMS:
        item = getattr(locale, name)
        if item.value is None:
            continue
        notes = [*(["setting"] if item.source == "setting" else []), *([] if item.applied else ["not applied"])]
        words.append(f"{name}={item.value}" + (f" ({', '.join(notes)})" if notes else ""))
    return ", ".join(words)


def render_blocks(response: SearchResponse, *, text_chars: int = DEFAULT_TEXT_CHARS) -> str:
    """One block per result, each with its own title, URL, highlights and text; Sources trailer.

    `text_chars` is clamped to 200..8000 as the search clamped it (the search's notices say so).
    """
    low, high = TEXT_CHARS_RANGE
    text_chars = min(high, max(low, text_chars))
    lines = [f"# Web search: {response.query}"]
    lines.extend(f"[{notice}]" for notice in response.notices)
    if response.error is not None:
        lines.append(f"Error: {response.error}")
        return "\n".join(lines)
    served = f"{response.provider} search — {response.fallback}" if response.fallback else response.provider
    if response.answers or any(s.engines for s in response.sources):  # a fan-out: who answered
        answered = [a.provider for a in response.attempts if a.error is None]
        served += f" ({', '.join(answered)})"
    if response.cached:
        served += f", cached {age_words(response.cached_age_s or 0.0)} ago"
    if response.replayed:
        served += ", replayed"
    lines.append(f"[served by: {served}]")
    if response.locale is not None:
        lines.append(f"[locale: {locale_words(response.locale)}]")
    if response.answer:
        lines += ["", "## Synthesized answer", response.answer.strip()]
        grounding = list(dict.fromkeys(c.url for c in response.citations))
        if grounding:
            lines.append("Grounding: " + "; ".join(grounding))
        for other in response.answers[1:]:  # a fan-out's other answer engines
            lines += ["", f"## Answer from {other.provider}", other.answer.strip()]
    cited: dict[str, list[str]] = {}
    for cit in response.citations:
        if cit.cited_text and cit.cited_text.strip():
            cited.setdefault(canonical_url(cit.url), []).append(truncate(_line(cit.cited_text), 240))
    seen: dict[str, int] = {}
    for i, src in enumerate(response.sources, 1):
        lines.append("")
        key = canonical_url(src.url)
        first = seen.setdefault(key, i)
        if first != i:
            lines.append(f"## {i}. (duplicate of [{first}]: {src.url})")
            continue
        lines.append(f"## {i}. {_line(src.title)}")
        if src.engines:
            lines.append("[" + ", ".join(f"{e.provider} #{e.rank}" for e in src.engines) + "]")
        date = _date_label(src.published_date)
        lines.append(f"URL: {src.url}" + (f" · {date}" if date else ""))
        body = truncate(src.snippet.strip(), text_chars) if src.snippet else ""
        passages = (*src.highlights, *cited.get(key, ()))
        fresh = list(dict.fromkeys(h.strip() for h in passages if h.strip() and h.strip() not in body))
        lines.extend(f"- {h}" for h in fresh[:_MAX_HIGHLIGHTS])
        if body:
            lines.append(body)
    if response.sources:
        lines += ["", "Sources:"]
        lines.extend(f"[{i}] {src.url}" for i, src in enumerate(response.sources, 1))
    return "\n".join(lines)


def render_json(response: SearchResponse) -> str:
    """`{"text", "response", "error"}` with snake_case keys, UTF-8 kept readable: `json_answer`."""
    return json_answer(response).decode()


def json_answer(response: SearchResponse) -> bytes:
    """The `--format json` object, as `POST /v1/search` answers it too: the summary text, the
    response in its one JSON form (`websearch._core._json`: orjson, compact, the dataclasses
    written by orjson itself) and its error. One serialiser, so the faces agree byte for byte."""
    import orjson

    return orjson.dumps({"text": render_summary(response), "response": response, "error": response.error})


def render(response: SearchResponse, format: RenderFormat = "summary", *, text_chars: int = DEFAULT_TEXT_CHARS) -> str:
    """Render `response` as `summary`, `blocks` or `json`."""
    if format == "summary":
        return render_summary(response)
    if format == "blocks":
        return render_blocks(response, text_chars=text_chars)
    if format == "json":
        return render_json(response)
    raise ValueError(f"unknown format {format!r}; use one of {', '.join(RENDER_FORMATS)}")
