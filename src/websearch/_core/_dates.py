"""Lenient date parsing for provider dates, and ages relative to an injected "now"."""

from __future__ import annotations

import email.utils
from datetime import UTC, datetime
from typing import Final

__all__ = ["age_seconds", "parse_date"]

_LOOSE_FORMATS: Final = ("%B %d, %Y", "%b %d, %Y", "%d %B %Y", "%d %b %Y", "%Y/%m/%d", "%m/%d/%Y")


def parse_date(value: str | None) -> datetime | None:
    """Parse ISO 8601, RFC 2822 or a few loose English forms; naive times are taken as UTC."""
    if not value or not value.strip():
        return None
    text = value.strip()
    parsed: datetime | None = None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError):
            for fmt in _LOOSE_FORMATS:
                try:
                    parsed = datetime.strptime(text, fmt)
                    break
                except ValueError:
                    continue
    if parsed is None:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def age_seconds(published: str | None, now: datetime) -> int | None:
    """Whole seconds since `published` (negative for a future date), or None if unparseable."""
    when = parse_date(published)
    if when is None:
        return None
    return int((now - when).total_seconds() // 1)
