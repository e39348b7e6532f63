"""What the fake HTML engines share: their answers (a page, the 404) and the results they serve."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Final, Protocol, TypeVar

from ._server import Reply, honour_domains, site_domains

__all__ = ["NOT_FOUND", "engine_results", "html_reply"]

#: What a fake engine answers a path or method it does not serve.
NOT_FOUND: Final = Reply(404, "<html><body>Not Found</body></html>", content_type="text/html")


class _Result(Protocol):
    """A fake's result: a dataclass with a `url`."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def url(self) -> str: ...


R = TypeVar("R", bound=_Result)


def html_reply(page: str, status: int = 200) -> Reply:
    """A page served as an engine serves it: UTF-8 HTML."""
    return Reply(status, page, content_type="text/html; charset=utf-8")


def engine_results(query: str, given: Sequence[R] | None, sample: Callable[[str], list[R]]) -> list[R]:
    """The results a fake answers `query` with: the ones `given` it, else `sample(query)`, as an
    engine that honours `site:` / `-site:` operators answers (each URL moved onto the included
    hosts in turn, those on excluded hosts left out; see `honour_domains`)."""
    results = list(given) if given is not None else sample(query)
    include, exclude = site_domains(query)
    if not include and not exclude:
        return results
    moved = honour_domains([{"url": r.url, "at": i} for i, r in enumerate(results)], include, exclude)
    return [dataclasses.replace(results[m["at"]], url=m["url"]) for m in moved]
