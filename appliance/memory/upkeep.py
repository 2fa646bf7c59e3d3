"""The nightly memory upkeep the node schedules itself.

At ``memory.upkeep_at`` (household time) every memory decays to now, profiles are
rebuilt and old diary entries are purged (``MemoryStore.maintain``,
``EpisodeDiary.purge``). Several nodes may share one database: each run is claimed in
PostgreSQL first (``store.upkeep.claim_run``), so one node runs it and the others
skip it. A node that was off at that hour catches up at start when the last run is
more than a day and a half old.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
from collections.abc import Callable

from appliance.errors import ApplianceError
from appliance.memory.episodes import EpisodeDiary
from appliance.memory.store import MemoryStore
from appliance.store.db import Database
from appliance.store.upkeep import claim_run, last_run

_LOGGER = logging.getLogger(__name__)

RUN_NAME = "memory-upkeep"
MIN_GAP = dt.timedelta(hours=20)
"""A run claimed within this of the previous one is skipped (another node ran it)."""
CATCH_UP_AFTER = dt.timedelta(hours=36)


def next_run(now: dt.datetime, at: dt.time) -> dt.datetime:
    """The next ``at`` (local to ``now``'s zone) after ``now``."""
    today = dt.datetime.combine(now.date(), at, tzinfo=now.tzinfo)
    return today if today > now else today + dt.timedelta(days=1)


class NightlyUpkeep:
    def __init__(
        self,
        db: Database,
        store: MemoryStore,
        diary: EpisodeDiary | None,
        *,
        at: dt.time,
        timezone: dt.tzinfo,
        clock: Callable[[], dt.datetime] | None = None,
    ) -> None:
        self._db = db
        self._store = store
        self._diary = diary
        self._at = at
        self._clock = clock or (lambda: dt.datetime.now(timezone))

    async def run_once(self) -> bool:
        """Run the upkeep unless a node ran it within ``MIN_GAP``; True if it ran here."""
        async with self._db.transaction() as conn:
            if not await claim_run(conn, RUN_NAME, MIN_GAP):
                _LOGGER.info("memory upkeep: already run by a node within %s", MIN_GAP)
                return False
        report = await self._store.maintain()
        purged = await self._diary.purge() if self._diary is not None else 0
        _LOGGER.info(
            "memory upkeep done: %d memories of %d users decayed, %d diary entries purged",
            report.decayed, report.users, purged,
        )  # fmt: skip
        return True

    async def overdue(self) -> bool:
        """A previous run exists and is older than ``CATCH_UP_AFTER``."""
        async with self._db.transaction() as conn:
            last = await last_run(conn, RUN_NAME)
        return last is not None and self._clock() - last > CATCH_UP_AFTER

    async def run(self, stop: asyncio.Event) -> None:
        """Until ``stop``: catch up if overdue, then run every night at ``at``."""
        with contextlib.suppress(ApplianceError):
            if await self.overdue():
                await self._guarded()
        while not stop.is_set():
            now = self._clock()
            wait = (next_run(now, self._at) - now).total_seconds()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=wait)
                return
            await self._guarded()

    async def _guarded(self) -> None:
        try:
            await self.run_once()
        except ApplianceError as err:
            _LOGGER.error("memory upkeep failed (it runs again tomorrow): %s", err)
