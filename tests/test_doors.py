"""The public API's doors: each audience's names behind its own module, each name documented.

`websearch` is the user's (search, the response, notices, parameters, the errors a caller
catches); `websearch.providers` the provider author's; `websearch.state` the stores';
`websearch.errors` the whole exception tree; `websearch.testing` the fakes. The names that
left `websearch` still import from it for one release, with a DeprecationWarning.
"""

from __future__ import annotations

import importlib
import inspect
import re
import subprocess
import sys
import warnings

import pytest

import websearch

DOORS = {
    "websearch": [
        "MODE_VALUES",
        "NOTICE_KINDS",
        "RECENCY_VALUES",
        "Attempt",
        "ConfigError",
        "EngineRank",
        "FetchResponse",
        "InvalidSearchParams",
        "Locale",
        "LocaleValue",
        "Mode",
        "Notice",
        "NoticeKind",
        "PageOutcome",
        "ProviderAnswer",
        "ProviderStatus",
        "Recency",
        "ResearchResponse",
        "ResearchSource",
        "SearchCitation",
        "SearchFailedError",
        "SearchParams",
        "SearchResponse",
        "SearchSource",
        "SearchUsage",
        "StoreUnavailable",
        "WebSearch",
        "WebSearchError",
        "afetch",
        "aresearch",
        "asearch",
        "fetch",
        "render",
        "research",
        "search",
        "tool_schema",
    ],
    "websearch.providers": [
        "PROVIDERS",
        "SEARCH_PROVIDER_ORDER",
        "BaseTransport",
        "Clock",
        "ErrorEnvelope",
        "HttpProvider",
        "HttpRequest",
        "HttpResponse",
        "Plan",
        "Provider",
        "ProviderContext",
        "ProviderId",
        "ProviderInfo",
        "ProviderResult",
        "SendsRequests",
        "SystemClock",
    ],
    "websearch.state": ["MemoryStore", "RedisStore", "SqliteStore", "Store", "StoreUnavailable"],
    "websearch.errors": [
        "AuthenticationFailed",
        "Blocked",
        "ConfigError",
        "ConfigWarning",
        "FetchConnectionError",
        "FetchError",
        "FetchHttpError",
        "FetchTimeout",
        "FetchTooLarge",
        "InsecureConfigWarning",
        "InvalidResponse",
        "InvalidSearchParams",
        "MissingCredentialError",
        "NeedsJavascript",
        "NetworkUnreachable",
        "NoResults",
        "NoText",
        "PageBlocked",
        "ProviderConnectionError",
        "ProviderTimeoutError",
        "QuotaExhausted",
        "RateLimited",
        "ReplayMiss",
        "RequestRejected",
        "RobotsDisallowed",
        "SearchFailedError",
        "SearchProviderError",
        "StoreUnavailable",
        "TooManyRedirects",
        "UnsupportedContent",
        "UpstreamUnavailable",
        "UrlNotAllowed",
        "WebSearchError",
    ],
}

# `websearch.__all__` before the doors: one list of 57 names for three audiences
OLD_ALL = [
    "MODE_VALUES",
    "NOTICE_KINDS",
    "PROVIDERS",
    "RECENCY_VALUES",
    "SEARCH_PROVIDER_ORDER",
    "Attempt",
    "AuthenticationFailed",
    "Blocked",
    "Clock",
    "ConfigError",
    "EngineRank",
    "ErrorEnvelope",
    "HttpProvider",
    "HttpRequest",
    "HttpResponse",
    "InvalidResponse",
    "InvalidSearchParams",
    "MemoryStore",
    "MissingCredentialError",
    "Mode",
    "NetworkUnreachable",
    "NoResults",
    "Notice",
    "NoticeKind",
    "Plan",
    "Provider",
    "ProviderAnswer",
    "ProviderConnectionError",
    "ProviderContext",
    "ProviderId",
    "ProviderInfo",
    "ProviderResult",
    "ProviderStatus",
    "ProviderTimeoutError",
    "QuotaExhausted",
    "RateLimited",
    "Recency",
    "RedisStore",
    "RequestRejected",
    "SearchCitation",
    "SearchFailedError",
    "SearchParams",
    "SearchProviderError",
    "SearchResponse",
    "SearchSource",
    "SearchUsage",
    "SendsRequests",
    "SqliteStore",
    "Store",
    "StoreUnavailable",
    "SystemClock",
    "UpstreamUnavailable",
    "WebSearch",
    "WebSearchError",
    "asearch",
    "render",
    "search",
    "tool_schema",
]


@pytest.mark.parametrize("door", sorted(DOORS))
def test_each_door_holds_exactly_its_names(door: str) -> None:
    assert sorted(importlib.import_module(door).__all__) == sorted(DOORS[door])


