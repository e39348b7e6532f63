"""Counting a context's tokens: exact with tiktoken's cl100k_base when its encoding is at hand,
else an estimate that errs high.

tiktoken (the `tokens` extra) downloads its encoding file on first use; this module never makes
that download by itself (it is pure: no network), it uses the encoding only when tiktoken's cache
already holds it. `token_counter(allow_download=True)` is the one call that may fetch it, for a
caller that has a network and a deadline around it; any failure there falls back to the estimate.

The estimate: each CJK character (ideograph, kana, hangul, CJK punctuation) counts one token;
every other run of non-space characters counts ceil(len / 4), so at least one. It errs high
rather than low for English prose (a short word costs a whole token, as in BPE vocabularies, and
a long one a token per four characters, where BPE's long tokens take more), and counts a CJK text
about as BPE does, a token or more a character. The estimate of texts joined by whitespace is the
sum of their estimates, which is what lets the assembly reserve a budget piece by piece.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
import tempfile
import threading
from collections.abc import Callable
from typing import Any, Final

__all__ = ["ESTIMATE", "TIKTOKEN_ENCODING", "TokenCounter", "estimate_tokens", "token_counter"]

TIKTOKEN_ENCODING: Final = "cl100k_base"
#: Where tiktoken fetches cl100k_base from; its cache names the file by this address's SHA-1.
_TIKTOKEN_BLOB: Final = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"

_CJK_CHARS: Final = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf"
    "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
)
_CJK: Final = re.compile(f"[{_CJK_CHARS}]")
_RUN: Final = re.compile(f"[^\\s{_CJK_CHARS}]+")


def estimate_tokens(text: str) -> int:
    """Estimated tokens of `text`: CJK characters one each, other runs of non-space ceil(len / 4)."""
    runs = _RUN.findall(text)
    return len(_CJK.findall(text)) + sum((len(run) + 3) // 4 for run in runs)


class TokenCounter:
    """Counts tokens with one method (`name`: "tiktoken:cl100k_base" or "estimate")."""

    __slots__ = ("_count", "name")

    def __init__(self, name: str, count: Callable[[str], int]) -> None:
        self.name = name
        self._count = count

    def count(self, text: str) -> int:
        """Tokens of `text`."""
        return self._count(text) if text else 0

    @classmethod
    def from_encoding(cls, encoding: Any) -> TokenCounter:
        """A counter over a tiktoken `Encoding` (special tokens counted as plain text)."""
        encode = encoding.encode_ordinary
        return cls(f"tiktoken:{encoding.name}", lambda text: len(encode(text)))

    def __repr__(self) -> str:
        return f"TokenCounter({self.name!r})"


ESTIMATE: Final = TokenCounter("estimate", estimate_tokens)

_lock = threading.Lock()
_loaded: dict[bool, TokenCounter] = {}


def _tiktoken_cached() -> bool:
    """Whether tiktoken's cache holds cl100k_base (the rule tiktoken itself follows)."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        folder = os.environ["TIKTOKEN_CACHE_DIR"]
    elif "DATA_GYM_CACHE_DIR" in os.environ:
        folder = os.environ["DATA_GYM_CACHE_DIR"]
    else:
        folder = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if not folder:
        return False
    return os.path.isfile(os.path.join(folder, hashlib.sha1(_TIKTOKEN_BLOB.encode()).hexdigest()))


def token_counter(*, allow_download: bool = False) -> TokenCounter:
    """tiktoken's cl100k_base when tiktoken is installed and its encoding is cached (or, with
    `allow_download`, could be fetched), else `ESTIMATE`. Decided once per process and setting."""
    with _lock:
        known = _loaded.get(allow_download)
        if known is not None:
            return known
        counter = ESTIMATE
        try:
            tiktoken = importlib.import_module("tiktoken")
        except ImportError:
            tiktoken = None
        if tiktoken is not None and (allow_download or _tiktoken_cached()):
            try:
                counter = TokenCounter.from_encoding(tiktoken.get_encoding(TIKTOKEN_ENCODING))
            except Exception:  # no network, a bad cache file, a changed tiktoken: the estimate serves
                counter = ESTIMATE
        _loaded[allow_download] = counter
        return counter
