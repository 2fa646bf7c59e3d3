"""Keep the node's resident memory flat across voice turns (glibc only; elsewhere no-ops).

The models allocate and free buffers of several megabytes per turn (Whisper features,
llama.cpp logits, ONNX Runtime tensors) from several worker threads. With glibc's
defaults those land in per-thread heaps whose freed space is kept, and the "dynamic
mmap threshold" moves big buffers into those heaps: measured on the voice benchmark,
resident memory rose from 0.83 GB with the models loaded to a 1.49 GB plateau. Two
arenas, a fixed mmap threshold and a ``malloc_trim`` after each session hold it near
1.2 GB.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging

_LOGGER = logging.getLogger(__name__)
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
    except OSError:
        return None
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


_LIBC = _libc()


def tune(*, arenas: int = 2, mmap_threshold: int = 128 * 1024) -> bool:
    """Set glibc's malloc up for big short-lived buffers; call before loading models.
    Returns False where it does not apply."""
    if _LIBC is None:
        return False
    ok = bool(_LIBC.mallopt(M_ARENA_MAX, arenas)) and bool(
        _LIBC.mallopt(M_MMAP_THRESHOLD, mmap_threshold)
    )
    _LOGGER.debug("malloc tuned (arenas %d, mmap threshold %d): %s", arenas, mmap_threshold, ok)
    return ok


def trim() -> bool:
    """Give freed heap memory back to the system (a few milliseconds; run it off the
    event loop, between turns). True when memory was released."""
    if _LIBC is None:
        return False
    return bool(_LIBC.malloc_trim(0))
