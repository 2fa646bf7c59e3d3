"""A tiny download progress bar: bytes, percent and rate, on stderr.

On a terminal it redraws one line with ``\\r``; otherwise (a log file, a pipe, a
test's captured stderr) it writes a plain line at every tenth of the way, or every
``interval`` seconds when the total size is unknown, and one at the end.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

TTY_REFRESH = 0.1  # seconds between redraws on a terminal
LINE_INTERVAL = 10.0  # seconds between lines when not a terminal and the size is unknown


def human_bytes(count: float) -> str:
    """``1536`` -> ``"1.5 KiB"``."""
    if count < 1024:
        return f"{count:.0f} B"
    for unit in ("KiB", "MiB", "GiB"):
        count /= 1024
        if count < 1024 or unit == "GiB":
            break
    return f"{count:.1f} {unit}"


class Progress:
    """Counts bytes of one download and shows them on ``stream``."""

    def __init__(
        self,
        label: str,
        total: int | None,
        *,
        start: int = 0,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
        interval: float = LINE_INTERVAL,
    ) -> None:
        self.label = label
        self.total = total
        self.done = start
        self._resumed_at = start
        # Looked up now, not at import: tests and the CLI may replace sys.stderr.
        self.stream = stream if stream is not None else sys.stderr
        self.tty = _isatty(self.stream)
        self._clock = clock
        self._interval = interval
        self._t0 = clock()
        self._last_draw = float("-inf")
        self._last_tenth = self._tenth()
        self._width = 0
        self._shown: int | None = None  # bytes in the last line written (not a TTY)
        self._finished = False

    def update(self, count: int) -> None:
        self.done += count
        now = self._clock()
        if self.tty:
            if now - self._last_draw >= TTY_REFRESH:
                self._draw(now)
            return
        tenth = self._tenth()
        if tenth > self._last_tenth or (
            self.total is None and now - self._last_draw >= self._interval
        ):
            self._last_tenth = tenth
            self._line(now)

    def finish(self) -> None:
        """The last line (once): where the download ended, complete or not."""
        if self._finished:
            return
        self._finished = True
        now = self._clock()
        if self.tty:
            self._draw(now)
            self.stream.write("\n")
            self.stream.flush()
        elif self._shown != self.done:
            self._line(now)

    def render(self, now: float | None = None) -> str:
        now = self._clock() if now is None else now
        parts = [self.label, human_bytes(self.done)]
        if self.total:
            parts[1] += f" / {human_bytes(self.total)}"
            parts.append(f"{min(100, self.done * 100 // self.total):3d}%")
        elapsed = now - self._t0
        rate = (self.done - self._resumed_at) / elapsed if elapsed > 0 else 0.0
        parts.append(f"{human_bytes(rate)}/s")
        if self.tty and self.total and rate > 0 and self.done < self.total:
            parts.append(f"{(self.total - self.done) / rate:.0f} s left")
        return "  ".join(parts)

    def _tenth(self) -> int:
        return self.done * 10 // self.total if self.total else 0

    def _draw(self, now: float) -> None:
        text = self.render(now)
        pad = max(0, self._width - len(text))
        self._width = len(text)
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()
        self._last_draw = now

    def _line(self, now: float) -> None:
        self.stream.write(self.render(now) + "\n")
        self.stream.flush()
        self._last_draw = now
        self._shown = self.done


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed or not a real stream
        return False
