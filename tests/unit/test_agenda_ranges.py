"""The instants an agenda listing covers, for each range, on any day of the week."""

from __future__ import annotations

import datetime as dt
import zoneinfo

import pytest

from appliance.actions.agenda import list_range
from appliance.protocol.commands import AgendaList, AgendaRange

NEW_YORK = zoneinfo.ZoneInfo("America/New_York")


def local(day: str, hour: int = 0, minute: int = 0) -> dt.datetime:
    return dt.datetime.combine(dt.date.fromisoformat(day), dt.time(hour, minute), NEW_YORK)


@pytest.mark.parametrize(
    ("now", "range_", "since", "until"),
    [
        # Wednesday: the coming Saturday and Sunday
        (local("2026-12-02", 9), "weekend", local("2026-12-05"), local("2026-12-07")),
        # Friday night: still the coming weekend, not a week later
        (local("2026-12-04", 23, 59), "weekend", local("2026-12-05"), local("2026-12-07")),
        # Saturday and Sunday: the weekend has begun, from now to Monday
        (local("2026-12-05", 11), "weekend", local("2026-12-05", 11), local("2026-12-07")),
        (local("2026-12-06", 20), "weekend", local("2026-12-06", 20), local("2026-12-07")),
        # Monday: the next weekend is five days on
        (local("2026-12-07", 8), "weekend", local("2026-12-12"), local("2026-12-14")),
        # next week: Monday to Sunday of the next calendar week, said on any day
        (local("2026-12-02", 9), "next_week", local("2026-12-07"), local("2026-12-14")),
        (local("2026-12-06", 22), "next_week", local("2026-12-07"), local("2026-12-14")),
        (local("2026-12-07", 0, 1), "next_week", local("2026-12-14"), local("2026-12-21")),
        # the next seven days, from now
        (local("2026-12-02", 9), "week", local("2026-12-02", 9), local("2026-12-09")),
        (local("2026-12-02", 9), "tomorrow", local("2026-12-03"), local("2026-12-04")),
    ],
)
def test_list_range(now: dt.datetime, range_: AgendaRange, since: dt.datetime,
                    until: dt.datetime) -> None:  # fmt: skip
    assert list_range(AgendaList(range=range_), now, NEW_YORK) == (since, until)


def test_a_weekend_across_a_clock_change_ends_at_local_midnight() -> None:
    # New York leaves summer time on Sunday, November 1st 2026: that weekend is 49 hours
    since, until = list_range(AgendaList(range="weekend"), local("2026-10-28", 12), NEW_YORK)
    assert (since, until) == (local("2026-10-31"), local("2026-11-02"))
    assert until.astimezone(dt.UTC) - since.astimezone(dt.UTC) == dt.timedelta(hours=49)


def test_the_clock_is_read_in_the_household_time_zone() -> None:
    # Saturday 02:00 UTC is still Friday evening in New York: the weekend is the coming one
    now = dt.datetime(2026, 12, 5, 2, 0, tzinfo=dt.UTC)
    since, until = list_range(AgendaList(range="weekend"), now, NEW_YORK)
    assert (since, until) == (local("2026-12-05"), local("2026-12-07"))
