"""glibc malloc tuning and trimming (this machine runs glibc)."""

from __future__ import annotations

import platform

import pytest

from appliance import malloc

pytestmark = pytest.mark.skipif(
    platform.libc_ver()[0] != "glibc", reason="glibc's mallopt/malloc_trim only"
)


def _rss_kb() -> int:
    with open("/proc/self/status") as status:
        lines = status.read().splitlines()
    for line in lines:
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_tune_is_accepted() -> None:
    assert malloc.tune()


def test_trim_gives_freed_heap_memory_back() -> None:
    # Many blocks below the mmap threshold live in the heap; one allocated after them
    # pins its top, so freeing them keeps the memory resident until it is trimmed.
    blocks = [bytearray(2000) for _ in range(60_000)]
    pin = bytearray(2000)
    del blocks
    before = _rss_kb()
    assert malloc.trim()
    after = _rss_kb()
    assert after < before - 60_000, (before, after)  # most of the ~120 MB came back
    del pin
