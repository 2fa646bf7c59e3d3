"""The action service: commands in, receipts out, one transaction at a time.

Queued commands are committed together (group commit): each command's change, its
receipt and its outbox message stand or fall together, and a command that fails in
the database is retried alone, so it never takes the others down. A request id seen
before answers with the original receipt and changes nothing.
"""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from appliance.actions import agenda, shopping
from appliance.actions import memory as memory_actions
from appliance.actions.context import Context, Handler, Outcome
from appliance.errors import StoreError, StoreUnavailableError
from appliance.protocol.commands import MEMORY_ACTIONS, AgendaMove, Command, MemoryAdd
from appliance.protocol.receipts import EITHER_HALF, Receipt, ReceiptEvent, ReceiptItem, Source
from appliance.protocol.topics import Topics
from appliance.settings import Settings
from appliance.store import households
from appliance.store import receipts as receipt_store
from appliance.store import shopping as shopping_store
from appliance.store.db import Conn, Database

if TYPE_CHECKING:
    from appliance.actions.memory import MemoryActions

_LOGGER = logging.getLogger(__name__)
DRY_RUN = "dry_run"
"""A rehearsed receipt's detail (``ActionService.rehearse``): nothing was changed."""

HANDLERS: dict[str, Handler] = {**shopping.HANDLERS, **agenda.HANDLERS}
DEFAULT_HOUSEHOLD = "home"


def new_request_id() -> str:
    return str(uuid.uuid4())


@dataclass(frozen=True)
class Request:
    """One command to execute, or a rejection to record (``command`` is None)."""

    request_id: str
    source: Source
    command: Command | None = None
    rejection: str | None = None
    action: str | None = None
    """The action named by the caller, kept on a rejection."""
    details: dict[str, Any] = field(default_factory=dict)
    """Extra receipt details (e.g. the text a command was parsed from)."""
    confirm: tuple[Command, ...] = ()
    """Commands heard but not confirmed: recorded as ``needs_confirmation``, not run."""
    reply_topics: tuple[str, ...] = ()
    """More topics for the receipt (a user's own receipt topic)."""
    transient: bool = False
    """A rejection for now only (a rate limit): not recorded, so the same request id
    sent again later runs anew."""

    @classmethod
    def proposing(
        cls, request_id: str, source: Source, commands: Sequence[Command], details: dict[str, Any]
    ) -> Request:
        """A question, not a change: ``commands`` recorded as ``needs_confirmation`` and
        listed in ``details.proposal`` (what a yes would run)."""
        proposal = [c.model_dump(mode="json") for c in commands]
        return cls(
            request_id,
            source,
            confirm=tuple(commands),
            action=commands[0].action,
            details={**details, "proposal": proposal},
        )


@dataclass(frozen=True)
class Result:
    receipt: Receipt
    stored: bool
    """False: the receipt is not in the outbox and must be published by the caller."""


@dataclass(frozen=True)
class _Ids:
    user_id: int
    household_id: int
    list_id: int


