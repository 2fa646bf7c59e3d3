"""Purchases become memories: items checked off the list, with the day.

The list change has committed (with its receipt) before anything here runs; the
memory is written afterwards in its own transaction, in a task, so a memory failure
(embedder, database) is logged and never blocks or undoes the list change.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import zoneinfo
from collections.abc import Sequence

from appliance.errors import StoreError
from appliance.memory.errors import MemoryStoreError
from appliance.memory.store import MemoryStore
from appliance.narration.phrases import item_phrase
from appliance.protocol.receipts import Receipt, ReceiptItem

_LOGGER = logging.getLogger(__name__)

PURCHASE_IMPORTANCE = 3
CLOSE_WAIT_S = 5.0
"""At shutdown, how long writes in progress may take."""
_TEXT = {
    "en": "Bought {items} on {day:%A} {day.day} {day:%B} {day.year}.",
    "pt": "Comprei {items} em {day.day:02d}/{day.month:02d}/{day.year}.",
}
_AND = {"en": " and ", "pt": " e "}


def purchase_text(items: Sequence[str], day: dt.date, lang: str) -> str:
    """The memory of buying ``items`` on ``day``, in the household's language."""
    lang = "pt" if lang.startswith("pt") else "en"
    names = list(items)
    joined = names[0] if len(names) == 1 else ", ".join(names[:-1]) + _AND[lang] + names[-1]
    return _TEXT[lang].format(items=joined, day=day)


def _bought(receipt: Receipt, lang: str) -> list[str]:
    """What a receipt says was bought: its items' names, or the amount said of its one
    item ("I bought two apples": "2 apples", whatever is left of them on the list)."""
    said = receipt.details.get("bought")
    if len(receipt.items) == 1 and isinstance(said, dict):
        item = receipt.items[0]
        try:
            amount = ReceiptItem(name=item.name, quantity=said.get("quantity"),
                                 unit=said.get("unit"))  # fmt: skip
        except ValueError:
            return [item.name]
        return [item_phrase(amount, "pt" if lang.startswith("pt") else "en")]
    return [i.name for i in receipt.items]


class PurchaseMemories:
    """Listens to committed receipts (``ActionService.on_receipts``) and writes one
    purchase memory per ``shopping.complete`` that checked items off."""

    def __init__(self, store: MemoryStore, *, language: str, timezone: zoneinfo.ZoneInfo):
        self._store = store
        self._language = language
        self._tz = timezone
        self._tasks: set[asyncio.Task[None]] = set()
        self.written = 0

    def __call__(self, receipts: Sequence[Receipt]) -> None:
        for receipt in receipts:
            if (
                receipt.action == "shopping.complete"
                and receipt.status == "success"
                and not receipt.duplicate
                and receipt.items
            ):
                task = asyncio.create_task(self._record(receipt), name="purchase-memory")
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def _record(self, receipt: Receipt) -> None:
        when = dt.datetime.fromisoformat(receipt.created_at).astimezone(self._tz)
        text = purchase_text(_bought(receipt, self._language), when.date(), self._language)
        try:
            result = await self._store.add(
                receipt.source.user,
                text,
                kind="purchase",
                importance=PURCHASE_IMPORTANCE,
                source="receipt",
                source_ref=receipt.receipt_id,
            )
        except (MemoryStoreError, StoreError) as err:
            _LOGGER.warning(
                "purchase memory for receipt %s not written (the list change stands): %s",
                receipt.receipt_id,
                err,
            )
            return
        self.written += 1
        _LOGGER.debug("purchase memory for %s: %s", receipt.receipt_id, result.outcome)

    async def close(self) -> None:
        """Let the writes in progress finish (bounded), then cancel the rest."""
        if not self._tasks:
            return
        _done, pending = await asyncio.wait(set(self._tasks), timeout=CLOSE_WAIT_S)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
