"""Claims on work that runs once per period for the whole installation."""

from __future__ import annotations

import datetime as dt

from appliance.store.db import Conn
from appliance.store.queries import queries

_Q = queries("upkeep")


async def claim_run(
    conn: Conn, name: str, min_gap: dt.timedelta, now: dt.datetime | None = None
) -> bool:
    """Claim the run of ``name`` now; False when a run started less than ``min_gap``
    ago (on this node or another)."""
    cur = await conn.execute(_Q["claim_run"], {"name": name, "min_gap": min_gap, "now": now})
    return await cur.fetchone() is not None


async def last_run(conn: Conn, name: str) -> dt.datetime | None:
    cur = await conn.execute(_Q["last_run"], {"name": name})
    row = await cur.fetchone()
    return row[0] if row else None
