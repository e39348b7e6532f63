"""A second (or third) process for the engine's cross-process tests, under the network guard.

`python engine_worker.py N QUERY [KWARGS_JSON] [GO_FILE]`: open one client on the engine (the
store from the environment: `WEBSEARCH_CACHE_DIR` for SQLite, `WEBSEARCH_REDIS_URL` for Redis),
print `ready`, wait until GO_FILE exists (so several workers start their searches together),
run N identical searches at once and print one JSON line per response. A QUERY with `{i}` makes
N different searches instead ("topic 0", "topic 1", ...), one after another, each printed as it
lands.
"""

import asyncio
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import netguard

netguard.install()

from websearch import WebSearch  # noqa: E402


def wait_for(go: Path | None) -> None:
    while go is not None and not go.exists():
        time.sleep(0.005)


async def main(n: int, query: str, kwargs: dict[str, object], go: Path | None) -> None:
    providers = [p for p in os.environ.get("WEBSEARCH_PROVIDERS", "").split(",") if p]
    async with WebSearch(engine=True, providers=providers) as client:
        await client.engine.state().ping()  # open the store before the start line
        print("ready", flush=True)
        await asyncio.to_thread(wait_for, go)
        if "{i}" in query:
            for i in range(n):
                print(json.dumps((await client.asearch(query.format(i=i), **kwargs)).to_dict()), flush=True)
            return
        responses = await asyncio.gather(*(client.asearch(query, **kwargs) for _ in range(n)))
    for response in responses:
        print(json.dumps(response.to_dict()), flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    extra = json.loads(args[2]) if len(args) > 2 else {}
    asyncio.run(main(int(args[0]), args[1], extra, Path(args[3]) if len(args) > 3 else None))
    if netguard.blocked:
        print(f"NETGUARD: blocked {netguard.blocked}", file=sys.stderr)
        raise SystemExit(99)
