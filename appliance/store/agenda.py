"""Agenda rows: the repository that owns ``queries/agenda.sql``."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from psycopg.rows import TupleRow

from appliance.store.db import Conn
from appliance.store.queries import queries

_Q = queries("agenda")


@dataclass(frozen=True)
class EventRow:
    id: int
    title: str
    starts_at: dt.datetime
    ends_at: dt.datetime | None
    all_day: bool
    location: str | None
    timezone: str


def _event(row: TupleRow) -> EventRow:
    return EventRow(*row)


async def insert(
    conn: Conn,
    *,
    household_id: int,
    title: str,
    title_key: str,
    starts_at: dt.datetime,
    ends_at: dt.datetime | None,
    all_day: bool,
    location: str | None,
    timezone: str,
    user_id: int,
) -> None:
    await conn.execute(
        _Q["insert_event"],
        {"household_id": household_id, "title": title, "title_key": title_key,
         "starts_at": starts_at, "ends_at": ends_at, "all_day": all_day, "location": location,
         "timezone": timezone, "user_id": user_id},
    )  # fmt: skip


async def between(
    conn: Conn, household_id: int, since: dt.datetime, until: dt.datetime, limit: int = 50
) -> list[EventRow]:
    cur = await conn.execute(
        _Q["events_between"],
        {"household_id": household_id, "since": since, "until": until, "limit": limit},
    )
    return [_event(r) for r in await cur.fetchall()]


async def next_event(conn: Conn, household_id: int, now: dt.datetime) -> EventRow | None:
    cur = await conn.execute(_Q["next_event"], {"household_id": household_id, "now": now})
    row = await cur.fetchone()
    return _event(row) if row else None


async def find(
    conn: Conn, household_id: int, key: str, since: dt.datetime, until: dt.datetime
) -> list[EventRow]:
    """Events in [since, until) whose title is ``key`` or contains its words; locked."""
    like = key.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    cur = await conn.execute(
        _Q["find_events"],
        {"household_id": household_id, "key": key, "like": like, "since": since,
         "until": until},
    )  # fmt: skip
    return [_event(r) for r in await cur.fetchall()]


async def delete(conn: Conn, event_id: int) -> None:
    await conn.execute(_Q["delete_event"], {"id": event_id})


async def move(
    conn: Conn,
    event_id: int,
    *,
    starts_at: dt.datetime,
    ends_at: dt.datetime | None,
    all_day: bool,
    timezone: str,
) -> None:
    await conn.execute(
        _Q["move_event"],
        {"id": event_id, "starts_at": starts_at, "ends_at": ends_at, "all_day": all_day,
         "timezone": timezone},
    )  # fmt: skip
