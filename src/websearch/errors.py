"""The one exception tree of websearch.

```
WebSearchError
 ├── InvalidSearchParams (also ValueError)  a parameter the caller passed is not acceptable
 ├── ConfigError                            settings.toml or a credential is malformed
 │    └── ReplayMiss                        a replayed call that the recording does not hold
 ├── SearchFailedError                      raised by SearchResponse.raise_for_error()
 ├── StoreUnavailable                       the state store cannot serve a call; `reason` says why
 ├── SearchProviderError                    one provider failed: provider, message, status  kind
      ├── MissingCredentialError            no key/token for that provider                  missing_credential
      ├── AuthenticationFailed              the key or login was refused (401, 403, ...)    auth
      ├── QuotaExhausted                    out of credits, or over the plan's budget       quota
      ├── RateLimited                       too many requests for now; see retry_after      rate_limited
      ├── UpstreamUnavailable               5xx, overload, the upstream's own engines down  unavailable
      ├── Blocked                           a bot challenge, consent or CAPTCHA page        blocked
      ├── NoResults                         an answer with nothing renderable in it         no_results
      ├── InvalidResponse                   a body that is not what the API promises        invalid_response
      ├── RequestRejected                   the upstream refused the request (400, 404...)  rejected
      ├── ProviderTimeoutError              the upstream did not answer in time             timeout
      └── ProviderConnectionError           refused, reset, broken body                     connection
           └── NetworkUnreachable           this machine: no lookup, no route, no proxy     connection
 └── FetchError                             a page could not be read: url, message, status  kind
      ├── UrlNotAllowed                     a scheme, address or host the fetch policy bars not_allowed
      ├── RobotsDisallowed                  the site's robots.txt forbids the page          robots
      ├── TooManyRedirects                  more hops than the limit (10)                   redirects
      ├── FetchHttpError                    the server answered 4xx or 5xx (`status`)       http_status
      ├── PageBlocked                       a bot challenge instead of the page             blocked
      ├── FetchTooLarge                     the body passed `[fetch] max_mb`                too_large
      ├── UnsupportedContent                a type no reader reads (`content_type`)         unsupported_type
      ├── NeedsJavascript                   a page whose text only scripts would write      needs_javascript
      ├── NoText                            a document with no text (an image-only PDF)     no_text
      ├── FetchTimeout                      the deadline came before the page               timeout
      └── FetchConnectionError              refused, reset, a name that does not resolve   connection
```

Every class has a `kind` (the last column), which `--format json` shows as an attempt's
`error_kind`; one more kind, `cancelled`, marks an attempt stopped because another answered first
(a hedged provider, a fan-out straggler), which is no failure of that provider. Fallback
between providers is decided by type (any `SearchProviderError` advances the chain), and
cooldowns by class, never by matching text in a message. `retry_variant` marks an error after
which the same provider may try its next request shape (another model, another
argument spelling); it is set where the error is built, from the upstream's code. Messages never
contain a secret: the transport and the error mapping redact every credential a request carried.
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
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
]


class WebSearchError(Exception):
    """Base class of every error websearch raises on purpose."""


class ConfigWarning(UserWarning):
    """Something in the settings works otherwise than written (a key websearch does not know is
    ignored), or the files holding them are not private; a warning, not an error."""


class InsecureConfigWarning(ConfigWarning):
    """The config directory holding agent.db can be read by other users (a warning, not an error)."""


class InvalidSearchParams(WebSearchError, ValueError):
    """A search parameter is out of range or of the wrong kind; `param` names it."""

    def __init__(self, param: str, message: str) -> None:
        super().__init__(message)
        self.param = param
        self.message = message

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.param, self.message))


class ConfigError(WebSearchError):
    """The settings file or a stored credential cannot be used as it is."""


class ReplayMiss(ConfigError):
    """A call made in replay mode (`WebSearch(replay=...)`, `--replay`, `WEBSEARCH_REPLAY`) that
    the recording does not hold: raised, never sent to the network. `kind` is "search", "fetch"
    or "research", `request` names what was asked (a query, a URL), `key` is the request's
    normalised key and `path` the recording."""

    def __init__(self, kind: str, request: str, key: str, path: str) -> None:
        super().__init__(
            f"no recorded {kind} of {request} (key {key}) in {path}; record it first, or use mode replay_or_live"
        )
        self.kind = kind
        self.request = request
        self.key = key
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.kind, self.request, self.key, self.path))


class StoreUnavailable(WebSearchError):
    """The state store cannot serve the call; `reason` says why, in a few words, for a notice. A
    store raises it to the engine, which runs the search on in-process state instead; the
    client raises it from the calls about the store itself (`cache_stats`, `clear_cache`,
    `reset_health`) when the shared store could not serve them."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class SearchFailedError(WebSearchError):
    """Every provider tried failed (or none was configured); `message` is the chain's summary."""

    def __init__(self, message: str, provider: str) -> None:
        super().__init__(message)
        self.message = message
        self.provider = provider

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message, self.provider))


class SearchProviderError(WebSearchError):
    """One provider failed to answer.

    `status` is the HTTP status, or an HTTP-like code for failures that have none (204: nothing
    renderable, 429: a bot challenge, 503: all upstream engines failed), or None. `retry_after`
    is the server's hint in seconds when it gave one. `message` is written for the person or
    model reading it, complete where the error is built. `retry_variant` says another request
    shape of the same provider may succeed (see the module docstring).
    """

    kind: ClassVar[str] = "error"

    def __init__(
        self,
        provider: str,
        message: str,
        status: int | None = None,
        *,
        retry_after: float | None = None,
        retry_variant: bool = False,
    ) -> None:
        super().__init__(message)
        self.provider = provider
        self.message = message
        self.status = status
        self.retry_after = retry_after
        self.retry_variant = retry_variant

    def __repr__(self) -> str:
        return f"{type(self).__name__}(provider={self.provider!r}, message={self.message!r}, status={self.status!r})"

    def __reduce__(self) -> tuple[Any, ...]:  # picklable across process pools, fields and all
        return (
            _rebuild,
            (type(self), self.provider, self.message, self.status, self.retry_after, self.retry_variant),
        )


