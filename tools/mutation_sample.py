"""A hand-run mutation sample: do the tests notice when a rule is deleted or inverted?

    python tools/mutation_sample.py [--only NAME,NAME] [--timeout SECONDS] [--list]

Each mutation is one behaviour deleted or inverted (a comparison swapped, a check removed, a
return changed), given as (name, file, exact old text, new text, the test files of that module).
For each, the file is copied aside, the mutation applied, the test files run
(`pytest -x -q`, under a timeout), and the file restored, whatever happens. A mutation the tests
fail on is caught; one they pass is a survivor, a rule no test holds. A mutation whose old text
is not in the file exactly once (the code moved on since it was written) is reported as stale,
not run.

The test files are run once unchanged first: a test that fails already is deselected from the
mutants' runs (it would "catch" every one of them), and reported. Run it in a copy of the
checkout (`cp -a`) when working in this one: files are changed in place while it runs. The
copy's `src` is what is tested (PYTHONPATH), with the venv of the Python running this script.
Not part of the test suite: it takes several minutes.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "websearch"


@dataclass(frozen=True)
class Mutation:
    name: str
    file: str  # relative to src/websearch
    old: str
    new: str
    tests: tuple[str, ...]  # test files, relative to tests/


ENGINE = ("test_engine.py",)
CACHE = ("test_engine.py", "test_cache_codec.py", "test_cache_rules.py")
HEALTH = ("test_engine.py", "test_health.py")
PACING = ("test_engine.py", "test_pacing.py")
FUSION = ("test_fusion.py", "test_fanout.py")
SERVE = ("test_serve.py",)
NOTICES = ("test_notices.py", "test_filters.py", "test_chain.py", "test_cache_rules.py")
ERRORS = ("test_errors.py",)
DOMAINS = ("test_filters.py", "test_chain.py")

MUTATIONS: tuple[Mutation, ...] = (
    # -- the engine ---------------------------------------------------------------------------
    Mutation(
        "engine: a cut-short answer is cached",
        "_engine/_engine.py",
        "if any(isinstance(notice, CutShort) for notice in response.notices):\n            return False",
        "if False:\n            return False",
        CACHE,
    ),
    Mutation(
        "engine: a failure is cached",
        "_engine/_engine.py",
        "return self.fanout.cacheable(response) if self.fanout is not None else response.ok",
        "return self.fanout.cacheable(response) if self.fanout is not None else True",
        CACHE,
    ),
    Mutation(
        "engine: a fan-out below its quorum is cached",
        "_engine/_engine.py",
        "return self.fanout.cacheable(response) if self.fanout is not None else response.ok",
        "return response.ok",
        ("test_fanout.py", "test_cache_rules.py"),
    ),
    Mutation(
        'engine: cache="off" still caches',
        "_engine/_engine.py",
        'caching = search.cache != "off" and self.ttl > 0',
        "caching = self.ttl > 0",
        CACHE,
    ),
    Mutation(
        "engine: ttl 0 still caches",
        "_engine/_engine.py",
        'caching = search.cache != "off" and self.ttl > 0',
        'caching = search.cache != "off"',
        CACHE,
    ),
    Mutation(
        'engine: cache="refresh" reads the cache',
        "_engine/_engine.py",
        'if caching and search.cache == "use":\n            # `_cached` does the same',
        "if caching:\n            # `_cached` does the same",
        CACHE,
    ),
    Mutation(
        "engine: deep modes get the plain deadline",
        "_engine/_engine.py",
        "return self._deadlines[1] if params.mode in _DEEP else self._deadlines[0]",
        "return self._deadlines[0]",
        ENGINE,
    ),
    Mutation(
        "engine: a success does not clear the provider's health",
        "_engine/_engine.py",
        "if info.id in self.recorded:",
        "if False:",
        HEALTH,
    ),
    Mutation(
        "engine: a follower takes its shorter-lived leader's timeout",
        "_engine/_flights.py",
        "if leader_ends < ends and self._out_of_time(answer) and self._clock.monotonic() < ends:",
        "if False:",
        ENGINE,
    ),
    Mutation(
        "engine: the store-down notice is not said",
        "_engine/_engine.py",
        "        if degraded:\n",
        "        if False:\n",
        ENGINE,
    ),
    # -- the cache ----------------------------------------------------------------------------
    Mutation(
        "cache: an entry outlives its date window",
        "_engine/_cache.py",
        "    return min(windows)",
        "    return max(windows)",
        CACHE,
    ),
    Mutation(
        "cache: the query is not normalised",
        "_engine/_cache.py",
        'return " ".join(unicodedata.normalize("NFC", query).split())',
        "return query",
        CACHE,
    ),
    Mutation(
        "cache: an entry of another version is read",
        "_engine/_cache.py",
        "if version != _VERSION:\n            return None",
        "if False:\n            return None",
        CACHE,
    ),
    Mutation(
        "cache: a hit is not marked cached",
        "_engine/_cache.py",
        "response.cached, response.cached_age_s = cached, age",
        "response.cached, response.cached_age_s = False, age",
        CACHE,
    ),
    Mutation(
        "cache: the configuration is not in the key",
        "_engine/_cache.py",
        "ordered = (provider, preferred, sorted(excluded), fallback, lineup, config)",
        'ordered = (provider, preferred, sorted(excluded), fallback, lineup, "")',
        CACHE,
    ),
    # -- health -------------------------------------------------------------------------------
    Mutation(
        "health: the circuit opens one failure late",
        "_engine/_health.py",
        "if fails >= CIRCUIT_AFTER:",
        "if fails > CIRCUIT_AFTER:",
        HEALTH,
    ),
    Mutation(
        "health: Retry-After is ignored",
        "_engine/_health.py",
        "wait = hint if hint else min(_RATE[0] * 2**streak, _RATE[1])",
        "wait = min(_RATE[0] * 2**streak, _RATE[1])",
        HEALTH,
    ),
    Mutation(
        "health: a rate limit's backoff does not double",
        "_engine/_health.py",
        "wait = hint if hint else min(_RATE[0] * 2**streak, _RATE[1])",
        "wait = hint if hint else _RATE[0]",
        HEALTH,
    ),
    Mutation(
        "health: an impatient timeout counts",
        "_engine/_health.py",
        "error.given < patience",
        "error.given < 0",
        HEALTH,
    ),
    Mutation(
        "health: an unreachable network counts",
        "_engine/_health.py",
        "if isinstance(error, NetworkUnreachable) or (",
        "if (",
        HEALTH,
    ),
    Mutation(
        "health: a refused credential is asked again",
        "_engine/_health.py",
        "        if fp in refused:\n",
        "        if False:\n",
        HEALTH,
    ),
    Mutation(
        "health: a block's backoff does not double",
        "_engine/_health.py",
        "wait = hint if hint else min(_BLOCKED[0] * 2**streak, _BLOCKED[1])",
        "wait = hint if hint else _BLOCKED[0]",
        HEALTH,
    ),
    Mutation(
        "health: a success leaves the record",
        "_engine/_health.py",
        "        else:\n            await self.store.delete(PREFIX + provider)",
        "        else:\n            pass",
        HEALTH,
    ),
    # -- pacing -------------------------------------------------------------------------------
    Mutation(
        "pacing: a slot after the deadline is waited for",
        "_engine/_pacing.py",
        "late = remaining is not None and wait > remaining",
        "late = False",
        PACING,
    ),
    Mutation(
        "pacing: a skipped provider keeps its slot",
        "_engine/_pacing.py",
        "            await self.store.untake(PREFIX + provider, rate, 1.0)\n            until",
        "            until",
        PACING,
    ),
    Mutation(
        "pacing: a rate is read upside down",
        "_core/_checks.py",
        "return float(match.group(1)) / _UNITS[match.group(2)[0]]",
        "return float(match.group(1)) * _UNITS[match.group(2)[0]]",
        PACING,
    ),
    Mutation(
        'pacing: "off" does not turn a default off',
        "_engine/_pacing.py",
        "            rates.pop(provider, None)",
        "            pass",
        ENGINE,
    ),
    # -- fusion (not its tie order: another change pins that) ---------------------------------
    Mutation(
        "fusion: www. names another page",
        "_engine/_fusion.py",
        'key = netloc.removesuffix(port).removeprefix("www.") + (slash + path).rstrip("/")',
        'key = netloc.removesuffix(port) + (slash + path).rstrip("/")',
        FUSION,
    ),
    Mutation(
        "fusion: a page listed twice counts twice",
        "_engine/_fusion.py",
        "elif hits[-1][0] != index:",
        "else:",
        FUSION,
    ),
    Mutation(
        "fusion: agreement does not come first",
        "_engine/_fusion.py",
        "return -len(hits), -score, rank, index",
        "return 0, -score, rank, index",
        FUSION,
    ),
    Mutation(
        "fusion: the shorter snippet wins",
        "_engine/_fusion.py",
        'snippet = mine.snippet if len(mine.snippet or "") >= len(other.snippet or "") else other.snippet',
        'snippet = mine.snippet if len(mine.snippet or "") < len(other.snippet or "") else other.snippet',
        FUSION,
    ),
    Mutation(
        "fusion: utm_ parameters are kept",
        "_engine/_fusion.py",
        'if param and name not in _TRACKING and not name.startswith("utm_"):',
        "if param and name not in _TRACKING:",
        FUSION,
    ),
    Mutation(
        "fusion: https is not preferred",
        "_engine/_fusion.py",
        'rank_key = (not other.url.startswith("https://"), rank)',
        "rank_key = (False, rank)",
        FUSION,
    ),
    # -- the keyless engines ------------------------------------------------------------------
    Mutation(
        "duckduckgo: a challenge page is parsed",
        "_providers/duckduckgo.py",
        "    challenges = (is_challenge,)",
        "    challenges = ()",
        ("test_duckduckgo.py",),
    ),
    Mutation(
        "duckduckgo: ads are kept",
        "_providers/duckduckgo.py",
        "url.startswith(_AD_PREFIX) or ",
        "",
        ("test_duckduckgo.py",),
    ),
    Mutation(
        "duckduckgo: the limit is not kept",
        "_providers/duckduckgo.py",
        "        if len(sources) >= limit:\n            break",
        "        if False:\n            break",
        ("test_duckduckgo.py",),
    ),
    Mutation(
        "duckduckgo: a redirect to a non-web target is kept",
        "_providers/duckduckgo.py",
        'return target if target.startswith(("http://", "https://")) else None',
        "return target",
        ("test_duckduckgo.py",),
    ),
    Mutation(
        "bing: links on Bing's subdomains are results",
        "_providers/bing.py",
        'if host != "bing.com" and not host.endswith(".bing.com"):',
        'if host != "bing.com":',
        ("test_bing.py",),
    ),
    Mutation(
        "bing: Bing's internal pages are results",
        "_providers/bing.py",
        "return None if parts.path.startswith(_INTERNAL) else href",
        "return href",
        ("test_bing.py",),
    ),
    Mutation(
        "bing: one page only",
        "_providers/bing.py",
        "    max_pages = MAX_PAGES",
        "    max_pages = 1",
        ("test_bing.py",),
    ),
    Mutation(
        "bing: duplicates are kept",
        "_providers/bing.py",
        "if not title or not keep(url, seen):",
        "if not title:",
        ("test_bing.py",),
    ),
    # -- serve: auth and the rate limit -------------------------------------------------------
    Mutation(
        "serve: a refused search keeps its token",
        "_faces/_serve/_auth.py",
        "                await store.untake(key, rate.rate, rate.burst)\n",
        "",
        SERVE,
    ),
    Mutation(
        "serve: every MCP message costs a token",
        "_faces/_serve/_auth.py",
        'return int(isinstance(message, JSONRPCRequest) and message.method == "tools/call")',
        "return 1",
        SERVE,
    ),
    Mutation(
        "serve: only the last token is checked",
        "_faces/_serve/_auth.py",
        "match |= hmac.compare_digest(digest, known)",
        "match = hmac.compare_digest(digest, known)",
        SERVE,
    ),
    Mutation(
        "serve: a body sent without Content-Length has no cap",
        "_faces/_serve/_auth.py",
        "            if size > limit:\n",
        "            if False:\n",
        SERVE,
    ),
    Mutation(
        "serve: any Host is accepted on loopback",
        "_faces/_serve/_auth.py",
        "if name is None or not is_loopback(name):",
        "if name is None:",
        SERVE,
    ),
    Mutation(
        "serve: Basic auth takes the user name as the token",
        "_faces/_serve/_auth.py",
        '.decode("utf-8").partition(":")[2]',
        '.decode("utf-8").partition(":")[0]',
        SERVE,
    ),
    # -- notices ------------------------------------------------------------------------------
    Mutation(
        "notices: one result reads as results",
        "_core/_notices.py",
        'results = "result" if count == 1 else "results"',
        'results = "results"',
        NOTICES,
    ),
    Mutation(
        "notices: values are shown ASCII-escaped",
        "_core/_notices.py",
        "text = json.dumps(json_value(value), ensure_ascii=False)",
        "text = json.dumps(json_value(value))",
        NOTICES,
    ),
    Mutation(
        "notices: cut_short makes a plain partial notice",
        "_core/_notices.py",
        'return CutShort(param, json_value(value), "partial", message)',
        'return Notice(param, json_value(value), "partial", message)',
        NOTICES,
    ),
    Mutation(
        "notices: tuples are not made lists",
        "_core/_notices.py",
        "if isinstance(value, (tuple, list)):",
        "if isinstance(value, list):",
        NOTICES,
    ),
    # -- the error mapping --------------------------------------------------------------------
    Mutation(
        "errors: 403 is not an auth failure",
        "_providers/_errors.py",
        "if status in (401, 403):",
        "if status == 401:",
        ERRORS,
    ),
    Mutation(
        "errors: 408 is a rejected request",
        "_providers/_errors.py",
        "if status in (408, 529) or 500 <= status < 600:",
        "if 500 <= status < 600:",
        ERRORS,
    ),
    Mutation(
        "errors: an absurd Retry-After is honoured",
        "_providers/_errors.py",
        "return seconds if seconds <= MAX_RETRY_AFTER else None",
        "return seconds",
        ERRORS,
    ),
    Mutation(
        "errors: a code does not choose the class",
        "_providers/_errors.py",
        "cls = by_code or envelope.status_classes.get(status) or class_for_status(status)",
        "cls = envelope.status_classes.get(status) or class_for_status(status)",
        ERRORS,
    ),
    Mutation(
        "errors: an upstream detail is not redacted",
        "_providers/_errors.py",
        "detail = redact_detail(response, detail) or None",
        "detail = detail",
        ERRORS,
    ),
    # -- domain enforcement -------------------------------------------------------------------
    Mutation(
        "domains: a subdomain is not on its domain",
        "_core/_filters.py",
        'return any(host == name or host.endswith("." + name) for name in names if name)',
        "return any(host == name for name in names if name)",
        DOMAINS,
    ),
    Mutation(
        "domains: www. in a domain is kept",
        "_core/_filters.py",
        'return name.rstrip(".").removeprefix("www.")',
        'return name.rstrip(".")',
        DOMAINS,
    ),
    Mutation(
        "domains: a domain is compared case-sensitively",
        "_core/_filters.py",
        'name = domain.lower().split("//")',
        'name = domain.split("//")',
        DOMAINS,
    ),
    Mutation(
        "domains: a port in a domain is kept",
        "_core/_filters.py",
        "if colon and (not port or (port.isascii() and port.isdigit())):",
        "if False:",
        DOMAINS,
    ),
    Mutation(
        "domains: a host's final dot is kept",
        "_core/_filters.py",
        'host = (urlsplit(url).hostname or "").lower().rstrip(".")',
        'host = (urlsplit(url).hostname or "").lower()',
        DOMAINS,
    ),
    Mutation(
        "domains: a bare-host title does not count",
        "_core/_filters.py",
        'return bool(_HOST_RE.fullmatch(title)) and on_domains(f"https://{title}/", domains)',
        "return False",
        DOMAINS,
    ),
    Mutation(
        "domains: exclude_domains alone is not enforced",
        "_engine/_chain.py",
        "if plan.filters.include_domains or plan.filters.exclude_domains:",
        "if plan.filters.include_domains:",
        DOMAINS,
    ),
    Mutation(
        "domains: the removed results are not counted",
        "_engine/_chain.py",
        "            notices.append(results_dropped(",
        "            (results_dropped(",
        DOMAINS,
    ),
)


def run(tests: tuple[str, ...], timeout: float, deselect: list[str], first_failure: bool = True) -> tuple[str, str]:
    """("passed" | "failed" | "timeout", pytest's output) of the test files."""
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf"]
    args += ["-x"] if first_failure else []
    args += [f"--deselect={node}" for node in deselect]
    args += [str(ROOT / "tests" / name) for name in tests if (ROOT / "tests" / name).exists()]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout if isinstance(exc.stdout, str) else (exc.stdout or b"").decode(errors="replace")
        return "timeout", out
    return ("passed" if done.returncode == 0 else "failed"), done.stdout + done.stderr


def failing(output: str) -> list[str]:
    """The node ids pytest's `-rf` summary names as failed."""
    return [m.group(1) for m in re.finditer(r"^FAILED (\S+)", output, re.MULTILINE)]


def forget_bytecode(path: Path) -> None:
    """Drop the compiled copies of `path`: a mutant of the same size written within the same
    second as the file's cached bytecode would otherwise run the old code (or the other way)."""
    cache = path.parent / "__pycache__"
    for compiled in cache.glob(path.stem + ".*.pyc") if cache.is_dir() else ():
        compiled.unlink()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated substrings of the mutation names to run")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per test run (default 600)")
    parser.add_argument("--list", action="store_true", help="list the mutations and whether each applies")
    args = parser.parse_args()
    chosen = list(MUTATIONS)
    if args.only:
        wanted = [w.strip() for w in args.only.split(",") if w.strip()]
        chosen = [m for m in chosen if any(w in m.name for w in wanted)]
    if args.list:
        for m in chosen:
            count = (SRC / m.file).read_text(encoding="utf-8").count(m.old)
            print(f"{'ok   ' if count == 1 else 'STALE'} {m.name} ({m.file})")
        return 0

    baseline: dict[tuple[str, ...], list[str]] = {}
    rows: list[tuple[str, str, str, float]] = []
    for m in chosen:
        path = SRC / m.file
        original = path.read_text(encoding="utf-8")
        count = original.count(m.old)
        if count != 1:
            why = "old text not found" if count == 0 else f"old text found {count} times"
            rows.append((m.name, m.file, f"stale: {why}", 0.0))
            print(f"{'stale':9} {m.name}: {why}", flush=True)
            continue
        if m.tests not in baseline:
            outcome, output = run(m.tests, args.timeout, [], first_failure=False)
            baseline[m.tests] = failing(output)
            if outcome != "passed":
                print(f"baseline {', '.join(m.tests)}: {outcome}; deselected: {baseline[m.tests]}", flush=True)
        started = time.monotonic()
        try:
            path.write_text(original.replace(m.old, m.new), encoding="utf-8")
            forget_bytecode(path)
            outcome, _ = run(m.tests, args.timeout, baseline[m.tests])
        finally:
            path.write_text(original, encoding="utf-8")
            forget_bytecode(path)
        verdict = {"failed": "caught", "passed": "SURVIVED", "timeout": "caught (timeout)"}[outcome]
        seconds = time.monotonic() - started
        rows.append((m.name, m.file, verdict, seconds))
        print(f"{verdict:9} {m.name} ({seconds:.0f} s)", flush=True)

    print()
    width = max(len(name) for name, *_ in rows) if rows else 10
    print(f"{'mutation':{width}}  {'file':24}  verdict")
    for name, file, verdict, _ in rows:
        print(f"{name:{width}}  {file:24}  {verdict}")
    ran = [r for r in rows if not r[2].startswith("stale")]
    caught = sum(1 for r in ran if r[2].startswith("caught"))
    stale = len(rows) - len(ran)
    print(f"\ncaught {caught} of {len(ran)} run; {len(ran) - caught} survived; {stale} stale (not run)")
    for tests, nodes in baseline.items():
        if nodes:
            print(f"failing before any mutation, deselected ({', '.join(tests)}): {', '.join(nodes)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
