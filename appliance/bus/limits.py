"""Per-sender rate limits on commands: a token bucket for each sender.

A sender is who the command says it is (its ``user`` and ``site``; Home Assistant's
entities are one sender, ``ha``). The limit stops a runaway automation or a stuck
button from flooding the database; it is no defence against a hostile client, which
can name any sender (the broker's ACL decides who may publish at all).

A bucket holds at most ``burst`` tokens and refills at ``rate`` tokens per second;
each command takes one. A bucket that has been idle long enough to be full again is
forgotten, which changes nothing: a new bucket starts full. At most ``max_keys``
buckets are kept; beyond that the least recently used one is dropped.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

_LOGGER = logging.getLogger(__name__)

Clock = Callable[[], float]
_EPSILON = 1e-9


class RateLimitSettings(BaseModel):
    """Commands per sender (``user`` and ``site`` of the payload; ``ha`` for Home
    Assistant's entities)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(default=True, description="Limit commands per sender.")
    rate: float = Field(default=20.0, gt=0, description="Commands per second a sender may keep up.")
    burst: int = Field(
        default=100, ge=1, description="Commands a sender may send at once after a pause."
    )
    max_keys: int = Field(
        default=10_000, ge=1, description="Senders remembered at most (least recent dropped)."
    )

    def limiter(self, clock: Clock = time.monotonic) -> RateLimiter | None:
        """The limiter these settings describe, or None when limits are off."""
        if not self.enabled:
            return None
        return RateLimiter(self.rate, self.burst, max_keys=self.max_keys, clock=clock)


class RateLimiter:
    """Token buckets keyed by sender."""

    def __init__(
        self,
        rate: float,
        burst: int,
        *,
        max_keys: int = 10_000,
        clock: Clock = time.monotonic,
    ) -> None:
        if rate <= 0 or burst < 1 or max_keys < 1:
            msg = "rate must be > 0, burst and max_keys >= 1"
            raise ValueError(msg)
        self.rate = rate
        self.burst = burst
        self._max_keys = max_keys
        self._clock = clock
        self._full_after = burst / rate  # seconds for an empty bucket to fill again
        # key -> (tokens, when they were counted); least recently used first
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._buckets)

    def allow(self, key: str) -> bool:
        """Take a token from ``key``'s bucket; False when it is empty."""
        now = self._clock()
        self._forget_idle(now)
        tokens, then = self._buckets.pop(key, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + max(0.0, now - then) * self.rate)
        allowed = tokens >= 1.0 - _EPSILON  # a token refilled in steps of 1/rate is whole
        if allowed:
            tokens = max(0.0, tokens - 1.0)
        self._buckets[key] = (tokens, now)
        if len(self._buckets) > self._max_keys:
            dropped, _ = self._buckets.popitem(last=False)
            _LOGGER.warning(
                "rate limits: more than %d senders; forgot %r", self._max_keys, dropped[:80]
            )
        return allowed

    def _forget_idle(self, now: float) -> None:
        """Drop the buckets that are full again (oldest first, so stop at a busy one)."""
        while self._buckets:
            key, (_, then) = next(iter(self._buckets.items()))
            if now - then < self._full_after:
                return
            del self._buckets[key]
