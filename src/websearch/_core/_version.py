"""The package's version, in a leaf so that every layer can name it without importing the door."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
