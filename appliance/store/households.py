"""Households, users and lists: ids resolved once and cached by the caller."""

from __future__ import annotations

from typing import Any

from appliance.errors import StoreError
from appliance.store.db import Conn
from appliance.store.queries import queries

_Q = queries("households")


async def _ensure(conn: Conn, query: str, params: dict[str, object]) -> tuple[Any, ...]:
    """Run an insert-or-select once more when another transaction inserted the same
    row meanwhile: its insert then does nothing and the select, on a snapshot taken
    before that commit, finds nothing; the second statement sees the row."""
    for _ in range(2):
        cur = await conn.execute(_Q[query], params)
        row = await cur.fetchone()
        if row is not None:
            return tuple(row)
    raise StoreError(f"{query}: the row was created concurrently; try again")


async def ensure_household(conn: Conn, name: str) -> int:
    row = await _ensure(conn, "ensure_household", {"name": name})
    return int(row[0])


async def ensure_user(conn: Conn, name: str, household_id: int) -> tuple[int, int]:
    """(user id, household id); a new user joins ``household_id``."""
    row = await _ensure(conn, "ensure_user", {"name": name, "household_id": household_id})
    return int(row[0]), int(row[1])


async def ensure_list(conn: Conn, household_id: int, name: str) -> int:
    row = await _ensure(conn, "ensure_list", {"household_id": household_id, "name": name})
    return int(row[0])
