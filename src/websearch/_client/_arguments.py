"""What `WebSearch.asearch` makes of the arguments it is given: the refusal of an unknown
keyword, provider lists as lists, and the notice for providers asked for that cannot serve."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .._core._notices import Notice, dropped
from .._core._types import SearchParams
from ..errors import InvalidSearchParams

if TYPE_CHECKING:
    from .._core._context import ProviderContext
    from .._engine._lineup import Lineup

__all__ = ["as_list", "left_out", "unknown_params"]


def unknown_params(params: Mapping[str, Any], exc: TypeError, own: Iterable[str]) -> InvalidSearchParams:
    """The error for keywords `asearch` does not take (its own are `own`), naming the first and
    the one meant."""
    from dataclasses import fields

    from .._core._closest import meant

    known = [f.name for f in fields(SearchParams) if f.init and f.name != "query" and not f.name.startswith("_")]
    known += [name for name in own if name not in ("self", "query", "params")] + ["num_results"]
    unknown = sorted(set(params) - set(known))
    if not unknown:
        return InvalidSearchParams("params", f"unknown search parameter: {exc}")
    name = unknown[0]
    return InvalidSearchParams(
        name, f"{name} is not a search parameter{meant(name, known)}; the parameters are: {', '.join(sorted(known))}"
    )


def as_list(value: Iterable[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def left_out(
    param: str,
    given: list[str],
    excluded: frozenset[str],
    usable: Callable[[str], bool],
    lineup: Lineup,
    ctx: ProviderContext,
) -> tuple[tuple[str, ...], list[Notice]]:
    """The providers `param` names (`given`, as given: `fanout=`, `providers=`) less the excluded
    and those not usable here, and a notice for each of the two, saying which and why."""
    ids, notices = tuple(dict.fromkeys(given)), list[Notice]()
    out = [i for i in ids if i in excluded]
    if out:
        why = f"{', '.join(out)} excluded (by the setting providers.webSearchExclude or exclude=)"
        notices.append(dropped(param, given, why))
        ids = tuple(i for i in ids if i not in out)
    missing = [i for i in ids if not usable(i)]
    if missing:
        why = "; ".join(f"{i}: {lineup.reason(i, ctx)}" for i in missing)
        notices.append(dropped(param, given, f"not available here ({why})"))
        ids = tuple(i for i in ids if i not in missing)
    return ids, notices
