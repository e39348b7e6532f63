"""`websearch serve` as a command (subprocesses under the network guard): refusing to start
unprotected, tokens from the environment and a file, --no-auth, the serve extra missing,
--workers, and SIGTERM draining what is in flight while new requests get 503."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx2
import pytest

from conftest import cli_env, run_cli
from serve_helper import OTHER_TOKEN, TOKEN, ServeProcess, free_port, http, serve_env
from websearch.testing import DdgResult, FakeDuckDuckGo, Reply
from websearch.testing.duckduckgo import results_page

REFUSAL = (
    "websearch: error: refusing to listen on 0.0.0.0 without a token: set [serve] tokens, WEBSEARCH_SERVE_TOKENS or "
    "--token-file (or pass --no-auth to serve anyone who can reach it)\n"
)


def test_off_loopback_without_a_token_it_refuses_to_start(ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    proc = run_cli(["serve", "--host", "0.0.0.0", "--port", str(free_port())], env)
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", REFUSAL)


@pytest.mark.parametrize(
    ("extra", "settings", "error"),
    [
        (
            {"WEBSEARCH_SERVE_TOKENS": f"short,{TOKEN}"},
            "",
            "token 1 of WEBSEARCH_SERVE_TOKENS is too short: a token must have at least 16 characters",
        ),
        (
            {},
            '[serve]\ntokens = ["has spaces in it but long"]\n',
            "token 1 of setting serve.tokens has characters a bearer token cannot carry (use letters, digits and -._~+/)",
        ),
        (
            {},
            '[serve]\nrate_limit = "lots"\n',
            'setting serve.rate_limit must read like "60/min", "5/s" or "1000/h"; got \'lots\'',
        ),
        ({}, "[serve]\nmax_limit = 2.5\n", "setting serve.max_limit must be a whole number of at least 1; got 2.5"),
        (
            {},
            '[serve]\ncors_origins = ["chat.example.org"]\n',
            "setting serve.cors_origins: 'chat.example.org' is not an origin",
        ),
    ],
)
def test_a_bad_serve_setting_exits_2_in_one_line_never_showing_a_token(
    env: dict[str, str], config_dir: Path, extra: dict[str, str], settings: str, error: str
) -> None:
    (config_dir / "settings.toml").write_text(settings, encoding="utf-8")
    proc = run_cli(["serve", "--port", str(free_port())], {**env, **extra})
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"websearch: error: {error}") and proc.stderr.count("\n") == 1
    assert "short" not in proc.stderr.replace("too short", "") and "has spaces" not in proc.stderr


def test_a_port_in_use_is_one_line_before_any_banner(ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    # It printed "websearch serve on ...", then uvicorn's own error, and exited 3.
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = run_cli(["serve", "--port", str(port)], env)
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        1,
        "",
        f"websearch: error: serve cannot listen on 127.0.0.1:{port}: address already in use\n",
    )


def test_without_the_serve_extra_it_says_what_to_install(tmp_path: Path) -> None:
    code = "import sys\nsys.modules['starlette'] = None\nfrom websearch._faces._cli import main\nraise SystemExit(main(['serve']))\n"
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=cli_env({"HOME": str(tmp_path)})
    )
    assert (proc.returncode, proc.stderr) == (
        2,
        "websearch: error: serve needs the serve extra: pip install 'websearch-hub[serve]'\n",
    )


def test_help_and_serve_help_load_no_http_stack(tmp_path: Path) -> None:
    code = (
        "import sys, io, contextlib\nfrom websearch._faces._cli import main\n"
        "for argv in (['--help'], ['serve', '--help']):\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        try: main(argv)\n"
        "        except SystemExit: pass\n"
        "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('starlette', 'uvicorn', 'prometheus_client', 'aiohttp', 'mcp'))))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=cli_env({"HOME": str(tmp_path)})
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "\n", "")


def test_tokens_from_a_file_and_the_environment(ddg: FakeDuckDuckGo, config_dir: Path, tmp_path: Path) -> None:
    ddg.results = [DdgResult("T", "https://t.example/", "s")]
    token_file = tmp_path / "tokens"
    token_file.write_text(f"# the team's tokens\n{OTHER_TOKEN}\n\n", encoding="utf-8")
    token_file.chmod(0o644)
    with ServeProcess(serve_env(config_dir, ddg), "--token-file", str(token_file)) as server:
        codes = []
        for token in (TOKEN, OTHER_TOKEN, None, "x" * 24):
            with http(server.url, token) as client:
                codes.append(client.post("/v1/search", json={"query": "q"}).status_code)
        code, stderr = server.stop()
    assert codes == [200, 200, 401, 401]
    assert code == 0
    lines = stderr.splitlines()
    assert lines[0] == f"websearch: warning: the token file {token_file} can be read by other users; chmod 600 it"
    assert lines[1] == f"websearch serve on http://127.0.0.1:{server.port} (/v1/search, /search, /mcp; 2 tokens)"
    logged = [json.loads(line) for line in lines[2:]]
    assert [(entry["path"], entry["status"]) for entry in logged] == [("/v1/search", s) for s in codes]
    assert TOKEN not in stderr and OTHER_TOKEN not in stderr


def test_no_auth_off_loopback_warns_and_serves(ddg: FakeDuckDuckGo, config_dir: Path) -> None:
    ddg.results = [DdgResult("T", "https://t.example/", "s")]
    env = serve_env(config_dir, ddg)
    env.pop("WEBSEARCH_SERVE_TOKENS")
    with ServeProcess(env, "--host", "0.0.0.0", "--no-auth") as server, http(server.url, None) as client:
        reply = client.post("/v1/search", json={"query": "q"}, headers={"Host": "search.internal"})
        code, stderr = server.stop()
    assert reply.status_code == 200 and reply.json()["response"]["provider"] == "duckduckgo"
    assert code == 0
    assert stderr.splitlines()[:2] == [
        f"websearch: warning: --no-auth: no token is asked for; anyone who can reach 0.0.0.0:{server.port} searches "
        "with this machine's keys",
        f"websearch serve on http://0.0.0.0:{server.port} (/v1/search, /search, /mcp; no authentication)",
    ]


def searches_in_flight(url: str, ddg: FakeDuckDuckGo, n: int) -> tuple[list[httpx2.Response], list[threading.Thread]]:
    """`n` searches ("slow 0", ...) posted to the server at `url` from threads, returned once
    each has reached the fake: their answers (filled in as they come) and the threads."""
    import asyncio

    from conftest import eventually

    answers: list[httpx2.Response] = []

    def search(i: int) -> None:
        with http(url) as client:
            answers.append(client.post("/v1/search", json={"query": f"slow {i}"}))

    workers = [threading.Thread(target=search, args=(i,)) for i in range(n)]
    for worker in workers:
        worker.start()
    asyncio.run(eventually(lambda: len(ddg.requests) == n, within=10))
    return answers, workers


def test_sigterm_drains_searches_in_flight_and_refuses_new_ones(ddg: FakeDuckDuckGo, config_dir: Path) -> None:
    slow = results_page("slow", [DdgResult("S", "https://s.example/", "s")])
    ddg.enqueue(*[Reply(200, slow, content_type="text/html", delay=1.0) for _ in range(3)])
    env = serve_env(config_dir, ddg, WEBSEARCH_ENGINE="on", WEBSEARCH_CACHE_DIR=str(config_dir / "cache"))
    (config_dir / "settings.toml").write_text('[pacing]\nduckduckgo = "off"\n', encoding="utf-8")
    with ServeProcess(env) as server:
        answers, workers = searches_in_flight(server.url, ddg, 3)
        server.process.send_signal(signal.SIGTERM)
        with http(server.url) as client:
            refused = client.post("/v1/search", json={"query": "new"})
            ready = client.get("/readyz")
        for worker in workers:
            worker.join(20)
        code, stderr = server.stop()
    assert (refused.status_code, refused.json()) == (503, {"error": "the server is shutting down; retry on another"})
    assert (ready.status_code, ready.json()) == (503, {"status": "draining"})
    assert sorted(a.status_code for a in answers) == [200, 200, 200]  # nothing in flight was lost
    assert all(a.json()["response"]["sources"][0]["url"] == "https://s.example/" for a in answers)
    assert code == 0 and "Traceback" not in stderr
    assert len(ddg.requests) == 3


def test_a_search_still_running_at_the_end_of_the_grace_period_answers_503(
    ddg: FakeDuckDuckGo, config_dir: Path
) -> None:
    # It got uvicorn's 500 and a traceback in the log; a load balancer retries a 503 elsewhere.
    slow = results_page("slow", [DdgResult("S", "https://s.example/", "s")])
    ddg.enqueue(*[Reply(200, slow, content_type="text/html", delay=30.0) for _ in range(2)])
    env = serve_env(config_dir, ddg)
    (config_dir / "settings.toml").write_text("[serve]\ngrace_period = 1\n", encoding="utf-8")
    with ServeProcess(env) as server:
        answers, workers = searches_in_flight(server.url, ddg, 2)
        started = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        for worker in workers:
            worker.join(20)
        waited = time.monotonic() - started
        code, stderr = server.stop()
    assert [(a.status_code, a.headers["retry-after"]) for a in answers] == [(503, "1"), (503, "1")]
    assert all(a.json() == {"error": "the server is shutting down; retry on another"} for a in answers)
    assert waited < 10  # the grace period (1 s) and the cut, not the upstream's 30 s
    assert code == 0 and "Traceback" not in stderr, stderr


def test_workers_share_one_port_and_one_metrics_view(ddg: FakeDuckDuckGo, config_dir: Path) -> None:
    ddg.results = [DdgResult("T", "https://t.example/", "s")]
    (config_dir / "settings.toml").write_text("[cache]\ntll = 60\n")  # warned of once, by the parent
    with ServeProcess(serve_env(config_dir, ddg), "--workers", "2") as server, http(server.url) as client:
        answers = [client.post("/v1/search", json={"query": f"q{i}"}) for i in range(6)]
        scrapes = [client.get("/metrics").text for _ in range(4)]  # whichever worker answers: the sums
        code, stderr = server.stop()
    assert [a.status_code for a in answers] == [200] * 6
    for text in scrapes:
        assert 'websearch_searches_total{outcome="ok"} 6.0' in text
    assert code == 0
    assert stderr.splitlines()[1] == (
        f"websearch serve on http://127.0.0.1:{server.port} (/v1/search, /search, /mcp; 1 token, 2 workers)"
    )
    # Each worker read the settings again and said it in Python's own words, two lines each.
    assert stderr.count("cache.tll") == 1 and stderr.startswith("websearch: warning: ")
