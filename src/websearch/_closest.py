"""The name a caller most likely meant, for errors and warnings about a name nobody knows."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["meant"]


def meant(name: str, known: Iterable[str], cutoff: float = 0.7) -> str:
    """` (did you mean X?)` for the known name closest to `name`, or "" when none is close."""
    import difflib

    close = difflib.get_close_matches(name, list(known), n=1, cutoff=cutoff)
    return f" (did you mean {close[0]}?)" if close else ""
