"""The fake of Keenable's keyless row (`keenable_public`): the Keenable fake under that id (see `keenable`)."""

from __future__ import annotations

from .keenable import FakeKeenablePublic

__all__ = ["FakeKeenablePublic"]
