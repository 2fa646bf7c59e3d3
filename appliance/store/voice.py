"""Voice sessions claimed by a node (several nodes, one database)."""

from __future__ import annotations

from appliance.store.db import Conn
from appliance.store.queries import queries

_Q = queries("voice")


async def claim_session(conn: Conn, session_id: str, site: str, node_id: str) -> bool:
    """Take the session for ``node_id``; False when another node took it first."""
    cur = await conn.execute(
        _Q["claim_session"], {"session_id": session_id, "site": site, "node_id": node_id}
    )
    return await cur.fetchone() is not None


async def forget_old_sessions(conn: Conn) -> None:
    await conn.execute(_Q["forget_old_sessions"], {})
