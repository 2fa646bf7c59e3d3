"""Memory rows: the repository that owns ``queries/memory.sql``.

Every function but ``find_user``, ``all_users`` and the reindex DDL expects a
connection inside ``enter_scope`` (the memory role, one user), and passes the user
id again for the planner; row-level security is what guarantees it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from psycopg import sql
from psycopg.rows import TupleRow

from appliance.memory.embedder import Vector, vector_literal
from appliance.memory.gate import Neighbour
from appliance.memory.model import IndexState, Kind, Memory, MemoryDraft, MemorySource
from appliance.store import households
from appliance.store.db import Conn
from appliance.store.queries import queries

_Q = queries("memory")


def _memory(row: TupleRow | Sequence[Any]) -> Memory:
    return Memory(
        id=int(row[0]),
        kind=Kind(row[1]),
        text=row[2],
        source=MemorySource(row[3]),
        source_ref=row[4],
        importance=int(row[5]),
        strength=float(row[6]),
        reinforcements=int(row[7]),
        created_at=row[8],
        last_accessed_at=row[9],
        last_reinforced_at=row[10],
        superseded_at=row[11],
        superseded_by=row[12],
        embedding_model=row[13],
        embedding_dim=int(row[14]),
    )


async def _scalar(conn: Conn, name: str, params: Mapping[str, object]) -> Any:
    cur = await conn.execute(_Q[name], params)
    row = await cur.fetchone()
    return row[0] if row else None


# --- users and scope ---------------------------------------------------------------
async def find_user(conn: Conn, name: str) -> int | None:
    found = await _scalar(conn, "find_user", {"name": name})
    return int(found) if found is not None else None


class UserIds:
    """Users' ids by name, cached (a user is never renamed or deleted while the node
    runs); a new user joins ``household``, as actions do."""

    def __init__(self, household: str) -> None:
        self._household = household
        self._ids: dict[str, int] = {}

    async def find(self, conn: Conn, name: str) -> int | None:
        found = self._ids.get(name)
        if found is None:
            found = await find_user(conn, name)
            if found is not None:
                self._ids[name] = found
        return found

    async def ensure(self, conn: Conn, name: str) -> int:
        found = await self.find(conn, name)
        if found is None:
            home = await households.ensure_household(conn, self._household)
            found, _ = await households.ensure_user(conn, name, home)
            self._ids[name] = found
        return found


async def all_users(conn: Conn) -> list[tuple[int, str]]:
    cur = await conn.execute(_Q["all_users"], {})
    return [(int(r[0]), str(r[1])) for r in await cur.fetchall()]


async def enter_scope(conn: Conn, user_id: int | None) -> None:
    """The memory role and this user, until the transaction ends."""
    await conn.execute(_Q["enter_scope"], {"user_id": user_id})


async def leave_scope(conn: Conn) -> None:
    await conn.execute(_Q["leave_scope"], {})


async def search_options(conn: Conn) -> None:
    await conn.execute(_Q["search_options"], {})


async def index_state(conn: Conn, *, lock: Literal["share", "update"] | None = None) -> IndexState:
    """The model of the stored vectors; ``lock`` holds its row until commit."""
    name = {None: "index_state", "share": "share_index", "update": "lock_index"}[lock]
    cur = await conn.execute(_Q[name], {})
    row = await cur.fetchone()
    if row is None:  # pragma: no cover - the migration inserts the row
        msg = "memory_index has no row"
        raise LookupError(msg)
    return IndexState(row[0], int(row[1]), row[2], row[3])


async def lock_user(conn: Conn, user_id: int) -> None:
    await conn.execute(_Q["lock_user"], {"user_id": user_id})


# --- writing -----------------------------------------------------------------------
async def neighbours(
    conn: Conn, user_id: int, kind: Kind, *, embedding: Vector, neutral: Vector, limit: int
) -> list[Neighbour]:
    cur = await conn.execute(
        _Q["neighbours"],
        {"user_id": user_id, "kind": kind.value, "embedding": vector_literal(embedding),
         "neutral": vector_literal(neutral), "limit": limit},
    )  # fmt: skip
    return [Neighbour(int(r[0]), r[1], float(r[2]), float(r[3])) for r in await cur.fetchall()]


async def count_recent(conn: Conn, user_id: int, now: dt.datetime | None) -> int:
    return int(await _scalar(conn, "count_recent", {"user_id": user_id, "now": now}))


async def insert(
    conn: Conn,
    user_id: int,
    draft: MemoryDraft,
    *,
    embedding: Vector,
    model: str,
    now: dt.datetime | None,
) -> int:
    found = await _scalar(
        conn,
        "insert_memory",
        {"user_id": user_id, "kind": draft.kind.value, "text": draft.text,
         "source": draft.source.value, "source_ref": draft.source_ref,
         "importance": draft.importance, "now": now, "model": model,
         "dimension": int(embedding.shape[0]), "embedding": vector_literal(embedding)},
    )  # fmt: skip
    return int(found)


async def set_importance(conn: Conn, user_id: int, memory_id: int, importance: int) -> bool:
    cur = await conn.execute(
        _Q["set_importance"], {"user_id": user_id, "id": memory_id, "importance": importance}
    )
    return await cur.fetchone() is not None


async def supersede(
    conn: Conn, user_id: int, ids: Sequence[int], by: int, now: dt.datetime | None
) -> None:
    await conn.execute(
        _Q["supersede"], {"user_id": user_id, "ids": list(ids), "by": by, "now": now}
    )


async def reinforce(
    conn: Conn,
    user_id: int,
    ids: Sequence[int],
    *,
    rates: Mapping[Kind, float],
    boost: float,
    max_strength: float,
    accessed: bool,
    importance: int | None,
    now: dt.datetime | None,
) -> list[int]:
    cur = await conn.execute(
        _Q["reinforce"],
        {"user_id": user_id, "ids": list(ids), "kinds": [k.value for k in rates],
         "rates": list(rates.values()), "boost": boost, "max_strength": max_strength,
         "accessed": accessed, "importance": importance, "now": now},
    )  # fmt: skip
    return sorted(int(r[0]) for r in await cur.fetchall())


async def decay(
    conn: Conn, user_id: int, rates: Mapping[Kind, float], now: dt.datetime | None
) -> int:
    cur = await conn.execute(
        _Q["decay"],
        {"user_id": user_id, "kinds": [k.value for k in rates], "rates": list(rates.values()),
         "now": now},
    )  # fmt: skip
    return cur.rowcount


async def delete(conn: Conn, user_id: int, memory_id: int) -> bool:
    return await _scalar(conn, "delete_memory", {"user_id": user_id, "id": memory_id}) is not None


# --- reading -----------------------------------------------------------------------
async def list_memories(
    conn: Conn, user_id: int, *, kind: Kind | None, include_superseded: bool, limit: int
) -> list[Memory]:
    cur = await conn.execute(
        _Q["list_memories"],
        {"user_id": user_id, "kind": kind.value if kind else None,
         "include_superseded": include_superseded, "limit": limit},
    )  # fmt: skip
    return [_memory(r) for r in await cur.fetchall()]


async def get(conn: Conn, user_id: int, memory_id: int) -> Memory | None:
    cur = await conn.execute(_Q["get_memory"], {"user_id": user_id, "id": memory_id})
    row = await cur.fetchone()
    return _memory(row) if row else None


async def search_vector(
    conn: Conn, user_id: int, embedding: Vector, max_distance: float, limit: int
) -> list[tuple[Memory, float]]:
    cur = await conn.execute(
        _Q["search_vector"],
        {"user_id": user_id, "embedding": vector_literal(embedding),
         "max_distance": max_distance, "limit": limit},
    )  # fmt: skip
    return [(_memory(r), float(r[15])) for r in await cur.fetchall()]


async def search_terms(
    conn: Conn, user_id: int, query: str, limit: int
) -> list[tuple[Memory, float]]:
    cur = await conn.execute(
        _Q["search_terms"], {"user_id": user_id, "query": query, "limit": limit}
    )
    return [(_memory(r), float(r[15])) for r in await cur.fetchall()]


# --- the profile -------------------------------------------------------------------
async def profile_candidates(
    conn: Conn, user_id: int, limit: int
) -> list[tuple[int, Kind, str, int, float]]:
    cur = await conn.execute(_Q["profile_candidates"], {"user_id": user_id, "limit": limit})
    return [(int(r[0]), Kind(r[1]), r[2], int(r[3]), float(r[4])) for r in await cur.fetchall()]


async def save_profile(
    conn: Conn, user_id: int, text: str, memory_ids: Sequence[int], now: dt.datetime | None
) -> dt.datetime:
    built: dt.datetime = await _scalar(
        conn,
        "save_profile",
        {"user_id": user_id, "text": text, "memory_ids": list(memory_ids), "now": now},
    )
    return built


async def get_profile(conn: Conn, user_id: int) -> tuple[str, list[int], dt.datetime] | None:
    cur = await conn.execute(_Q["get_profile"], {"user_id": user_id})
    row = await cur.fetchone()
    return (row[0], [int(i) for i in row[1]], row[2]) if row else None


# --- reindexing (as the owner, outside any user scope unless said) -----------------
async def prepare_next_column(conn: Conn, model: str, dimension: int) -> None:
    """A fresh, empty ``embedding_next`` column for ``model``."""
    await conn.execute(_Q["drop_next_column"])
    ddl = sql.SQL(_Q["add_next_column"]).format(dimension=sql.Literal(int(dimension)))
    await conn.execute(ddl)
    await conn.execute(_Q["begin_reindex"], {"model": model, "dimension": dimension})


async def cancel_reindex(conn: Conn) -> None:
    await conn.execute(_Q["drop_next_column"])
    await conn.execute(_Q["cancel_reindex"])


async def no_statement_timeout(conn: Conn) -> None:
    await conn.execute(_Q["no_statement_timeout"])


async def pending_embeddings(conn: Conn, user_id: int, limit: int) -> list[tuple[int, str]]:
    """(scoped) Rows of this user not yet embedded with the next model."""
    cur = await conn.execute(_Q["pending_embeddings"], {"user_id": user_id, "limit": limit})
    return [(int(r[0]), str(r[1])) for r in await cur.fetchall()]


async def set_next_embeddings(
    conn: Conn, user_id: int, ids: Sequence[int], embeddings: Vector
) -> None:
    """(scoped) Store the next model's vectors of these rows."""
    await conn.execute(
        _Q["set_next_embeddings"],
        {"user_id": user_id, "ids": list(ids),
         "embeddings": [vector_literal(v) for v in embeddings]},
    )  # fmt: skip


async def set_row_model(conn: Conn, user_id: int, model: str, dimension: int) -> None:
    """(scoped) Every row of this user now holds ``model``'s vectors."""
    await conn.execute(
        _Q["set_row_model"], {"user_id": user_id, "model": model, "dimension": dimension}
    )


async def lock_memories(conn: Conn) -> None:
    await conn.execute(_Q["lock_memories"])


async def swap_embedding_column(conn: Conn, model: str, dimension: int) -> None:
    await conn.execute(_Q["swap_embedding_column"])
    await conn.execute(_Q["finish_reindex"], {"model": model, "dimension": dimension})
