"""Shopping list rows: the repository that owns ``queries/shopping.sql``."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from psycopg.rows import TupleRow

from appliance.store.db import Conn
from appliance.store.queries import queries

_Q = queries("shopping")


@dataclass(frozen=True)
class ItemRow:
    id: int
    name: str
    quantity: float | None
    unit: str | None
    completed: bool


def _qty(value: Decimal | None) -> float | None:
    return float(value) if value is not None else None


def _item(row: TupleRow) -> ItemRow:
    return ItemRow(row[0], row[1], _qty(row[2]), row[3], row[4])


async def find(conn: Conn, list_id: int, key: str, *, lock: bool = True) -> ItemRow | None:
    """The item with this key, locked for the rest of the transaction (``lock=False``:
    for reading only)."""
    query = _Q["find_item"] if lock else _Q["peek_item"]
    cur = await conn.execute(query, {"list_id": list_id, "key": key})
    row = await cur.fetchone()
    return _item(row) if row else None


async def insert(
    conn: Conn,
    *,
    list_id: int,
    name: str,
    key: str,
    quantity: float | None,
    unit: str | None,
    user_id: int,
) -> None:
    await conn.execute(
        _Q["insert_item"],
        {"list_id": list_id, "name": name, "key": key, "quantity": quantity, "unit": unit,
         "user_id": user_id},
    )  # fmt: skip


async def reopen(
    conn: Conn, item_id: int, *, name: str, quantity: float | None, unit: str | None, user_id: int
) -> None:
    await conn.execute(
        _Q["reopen_item"],
        {"id": item_id, "name": name, "quantity": quantity, "unit": unit, "user_id": user_id},
    )


async def set_quantity(conn: Conn, item_id: int, quantity: float | None, unit: str | None) -> None:
    await conn.execute(_Q["set_quantity"], {"id": item_id, "quantity": quantity, "unit": unit})


async def set_completed(conn: Conn, item_id: int, *, completed: bool, user_id: int) -> None:
    await conn.execute(
        _Q["set_completed"], {"id": item_id, "completed": completed, "user_id": user_id}
    )


async def delete(conn: Conn, item_id: int) -> None:
    await conn.execute(_Q["delete_item"], {"id": item_id})


async def list_items(
    conn: Conn, list_id: int, *, include_completed: bool, limit: int = 1000
) -> list[ItemRow]:
    """Open items first, oldest first; at most ``limit``."""
    cur = await conn.execute(
        _Q["list_items"],
        {"list_id": list_id, "include_completed": include_completed, "limit": limit},
    )
    return [ItemRow(0, r[0], _qty(r[1]), r[2], r[3]) for r in await cur.fetchall()]


async def clear_completed(conn: Conn, list_id: int) -> list[ItemRow]:
    cur = await conn.execute(_Q["clear_completed"], {"list_id": list_id})
    return [ItemRow(0, r[0], _qty(r[1]), r[2], r[3]) for r in await cur.fetchall()]


async def clear_all(conn: Conn, list_id: int) -> list[ItemRow]:
    """Delete every item of the list, open or checked off; the deleted ones, oldest first."""
    cur = await conn.execute(_Q["clear_all"], {"list_id": list_id})
    rows = sorted(await cur.fetchall(), key=lambda r: r[0])
    return [ItemRow(r[0], r[1], _qty(r[2]), r[3], r[4]) for r in rows]


async def count_open(conn: Conn, list_id: int) -> int:
    cur = await conn.execute(_Q["count_open"], {"list_id": list_id})
    row = await cur.fetchone()
    return int(row[0]) if row else 0


async def known_names(conn: Conn, list_id: int, limit: int = 200) -> list[str]:
    cur = await conn.execute(_Q["known_names"], {"list_id": list_id, "limit": limit})
    return [str(r[0]) for r in await cur.fetchall()]
