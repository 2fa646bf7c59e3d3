"""Drains the outbox to MQTT: at least once, in order, surviving broker outages.

A row is deleted only after the broker acknowledged every topic it names; a crash
in between publishes it again on restart (receipts carry ids, so consumers can
tell a repeat).

Several nodes may drain one database's outbox: a batch is locked (``FOR UPDATE SKIP
LOCKED``) from the moment it is read until it is deleted, in one transaction, so
each message is published by one node; if that node dies mid-batch, its lock goes
with its connection and another node publishes the batch.
"""

from __future__ import annotations

import asyncio
import logging

from appliance.aio import wait_any
from appliance.bus.mqtt import Bus
from appliance.errors import BusError, StoreError
from appliance.store import receipts as store
from appliance.store.db import Database

_LOGGER = logging.getLogger(__name__)


class OutboxPublisher:
    def __init__(self, db: Database, bus: Bus, *, batch: int = 100, poll_seconds: float = 2.0):
        self._db = db
        self._bus = bus
        self._batch = batch
        self._poll = poll_seconds
        self._wake = asyncio.Event()
        self._waiters: dict[str, list[asyncio.Future[None]]] = {}
        self.published = 0

    def wake(self) -> None:
        """Something was committed: drain now instead of at the next poll."""
        self._wake.set()

    def expect(self, request_id: str) -> asyncio.Future[None]:
        """A future done once the receipt of ``request_id`` was acknowledged by the
        broker. Ask before the receipt is committed (it may be published at once);
        cancel it when no longer interested."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.setdefault(request_id, []).append(future)
        future.add_done_callback(lambda f: self._forget(request_id, f))
        return future

    def _forget(self, request_id: str, future: asyncio.Future[None]) -> None:
        waiting = self._waiters.get(request_id)
        if waiting is not None and future in waiting:
            waiting.remove(future)
            if not waiting:
                del self._waiters[request_id]

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            if not self._bus.connected.is_set():
                await wait_any(stop, self._bus.connected, timeout=self._poll)
                continue
            try:
                drained = await self.drain_once()
            except (BusError, StoreError) as err:
                _LOGGER.warning("outbox not drained: %s", err)
                await wait_any(stop, timeout=min(self._poll, 1.0))
                continue
            if drained < self._batch:
                await wait_any(stop, self._wake, timeout=self._poll)
                self._wake.clear()

    async def drain_once(self) -> int:
        """Publish one batch; return how many messages it held."""
        async with self._db.transaction() as conn:
            messages = await store.outbox_batch(conn, self._batch)
            if not messages:
                return 0
            outcomes = await asyncio.gather(
                *(
                    self._bus.publish(topic, m.payload, qos=m.qos, retain=m.retain)
                    for m in messages
                    for topic in m.topics
                ),
                return_exceptions=True,
            )
            for outcome in outcomes:
                if isinstance(outcome, BaseException):
                    raise outcome
            await store.outbox_delete(conn, [m.id for m in messages])
        self.published += len(messages)
        for m in messages:
            for future in list(self._waiters.get(m.request_id or "", ())):
                if not future.done():
                    future.set_result(None)
        return len(messages)
