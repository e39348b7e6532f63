"""Every code block of the README and of docs/*.md runs as written (a project rule), and every
install hint names the distribution this project publishes.

- A ```python block runs as a script, in a subprocess under the network guard, against the
  loopback fakes its environment names (`PYTHON_BLOCKS` says what each needs and checks what it
  did; a client of `websearch serve` is given this test's server's port for 8000); a block this
  file does not know fails the test, so a new one gets a runner.
- A ```sh block's commands run where that is hermetic: `websearch` commands against the fakes,
  the token-file commands in a temporary HOME. The rest are checked for what they say, because
  they need the internet, a pip install, another program or a server that runs until stopped:
  `pip install` names this distribution and its extras; `websearch mcp` and `websearch serve`
  parse with the real parser; `python -m pytest` is this suite; `claude mcp add` ends in a
  `websearch` command that parses, or names a server's /mcp; `curl` is sent as curl sends it
  (with the port of this test's server) and answered 200.
- The Wiki provider's block also runs in this process, to check what it answers and how it fails.
"""

from __future__ import annotations

import json
import re
import shlex
import stat
import subprocess
import sys
import tomllib
import warnings
from pathlib import Path
from typing import Any

import pytest

from conftest import TESTS, cli_env, make_client, run_cli
from serve_helper import TOKEN, InProcess, http
from websearch._core._clock import SystemClock
from websearch._core._settings import Settings
from websearch._faces._cli import build_parser
from websearch._faces._serve import ServeConfig
from websearch._faces._serve._config import read_token_file
from websearch._state import MemoryStore
from websearch.testing import DdgResult, FakeBrave, FakeDuckDuckGo, FakeServer, FakeSite, RecordedRequest, Reply

ROOT = TESTS.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
DIST = PROJECT["name"]
EXTRAS = set(PROJECT["optional-dependencies"])
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
#: Runs a script under the network guard; exit 99 when it tried to leave loopback.
GUARDED = (
    "import runpy, sys, netguard; netguard.install(); runpy.run_path(sys.argv[1], run_name='__main__'); "
    "sys.exit(99 if netguard.blocked else 0)"
)
SERVER = "http://127.0.0.1:8000"  # where the README's examples find `websearch serve`


def code_blocks(language: str) -> list[Any]:
    """A pytest param (id: file and line) of every block of `language` in the README and docs/*.md."""
    blocks = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for fence in FENCE.finditer(text):
            if fence.group(1) == language:
                line = text.count("\n", 0, fence.start()) + 1
                blocks.append(pytest.param(fence.group(2), id=f"{path.name}:{line}"))
    return blocks


class FakeWiki(FakeServer):
    provider_id = "wiki"

    def default_reply(self, request: RecordedRequest) -> Reply:
        if request.path != "/api/search":
            return Reply(404, {"error": "not found"})
        q, n = request.args["q"], int(request.args["n"])
        hits = [{"title": f"Hit {i}", "url": f"https://wiki.example.com/{i}", "text": f"about {q}"} for i in range(n)]
        return Reply(200, {"hits": hits})