class ActionService:
    """Executes commands against the store and records their receipts."""

    def __init__(
        self,
        db: Database,
        settings: Settings,
        topics: Topics,
        on_commit: Callable[[set[str]], None] | None = None,
    ) -> None:
        self._db = db
        self._settings = settings
        self._topics = topics
        self._on_commit = on_commit or (lambda _domains: None)
        self._receipt_listeners: list[Callable[[Sequence[Receipt]], None]] = []
        self._ids: dict[str, _Ids] = {}
        self.memory: MemoryActions | None = None
        """Runs ``memory.*`` commands once the memory is loaded; until then (or
        without memory) they are rejected as ``memory_unavailable``."""

    def on_receipts(self, listener: Callable[[Sequence[Receipt]], None]) -> None:
        """Call ``listener`` (on the event loop, must not block) with the receipts of
        every committed batch: what changed, after it changed."""
        self._receipt_listeners.append(listener)

    async def _resolve(self, user: str) -> _Ids:
        """Ids of a user, created on first use in the default household (own transaction)."""
        ids = self._ids.get(user)
        if ids is None:
            async with self._db.transaction() as conn:
                home = await households.ensure_household(conn, DEFAULT_HOUSEHOLD)
                user_id, household_id = await households.ensure_user(conn, user, home)
                list_id = await households.ensure_list(
                    conn, household_id, self._settings.actions.default_list
                )
            ids = self._ids[user] = _Ids(user_id, household_id, list_id)
        return ids

    async def known_items(self, user: str) -> list[str]:
        """Names of the items on the user's list, now or before (newest first)."""
        ids = await self._resolve(user)
        async with self._db.transaction() as conn:
            return await shopping_store.known_names(conn, ids.list_id)

    def topics_for(self, request: Request) -> list[str]:
        return [
            self._topics.receipt(request.request_id),
            self._topics.receipts,
            *request.reply_topics,
        ]

    async def execute(self, request: Request) -> Result:
        return (await self.execute_batch([request]))[0]

    async def execute_batch(self, requests: Sequence[Request]) -> list[Result]:
        """Execute in order and commit once (group commit).

        If the batch fails in the database, its commands run again one transaction
        each, so one bad command cannot sink the others; one that fails alone gets a
        ``rejected`` receipt. On an outage every request is rejected, unstored
        (``stored`` False): the caller publishes those receipts, and a retry with the
        same request id runs anew.
        """
        if not requests:
            return []
        refused = {
            id(r): Result(self._receipt(r, Outcome("rejected", r.rejection)), stored=False)
            for r in requests
            if r.transient and r.command is None
        }
        if refused:  # answered, not recorded: the same request id may come back
            ran = iter(await self.execute_batch([r for r in requests if id(r) not in refused]))
            return [refused.get(id(r)) or next(ran) for r in requests]
        prepared = await self._prepare(requests)
        try:
            ids = {r.source.user: await self._resolve(r.source.user) for r in requests}
            try:
                results = await self._transaction(requests, ids, prepared)
            except StoreUnavailableError:
                raise
            except Exception as err:  # noqa: BLE001 - StoreError, or a defect in one command
                _LOGGER.warning("batch of %d failed (%s); one by one", len(requests), err)
                results = [await self._alone(r, ids, prepared) for r in requests]
        except StoreError as err:
            _LOGGER.error("database failed for %d commands: %s", len(requests), err)
            unknown = isinstance(err, StoreUnavailableError) and err.maybe_committed
            return [Result(self._unavailable(r, str(err), unknown), stored=False) for r in requests]
        self._on_commit(
            {
                r.receipt.action.partition(".")[0]
                for r in results
                if r.receipt.status == "success" and r.receipt.action and not r.receipt.duplicate
            }
        )
        receipts = [r.receipt for r in results]
        for listener in self._receipt_listeners:
            listener(receipts)
        return results

    async def rehearse(self, requests: Sequence[Request]) -> list[Receipt]:
        """The receipts ``requests`` would get now, with nothing changed: they run in
        one transaction that is then rolled back, nothing is published, and no listener
        hears of them (``appliance replay --dry-run``). Each receipt says so in its
        details (``dry_run``); its request id is still free for a real run."""
        if not requests:
            return []
        prepared = await self._prepare(requests)
        try:
            ids = {r.source.user: await self._resolve(r.source.user) for r in requests}
            await self._transaction(requests, ids, prepared, rehearse=True)
        except _RolledBack as rolled_back:
            results = rolled_back.results
        except StoreError as err:
            _LOGGER.error("database failed for %d rehearsed commands: %s", len(requests), err)
            return [self._unavailable(r, str(err), outcome_unknown=False) for r in requests]
        return [
            r.receipt.model_copy(update={"details": {**r.receipt.details, DRY_RUN: True}})
            for r in results
        ]

    async def _prepare(self, requests: Sequence[Request]) -> dict[str, Any]:
        """Work a memory command needs before its transaction (embedding the text),
        by request id: a prepared write, or the outcome when it cannot run."""
        prepared: dict[str, Any] = {}
        for request in requests:
            command = request.command
            if command is None or request.confirm or command.action not in MEMORY_ACTIONS:
                continue
            if self.memory is None:
                prepared[request.request_id] = memory_actions.unavailable(
                    "memory is off or still loading"
                )
                continue
            prepared[request.request_id] = await self.memory.prepare(
                command, request.source, request.request_id
            )
        return prepared

    async def _transaction(
        self,
        requests: Sequence[Request],
        ids: dict[str, _Ids],
        prepared: dict[str, Any],
        *,
        rehearse: bool = False,
    ) -> list[Result]:
        """``requests`` in one transaction; ``rehearse``: rolled back, the results
        raised with ``_RolledBack``."""
        now = dt.datetime.now(self._settings.tz)
        async with self._db.transaction() as conn, conn.pipeline():
            # Pipeline mode: statements whose results nobody reads (inserts, the
            # receipt) travel with the next query instead of costing a round trip each.
            results = [
                await self._one(conn, r, ids[r.source.user], now, prepared.get(r.request_id))
                for r in requests
            ]
            if rehearse:
                raise _RolledBack(results)
            return results

    async def _alone(
        self, request: Request, ids: dict[str, _Ids], prepared: dict[str, Any]
    ) -> Result:
        try:
            return (await self._transaction([request], ids, prepared))[0]
        except StoreUnavailableError:
            raise
        except StoreError as err:
            _LOGGER.error("command %s failed in the database: %s", _name(request), err)
            receipt = self._receipt(request, Outcome("rejected", f"database_error: {err}"))
        except Exception:
            # A defect must not stop the node: this command is refused, the rest go on.
            _LOGGER.exception("command %s failed", _name(request))
            receipt = self._receipt(
                request, Outcome("rejected", "internal_error: nothing was changed")
            )
        async with self._db.transaction() as conn:
            if await receipt_store.claim(conn, request.request_id):
                await receipt_store.record(conn, receipt, self.topics_for(request))
                return Result(receipt, stored=True)
            return await self._duplicate(conn, request)

    async def _one(
        self, conn: Conn, request: Request, ids: _Ids, now: dt.datetime, prepared: Any
    ) -> Result:
        if not await receipt_store.claim(conn, request.request_id):
            return await self._duplicate(conn, request)
        outcome = await self._outcome(conn, request, ids, now, prepared)
        receipt = self._receipt(request, outcome)
        await receipt_store.record(conn, receipt, self.topics_for(request))
        return Result(receipt, stored=True)

    async def _outcome(
        self, conn: Conn, request: Request, ids: _Ids, now: dt.datetime, prepared: Any
    ) -> Outcome:
        ctx = Context(conn, ids.household_id, ids.list_id, ids.user_id, self._settings.tz, now)
        if request.confirm:
            return await _proposal(ctx, request.confirm)
        if request.command is None:
            return Outcome("rejected", request.rejection or "invalid_command")
        if request.command.action in MEMORY_ACTIONS:
            if isinstance(prepared, Outcome):
                return prepared
            assert self.memory is not None  # noqa: S101 - else prepared is an Outcome
            return await self.memory.run(conn, ids.user_id, request.command, prepared, now)
        handler = HANDLERS[request.command.action]
        return await handler(ctx, request.command)

    async def _duplicate(self, conn: Conn, request: Request) -> Result:
        original = await receipt_store.original(conn, request.request_id)
        if original is None:
            # Claimed by a transaction that recorded nothing: cannot happen, since the
            # claim and the receipt commit together. Answer rather than guess.
            receipt = self._receipt(request, Outcome("rejected", "request_in_progress"))
            return Result(receipt, stored=False)
        return Result(original.model_copy(update={"duplicate": True}), stored=False)

    def _receipt(self, request: Request, outcome: Outcome) -> Receipt:
        action = request.command.action if request.command is not None else request.action
        return Receipt(
            request_id=request.request_id,
            action=action,
            status=outcome.status,
            reason=outcome.reason,
            items=outcome.items,
            events=outcome.events,
            source=request.source,
            details={**request.details, **outcome.details},
        )

    def _unavailable(self, request: Request, why: str, outcome_unknown: bool) -> Receipt:
        consequence = (
            "the outcome is unknown: resend with the same request_id to learn it"
            if outcome_unknown
            else "nothing was changed"
        )
        return self._receipt(
            request, Outcome("rejected", f"database_unavailable: {why}; {consequence}")
        )