class MissingCredentialError(SearchProviderError):
    """The provider needs a key or token that is not configured."""

    kind = "missing_credential"


class AuthenticationFailed(SearchProviderError):
    """The upstream refused the key, token or login."""

    kind = "auth"


class QuotaExhausted(SearchProviderError):
    """The account is out of credits or over its plan's budget (a status or code said so)."""

    kind = "quota"


class RateLimited(SearchProviderError):
    """Too many requests for now; `retry_after` says for how long, when the upstream said."""

    kind = "rate_limited"


class UpstreamUnavailable(SearchProviderError):
    """The upstream is down or overloaded (5xx, 529, all of its own engines failing)."""

    kind = "unavailable"


class Blocked(SearchProviderError):
    """The upstream answered with a bot challenge, consent or CAPTCHA page instead of results."""

    kind = "blocked"


class NoResults(SearchProviderError):
    """The upstream answered, with nothing renderable (no answer, source, citation or question)."""

    kind = "no_results"


class InvalidResponse(SearchProviderError):
    """The upstream's answer is not what its API promises (not JSON, a cut stream, a wrong shape)."""

    kind = "invalid_response"


class RequestRejected(SearchProviderError):
    """The upstream refused the request itself (400, 404, 422, ...): a parameter, a model, a path."""

    kind = "rejected"


class ProviderTimeoutError(SearchProviderError):
    """The upstream did not answer within the request timeout."""

    kind = "timeout"
    #: The seconds the request (or the attempt) had, when known: provider health counts a
    #: timeout only when that was a fair time to answer in.
    given: float | None = None


class ProviderConnectionError(SearchProviderError):
    """The connection could not be made or broke before the response was complete."""

    kind = "connection"


class NetworkUnreachable(ProviderConnectionError):
    """This machine could not reach the provider at all: its name did not resolve, there is no
    route to its network, or the proxy could not be reached. That tells of this machine's network
    (offline, DNS down), not of the provider, so it opens no circuit: one offline machine must not
    mark every provider down for all the others sharing a store."""


class FetchError(WebSearchError):
    """A page could not be read (`fetch`, and each page `research` reads). `url` is the address
    asked for (or the hop that failed), `status` the HTTP status when there was one,
    `content_type` the type the server declared when it matters. Messages name the URL and say
    what to do; they never hold a secret (a URL's user and password are removed)."""

    kind: ClassVar[str] = "error"

    def __init__(
        self,
        url: str,
        message: str,
        status: int | None = None,
        *,
        content_type: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.url = url
        self.message = message
        self.status = status
        self.content_type = content_type
        self.retry_after = retry_after

    def __repr__(self) -> str:
        return f"{type(self).__name__}(url={self.url!r}, message={self.message!r}, status={self.status!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_fetch, (type(self), self.url, self.message, self.status, self.content_type, self.retry_after))


class UrlNotAllowed(FetchError):
    """The URL is not one websearch fetches: not http(s), a name that resolves to a loopback,
    private, link-local, metadata or otherwise reserved address (any of its addresses), a
    redirect into one, or a host outside `[fetch] allow_hosts` when that is set."""

    kind = "not_allowed"


class RobotsDisallowed(FetchError):
    """The site's robots.txt forbids websearch this page (`[fetch] robots = false` overrides)."""

    kind = "robots"


class TooManyRedirects(FetchError):
    """The redirects went on past the limit (10 hops)."""

    kind = "redirects"


class FetchHttpError(FetchError):
    """The server answered with an error status (4xx, 5xx); `status` keeps it."""

    kind = "http_status"


class PageBlocked(FetchError):
    """The server answered with a bot challenge or CAPTCHA page instead of the page."""

    kind = "blocked"


class FetchTooLarge(FetchError):
    """The body (after decompression) passed the size cap, `[fetch] max_mb`."""

    kind = "too_large"


class UnsupportedContent(FetchError):
    """A content type no reader turns into text (an image, an archive, audio...); `content_type`."""

    kind = "unsupported_type"


class NeedsJavascript(FetchError):
    """The page is an application shell: large HTML whose text only its scripts would write. A
    browser-based reader is needed; websearch does not run scripts."""

    kind = "needs_javascript"


class NoText(FetchError):
    """The document has no text to give: an image-only (scanned) PDF, an empty page."""

    kind = "no_text"


class FetchTimeout(FetchError):
    """The deadline came before the page was read (a slow server, a body that drips)."""

    kind = "timeout"


class FetchConnectionError(FetchError):
    """The connection could not be made or broke: refused, reset, a name that does not resolve."""

    kind = "connection"


def _rebuild_fetch(
    cls: type[FetchError],
    url: str,
    message: str,
    status: int | None,
    content_type: str | None,
    retry: float | None,
) -> FetchError:
    return cls(url, message, status, content_type=content_type, retry_after=retry)


def _rebuild(
    cls: type[SearchProviderError],
    provider: str,
    message: str,
    status: int | None,
    retry: float | None,
    variant: bool,
) -> SearchProviderError:
    return cls(provider, message, status, retry_after=retry, retry_variant=variant)
