"""Households, users and lists: ids resolved once and cached by the caller."""

from __future__ import annotations

from appliance.store.db import Conn
from appliance.store.queries import queries

_Q = queries("households")


async def ensure_household(conn: Conn, name: str) -> int:
    cur = await conn.execute(_Q["ensure_household"], {"name": name})
    row = await cur.fetchone()
    assert row is not None  # noqa: S101 - the query returns one row by construction
    return int(row[0])


async def ensure_user(conn: Conn, name: str, household_id: int) -> tuple[int, int]:
    """(user id, household id); a new user joins ``household_id``."""
    cur = await conn.execute(_Q["ensure_user"], {"name": name, "household_id": household_id})
    row = await cur.fetchone()
    assert row is not None  # noqa: S101
    return int(row[0]), int(row[1])


async def ensure_list(conn: Conn, household_id: int, name: str) -> int:
    cur = await conn.execute(_Q["ensure_list"], {"household_id": household_id, "name": name})
    row = await cur.fetchone()
    assert row is not None  # noqa: S101
    return int(row[0])
