"""The calls about keys stored in agent.db, for `WebSearch`: list, store, remove, import a login.

A mixin beside `Reads`: it reads the client's lineup and credential store, and checks a provider
id the way a search does (`_known`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from .._core._credentials import Credential, CredentialStore
from .._core._registry import PROVIDERS
from .._engine._lineup import Lineup, load_provider
from ..errors import ConfigError

__all__ = ["Keys"]


class Keys:
    """`stored_credentials`, `store_credential`, `remove_credential` and `import_login`."""

    credentials: CredentialStore
    lineup: Lineup

    if TYPE_CHECKING:  # WebSearch's own

        def _known(
            self, name: str, lineup: Lineup | None = None, *, param: str = "provider", said: tuple[str, ...] = ()
        ) -> str: ...

    def stored_credentials(self) -> list[Credential]:
        """Every credential in agent.db, ordered by provider id (their reprs mask the secrets)."""
        return self.credentials.list()

    def store_credential(self, provider: str, secret: str) -> Credential:
        """Store a key for `provider` in agent.db; a JSON object (access_token, refresh_token,
        expires_at, account_id, project_id) is stored as an OAuth login."""
        self._storable(provider)
        row = self.lineup.info(provider) if provider in self.lineup else PROVIDERS[provider]
        if not row.credential_ids:
            raise ConfigError(f"{row.label} takes no key: nothing would read one stored for it")
        secret = secret.strip()
        if not secret:
            raise ConfigError("no secret given")
        if not secret.startswith("{"):
            return self.credentials.set(provider, "api_key", {"api_key": secret})
        from .._http._oauth import OAuthToken

        try:
            data = json.loads(secret)
        except ValueError:
            raise ConfigError("the input starts with '{' but is not valid JSON") from None
        return self.credentials.set(provider, "oauth", OAuthToken.from_dict(data).to_dict())

    def remove_credential(self, provider: str) -> bool:
        """Delete `provider`'s stored credential; False when there was none."""
        return self.credentials.remove(self._storable(provider))

    def import_login(self, provider: str, home: Path | None = None) -> Credential:
        """Copy the login of a provider's official CLI (Codex, Gemini) from `home` into agent.db."""
        self._storable(provider)
        importer = getattr(
            self.lineup.load(provider) if provider in self.lineup else load_provider(provider), "import_login", None
        )
        if importer is None:
            raise ConfigError(f"{provider} has no official CLI login to import")
        token = importer(home or Path.home())
        return self.credentials.set(provider, "oauth", token.to_dict())

    def _storable(self, name: str) -> str:
        """A provider id agent.db may hold a credential for: this client's, or any built-in one."""
        if name in self.lineup or name in PROVIDERS:
            return name
        return self._known(name)