class _RolledBack(Exception):
    """Raised in a rehearsal's transaction to roll it back, with its results."""

    def __init__(self, results: list[Result]) -> None:
        super().__init__("rehearsal rolled back")
        self.results = results


def _name(request: Request) -> str | None:
    return request.command.action if request.command is not None else request.action


async def _proposal(ctx: Context, commands: Sequence[Command]) -> Outcome:
    """A ``needs_confirmation`` outcome naming what would be done. A move by an amount
    of time names where the entry would go, or says why it cannot be moved (no such
    entry, two of them): then there is nothing to ask."""
    items: list[ReceiptItem] = []
    events: list[ReceiptEvent] = []
    details: dict[str, Any] = {}
    for command in commands:
        if isinstance(command, MemoryAdd):
            if command.subject:
                items.append(ReceiptItem(name=command.subject))
            if command.stance:
                details["stance"] = command.stance
        item = getattr(command, "item", None)
        if isinstance(item, str):
            items.append(ReceiptItem(name=item, quantity=getattr(command, "quantity", None),
                                     unit=getattr(command, "unit", None)))  # fmt: skip
        if isinstance(command, AgendaMove) and command.new_time is not None:
            # a time on the entry's own day: no date to give the proposed event
            details["new_time"] = command.new_time.isoformat(timespec="minutes")
            if command.either_half:  # "move dinner to 8": its half is the action's to take
                details[EITHER_HALF] = True
        if isinstance(command, AgendaMove) and command.shift_minutes is not None:
            found = await agenda.proposed_move(ctx, command)  # "push the dentist back a week"
            if isinstance(found, Outcome):
                return found
            events.append(found)
            continue
        title = getattr(command, "title", None)
        start = getattr(command, "start", None) or getattr(command, "new_start", None)
        if isinstance(title, str):
            events.append(ReceiptEvent(title=title, start=start.isoformat() if start else "",
                                       location=getattr(command, "location", None)))  # fmt: skip
    return Outcome(
        "needs_confirmation", "not_confirmed", items=items, events=events, details=details
    )
