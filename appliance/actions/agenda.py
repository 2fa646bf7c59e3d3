"""Agenda actions. Times are stored as instants; days are the configured zone's days.

An all-day event (a date without a time) spans local midnight to midnight.
Removing or moving looks for upcoming events (from the start of today) whose title is
the one said or contains its words; more than one match is ``rejected`` (reason
``ambiguous``) and changes nothing, so the caller can say which.
"""

from __future__ import annotations

import datetime as dt
import zoneinfo

from appliance.actions.context import Context, Handler, Outcome
from appliance.actions.items import item_key
from appliance.intents.lexicon import LANGUAGES, load_lexicon
from appliance.intents.text import fold
from appliance.protocol.commands import AgendaAdd, AgendaList, AgendaMove, AgendaNext, AgendaRemove
from appliance.protocol.receipts import ReceiptEvent
from appliance.store import agenda as repo

_HORIZON = dt.timedelta(days=366)
_SATURDAY, _SUNDAY = 5, 6
_DAY_MINUTES = 24 * 60


def day_start(day: dt.date, tz: zoneinfo.ZoneInfo) -> dt.datetime:
    return dt.datetime.combine(day, dt.time.min, tzinfo=tz)


def day_bounds(
    day: dt.date, tz: zoneinfo.ZoneInfo, days: int = 1
) -> tuple[dt.datetime, dt.datetime]:
    # Add days on the date, not on the instant: a DST day is 23 or 25 hours long.
    return day_start(day, tz), day_start(day + dt.timedelta(days=days), tz)


def receipt_event(row: repo.EventRow, tz: zoneinfo.ZoneInfo) -> ReceiptEvent:
    if row.all_day:
        start = row.starts_at.astimezone(tz).date().isoformat()
        end = None
        if row.ends_at is not None:
            last = row.ends_at.astimezone(tz).date() - dt.timedelta(days=1)
            end = last.isoformat() if last.isoformat() != start else None
    else:
        start = row.starts_at.astimezone(tz).isoformat()
        end = row.ends_at.astimezone(tz).isoformat() if row.ends_at else None
    return ReceiptEvent(
        title=row.title, start=start, end=end, location=row.location, all_day=row.all_day
    )