def _documented(door: str, name: str) -> bool:
    """A class or function of websearch by its own docstring (not the one `@dataclass` writes);
    anything else (a constant, an alias such as `Mode` or `ProviderId`) by its door's docstring."""
    module = importlib.import_module(door)
    value = getattr(module, name)
    if (inspect.isclass(value) or inspect.isfunction(value)) and value.__module__.startswith("websearch"):
        doc = inspect.cleandoc(value.__doc__ or "")  # a class's own: `__doc__` is not inherited
        return bool(doc) and not doc.startswith(f"{name}(")
    return re.search(rf"\b{name}\b", module.__doc__ or "") is not None


@pytest.mark.parametrize("door", [*sorted(DOORS), "websearch.testing"])
def test_every_name_of_a_door_imports_and_is_documented(door: str) -> None:
    module = importlib.import_module(door)
    assert module.__doc__
    undocumented = [name for name in module.__all__ if not _documented(door, name)]
    assert undocumented == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # none of a door's own names is a deprecated one
        namespace: dict[str, object] = {}
        exec(f"from {door} import *", namespace)
    assert set(module.__all__) <= set(namespace)


@pytest.mark.parametrize("door", ["websearch", "websearch.providers", "websearch.state"])
def test_a_door_s_docstring_lists_what_it_holds(door: str) -> None:
    doc = importlib.import_module(door).__doc__ or ""
    assert [name for name in DOORS[door] if f"`{name}`" not in doc] == []


def test_no_name_of_the_old_api_left_silently() -> None:
    # every name of the old list is in the user's door, or has moved with a warning
    reading = {"fetch", "afetch", "research", "aresearch", "FetchResponse", "ResearchResponse", "ResearchSource"}
    reading.add("PageOutcome")  # new with reading, after the doors
    reading |= {"Locale", "LocaleValue"}  # new with the locale parameters, after the doors
    assert set(OLD_ALL) == (set(websearch.__all__) - reading) | set(websearch._MOVED)
    assert not set(websearch.__all__) & set(websearch._MOVED)
    for name, home in websearch._MOVED.items():
        assert name in DOORS[home] and name not in DOORS["websearch"]


@pytest.mark.parametrize("name", sorted(websearch._MOVED))
def test_a_moved_name_still_imports_from_websearch_with_a_warning_naming_its_new_home(name: str) -> None:
    home = websearch._MOVED[name]
    expected = getattr(importlib.import_module(home), name)
    message = rf"^websearch\.{name} moved to {re.escape(home)}\.{name}; import it from there"
    with pytest.warns(DeprecationWarning, match=message) as caught:
        assert getattr(websearch, name) is expected
    assert {warning.filename for warning in caught} == {__file__}  # the warning points at the caller's line
    namespace: dict[str, object] = {}
    with pytest.warns(DeprecationWarning, match=message):
        exec(f"from websearch import {name}", namespace)
    assert namespace[name] is expected


def test_a_moved_name_warns_at_every_use_not_only_the_first() -> None:
    # kept out of the namespace, so a second module importing it hears about it too
    for _ in range(2):
        with pytest.warns(DeprecationWarning, match="websearch.HttpProvider moved to websearch.providers"):
            websearch.HttpProvider  # noqa: B018


@pytest.mark.parametrize("door", ["websearch", "websearch.providers", "websearch.state"])
def test_an_unknown_name_is_an_attribute_error(door: str) -> None:
    with pytest.raises(AttributeError, match=rf"module '{re.escape(door)}' has no attribute 'Nope'"):
        importlib.import_module(door).Nope  # noqa: B018
    assert not hasattr(importlib.import_module(door), "Nope")


def test_a_moved_name_warns_where_warnings_are_shown_by_default() -> None:
    # python's default filters hide DeprecationWarning outside __main__: a script's own import shows it
    code = "from websearch import HttpProvider, MemoryStore, RateLimited\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "DeprecationWarning" in line]
    assert [line.split("DeprecationWarning: ")[1].split(";")[0] for line in lines] == [
        "websearch.HttpProvider moved to websearch.providers.HttpProvider",
        "websearch.MemoryStore moved to websearch.state.MemoryStore",
        "websearch.RateLimited moved to websearch.errors.RateLimited",
    ]


def test_store_unavailable_is_one_class_behind_the_three_doors_that_hold_it() -> None:
    # the user catches it (cache_stats, clear_cache, reset_health), a store raises it, the tree holds it
    from websearch.errors import StoreUnavailable

    assert StoreUnavailable is websearch.StoreUnavailable is importlib.import_module("websearch.state").StoreUnavailable
    assert issubclass(StoreUnavailable, websearch.WebSearchError)
