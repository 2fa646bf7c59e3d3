"""Drop ``<think>...</think>`` blocks from a token stream.

Reasoning models wrap their scratch work in think tags; none of it may be spoken.
``ThinkFilter`` works on a stream of arbitrary chunks: a tag split across chunks
(``"<th"`` + ``"ink>"``) is held back until it is known, tags match in any case
(``<THINK>``, ASCII letters only), a block never closed drops everything to the end, and a stray
closing tag is dropped. The result never depends on how the text was chunked; it
equals ``strip_think(whole_text)``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

OPEN = "<think>"
CLOSE = "</think>"

# Tags match in any ASCII case; ``_lower`` keeps offsets (str.lower() may not: "İ").
_BLOCKS = re.compile(r"<think>.*?(?:</think>|\Z)|</think>", re.IGNORECASE | re.DOTALL | re.ASCII)
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _lower(text: str) -> str:
    return text.translate(_ASCII_LOWER)


def strip_think(text: str) -> str:
    """The text without think blocks (the unchunked reference)."""
    return _BLOCKS.sub("", text)


def _partial_suffix(text: str, tags: tuple[str, ...]) -> int:
    """Length of the longest suffix of ``text`` that is a proper prefix of a tag."""
    lowered = _lower(text[-max(len(t) for t in tags) :])
    best = 0
    for tag in tags:
        for size in range(min(len(tag) - 1, len(lowered)), 0, -1):
            if lowered.endswith(tag[:size]):
                best = max(best, size)
                break
    return best


class ThinkFilter:
    """Feed chunks, get the visible text; call ``flush`` at the end of the stream."""

    def __init__(self) -> None:
        self._pending = ""
        self._inside = False

    @property
    def inside(self) -> bool:
        """True while inside an unterminated think block."""
        return self._inside

    def feed(self, chunk: str) -> str:
        """The visible text that is certain after this chunk."""
        text = self._pending + chunk
        self._pending = ""
        out: list[str] = []
        while text:
            lowered = _lower(text)
            if self._inside:
                end = lowered.find(CLOSE)
                if end < 0:
                    keep = _partial_suffix(text, (CLOSE,))
                    self._pending = text[len(text) - keep :] if keep else ""
                    return "".join(out)
                text = text[end + len(CLOSE) :]
                self._inside = False
                continue
            start = lowered.find(OPEN)
            stray = lowered.find(CLOSE)
            if stray >= 0 and (start < 0 or stray < start):
                out.append(text[:stray])
                text = text[stray + len(CLOSE) :]
                continue
            if start >= 0:
                out.append(text[:start])
                text = text[start + len(OPEN) :]
                self._inside = True
                continue
            keep = _partial_suffix(text, (OPEN, CLOSE))
            out.append(text[: len(text) - keep])
            self._pending = text[len(text) - keep :] if keep else ""
            break
        return "".join(out)

    def flush(self) -> str:
        """The held-back text at the end of the stream (nothing inside a block)."""
        pending, self._pending = self._pending, ""
        return "" if self._inside else pending


def filter_stream(chunks: Iterable[str]) -> Iterator[str]:
    """Yield the visible parts of a chunk stream (empty parts are skipped)."""
    think = ThinkFilter()
    for chunk in chunks:
        visible = think.feed(chunk)
        if visible:
            yield visible
    tail = think.flush()
    if tail:
        yield tail