def _span(
    start: dt.datetime | dt.date,
    end: dt.datetime | None,
    duration_minutes: int | None,
    tz: zoneinfo.ZoneInfo,
) -> tuple[dt.datetime, dt.datetime | None, bool]:
    if isinstance(start, dt.datetime):
        if end is None and duration_minutes is not None:
            end = start + dt.timedelta(minutes=duration_minutes)
        return start, end, False
    days = max(1, (duration_minutes or 0) // (60 * 24))
    first, after = day_bounds(start, tz, days)
    return first, after, True


async def add(ctx: Context, cmd: AgendaAdd) -> Outcome:
    starts_at, ends_at, all_day = _span(cmd.start, cmd.end, cmd.duration_minutes, ctx.tz)
    if ends_at is not None and ends_at < starts_at:
        return Outcome("rejected", "end_before_start")
    await repo.insert(
        ctx.conn, household_id=ctx.household_id, title=cmd.title, title_key=item_key(cmd.title),
        starts_at=starts_at, ends_at=ends_at, all_day=all_day, location=cmd.location,
        timezone=ctx.tz.key, user_id=ctx.user_id,
    )  # fmt: skip
    row = repo.EventRow(0, cmd.title, starts_at, ends_at, all_day, cmd.location, ctx.tz.key)
    details = {"past": True} if (ends_at or starts_at) < ctx.now else {}
    return Outcome("success", events=[receipt_event(row, ctx.tz)], details=details)


def list_range(
    cmd: AgendaList, now: dt.datetime, tz: zoneinfo.ZoneInfo
) -> tuple[dt.datetime, dt.datetime]:
    """The instants an agenda listing covers, from ``since`` up to ``until``.

    "week" is the next seven days from now; "weekend" the coming Saturday and Sunday
    (from now when the weekend has begun); "next_week" Monday to Sunday of the next
    calendar week."""
    today = now.astimezone(tz).date()
    if cmd.range == "tomorrow":
        return day_bounds(today + dt.timedelta(days=1), tz)
    if cmd.range == "week":
        return now, day_start(today + dt.timedelta(days=7), tz)
    if cmd.range == "weekend":
        saturday = today + dt.timedelta(days=(_SATURDAY - today.weekday()) % 7)
        if today.weekday() == _SUNDAY:
            saturday = today - dt.timedelta(days=1)
        since, until = day_bounds(saturday, tz, days=2)
        return max(since, now), until
    if cmd.range == "next_week":
        monday = today + dt.timedelta(days=7 - today.weekday())
        return day_bounds(monday, tz, days=7)
    if cmd.range == "day" and cmd.day is not None:
        return day_bounds(cmd.day, tz)
    return day_bounds(today, tz)


async def list_(ctx: Context, cmd: AgendaList) -> Outcome:
    if cmd.range == "day" and cmd.day is None:
        return Outcome("rejected", "missing_day")
    since, until = list_range(cmd, ctx.now, ctx.tz)
    rows = await repo.between(ctx.conn, ctx.household_id, since, until)
    return Outcome(
        "success",
        events=[receipt_event(r, ctx.tz) for r in rows],
        details={"range": cmd.range, "since": since.isoformat(), "until": until.isoformat(),
                 "count": len(rows)},
    )  # fmt: skip


async def next_(ctx: Context, cmd: AgendaNext) -> Outcome:
    if cmd.title is not None:
        # the soonest entry of that title, or containing its words ("dentist" finds
        # "Dentist appointment")
        rows, _ = await _find(ctx, cmd.title, ctx.now, ctx.now + _HORIZON)
        if not rows:
            return Outcome("not_found", "no_matching_event", details={"title": cmd.title})
        soonest = min(rows, key=lambda r: r.starts_at)
        return Outcome("success", events=[receipt_event(soonest, ctx.tz)],
                       details={"title": cmd.title})  # fmt: skip
    row = await repo.next_event(ctx.conn, ctx.household_id, ctx.now)
    if row is None:
        return Outcome("not_found", "no_upcoming_events")
    return Outcome("success", events=[receipt_event(row, ctx.tz)])


def entry_cores(key: str) -> list[str]:
    """The title an agenda entry is looked up by (an ``item_key``) less the words that
    only say it is an entry, in any language (the lexicons' ``event_nouns``, and an
    ``event_links`` word after a leading one): "dentist appointment" gives "dentist",
    "reminder to call mom" "call mom", "consulta do dentista" "dentista". For when the
    title as said finds no entry; none when no word goes."""
    words = key.split()
    folded = [fold(word) for word in words]
    cores: list[str] = []
    for lang in LANGUAGES:
        lexicon = load_lexicon(lang)
        start, end = 0, len(words)
        if end > 2 and folded[0] in lexicon.event_nouns and folded[1] in lexicon.event_links:
            start = 2  # "reminder to call mom"
        if end - start > 1 and folded[end - 1] in lexicon.event_nouns:
            end -= 1  # "dentist appointment"
        core = item_key(" ".join(words[start:end]))
        if core and core != key and core not in cores:
            cores.append(core)
    return cores


async def _find(
    ctx: Context, title: str, since: dt.datetime, until: dt.datetime
) -> tuple[list[repo.EventRow], str]:
    """Entries in [since, until) that ``title`` names, and the key that found them:
    the title's own (its entry, or those containing its words), else, when that finds
    none, one of its ``entry_cores`` that is an entry's whole title, or its core too
    ("cancel my dentist appointment" finds "dentist" and "appointment with the
    dentist", never "dentist for the kids")."""
    key = item_key(title)
    rows = await repo.find(ctx.conn, ctx.household_id, key, since, until)
    if rows:
        return rows, key
    for core in entry_cores(key):
        found = await repo.find(ctx.conn, ctx.household_id, core, since, until)
        if whole := [r for r in found if _is_titled(r.title, core)]:
            return whole, core
    return [], key


def _is_titled(title: str, core: str) -> bool:
    key = item_key(title)
    return key == core or core in entry_cores(key)


async def _find_one(
    ctx: Context, title: str, day: dt.date | None
) -> tuple[repo.EventRow | None, Outcome | None]:
    if day is not None:
        since, until = day_bounds(day, ctx.tz)
    else:
        since = day_start(ctx.now.astimezone(ctx.tz).date(), ctx.tz)
        until = since + _HORIZON
    rows, key = await _find(ctx, title, since, until)
    if not rows:
        return None, Outcome("not_found", "no_matching_event")
    exact = [r for r in rows if item_key(r.title) == key]
    candidates = exact or rows
    if len(candidates) > 1 and day is None:
        return None, Outcome(
            "rejected", "ambiguous", events=[receipt_event(r, ctx.tz) for r in candidates]
        )
    return candidates[0], None


async def remove(ctx: Context, cmd: AgendaRemove) -> Outcome:
    row, failure = await _find_one(ctx, cmd.title, cmd.day)
    if row is None:
        assert failure is not None  # noqa: S101
        return failure
    await repo.delete(ctx.conn, row.id)
    return Outcome("success", events=[receipt_event(row, ctx.tz)])


def _shifted(
    minutes: int, row: repo.EventRow, tz: zoneinfo.ZoneInfo
) -> dt.datetime | dt.date | None:
    """Where a move by ``minutes`` puts the entry: whole days on the calendar, keeping
    its time of day across a daylight-saving change ("a week later" is 3 PM again);
    None for an all-day entry moved by less than whole days."""
    local = row.starts_at.astimezone(tz)
    days, rest = divmod(minutes, _DAY_MINUTES)
    if row.all_day:
        return None if rest else local.date() + dt.timedelta(days=days)
    if rest:  # "an hour later": on the clock, as time passes
        return (row.starts_at + dt.timedelta(minutes=minutes)).astimezone(tz)
    return dt.datetime.combine(local.date() + dt.timedelta(days=days), local.time(), tzinfo=tz)


def _move_target(
    cmd: AgendaMove, row: repo.EventRow, tz: zoneinfo.ZoneInfo
) -> dt.datetime | dt.date | None:
    """Where a move puts the entry: ``new_start``, ``new_time`` on the entry's day, or
    ``shift_minutes`` from where it is (None: an all-day entry by less than a day). A
    timed entry moved to a day keeps its time ("move the dentist to Friday")."""
    if cmd.shift_minutes is not None:
        return _shifted(cmd.shift_minutes, row, tz)
    if cmd.new_time is None:
        assert cmd.new_start is not None  # noqa: S101 (the command's validator)
        if isinstance(cmd.new_start, dt.datetime) or row.all_day:
            return cmd.new_start
        local = row.starts_at.astimezone(tz)
        return dt.datetime.combine(cmd.new_start, local.time().replace(tzinfo=None), tzinfo=tz)
    local = row.starts_at.astimezone(tz)
    new_time = cmd.new_time.replace(tzinfo=None)
    target = dt.datetime.combine(local.date(), new_time, tzinfo=tz)
    if cmd.either_half and not row.all_day:
        # "move dinner to 8": the half of the day nearer the entry's own time
        other = target.replace(hour=(new_time.hour + 12) % 24)
        target = min((target, other), key=lambda moment: abs(_minutes_apart(moment, local)))
    return target


def _minutes_apart(moment: dt.datetime, other: dt.datetime) -> int:
    """Minutes between the times of day of two moments on the same day."""
    return (moment.hour * 60 + moment.minute) - (other.hour * 60 + other.minute)


async def move(ctx: Context, cmd: AgendaMove) -> Outcome:
    row, failure = await _find_one(ctx, cmd.title, cmd.day)
    if row is None:
        assert failure is not None  # noqa: S101
        return failure
    target = _move_target(cmd, row, ctx.tz)
    if target is None:  # "push the holiday back an hour"
        return Outcome("rejected", "all_day_shift", events=[receipt_event(row, ctx.tz)])
    if isinstance(target, dt.datetime):
        length = None
        if row.ends_at is not None and not row.all_day:
            length = row.ends_at - row.starts_at
        starts_at, ends_at, all_day = target, (target + length if length else None), False
    else:
        days = 1
        if row.all_day and row.ends_at is not None:
            days = max(1, (row.ends_at.astimezone(ctx.tz).date()
                           - row.starts_at.astimezone(ctx.tz).date()).days)  # fmt: skip
        starts_at, ends_at = day_bounds(target, ctx.tz, days)
        all_day = True
    if starts_at == row.starts_at and all_day == row.all_day:
        return Outcome("no_change", "same_time", events=[receipt_event(row, ctx.tz)])
    await repo.move(
        ctx.conn, row.id, starts_at=starts_at, ends_at=ends_at, all_day=all_day,
        timezone=ctx.tz.key,
    )  # fmt: skip
    moved = repo.EventRow(row.id, row.title, starts_at, ends_at, all_day, row.location, ctx.tz.key)
    return Outcome(
        "success",
        events=[receipt_event(moved, ctx.tz)],
        details={"previous": receipt_event(row, ctx.tz).model_dump()},
    )


async def proposed_move(ctx: Context, cmd: AgendaMove) -> ReceiptEvent | Outcome:
    """The entry a move by an amount of time would give, for the question that proposes
    it ("Did you want to move the dentist to Tuesday at 3 PM?"); the outcome the move
    would have when it cannot be made (no such entry, two of them, an all-day entry by
    hours). Nothing changes."""
    assert cmd.shift_minutes is not None  # noqa: S101
    row, failure = await _find_one(ctx, cmd.title, cmd.day)
    if row is None:
        assert failure is not None  # noqa: S101
        return failure
    target = _shifted(cmd.shift_minutes, row, ctx.tz)
    if target is None:
        return Outcome("rejected", "all_day_shift", events=[receipt_event(row, ctx.tz)])
    return ReceiptEvent(
        title=row.title, start=target.isoformat(), location=row.location, all_day=row.all_day
    )


HANDLERS: dict[str, Handler] = {
    "agenda.add": add,
    "agenda.list": list_,
    "agenda.next": next_,
    "agenda.remove": remove,
    "agenda.move": move,
}