def run_script(code: str, env: dict[str, str], tmp_path: Path) -> str:
    """Run `code` as a script (`python block.py`) under the network guard; its stdout."""
    script = tmp_path / "block.py"
    script.write_text(code, encoding="utf-8")
    command = [sys.executable, "-c", GUARDED, str(script)]
    proc = subprocess.run(command, env=cli_env(env), capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


# -- ```python blocks ---------------------------------------------------------------------------


def _library(code: str, config_dir: Path, tmp_path: Path) -> None:
    with FakeBrave() as brave:
        env = {"WEBSEARCH_CONFIG_DIR": str(config_dir), **brave.env, "BRAVE_API_KEY": "brave-readme-key"}
        out = run_script(code, env, tmp_path)
    assert [r.args["q"] for r in brave.requests] == ["quic vs tcp", "quic vs tcp"]  # blocking, then async
    lines = out.splitlines()
    assert lines[0].startswith("[1] Quic Vs Tcp - part 1")  # the summary
    assert lines[-1].startswith("Quic Vs Tcp - part 10 https://www.site10.example.com/quic-vs-tcp/10 ")  # title url age


def _wiki(code: str, config_dir: Path, tmp_path: Path) -> None:
    with FakeWiki() as wiki, FakeDuckDuckGo() as ddg:
        run_script(code, {"WEBSEARCH_CONFIG_DIR": str(config_dir), **wiki.env, **ddg.env}, tmp_path)
    assert [r.args for r in wiki.requests] == [{"q": "vacation policy", "n": "10"}]
    assert ddg.requests == []


def _searx_client(code: str, config_dir: Path, tmp_path: Path) -> None:
    assert code.count(SERVER) == 1
    with FakeDuckDuckGo() as ddg:
        ddg.results = [DdgResult("Tokio", "https://tokio.rs/", "an async runtime for Rust")]
        env = {"WEBSEARCH_CONFIG_DIR": str(config_dir), **ddg.env}
        with InProcess(make_client(env=env, store=MemoryStore(SystemClock()))) as server:
            out = run_script(code.replace(SERVER, server.url), {**env, "TOKEN": TOKEN}, tmp_path)
    assert out == "an async runtime for Rust\n"


def _testing(code: str, config_dir: Path, tmp_path: Path) -> None:
    out = run_script(code, {"WEBSEARCH_CONFIG_DIR": str(config_dir)}, tmp_path)
    assert out == 'Brave API error (429): {"error": {"code": "RATE_LIMITED"}}; retry after 2 s\n'


def _fake_site(code: str, config_dir: Path, tmp_path: Path) -> None:
    out = run_script(code, {"WEBSEARCH_CONFIG_DIR": str(config_dir)}, tmp_path)
    assert out == "Otters True robots\n"


def _replay(code: str, config_dir: Path, tmp_path: Path) -> None:
    with FakeDuckDuckGo() as ddg:
        out = run_script(code, {"WEBSEARCH_CONFIG_DIR": str(config_dir), **ddg.env}, tmp_path)
        asked = len(ddg.requests)
    assert out == "True True\nsearch 'a question never recorded'\n"
    assert asked == 1  # the replayed search and the miss sent nothing
    assert len((tmp_path / "runs" / "session.jsonl").read_bytes().splitlines()) == 1


#: What each ```python block needs to run, by a line only it has.
PYTHON_BLOCKS = {
    'WebSearch(record="runs/session.jsonl")': _replay,
    "from websearch.testing import FakeSite": _fake_site,
    "async def main() -> None:": _library,
    "class Wiki(HttpProvider):": _wiki,
    "SearxSearchWrapper(": _searx_client,
    "from websearch.testing import FakeBrave": _testing,
}


@pytest.mark.parametrize("code", code_blocks("python"))
def test_every_python_block_runs_as_a_script(code: str, config_dir: Path, tmp_path: Path) -> None:
    runners = [run for marker, run in PYTHON_BLOCKS.items() if marker in code]
    assert len(runners) == 1, f"a python block this test does not know how to run; add it to PYTHON_BLOCKS:\n{code}"
    runners[0](code, config_dir, tmp_path)


def test_every_python_block_is_run() -> None:
    blocks = [param.values[0] for param in code_blocks("python")]
    assert all(any(marker in code for code in blocks) for marker in PYTHON_BLOCKS), "a runner lost its block"


# -- ```sh blocks -------------------------------------------------------------------------------


def commands(code: str) -> list[list[str]]:
    """The commands of a shell block: lines (backslash-continued ones joined), comments dropped,
    split at `&&`."""
    found = []
    for line in code.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        while words:
            cut = words.index("&&") if "&&" in words else len(words)
            found.append(words[:cut])
            words = words[cut + 1 :]
    return found


def check_install(targets: list[str]) -> None:
    for target in (t for t in targets if not t.startswith("-")):
        name, _, extras = target.partition("[")
        assert name in (".", DIST), f"pip install {target}: this project is published as {DIST}"
        assert set(filter(None, extras.rstrip("]").split(","))) <= EXTRAS, f"pip install {target}: no such extra"


def check_curl(words: list[str], env: dict[str, str]) -> None:
    """Send what `curl -s URL -H ... -d DATA` sends to this test's server: 200 with an answer."""
    url = next(w for w in words if w.startswith(SERVER))
    headers = [w for w, flag in zip(words[1:], words[:-1], strict=True) if flag == "-H"]
    data = next(w for w, flag in zip(words[1:], words[:-1], strict=True) if flag == "-d")
    sent = {"content-type": "application/x-www-form-urlencoded"}  # curl -d's
    for header in headers:
        name, _, value = header.partition(": ")
        sent[name] = value.replace("$TOKEN", TOKEN)
    with InProcess(make_client(env=env, store=MemoryStore(SystemClock()))) as server, http(server.url, None) as c:
        reply = c.post(url.replace(SERVER, server.url), headers=sent, content=data)
    assert reply.status_code == 200, reply.text
    assert reply.json()["response"]["provider"] == "duckduckgo"


PAGE = (
    "<html><head><title>{path}</title></head><body><article><h1>A page</h1>"
    "<p>QUIC avoids head-of-line blocking: its streams are independent, so a lost packet stalls one stream.</p>"
    "<p>TCP delivers one ordered byte stream, so a lost segment holds up everything behind it.</p>"
    "</article></body></html>"
)


def on_the_site(args: list[str], site: FakeSite, ddg: FakeDuckDuckGo) -> list[str]:
    """`websearch fetch URL` and `websearch research Q` as written, but reading `site`: the URL's
    path is served there (and the research's search finds it there), by its loopback address."""
    from urllib.parse import urlsplit

    if args[0] == "fetch":
        path = urlsplit(args[1]).path or "/"
        site.pages[path] = PAGE.format(path=path)
        return [args[0], site.url(path, host="127.0.0.1"), *args[2:]]
    site.pages["/research"] = PAGE.format(path="/research")
    ddg.results = [DdgResult("A page", site.url("/research", host="127.0.0.1"), "QUIC")]
    return args


def check_command(words: list[str], env: dict[str, str], site: FakeSite, ddg: FakeDuckDuckGo) -> None:
    match words:
        case ["websearch", "mcp" | "serve", *_]:  # servers that run until stopped: they parse
            build_parser().parse_args(words[1:])
        case ["websearch", "fetch" | "research", *_]:
            proc = run_cli(on_the_site(words[1:], site, ddg), env)
            assert proc.returncode == 0, proc.stderr
            assert proc.stdout
        case ["websearch", *args]:
            proc = run_cli(args, env)
            assert proc.returncode == 0, proc.stderr
            assert proc.stdout
        case ["pip", "install", *targets]:
            check_install(targets)
        case ["python", "-m", "pytest", *_]:  # this suite
            pass
        case ["claude", "mcp", "add", *args] if "--" in args:
            assert args[args.index("--") + 1] == "websearch"
            build_parser().parse_args(args[args.index("--") + 2 :])
        case ["claude", "mcp", "add", *args]:
            assert any(a.startswith(SERVER) and a.endswith("/mcp") for a in args), words
        case ["curl", *_]:
            check_curl(words, env)
        case _:
            raise AssertionError(f"a command this test does not know how to check: {shlex.join(words)}")


def check_token_file(code: str, home: Path) -> None:
    """Run the token-file commands (twice: a second token) in `home`; the file is private and
    holds tokens the server takes, and $TOKEN is the first."""
    script = code + '\nprintf "%s" "$TOKEN"\n'
    env = {"HOME": str(home), "PATH": cli_env({})["PATH"]}
    exported = [subprocess.run(["bash", "-ec", script], env=env, capture_output=True, text=True, check=True).stdout]
    exported.append(subprocess.run(["bash", "-ec", script], env=env, capture_output=True, text=True, check=True).stdout)
    path = home / ".config" / "websearch" / "tokens"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a file others can read would warn
        tokens = read_token_file(str(path))
    assert len(set(tokens)) == 2
    assert exported == [tokens[0], tokens[0]]


@pytest.mark.parametrize("code", code_blocks("sh"))
def test_every_sh_block_runs_or_says_what_is_true(
    code: str, config_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if "token_urlsafe" in code:
        check_token_file(code, tmp_path)
        return
    monkeypatch.chdir(tmp_path)  # a relative path a command writes (`--record runs/...`) lands here
    with FakeDuckDuckGo() as ddg, FakeSite() as site:
        ddg.results = [DdgResult("The Rust async book", "https://rust-lang.github.io/async-book/", "async")]
        env = {"WEBSEARCH_CONFIG_DIR": str(config_dir), **ddg.env}
        site.write_settings(config_dir)  # `websearch fetch` and `research` read the site
        for words in commands(code):
            check_command(words, env, site, ddg)


# -- ```toml, ```json and the rest -------------------------------------------------------------


@pytest.mark.parametrize("code", code_blocks("toml"))
def test_every_settings_block_is_read_without_a_warning(code: str, config_dir: Path) -> None:
    (config_dir / "settings.toml").write_text(code, encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a key websearch does not know would warn
        settings = Settings.load(config_dir, {})
        if "[serve]" in code:
            assert ServeConfig.load(settings, {}, host="0.0.0.0").auth  # its tokens are ones the server takes


@pytest.mark.parametrize("code", code_blocks("json"))
def test_every_mcp_client_block_starts_websearch_or_names_its_server(code: str) -> None:
    config = json.loads(code)
    servers = config.get("mcpServers") or config["servers"]
    for server in servers.values():
        if "command" in server:
            assert server["command"] == "websearch"
            build_parser().parse_args(server["args"])
        else:
            assert server["url"] == f"{SERVER}/mcp"


def test_every_block_is_of_a_kind_this_file_checks() -> None:
    """python, sh, toml and json above; the command-line usage (no language) is `usage_block`'s,
    which test_cli keeps in step; nginx's is checked by nothing here: it needs an nginx."""
    kinds = {fence.group(1) for path in DOCS for fence in FENCE.finditer(path.read_text(encoding="utf-8"))}
    assert kinds <= {"python", "sh", "toml", "json", "nginx", ""}, kinds


# -- the README's size and its links ---------------------------------------------------------------


def test_the_readme_reads_in_one_screen() -> None:
    """What it is, the two commands, the library, the CLI, MCP, testing and links; the reference is
    in docs/, linked from it."""
    assert len(README.splitlines()) <= 200


def test_the_readme_links_every_docs_page() -> None:
    """A page moved out of the README is still found from it, and every link it has leads somewhere."""
    links = set(re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README))
    local = {link for link in links if not link.startswith(("http://", "https://"))}
    assert all((ROOT / link).exists() for link in local), sorted(link for link in local if not (ROOT / link).exists())
    pages = {path.relative_to(ROOT).as_posix() for path in DOCS[1:]} | {"docs/engines/README.md"}
    assert pages <= local, sorted(pages - local)


# -- the distribution ---------------------------------------------------------------------------


def test_the_distribution_is_websearch_hub() -> None:
    """`websearch` on PyPI is another project's (a 2018 placeholder): this one is published as
    `websearch-hub`, its import name and command staying `websearch`."""
    assert DIST == "websearch-hub"
    assert PROJECT["scripts"] == {"websearch": "websearch._faces._cli:main"}
    assert (ROOT / "src" / "websearch" / "__init__.py").is_file()
    assert not re.search(r"\d|eighteen|twenty|thirty", PROJECT["description"]), "the description counts providers"
    assert "pip install websearch-hub &&" in README.split("## Library")[0]  # the quick start


def test_every_install_hint_names_the_distribution() -> None:
    """`pip install 'websearch[serve]'` would install someone else's package."""
    files = [*DOCS, *sorted((ROOT / "src").rglob("*.py")), *sorted((ROOT / "bench").rglob("*.py"))]
    hint = re.compile(r"pip install (?:-\w+ )*(['\"]?)([\w.-]+(?:\[[\w,]+\])?)\1")
    targets = [found[1] for path in files for found in hint.findall(path.read_text(encoding="utf-8"))]
    assert len(targets) >= 12, targets  # the hints in src/, the README's and bench's
    check_install(targets)


# -- the Wiki provider, in this process ---------------------------------------------------------


def test_the_provider_of_your_own_answers_and_falls_through(config_dir: Path) -> None:
    page = (ROOT / "docs" / "providers.md").read_text(encoding="utf-8")
    block = re.search(r"tested: tests/test_readme.py.*?```python\n(.*?)```", page, re.S)
    assert block is not None, "docs/providers.md lost its provider example"
    code = block.group(1)
    with FakeWiki() as wiki, FakeDuckDuckGo() as ddg:
        env = {"WEBSEARCH_CONFIG_DIR": str(config_dir), **wiki.env, **ddg.env}
        # the example as written, with the client given this test's environment
        code = code.replace("WebSearch(providers=", "WebSearch(engine=False, env=env, providers=")
        scope: dict[str, Any] = {"env": env}
        exec(compile(code, "docs/providers.md", "exec"), scope)
        response = scope["response"]
        assert response.provider == "wiki", response.attempts
        assert [s.title for s in response.sources] == [f"Hit {i}" for i in range(10)]
        assert wiki.last.args == {"q": "vacation policy", "n": "10"}
        assert ddg.requests == []
        ws = scope["WebSearch"](env=env, engine=False, providers=[scope["Wiki"](), "duckduckgo"])
        with ws:
            wiki.enqueue(Reply(503, "down"))
            fell_through = ws.search("q", max_tokens=5)
        assert fell_through.provider == "duckduckgo"
        first = fell_through.attempts[0]
        assert (first.provider, first.error_kind, first.error) == ("wiki", "unavailable", "Wiki API error (503): down")
        assert [n.message for n in first.notices] == ["max_tokens=5 not applied: Wiki does not support it"]
