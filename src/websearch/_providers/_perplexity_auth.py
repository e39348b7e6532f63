"""Perplexity's `Auth`: one way to reach it (a cookie header, a session, a key, OpenRouter, or
none), which both of its wire formats (`_perplexity_api`, `_perplexity_ask`) and the provider
(`perplexity`) read. A leaf, so they need not import each other for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Auth", "AuthKind"]

AuthKind = Literal["cookies", "session", "api_key", "openrouter", "anonymous"]


@dataclass(frozen=True, slots=True)
class Auth:
    """One way to reach Perplexity; the secret stays out of the repr."""

    kind: AuthKind
    secret: str = field(default="", repr=False)

    @property
    def chat(self) -> bool:
        """True for the chat-completions modes (a key), False for the ask endpoint (a login or none)."""
        return self.kind in ("api_key", "openrouter")

    @property
    def secrets(self) -> tuple[str, ...]:
        """What the transport must redact: the secret, and each value of a cookie header."""
        values = [part.partition("=")[2].strip() for part in self.secret.split(";")] if self.kind == "cookies" else []
        return tuple(s for s in (self.secret, *values) if len(s) >= 8)
