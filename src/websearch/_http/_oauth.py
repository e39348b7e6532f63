"""OAuth access tokens from agent.db, refreshed once when expired, and written back.

`oauth_token(ctx, provider, refresh)` returns a usable token. When the stored one is expired (or
about to be), exactly one refresh runs per provider, however many searches ask at once: an
asyncio lock serialises tasks in this process and an advisory file lock (`agent.db.lock`)
serialises processes; after taking the locks the store is read again, so whoever waited finds the
token the first one wrote. A failed refresh says to log in again; the chain then moves on.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from .._core._registry import PROVIDERS
from ..errors import (
    AuthenticationFailed,
    ConfigError,
    MissingCredentialError,
    ProviderConnectionError,
    ProviderTimeoutError,
    RateLimited,
    SearchProviderError,
    UpstreamUnavailable,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from .._core._context import ProviderContext

#: Refresh failures that say nothing about the login: the session may work once the upstream is back.
_TRANSIENT = (UpstreamUnavailable, RateLimited, ProviderTimeoutError, ProviderConnectionError)

__all__ = ["OAuthToken", "Refresh", "oauth_token"]

#: A token this close to expiry (seconds) is refreshed before use.
EXPIRY_MARGIN: Final = 60.0
_FIELDS: Final = ("access_token", "refresh_token", "expires_at", "account_id", "project_id")


@dataclass(frozen=True, slots=True)
class OAuthToken:
    """An OAuth credential as stored in agent.db. Secrets are kept out of the repr."""

    access_token: str = field(repr=False)
    refresh_token: str | None = field(default=None, repr=False)
    expires_at: float | None = None  # unix seconds
    account_id: str | None = None  # Codex: the ChatGPT account id
    project_id: str | None = None  # Gemini Cloud Code: the Google Cloud project
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> OAuthToken:
        """Validate and build from the JSON shape `websearch auth set` accepts."""
        access = data.get("access_token")
        if not isinstance(access, str) or not access:
            raise ConfigError("an OAuth credential needs a non-empty string access_token")
        expires = data.get("expires_at")
        if expires is not None and (isinstance(expires, bool) or not isinstance(expires, (int, float))):
            raise ConfigError("expires_at must be a number of unix seconds")
        for key in ("refresh_token", "account_id", "project_id"):
            if data.get(key) is not None and not isinstance(data.get(key), str):
                raise ConfigError(f"{key} must be a string")
        return cls(
            access,
            data.get("refresh_token"),
            float(expires) if expires is not None else None,
            data.get("account_id"),
            data.get("project_id"),
            {k: v for k, v in data.items() if k not in _FIELDS},
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape stored in agent.db (unset fields left out)."""
        out: dict[str, Any] = {
            "access_token": self.access_token,
            "refresh_token": self.refresh_token,
            "expires_at": self.expires_at,
            "account_id": self.account_id,
            "project_id": self.project_id,
        }
        out.update(self.extra)
        return {k: v for k, v in out.items() if v is not None}

    def expires_soon(self, now: float, margin: float = EXPIRY_MARGIN) -> bool:
        """True when the token expires within `margin` seconds of `now` (unix seconds)."""
        return self.expires_at is not None and self.expires_at - margin <= now


Refresh = Callable[[OAuthToken], Awaitable[OAuthToken]]

#: One lock per (event loop, credential): an asyncio lock belongs to one loop.
_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Lock]] = weakref.WeakKeyDictionary()


def _stored(ctx: ProviderContext, provider: str, credential_id: str, *, fresh: bool = False) -> OAuthToken | None:
    cred = ctx.credentials.get(credential_id, fresh=fresh)
    if cred is None or cred.kind != "oauth":
        return None
    return OAuthToken.from_dict(cred.data)


async def oauth_token(
    ctx: ProviderContext, provider: str, refresh: Refresh, *, credential_id: str | None = None
) -> OAuthToken:
    """A usable token for `provider` (stored under `credential_id`, default the provider id)."""
    cred_id = credential_id or provider
    label = PROVIDERS[provider].label
    token = _stored(ctx, provider, cred_id)
    if token is None:
        raise MissingCredentialError(
            provider,
            f"{label} needs a login: run `websearch auth import {provider}` or pipe an OAuth JSON object "
            f"to `websearch auth set {provider}`",
        )
    if not token.expires_soon(ctx.clock.now().timestamp()):
        return token
    per_loop = _locks.setdefault(asyncio.get_running_loop(), {})
    lock = per_loop.setdefault(f"{ctx.credentials.path}:{cred_id}", asyncio.Lock())
    async with lock, _file_lock(ctx.credentials.path):
        token = _stored(ctx, provider, cred_id, fresh=True) or token
        if not token.expires_soon(ctx.clock.now().timestamp()):
            return token  # someone refreshed while we waited
        if not token.refresh_token:
            raise AuthenticationFailed(provider, f"{label} session expired and has no refresh token; log in again")
        try:
            fresh = await refresh(token)
        except asyncio.CancelledError:
            raise
        except SearchProviderError as exc:
            cls = type(exc) if isinstance(exc, _TRANSIENT) else AuthenticationFailed  # a refused refresh: log in
            raise cls(
                provider,
                f"{label} session expired and the refresh failed ({exc.message}); log in again with "
                f"`websearch auth import {provider}` or `websearch auth set {provider}`",
                exc.status,
                retry_after=exc.retry_after,
            ) from None
        ctx.credentials.set(cred_id, "oauth", fresh.to_dict())
        return fresh


@asynccontextmanager
async def _file_lock(db_path: Path) -> AsyncIterator[None]:
    """An advisory lock beside agent.db, polled so that waiting stays cancellable."""
    try:
        import fcntl
    except ImportError:  # not on POSIX: the in-process lock is all we have
        yield
        return
    db_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(f"{db_path}.lock", os.O_CREAT | os.O_RDWR, 0o600)
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                await asyncio.sleep(0.02)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
