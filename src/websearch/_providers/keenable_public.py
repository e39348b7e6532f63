"""Keenable's keyless public endpoint as a keyless engine: the `keenable` module's provider on its
own registry row (after the other keyless engines, paced), never sent a key. Why it is a row of
its own, and everything Keenable sends and reads, is in `keenable`."""

from __future__ import annotations

from typing import Final

from .._core._registry import PROVIDERS
from .keenable import Keenable

__all__ = ["PROVIDER", "KeenablePublic"]


class KeenablePublic(Keenable):
    """Keenable through POST /v1/search/public, whatever keys are configured."""

    info = PROVIDERS["keenable_public"]


PROVIDER: Final = KeenablePublic()
