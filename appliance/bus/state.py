"""Retained state topics: the current shopping list and the coming agenda.

State is derived from the database, so it is never queued: after a change (debounced)
and after every reconnection, the node reads it afresh and publishes it retained.
Reading and publishing one domain's state happen under an installation-wide lock
(``Database.exclusive``): with several nodes on one database, a node's older reading
can never be published after a newer one.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
from typing import Any

from appliance.actions.agenda import day_bounds, receipt_event
from appliance.aio import wait_any
from appliance.bus.mqtt import Bus
from appliance.errors import BusError, StoreError
from appliance.ha.discovery import fit_items, shopping_state_payload
from appliance.protocol.topics import Topics
from appliance.settings import Settings
from appliance.store import agenda, households, shopping
from appliance.store.db import Database

_LOGGER = logging.getLogger(__name__)
STORE_RETRY_S = 2.0
"""A state that could not be read (database away, a serialization conflict) is tried
again this much later."""
DOMAINS = ("shopping", "agenda")
_STATE_ROWS = 400


class StatePublisher:
    def __init__(self, db: Database, bus: Bus, settings: Settings, topics: Topics) -> None:
        self._db = db
        self._bus = bus
        self._settings = settings
        self._topics = topics
        self._dirty: set[str] = set()
        self._wake = asyncio.Event()

    def changed(self, domains: set[str]) -> None:
        if domains:
            self._dirty |= domains
            self._wake.set()

    def changed_all(self) -> None:
        self.changed(set(DOMAINS))

    async def run(self, stop: asyncio.Event) -> None:
        debounce = self._settings.actions.state_debounce_ms / 1000
        while not stop.is_set():
            await wait_any(self._wake, stop)
            if stop.is_set():
                break
            await asyncio.sleep(debounce)
            self._wake.clear()
            dirty, self._dirty = self._dirty, set()
            try:
                await self.publish(dirty)
            except BusError as err:
                _LOGGER.warning("state not published (%s); will retry on reconnect", err)
                self._dirty |= dirty
            except StoreError as err:
                _LOGGER.warning("state not read (%s); will retry", err)
                self._dirty |= dirty
                asyncio.get_running_loop().call_later(STORE_RETRY_S, self._wake.set)

    async def publish(self, domains: set[str]) -> None:
        if not self._bus.connected.is_set():
            msg = "not connected"
            raise BusError(msg)
        if "shopping" in domains:
            async with self._db.exclusive(f"state:{self._topics.shopping_state}"):
                payload = await self.shopping_state()
                await self._bus.publish(
                    self._topics.shopping_state, json.dumps(payload), retain=True
                )
        if "agenda" in domains:
            async with self._db.exclusive(f"state:{self._topics.agenda_state}"):
                payload = await self.agenda_state()
                await self._bus.publish(self._topics.agenda_state, json.dumps(payload), retain=True)

    async def shopping_state(self) -> dict[str, Any]:
        async with self._db.transaction() as conn:
            # One snapshot for the items and the count (a commit in between would give
            # "open": 1 with no items).
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            home = await households.ensure_household(conn, "home")
            list_id = await households.ensure_list(conn, home, self._settings.actions.default_list)
            # More than fit in the retained payload are never needed.
            rows = await shopping.list_items(
                conn, list_id, include_completed=True, limit=_STATE_ROWS
            )
            open_count = await shopping.count_open(conn, list_id)
        items = [
            {"name": r.name, "quantity": r.quantity, "unit": r.unit, "completed": r.completed}
            for r in rows
        ]
        payload = shopping_state_payload(items, _now_iso())
        payload["open"] = open_count
        payload["truncated"] = payload["truncated"] or len(rows) == _STATE_ROWS
        return payload

    async def agenda_state(self) -> dict[str, Any]:
        tz = self._settings.tz
        now = dt.datetime.now(tz)
        today_start, today_end = day_bounds(now.date(), tz)
        _, horizon = day_bounds(now.date(), tz, self._settings.actions.state_upcoming_days)
        async with self._db.transaction() as conn:
            home = await households.ensure_household(conn, "home")
            nxt = await agenda.next_event(conn, home, now)
            today = await agenda.between(conn, home, today_start, today_end)
            upcoming = await agenda.between(conn, home, now, horizon, limit=30)
        return {
            "next": receipt_event(nxt, tz).model_dump() if nxt else None,
            "today": fit_items([receipt_event(r, tz).model_dump() for r in today])[0],
            "upcoming": [receipt_event(r, tz).model_dump() for r in upcoming],
            "updated_at": _now_iso(),
        }


def _now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
