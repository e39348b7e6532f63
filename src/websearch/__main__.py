"""`python -m websearch` runs the command-line tool."""

from ._cli import main

raise SystemExit(main())
