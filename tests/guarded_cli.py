"""Run the websearch CLI in a subprocess with the loopback-only network guard installed."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import netguard

netguard.install()

from websearch._faces._cli import main  # noqa: E402

if __name__ == "__main__":
    code = main()
    if netguard.blocked:
        print(f"NETGUARD: blocked {netguard.blocked}", file=sys.stderr)
        code = 99
    raise SystemExit(code)
