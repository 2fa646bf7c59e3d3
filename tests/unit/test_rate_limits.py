"""Token buckets per sender, on a fake clock."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from appliance.bus.limits import RateLimiter, RateLimitSettings


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def taken(limiter: RateLimiter, key: str, count: int) -> int:
    return sum(limiter.allow(key) for _ in range(count))


def test_a_burst_passes_then_the_rate_holds() -> None:
    clock = FakeClock()
    limiter = RateLimiter(10, 30, clock=clock)
    assert taken(limiter, "ana/kitchen", 40) == 30
    clock.advance(0.5)  # 5 tokens back
    assert taken(limiter, "ana/kitchen", 10) == 5
    clock.advance(0.09)
    assert not limiter.allow("ana/kitchen")
    clock.advance(0.01)
    assert limiter.allow("ana/kitchen")


def test_the_bucket_never_holds_more_than_the_burst() -> None:
    clock = FakeClock()
    limiter = RateLimiter(10, 30, clock=clock)
    assert limiter.allow("ha")
    clock.advance(3600)
    assert taken(limiter, "ha", 100) == 30


def test_senders_have_buckets_of_their_own() -> None:
    clock = FakeClock()
    limiter = RateLimiter(1, 2, clock=clock)
    assert taken(limiter, "ana", 5) == 2
    assert taken(limiter, "bob", 5) == 2
    assert taken(limiter, "ana/kitchen", 5) == 2


def test_a_steady_sender_at_the_rate_is_never_refused() -> None:
    clock = FakeClock()
    limiter = RateLimiter(10, 1, clock=clock)
    for _ in range(1000):
        assert limiter.allow("ha")
        clock.advance(0.1)


def test_idle_senders_are_forgotten_once_their_bucket_is_full() -> None:
    clock = FakeClock()
    limiter = RateLimiter(10, 30, clock=clock)
    for n in range(100):
        limiter.allow(f"user{n}")
    assert len(limiter) == 100
    clock.advance(2.9)  # not yet full again: remembered
    limiter.allow("other")
    assert len(limiter) == 101
    clock.advance(0.2)
    limiter.allow("other")
    assert len(limiter) == 1


def test_memory_is_bounded_by_max_keys() -> None:
    clock = FakeClock()
    limiter = RateLimiter(1, 1, max_keys=50, clock=clock)
    for n in range(1000):
        assert limiter.allow(f"user{n}")
    assert len(limiter) == 50
    # the most recent senders are the ones remembered
    assert not limiter.allow("user999")


def test_a_clock_going_backwards_gives_no_tokens() -> None:
    clock = FakeClock()
    limiter = RateLimiter(1, 1, clock=clock)
    assert limiter.allow("ha")
    clock.advance(-10)
    assert not limiter.allow("ha")


def test_settings_build_the_limiter() -> None:
    clock = FakeClock()
    limiter = RateLimitSettings(rate=2, burst=3).limiter(clock)
    assert limiter is not None and (limiter.rate, limiter.burst) == (2, 3)
    assert taken(limiter, "ha", 5) == 3
    assert RateLimitSettings(enabled=False).limiter() is None
    defaults = RateLimitSettings()
    assert (defaults.rate, defaults.burst, defaults.max_keys) == (20, 100, 10_000)


@pytest.mark.parametrize("bad", [{"rate": 0}, {"burst": 0}, {"max_keys": 0}, {"colour": 1}])
def test_settings_refuse_nonsense(bad: dict[str, float]) -> None:
    with pytest.raises(ValidationError):
        RateLimitSettings.model_validate(bad)


def test_limiter_refuses_nonsense() -> None:
    with pytest.raises(ValueError, match="rate"):
        RateLimiter(0, 1)
