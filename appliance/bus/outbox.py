"""Drains the outbox to MQTT: at least once, in order, surviving broker outages.

A row is deleted only after the broker acknowledged every topic it names; a crash
in between publishes it again on restart (receipts carry ids, so consumers can
tell a repeat).
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
        self.published = 0

    def wake(self) -> None:
        """Something was committed: drain now instead of at the next poll."""
        self._wake.set()

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
        async with self._db.transaction() as conn:
            await store.outbox_delete(conn, [m.id for m in messages])
        self.published += len(messages)
        return len(messages)
