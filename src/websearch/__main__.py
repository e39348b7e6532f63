"""`python -m websearch` runs the command-line tool."""

from ._faces._cli import main

raise SystemExit(main())
