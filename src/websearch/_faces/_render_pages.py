"""Renderers of reading: a `FetchResponse` and a `ResearchResponse` as text a person or a model
reads, shared by the CLI, the MCP tools and the REST API's text answers.

A page: a short header (title, final URL, what was read, which characters of how many and where
to continue), `note:` lines for the notices, then the text. A page not read is one line,
`FETCH_FAILED (<error_kind>): <error>`, as a failed search is `SEARCH_FAILED: ...`: an agent
reads the kind (robots, http_error, timeout...) and decides whether to retry.

A research: its context (which ends with its own Sources list), the answer engines' answers with
what they cite, and the pages not used with why. One that found nothing is
`RESEARCH_FAILED: <query> — <why>`, with the search's failed attempts.
"""

from __future__ import annotations

from typing import Final

from .._core._pages import FetchResponse, ResearchResponse
from ._rendering import age_words, truncate

__all__ = [
    "fetch_failure",
    "fetch_header",
    "render_fetch",
    "render_fetch_json",
    "render_research",
    "render_research_json",
    "research_failure",
]

_REASONS: Final = {
    "fetch_failed": "not read",
    "robots": "robots.txt disallows it",
    "duplicate": "repeats another page",
    "over_budget": "over the budget",
    "no_relevant_passage": "nothing on the question",
    "not_fetched": "not read in time",
    "empty": "no text",
}


def window_words(page: FetchResponse) -> str:
    """ "20000 of 54321 characters (0–20000); continue with start=20000", or "the whole page (M characters)"."""
    end = page.start + len(page.text)
    shown = f"{len(page.text)} of {page.total_chars} characters ({page.start}–{end})"
    if page.next_start is not None:
        return f"{shown}; continue with start={page.next_start}"
    if page.start:
        return f"{shown}, to the end"
    return f"the whole page ({page.total_chars} characters)"


def fetch_header(page: FetchResponse) -> list[str]:
    """The header lines of a page read: title, URL, what was read and which characters."""
    lines = [f"# {' '.join((page.title or page.final_url or page.url).split())}"]
    url = page.final_url or page.url
    lines.append(f"URL: {url}" + (f" (asked for {page.url})" if url != page.url else ""))
    what = [page.kind or "page", page.format]
    if page.pages:
        what.append(f"{page.pages} pages")
    if page.published:
        what.append(f"published {page.published}")
    lines.append(f"[{' · '.join(what)} · {window_words(page)}]")
    return lines


def _notes(page: FetchResponse) -> list[str]:
    notes = [f"note: {notice.message}" for notice in page.notices]
    if page.whole_page:
        notes.append("note: no main content was found; this is the whole page's text")
    if page.cached:
        notes.append(f"note: served from the cache ({age_words(page.cached_age_s or 0.0)} old)")
    return notes


def fetch_failure(page: FetchResponse) -> str:
    """`FETCH_FAILED (<error_kind>): <error>`: one line for a page not read."""
    return f"FETCH_FAILED ({page.error_kind or 'fetch'}): {' '.join((page.error or '').split())}"


def render_fetch(page: FetchResponse) -> str:
    """A page as text: the header, `note:` lines, a blank line and the text; or the failure
    line with its notes below it."""
    if page.error is not None:
        return "\n".join([fetch_failure(page), *_notes(page)])
    return "\n".join([*fetch_header(page), *_notes(page), "", page.text])


def render_fetch_json(page: FetchResponse) -> str:
    """`{"text", "response", "error"}` as `websearch search --format json` gives for a search."""
    import orjson  # one serialiser for every face's JSON (`websearch._faces._rendering.json_answer`)

    return orjson.dumps({"text": render_fetch(page), "response": page, "error": page.error}).decode()


def research_failure(response: ResearchResponse) -> str:
    """`RESEARCH_FAILED: <query> — <why>`, the search's failed attempts in place of a bare error."""
    reasons = " | ".join(f"{a.provider}: {a.error}" for a in response.attempts if a.error)
    return f"RESEARCH_FAILED: {response.query} — {reasons or response.error}"


def _not_used(response: ResearchResponse) -> list[str]:
    lines = []
    for page in response.pages:
        if page.used:
            continue
        why = _REASONS.get(page.reason, page.reason.replace("_", " "))
        if page.error_kind:
            why += f" ({page.error_kind})"
        if page.message:
            why += f": {truncate(' '.join(page.message.split()), 200)}"
        lines.append(f"- {page.url} — {why}")
    return lines


def render_research(response: ResearchResponse) -> str:
    """A research as text: a header, `note:` lines, the context (with its Sources), the answer
    engines' answers and their citations, and the pages not used with why."""
    notes = [f"note: {notice.message}" for notice in response.notices]
    unused = _not_used(response)
    if response.error is not None:
        lines = [research_failure(response), *notes]
        if unused:
            lines += ["", "Pages not used:", *unused]
        return "\n".join(lines)
    used = sum(1 for page in response.pages if page.used)
    measure = f"{response.chars} characters"
    if response.tokens:
        measure += f", {response.tokens} tokens ({response.token_counter})"
    budget = (
        f"budget {response.budget_tokens} tokens"
        if response.budget_tokens is not None
        else f"budget {response.budget_chars} characters"
        if response.budget_chars is not None
        else ""
    )
    served = f"served by: {response.provider}" if response.provider else ""
    header = " · ".join(x for x in (served, f"{used} of {len(response.pages)} pages used", measure, budget) if x)
    lines = [f"# Research: {response.query}", f"[{header}]", *notes]
    if response.context.strip():
        lines += ["", response.context.strip()]
    for answer in response.answers:
        lines += ["", f"## Answer from {answer.provider}", answer.answer.strip()]
        cited = list(dict.fromkeys(c.url for c in answer.citations))
        if cited:
            lines.append("Cites: " + "; ".join(cited))
    if unused:
        lines += ["", "Pages not used:", *unused]
    return "\n".join(lines)


def render_research_json(response: ResearchResponse) -> str:
    """`{"text", "response", "error"}` for a research."""
    import orjson

    return orjson.dumps({"text": render_research(response), "response": response, "error": response.error}).decode()
