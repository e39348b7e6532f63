"""The one exception tree of websearch.

```
WebSearchError
 ├── InvalidSearchParams (also ValueError)  a parameter the caller passed is not acceptable
 ├── ConfigError                            settings.toml or a credential is malformed
 ├── SearchFailedError                      raised by SearchResponse.raise_for_error()
 └── SearchProviderError                    one provider failed: provider, message, status
      ├── MissingCredentialError            no key/token for that provider
      ├── ProviderTimeoutError              the upstream did not answer in time
      └── ProviderConnectionError           refused, reset, DNS failure, broken body
```

Fallback between providers is decided by type (any `SearchProviderError` advances the chain),
never by matching text in a message. Messages never contain a secret: the transport redacts
every credential it was handed before an error leaves it.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ConfigError",
    "InvalidSearchParams",
    "MissingCredentialError",
    "ProviderConnectionError",
    "ProviderTimeoutError",
    "SearchFailedError",
    "SearchProviderError",
    "WebSearchError",
]


class WebSearchError(Exception):
    """Base class of every error websearch raises on purpose."""


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

    `status` is the HTTP status, or an HTTP-like code for failures that have none
    (204: nothing renderable, 429: bot challenge, 503: all upstream engines failed), or None.
    `retry_after` is the server's hint in seconds when it gave one. `hint` is extra advice the
    error formatter appends when it replaces the message (for 401/403).
    """

    def __init__(
        self,
        provider: str,
        message: str,
        status: int | None = None,
        *,
        retry_after: float | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.provider = provider
        self.message = message
        self.status = status
        self.retry_after = retry_after
        self.hint = hint

    def __repr__(self) -> str:
        return f"{type(self).__name__}(provider={self.provider!r}, message={self.message!r}, status={self.status!r})"

    def __reduce__(self) -> tuple[Any, ...]:  # picklable across process pools, fields and all
        return (_rebuild, (type(self), self.provider, self.message, self.status, self.retry_after, self.hint))


class MissingCredentialError(SearchProviderError):
    """The provider needs a key or token that is not configured."""


class ProviderTimeoutError(SearchProviderError):
    """The upstream did not answer within the request timeout."""


class ProviderConnectionError(SearchProviderError):
    """The connection could not be made or broke before the response was complete."""


def _rebuild(
    cls: type[SearchProviderError],
    provider: str,
    message: str,
    status: int | None,
    retry: float | None,
    hint: str | None,
) -> SearchProviderError:
    return cls(provider, message, status, retry_after=retry, hint=hint)
