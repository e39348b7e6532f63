"""OAuth tokens: refreshed once under a lock, written back for the next process, clear failures."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from conftest import NOW, FakeClock, make_client, run_cli
from websearch._core._credentials import CredentialStore
from websearch._http._oauth import OAuthToken, oauth_token
from websearch.errors import MissingCredentialError, SearchProviderError
from websearch.providers import HttpRequest
from websearch.testing import FakeServer, RecordedRequest, Reply


class FakeTokenEndpoint(FakeServer):
    provider_id = "codex"

    def default_reply(self, request: RecordedRequest) -> Reply:
        body = request.json()
        if body.get("refresh_token") != "refresh-1":
            return Reply(400, {"error": "invalid_grant"})
        return Reply(
            200,
            {"access_token": f"access-{len(self.requests) + 1}", "refresh_token": "refresh-2", "expires_in": 3600},
            delay=0.05,
        )


def refresher(ctx, fake: FakeTokenEndpoint):  # type: ignore[no-untyped-def]
    async def refresh(token: OAuthToken) -> OAuthToken:
        request = HttpRequest(
            "POST",
            ctx.endpoint("codex", "https://auth.openai.com/oauth/token"),
            json={"grant_type": "refresh_token", "refresh_token": token.refresh_token},
            secrets=(token.refresh_token or "",),
        )
        response = await ctx.send("codex", request)
        if not response.ok:
            raise SearchProviderError("codex", f"token endpoint answered {response.status}", response.status)
        data = response.json()
        return OAuthToken(
            data["access_token"],
            data["refresh_token"],
            ctx.clock.now().timestamp() + data["expires_in"],
            account_id=token.account_id,
        )

    return refresh


@pytest.fixture
def expired_store(config_dir: Path) -> CredentialStore:
    store = CredentialStore(config_dir / "agent.db")
    store.set(
        "codex",
        "oauth",
        {
            "access_token": "access-0",
            "refresh_token": "refresh-1",
            "expires_at": NOW.timestamp() - 10,
            "account_id": "acct-1",
        },
    )
    return store


async def test_ten_concurrent_searches_refresh_once(config_dir: Path, expired_store: CredentialStore) -> None:
    with FakeTokenEndpoint() as fake:
        async with make_client(env={"WEBSEARCH_CONFIG_DIR": str(config_dir), **fake.env}, clock=FakeClock()) as ws:
            ctx = ws._context()
            tokens = await asyncio.gather(*(oauth_token(ctx, "codex", refresher(ctx, fake)) for _ in range(10)))
    assert len(fake.requests) == 1
    assert {t.access_token for t in tokens} == {"access-2"}
    assert fake.last.path == "/oauth/token"
    # the next process reads the refreshed token from agent.db
    code = (
        "import sys; from pathlib import Path; from websearch._core._credentials import CredentialStore\n"
        "c = CredentialStore(Path(sys.argv[1])).get('codex'); print(c.data['access_token'], c.data['account_id'])"
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, str(expired_store.path), stdout=asyncio.subprocess.PIPE
    )
    stdout, _ = await proc.communicate()
    assert stdout.decode().split() == ["access-2", "acct-1"]


async def test_fresh_token_is_not_refreshed(config_dir: Path) -> None:
    CredentialStore(config_dir / "agent.db").set(
        "codex", "oauth", {"access_token": "a", "expires_at": NOW.timestamp() + 3600}
    )
    with FakeTokenEndpoint() as fake:
        async with make_client(env={"WEBSEARCH_CONFIG_DIR": str(config_dir), **fake.env}, clock=FakeClock()) as ws:
            ctx = ws._context()
            token = await oauth_token(ctx, "codex", refresher(ctx, fake))
    assert token.access_token == "a"
    assert fake.requests == []


async def test_failed_refresh_says_log_in_again(config_dir: Path) -> None:
    CredentialStore(config_dir / "agent.db").set(
        "codex", "oauth", {"access_token": "a", "refresh_token": "revoked-xyz", "expires_at": 1.0}
    )
    with FakeTokenEndpoint() as fake:
        async with make_client(env={"WEBSEARCH_CONFIG_DIR": str(config_dir), **fake.env}, clock=FakeClock()) as ws:
            ctx = ws._context()
            with pytest.raises(
                SearchProviderError, match=r"session expired and the refresh failed .*log in again"
            ) as err:
                await oauth_token(ctx, "codex", refresher(ctx, fake))
    assert "revoked-xyz" not in str(err.value)


async def test_missing_login(config_dir: Path) -> None:
    async with make_client(env={"WEBSEARCH_CONFIG_DIR": str(config_dir)}) as ws:
        with pytest.raises(MissingCredentialError, match="websearch auth import codex"):
            await oauth_token(ws._context(with_transport=False), "codex", refresher(None, None))  # type: ignore[arg-type]


def test_token_repr_hides_secrets() -> None:
    token = OAuthToken.from_dict(
        {"access_token": "ya29.secret", "refresh_token": "1//refresh", "project_id": "p", "x": 1}
    )
    assert "secret" not in repr(token)
    assert "refresh" not in repr(token)
    assert token.to_dict() == {"access_token": "ya29.secret", "refresh_token": "1//refresh", "project_id": "p", "x": 1}


def test_cli_auth_set_accepts_oauth_json(env: dict[str, str], config_dir: Path) -> None:
    payload = {
        "access_token": "at-123456789",
        "refresh_token": "rt-123456789",
        "expires_at": 1900000000,
        "account_id": "a",
    }
    proc = run_cli(["auth", "set", "codex"], env, stdin=json.dumps(payload))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("stored an OAuth login for codex")
    cred = CredentialStore(config_dir / "agent.db").get("codex")
    assert cred is not None
    assert (cred.kind, dict(cred.data)) == ("oauth", payload)
    bad = run_cli(["auth", "set", "codex"], env, stdin='{"refresh_token": "x"}')
    assert (bad.returncode, bad.stderr) == (
        2,
        "websearch: error: an OAuth credential needs a non-empty string access_token\n",
    )


async def test_ten_concurrent_codex_searches_refresh_once_and_the_next_process_reuses_it(config_dir: Path) -> None:
    from websearch.testing import FakeCodex

    CredentialStore(config_dir / "agent.db").set(
        "codex",
        "oauth",
        {
            "access_token": "expired-access",
            "refresh_token": "rt-once",
            "account_id": "acct-7d1f2c3b",
            "expires_at": NOW.timestamp() - 10,
        },
    )
    with FakeCodex(refresh_tokens={"rt-once"}, now=NOW.timestamp()) as fake:
        env = {"WEBSEARCH_CONFIG_DIR": str(config_dir), **fake.env}
        async with make_client(env=env, clock=FakeClock()) as ws:
            responses = await asyncio.gather(*(ws.asearch(f"q{i}", provider="codex") for i in range(10)))
        assert [r.error for r in responses] == [None] * 10
        assert len(fake.issued) == 1
        searches = [r for r in fake.requests if r.path.endswith("/responses")]
        assert {r.headers["authorization"] for r in searches} == {f"Bearer {fake.issued[0]}"}
        # a new process reads the refreshed login: it searches without refreshing again
        proc = await asyncio.to_thread(run_cli, ["search", "next", "--provider", "codex"], env)
        assert proc.returncode == 0, proc.stderr
        assert len(fake.issued) == 1
        assert fake.last.headers["authorization"] == f"Bearer {fake.issued[0]}"
