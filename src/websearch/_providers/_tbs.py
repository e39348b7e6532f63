"""Google's `tbs` date filter, sent by Google itself and by Firecrawl (whose search is Google's).

The date ladder becomes Google's custom range (`cdr:1,cd_min:…,cd_max:…`, whole days) when it
has an end or a start date, else a relative window ending now (`qdr:dN`, `qdr:hN`, whole hours),
else `recency`'s `qdr:d/w/m/y`. What is rounded is said in notices worded by each provider.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from .._core._filters import recency_start
from .._core._notices import Notice, approximated
from ._base import recency_overridden

if TYPE_CHECKING:
    from ._base import Plan

__all__ = ["TbsWords", "tbs_parts"]

_QDR: Final = {"day": "qdr:d", "week": "qdr:w", "month": "qdr:m", "year": "qdr:y"}


@dataclass(frozen=True, slots=True)
class TbsWords:
    """How one provider says what its `tbs` rounds, and how it writes a day."""

    whole_days: str  # a date with a time of day, sent as its day
    range_for_end: str  # a relative start sent as a day, because an end needs the custom range
    whole_hours: str  # a relative window rounded up to whole hours
    start_day: str = "whole days"  # how the start of a relative window sent as a day is named
    padded: bool = False  # MM/DD/YYYY rather than M/D/YYYY


def tbs_parts(plan: Plan, words: TbsWords) -> tuple[list[str], list[Notice]]:
    """The `tbs` parts for the date ladder and `recency` (none: no date filter), and notices."""
    params, f = plan.params, plan.filters
    notices = recency_overridden(params, f)
    source: str | None = f.start_source
    raw: Any = getattr(params, source) if source else None
    if f.end is not None or source == "start_published_date":  # only the custom range has an end
        start = f.start
        if start is None and params.recency:
            start, source, raw = recency_start(params.recency, plan.now), "recency", params.recency
        parts = ["cdr:1"]
        if start is not None and source is not None:
            parts.append(f"cd_min:{_day(start, words.padded)}")
            if source != "start_published_date":
                notices.append(approximated(source, raw, f"{words.start_day} ({parts[-1]})", words.range_for_end))
            elif f.start_has_time:
                notices.append(approximated(source, raw, f"whole days ({parts[-1]})", words.whole_days))
        if f.end is not None:
            parts.append(f"cd_max:{_day(f.end, words.padded)}")
            if f.end_has_time:
                how = f"whole days ({parts[-1]})"
                notices.append(approximated("end_published_date", params.end_published_date, how, words.whole_days))
        return parts, notices
    if source is not None:  # recency_hours or recency_days: a window ending now
        amount = float(raw)  # the ladder chose it, so it is a positive number
        if source == "recency_days" and amount.is_integer():
            return [_qdr("d", int(amount))], notices
        hours = amount * 24 if source == "recency_days" else amount
        whole = max(1, math.ceil(round(hours, 6)))
        tbs = _qdr("h", whole)
        if whole != hours:
            notices.append(approximated(source, raw, f"whole hours ({tbs})", words.whole_hours))
        return [tbs], notices
    return ([_QDR[params.recency]] if params.recency else []), notices


def _qdr(unit: str, n: int) -> str:
    return f"qdr:{unit}" if n == 1 else f"qdr:{unit}{n}"


def _day(when: datetime, padded: bool) -> str:
    """A day as Google's date picker writes it (M/D/YYYY), or zero-padded."""
    return when.strftime("%m/%d/%Y") if padded else f"{when.month}/{when.day}/{when.year}"
