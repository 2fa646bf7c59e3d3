"""Small asyncio helpers shared by the node's tasks."""

from __future__ import annotations

import asyncio


async def wait_any(
    *events: asyncio.Event | None,
    timeout: float | None = None,  # noqa: ASYNC109 - a bounded wait is the point
) -> None:
    """Return when any of ``events`` is set, or after ``timeout`` seconds."""
    waiters = [asyncio.ensure_future(e.wait()) for e in events if e is not None]
    try:
        await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
        await asyncio.gather(*waiters, return_exceptions=True)
