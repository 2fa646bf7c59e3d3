"""Memory commands as actions: ``memory.add``, ``memory.edit``, ``memory.delete``.

They run inside the action service's transaction like any other command, so the
request id is claimed, the memory written and the receipt recorded together: a
retried request answers with its first receipt and writes nothing twice. The text is
embedded before the transaction (``prepare``); the write itself goes through the
memory's commit gate under row-level security (``MemoryStore.write_in``).

Receipts say what happened without the memory's id leaking into speech: ``success``
(inserted, or superseding an older memory), ``no_change`` / ``already_known`` (a
duplicate reinforced the one kept), ``not_found`` / ``no_such_memory``, ``rejected``
with the gate's reason (too short, daily cap) or ``memory_unavailable``.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import TYPE_CHECKING, Any

from appliance.actions.context import Outcome as ActionOutcome
from appliance.errors import ApplianceError
from appliance.memory.errors import MemoryInputError
from appliance.memory.model import (
    Kind,
    MemoryDraft,
    MemorySource,
    Outcome,
    PreparedWrite,
    WriteResult,
)
from appliance.protocol.commands import Command, MemoryAdd, MemoryDelete, MemoryEdit
from appliance.protocol.receipts import ReceiptItem, Source
from appliance.store.db import Conn

if TYPE_CHECKING:
    from appliance.memory.store import MemoryStore


_LOGGER = logging.getLogger(__name__)

UNAVAILABLE = "memory_unavailable"
NO_SUCH_MEMORY = "no_such_memory"


def unavailable(why: str) -> ActionOutcome:
    return ActionOutcome("rejected", f"{UNAVAILABLE}: {why}; nothing was saved")


def _source(source: Source) -> MemorySource:
    return MemorySource.VOICE if source.kind == "voice" else MemorySource.MANUAL


class MemoryActions:
    """Runs memory commands for the action service (one per node)."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    async def prepare(
        self, command: Command, source: Source, request_id: str
    ) -> PreparedWrite | ActionOutcome | None:
        """Embed what a command will write (outside any transaction): the prepared
        write, an outcome when it can be answered already, or None (nothing to embed)."""
        text: str | None = None
        kind, importance = Kind.FACT, 5
        if isinstance(command, MemoryAdd):
            text, kind, importance = command.text, Kind(command.kind), command.importance
        elif isinstance(command, MemoryEdit) and command.text is not None:
            text, importance = command.text, command.importance or 5
        if text is None:
            return None
        draft = MemoryDraft(text, kind, importance, _source(source), request_id)
        try:
            prepared = await self.store.prepare(draft)
        except MemoryInputError as err:
            return ActionOutcome("rejected", f"invalid_payload: {err.reason}: {err}")
        except ApplianceError as err:
            _LOGGER.warning("memory command %s not prepared: %s", request_id, err)
            return unavailable(str(err))
        if not isinstance(prepared, PreparedWrite):  # the gate refused it already
            return ActionOutcome("rejected", f"memory_rejected: {prepared.reason}",
                                 details={"detail": prepared.detail})  # fmt: skip
        return prepared

    async def run(
        self,
        conn: Conn,
        user_id: int,
        command: Command,
        prepared: PreparedWrite | None,
        now: dt.datetime,
    ) -> ActionOutcome:
        if isinstance(command, MemoryAdd):
            assert prepared is not None  # noqa: S101 - prepare() made it
            return await self._add(conn, user_id, command, prepared, now)
        if isinstance(command, MemoryEdit):
            return await self._edit(conn, user_id, command, prepared, now)
        if isinstance(command, MemoryDelete):
            if await self.store.delete_in(conn, user_id, command.id):
                return ActionOutcome("success", details={"memory_id": command.id})
            return ActionOutcome("not_found", NO_SUCH_MEMORY, details={"memory_id": command.id})
        msg = f"not a memory command: {command.action}"
        raise TypeError(msg)

    async def _add(
        self, conn: Conn, user_id: int, command: MemoryAdd, prepared: PreparedWrite,
        now: dt.datetime,
    ) -> ActionOutcome:  # fmt: skip
        result = await self.store.write_in(conn, user_id, prepared, now=now)
        details: dict[str, Any] = {"kind": command.kind, "text": prepared.draft.text}
        if command.stance is not None:
            details["stance"] = command.stance
        items = [ReceiptItem(name=command.subject)] if command.subject else []
        return _written(result, details, items)

    async def _edit(
        self,
        conn: Conn,
        user_id: int,
        command: MemoryEdit,
        prepared: PreparedWrite | None,
        now: dt.datetime,
    ) -> ActionOutcome:
        edit = await self.store.edit_in(
            conn, user_id, command.id, prepared, command.importance, now=now
        )
        if not edit.found or edit.old is None:
            return ActionOutcome("not_found", NO_SUCH_MEMORY, details={"memory_id": command.id})
        if edit.result is None:
            if edit.importance is None:
                return ActionOutcome("no_change", "same_memory", details={"memory_id": edit.old.id})
            return ActionOutcome(
                "success", details={"memory_id": edit.old.id, "importance": edit.importance}
            )
        details = {"kind": edit.old.kind.value, "text": prepared.draft.text if prepared else "",
                   "replaced": edit.old.id}  # fmt: skip
        return _written(edit.result, details, [])


def _written(
    result: WriteResult, details: dict[str, Any], items: list[ReceiptItem]
) -> ActionOutcome:
    details = {**details, "memory_id": result.memory_id, "memory_outcome": result.outcome.value}
    if result.superseded:
        details["superseded"] = list(result.superseded)
    if result.outcome is Outcome.REJECTED:
        reason = result.reason.value if result.reason is not None else "refused"
        return ActionOutcome("rejected", f"memory_rejected: {reason}",
                             details={**details, "detail": result.detail})  # fmt: skip
    if result.outcome is Outcome.REINFORCED and not result.superseded:
        return ActionOutcome("no_change", "already_known", items=items, details=details)
    return ActionOutcome("success", items=items, details=details)
