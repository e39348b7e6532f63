"""The locale of a search: `country`, `language` and `safesearch`, from the call or the settings.

A value the call gives wins; else `[search] country`, `language` or `safesearch`; else nothing
is sent and the provider's own default holds. The values from settings go into the search's
parameters (so into its cache key) like the call's; what differs is what is said about them:

- a value the call gave that the serving provider could not apply gets the usual notice;
- a value from settings does not: it is the user's standing default, and a notice on every
  search a provider without a region parameter serves (Jina, an answer engine) would be noise
  repeated forever. The response's `locale` record says it was not applied instead, so nothing
  is silent.

Where each value came from and whether it was applied is `SearchResponse.locale`, made after the
search from the notices (a provider's `supports` and its plan say what it could not apply in
notices of kind `not_applied`), never from the cache: the same search is one cache entry whether
its country came from the call or from settings.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final

from ._params import LOCALE_PARAMS
from ._types import Locale, LocaleSource, LocaleValue

if TYPE_CHECKING:
    from ._settings import Settings
    from ._types import SearchResponse

__all__ = ["apply_locale_settings", "locale_defaults", "record_locale"]

#: Notice kinds saying a parameter was not applied (`overridden` and `dropped` say so too).
_NOT_APPLIED: Final = frozenset({"not_applied", "overridden", "dropped"})


def locale_defaults(settings: Settings) -> dict[str, str]:
    """`[search] country`, `language` and `safesearch`, those set (checked when read)."""
    values = {name: settings.get(f"search.{name}") for name in LOCALE_PARAMS}
    return {name: value for name, value in values.items() if isinstance(value, str) and value.strip()}


def apply_locale_settings(
    params: MutableMapping[str, Any], defaults: Mapping[str, str]
) -> dict[str, LocaleSource] | None:
    """Fill the locale parameters the call left out (absent, None or blank) from `defaults`
    (`locale_defaults`), in `params`; return where each came from, or None when no locale value
    is given or configured (the common search: nothing to fill, nothing to record)."""
    if not defaults and params.keys().isdisjoint(LOCALE_PARAMS):  # in C: on every search
        return None
    sources: dict[str, LocaleSource] = {}
    for name in LOCALE_PARAMS:
        value = params.get(name)
        if isinstance(value, str) and not value.strip():
            value = params[name] = None  # a strict agent's "" is "not given"
        if value is not None:
            sources[name] = "argument"
        elif name in defaults:
            params[name] = defaults[name]
            sources[name] = "setting"
        else:
            params.pop(name, None)
            sources[name] = "default"
    return sources


def record_locale(response: SearchResponse, values: Mapping[str, Any], sources: Mapping[str, LocaleSource]) -> None:
    """Set `response.locale` (None when no locale value is set) and take the notices of values
    from settings out of `response.notices` and its attempts' (see the module's docstring).

    `values` are the search's parameters as checked (`SearchParams`' normalised codes)."""
    if all(values.get(name) is None for name in LOCALE_PARAMS):
        response.locale = None
        return
    refused = {n.param for n in response.notices if n.kind in _NOT_APPLIED and n.param in LOCALE_PARAMS}
    served = response.error is None
    record = {
        name: LocaleValue(
            values.get(name),
            sources.get(name, "default"),
            served and values.get(name) is not None and name not in refused,
        )
        for name in LOCALE_PARAMS
    }
    response.locale = Locale(**record)
    quiet = {name for name in LOCALE_PARAMS if sources.get(name) == "setting"}
    if quiet:
        response.notices = tuple(n for n in response.notices if n.param not in quiet)
        response.attempts = tuple(
            replace(a, notices=tuple(n for n in a.notices if n.param not in quiet)) for a in response.attempts
        )
