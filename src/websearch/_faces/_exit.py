"""The exit statuses of the `websearch` command, shared by its modules (`_cli`, `_cli_read`)."""

from __future__ import annotations

from typing import Final

__all__ = ["EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_READER_GONE", "EXIT_USAGE"]

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1
EXIT_USAGE: Final = 2
EXIT_INTERRUPTED: Final = 130
EXIT_READER_GONE: Final = 141  # 128 + SIGPIPE, what a shell shows for a tool its pipe's reader left
