"""The name a caller most likely meant, for errors and warnings about a name nobody knows."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["closest", "meant"]


def closest(name: str, known: Iterable[str], cutoff: float = 0.7) -> str | None:
    """The known name closest to `name`, or None when none is close."""
    import difflib

    found = difflib.get_close_matches(name, list(known), n=1, cutoff=cutoff)
    return found[0] if found else None


def meant(name: str, known: Iterable[str], cutoff: float = 0.7) -> str:
    """` (did you mean X?)` for the known name closest to `name`, or "" when none is close."""
    found = closest(name, known, cutoff)
    return f" (did you mean {found}?)" if found else ""
