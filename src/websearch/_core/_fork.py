"""A child made by `fork` inherits the parent's objects but not its threads: a loop whose thread
is gone, a store whose worker is gone, locks another thread held. Each module that keeps such
state resets it here, in the child, before anything uses it (`in_child`). What the child
inherited and must neither use nor close (its sockets and selectors are the parent's) is kept
in `INHERITED`, so it is not collected, and so not closed, while the child runs. What must not
be copied half done (an import under way in another thread) is finished first, in the parent
(`before_fork`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Final

__all__ = ["INHERITED", "before_fork", "in_child"]

INHERITED: Final[list[object]] = []


def in_child(reset: Callable[[], None]) -> None:
    """Run `reset` in every child made by `fork` (on a platform that forks)."""
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=reset)


def before_fork(prepare: Callable[[], None]) -> None:
    """Run `prepare` in the parent before every `fork` (on a platform that forks)."""
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(before=prepare)
