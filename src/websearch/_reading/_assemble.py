"""Fetched pages to one cited context within a budget: what `research` hands an LLM.

The steps: cut each page into passages, score them for the question (BM25 unless another
reranker is given; times a small boost for a recent declared date), drop near-duplicate passages
(the copy on the better-ranked page stays), then fill the budget fairly: every page with a relevant passage
gets an equal share of the budget for its best passages before any page gets more, and what the
shares leave goes to the best remaining passages whichever page they are on. A page that cannot
use its share (a short page) leaves the rest to the others.

The text: one section per page, most relevant page first (its best passage's score; ties by
search rank), headed `[n] Title (date)`, its passages in document order, a `[…]` line where
passages were left out between two, a `## heading` line where the heading changes; then the
answer engines' answers, each citing the numbers of its URLs; then `Sources:`, one `[n] url` line
a number. Numbers follow the sections (the order of first use), then the URLs only answers cite.
Footnote marks such as `[12]` are taken out of passages, so every `[n]` in the text is a source.

The budget counts the whole text, headers, markers and the sources list included, in characters
(`len`) or in tokens (see `_tokens`); it is never exceeded: costs are reserved for the worst case
while choosing, and the rendered text is measured and trimmed until it fits. A passage that does
not fit is cut at a sentence end when what is kept is worth it (`MIN_CUT_CHARS`, `MIN_CUT_TOKENS`),
else skipped. Answers take at most a third of the budget when pages have relevant passages.

When no passage matches the question at all (no query term in any page), passages are taken by
position instead: each page's first passages, which is where a page says what it is about.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

from .._core._dates import parse_date
from ._dedupe import near_duplicates, same_meaning
from ._passages import PageText, Passage, split_passages
from ._rank import BM25Reranker, Embeds, Reranker, recency_boosts
from ._tokens import TokenCounter, token_counter

__all__ = [
    "DUPLICATE",
    "EMPTY",
    "GAP",
    "MIN_CUT_CHARS",
    "MIN_CUT_TOKENS",
    "NO_RELEVANT_PASSAGE",
    "OVER_BUDGET",
    "USED",
    "Answer",
    "Context",
    "PageUse",
    "Source",
    "assemble",
]

USED: Final = "used"
DUPLICATE: Final = "duplicate"
OVER_BUDGET: Final = "over_budget"
NO_RELEVANT_PASSAGE: Final = "no_relevant_passage"
EMPTY: Final = "empty"

#: The line that stands for passages left out between two kept ones (and ends a cut passage).
GAP: Final = "[…]"
#: A passage is cut to fit only if the part kept has at least this many characters (char budget)...
MIN_CUT_CHARS: Final = 160
#: ...or this many tokens (token budget).
MIN_CUT_TOKENS: Final = 40
#: The share of the budget answers may take when pages have relevant passages.
ANSWER_SHARE: Final = 1 / 3

_FOOTNOTE: Final = re.compile(r"[ \t]*\[\d{1,4}\]")
_SPACES: Final = re.compile(r"\s+")
_SENTENCE_END: Final = re.compile(r"[.!?…][\"'”’)\]]*(?=\s)|[。！？][」』”’）]*|\n")
_SEP: Final = "\n\n"


@dataclass(frozen=True)
class Answer:
    """An answer engine's answer (`provider`'s), kept beside the context with the URLs it cites."""

    provider: str
    text: str
    citations: tuple[str, ...] = ()


@dataclass(frozen=True)
class Source:
    """Source `[number]` of the context: its URL, title and the characters of it the text holds."""

    number: int
    url: str
    title: str | None
    chars_used: int


@dataclass(frozen=True)
class PageUse:
    """What became of a page: `reason` is "used", "duplicate" (its relevant passages were copies
    of `duplicate_of`'s, or it repeats that URL), "over_budget", "no_relevant_passage" or
    "empty" (no text); `passages` and `chars_used` count what the context holds of it."""

    url: str
    reason: str
    passages: int = 0
    chars_used: int = 0
    duplicate_of: str | None = None


@dataclass(frozen=True)
class Context:
    """The assembled context (`text`, `chars` characters, `tokens` by `token_counter`, which is
    "tiktoken:cl100k_base" or "estimate"), its numbered `sources`, the pages `used` and `skipped`,
    the `answers` as the text holds them (cut to fit), `ranked_by` ("score", or "position" when
    no passage matched the question) and, when the text is empty, why (`reason`)."""

    text: str
    sources: tuple[Source, ...]
    used: tuple[PageUse, ...]
    skipped: tuple[PageUse, ...]
    chars: int
    tokens: int
    token_counter: str
    answers: tuple[Answer, ...] = ()
    ranked_by: str = "score"
    reason: str | None = None


@dataclass(eq=False)
class _Pick:
    passage: Passage
    score: float
    text: str  # as rendered: footnote marks out, maybe cut
    cut: bool = False
    cost: int = -1  # what it takes of the budget, worst case (measured once)


@dataclass
class _Page:
    index: int
    page: PageText
    candidates: list[_Pick] = field(default_factory=list)  # best first
    picked: list[_Pick] = field(default_factory=list)


def _clean(text: str) -> str:
    return _FOOTNOTE.sub("", text)


def _one_line(text: str | None, limit: int = 200) -> str:
    return _SPACES.sub(" ", _clean(text or "")).strip()[:limit]


def _header(number: int, page: PageText) -> str:
    title = _one_line(page.title) or _one_line(page.url)
    when = parse_date(page.published)
    return f"[{number}] {title}" + (f" ({when.date().isoformat()})" if when else "")


def _passage_block(pick: _Pick) -> str:
    heading = _one_line(pick.passage.heading)
    return (f"## {heading}\n" if heading else "") + pick.text


def _sentence_ends(text: str) -> list[int]:
    return [m.end() for m in _SENTENCE_END.finditer(text) if m.end() < len(text)]


def _fit(text: str, room: float, measure: Callable[[str], int], least: int) -> str | None:
    """The longest start of `text` ending at a sentence end that, with ` […]` after it, costs at
    most `room` and keeps at least `least` (in the budget's unit); None when there is none."""
    ends = _sentence_ends(text)
    lo, hi, best = 0, len(ends) - 1, None
    while lo <= hi:
        middle = (lo + hi) // 2
        cut = text[: ends[middle]].rstrip() + " " + GAP
        if measure(cut) <= room:
            best, lo = cut, middle + 1
        else:
            hi = middle - 1
    return best if best is not None and measure(best) >= least else None


_Key = tuple[float, int, int, int]


def _ranked(pages: list[_Page], query: str, reranker: Reranker) -> tuple[list[tuple[_Pick, _Key]], str]:
    """Every passage with its score and sort key (best first), and how they were ranked."""
    passages = [p for page in pages for p in split_passages(page.index, page.page)]
    texts = [f"{p.heading}\n{p.text}" if p.heading else p.text for p in passages]
    scores = list(reranker.score(query, texts)) if passages else []
    if len(scores) != len(passages):
        raise ValueError(f"the reranker gave {len(scores)} scores for {len(passages)} passages")
    by_index = {page.index: page for page in pages}
    ranked_by = "score"
    if passages and not any(s > 0 for s in scores):
        scores = [1.0 / (1 + p.index) for p in passages]  # the lead passages of every page
        ranked_by = "position"
    boost_list = recency_boosts([page.page.published for page in pages])
    boosts = {page.index: boost for page, boost in zip(pages, boost_list, strict=True)}
    picks: list[tuple[_Pick, _Key]] = []
    for passage, score in zip(passages, scores, strict=True):
        if score > 0:
            score *= boosts[passage.source]
            key: _Key = (-score, by_index[passage.source].page.rank, passage.source, passage.index)
            picks.append((_Pick(passage, score, _clean(passage.text)), key))
    picks.sort(key=lambda pair: pair[1])
    return picks, ranked_by


def _duplicates(texts: list[str], order: list[int], reranker: Reranker | None) -> dict[int, int]:
    """Near-copies among `texts` ({dropped: kept}, the better-placed in `order` kept): by shared
    word sequences, and by meaning too when the reranker embeds (a reworded mirror)."""
    dropped = near_duplicates(texts, order)
    if isinstance(reranker, Embeds) and len(texts) > 1:
        left = [i for i in order if i not in dropped]
        vectors = reranker.embed([texts[i] for i in left])
        for copy, original in same_meaning(vectors, range(len(left))).items():
            dropped[left[copy]] = left[original]
    return dropped


def assemble(
    query: str,
    pages: Sequence[PageText],
    *,
    budget_chars: int | None = 12000,
    budget_tokens: int | None = None,
    reranker: Reranker | None = None,
    answers: Sequence[Answer] = (),
    counter: TokenCounter | None = None,
) -> Context:
    """The cited context for `query` from `pages` (and `answers`) within the budget: tokens when
    `budget_tokens` is given (counted by `counter`, default `token_counter()`), else characters
    (None: no limit). Same input, same output: ties go to the better search rank, then position."""
    counter = counter or token_counter()
    in_tokens = budget_tokens is not None
    budget = budget_tokens if in_tokens else budget_chars
    if budget is not None and budget < 0:
        raise ValueError("a budget cannot be negative")
    measure: Callable[[str], int] = counter.count if in_tokens else len
    least = MIN_CUT_TOKENS if in_tokens else MIN_CUT_CHARS
    limit = math.inf if budget is None else float(budget)

    skipped: dict[int, PageUse] = {}
    first_of_url: dict[str, int] = {}
    live: list[_Page] = []
    for i, given in enumerate(pages):
        if given.url in first_of_url:
            skipped[i] = PageUse(given.url, DUPLICATE, duplicate_of=given.url)
        elif not given.text.strip():
            first_of_url[given.url] = i
            skipped[i] = PageUse(given.url, EMPTY)
        else:
            first_of_url[given.url] = i
            live.append(_Page(i, given))

    picks, ranked_by = _ranked(live, query, reranker or BM25Reranker())
    by_index = {page.index: page for page in live}
    # of near-copies, the one on the better-ranked page stays (a mirror's copy may score a little
    # higher, by a declared date or a trimmed boilerplate, and still is the copy)
    by_search = sorted(range(len(picks)), key=lambda i: picks[i][1][1:])
    dropped = _duplicates([pick.text for pick, _ in picks], by_search, reranker)
    for position, (pick, _) in enumerate(picks):
        if position not in dropped:
            by_index[pick.passage.source].candidates.append(pick)
    contenders = [page for page in live if page.candidates]
    contenders.sort(key=lambda page: (-page.candidates[0].score, page.page.rank, page.index))
    for page in live:
        if page.candidates:
            continue
        mine = (i for i, (pick, _) in enumerate(picks) if pick.passage.source == page.index)
        copies = [picks[dropped[i]][0].passage.source for i in mine]
        if copies:
            skipped[page.index] = PageUse(page.page.url, DUPLICATE, duplicate_of=pages[copies[0]].url)
        else:
            skipped[page.index] = PageUse(page.page.url, NO_RELEVANT_PASSAGE)

    # answers first: they have their own share, and their cited URLs their own source lines
    cited = list(dict.fromkeys(url for answer in answers for url in answer.citations))
    digits = len(str(len(contenders) + len(cited) or 1))
    fixed: float = measure("Sources:") + sum(measure(f"\n[{'9' * digits}] {url}") for url in cited)
    answer_room = (limit - fixed) * (ANSWER_SHARE if contenders else 1.0)
    kept_answers: list[Answer] = []
    spent_answers = 0.0
    for i, answer in enumerate(answers):
        marks = " ".join("[" + "9" * digits + "]" for _ in answer.citations)
        head = f"Answer from {_one_line(answer.provider, 60)}" + (f", citing {marks}" if marks else "") + ":\n"
        body = _clean(answer.text).strip()
        if not body:
            continue
        room = (answer_room - spent_answers) / (len(answers) - i) - measure(head + _SEP)
        fitted = body if measure(body) <= room else _fit(body, room, measure, least)
        if fitted is None:
            continue
        kept_answers.append(Answer(answer.provider, fitted, answer.citations))
        spent_answers += measure(head + fitted + _SEP)
    fixed += spent_answers
    gap_cost = measure(GAP + _SEP)

    def page_cost(page: _Page) -> int:
        return measure(_header(10**digits - 1, page.page) + _SEP) + measure(f"\n[{'9' * digits}] {page.page.url}")

    def pick_cost(pick: _Pick) -> int:
        if pick.cost < 0:
            pick.cost = measure(_passage_block(pick) + _SEP) + gap_cost
        return pick.cost

    order: list[_Pick] = []  # in the order chosen, the last dropped first if the text runs over

    def take(page: _Page, pick: _Pick, room: float, may_cut: bool) -> float:
        """Take `pick` (cut when allowed and worth it) if it fits `room`; its cost, 0 if not taken."""
        cost = pick_cost(pick)
        if cost > room:
            if not may_cut or room < least + gap_cost:  # no cut could be worth it
                return 0.0
            overhead = cost - measure(pick.text)
            fitted = _fit(pick.text, room - overhead, measure, least)
            if fitted is None:
                return 0.0
            pick.text, pick.cut, pick.cost = fitted, True, -1
            cost = pick_cost(pick)
        page.picked.append(pick)
        order.append(pick)
        return float(cost)

    available = limit - fixed
    spent = 0.0
    if contenders and available > 0:
        share = available / len(contenders)
        for page in contenders:  # each page its fair share of its best passages
            own = float(page_cost(page))
            if own >= share:
                continue
            may_cut = True  # once a page: the first passage that does not fit whole
            for pick in page.candidates:
                got = take(page, pick, share - own, may_cut)
                may_cut = may_cut and got > 0
                own += got
                if pick.cut:
                    break
            if page.picked:
                spent += own
        # what is left, to the best passages left, wherever they are
        rest = sorted(
            ((pick, page) for page in contenders for pick in page.candidates if pick not in page.picked),
            key=lambda pair: (-pair[0].score, pair[1].page.rank, pair[1].index, pair[0].passage.index),
        )
        may_cut = True  # once: the room left only shrinks
        for pick, page in rest:
            room = available - spent - (0 if page.picked else page_cost(page))
            if room <= 0:
                continue
            got = take(page, pick, room, may_cut)
            may_cut = may_cut and (got > 0 and not pick.cut)
            if got:
                spent += got + (0 if len(page.picked) > 1 else page_cost(page))

    while True:
        text, sources = _render(contenders, kept_answers, digits)
        if measure(text) <= limit or not (order or kept_answers):
            break
        if order:
            last = order.pop()
            by_index[last.passage.source].picked.remove(last)
        else:
            kept_answers.pop()
    if measure(text) > limit:
        text, sources = "", []

    used: list[PageUse] = []
    for page in contenders:
        if page.picked and text:
            chars = sum(len(pick.text) for pick in page.picked)
            used.append(PageUse(page.page.url, USED, len(page.picked), chars))
        else:
            skipped[page.index] = PageUse(page.page.url, OVER_BUDGET)
    reason = None
    if not text:
        if not pages:
            reason = "no pages"
        elif not live:
            reason = "no page has text"
        elif not contenders and not kept_answers:
            reason = "no passage is relevant"
        else:
            reason = "the budget is too small for one passage"
    return Context(
        text=text,
        sources=tuple(sources),
        used=tuple(used),
        skipped=tuple(skipped[i] for i in sorted(skipped)),
        chars=len(text),
        tokens=counter.count(text),
        token_counter=counter.name,
        answers=tuple(kept_answers) if text else (),
        ranked_by=ranked_by,
        reason=reason,
    )


def _render(contenders: list[_Page], answers: list[Answer], digits: int) -> tuple[str, list[Source]]:
    """The context's text and sources for what is picked."""
    blocks: list[str] = []
    sources: list[Source] = []
    numbers: dict[str, int] = {}
    for page in contenders:
        if not page.picked:
            continue
        number = len(sources) + 1
        numbers[page.page.url] = number
        lines = [_header(number, page.page)]
        heading: str | None = None
        previous: _Pick | None = None
        for pick in sorted(page.picked, key=lambda p: p.passage.index):
            if previous is not None and not previous.cut and pick.passage.index > previous.passage.index + 1:
                lines.append(GAP)  # (a cut passage ends with its own mark)
            if pick.passage.heading != heading and pick.passage.heading:
                lines.append(_passage_block(pick))
            else:
                lines.append(pick.text)
            heading = pick.passage.heading
            previous = pick
        blocks.append(_SEP.join(lines))
        sources.append(Source(number, page.page.url, page.page.title, sum(len(p.text) for p in page.picked)))
    if not blocks and not answers:
        return "", []
    for answer in answers:
        for url in answer.citations:
            if url not in numbers:
                numbers[url] = len(sources) + 1
                sources.append(Source(numbers[url], url, None, 0))
        marks = " ".join(f"[{numbers[url]}]" for url in answer.citations)
        head = f"Answer from {_one_line(answer.provider, 60)}" + (f", citing {marks}" if marks else "") + ":\n"
        blocks.append(head + answer.text)
    if sources:
        blocks.append("Sources:" + "".join(f"\n[{s.number}] {s.url}" for s in sources))
    return _SEP.join(blocks), sources
