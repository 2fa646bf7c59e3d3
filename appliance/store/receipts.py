"""Receipts, request claims and the outbox: the repository of ``queries/receipts.sql``."""

from __future__ import annotations

from dataclasses import dataclass

from appliance.protocol.receipts import Receipt
from appliance.store.db import Conn
from appliance.store.queries import queries

_Q = queries("receipts")


@dataclass(frozen=True)
class OutboxMessage:
    id: int
    topics: list[str]
    payload: bytes
    qos: int
    retain: bool
    request_id: str | None = None


async def claim(conn: Conn, request_id: str) -> bool:
    """Claim a request id for this transaction; False if it was processed before."""
    cur = await conn.execute(_Q["claim_request"], {"request_id": request_id})
    return await cur.fetchone() is not None


async def original(conn: Conn, request_id: str) -> Receipt | None:
    """The receipt first given for this request id."""
    cur = await conn.execute(_Q["receipt_by_request"], {"request_id": request_id})
    row = await cur.fetchone()
    return Receipt.model_validate(row[0]) if row else None


async def record(conn: Conn, receipt: Receipt, topics: list[str]) -> None:
    """Store the receipt and queue it for publishing on ``topics``, atomically."""
    payload = receipt.to_payload()
    await conn.execute(
        _Q["record_receipt"],
        {"receipt_id": receipt.receipt_id, "request_id": receipt.request_id,
         "action": receipt.action, "status": receipt.status,
         "source_kind": receipt.source.kind, "user_name": receipt.source.user,
         "body": payload.decode(), "topics": topics, "payload": payload},
    )  # fmt: skip


async def outbox_batch(conn: Conn, limit: int) -> list[OutboxMessage]:
    cur = await conn.execute(_Q["outbox_batch"], {"limit": limit})
    return [OutboxMessage(r[0], r[1], bytes(r[2]), r[3], r[4], r[5]) for r in await cur.fetchall()]


async def outbox_delete(conn: Conn, ids: list[int]) -> None:
    await conn.execute(_Q["outbox_delete"], {"ids": ids})


async def outbox_count(conn: Conn) -> int:
    cur = await conn.execute(_Q["outbox_count"], {})
    row = await cur.fetchone()
    return int(row[0]) if row else 0
