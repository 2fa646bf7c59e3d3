"""What a receipt is about, in the shape narration needs.

A ``needs_confirmation`` receipt may carry the command it proposes in
``details["proposed"]`` (or ``details["command"]``): a command JSON object such as
``{"action": "shopping.add", "item": "oat milk", "quantity": 2, "unit": "l"}``. When the
receipt itself has no items or events, they are taken from that proposal, so the
question names what would be done.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from appliance.protocol.receipts import EITHER_HALF, Receipt, ReceiptEvent, ReceiptItem, Status

_PROPOSAL_KEYS = ("proposed", "command")
_UNKNOWN_OUTCOME = "outcome is unknown"

# Reason codes that all mean "the request itself was malformed".
_INVALID_REQUEST = frozenset(
    {
        "invalid_json", "invalid_payload", "payload_too_large", "unknown_action",
        "invalid_request_id", "invalid_user", "missing_day",
    }
)  # fmt: skip


@dataclass(frozen=True)
class ReceiptView:
    """A receipt reduced to what a sentence about it may say."""

    action: str | None
    status: Status
    reason: str | None
    """The reason code (the part before ``:``), grouped: ``invalid_request`` for all
    malformed-request codes."""
    unknown_outcome: bool
    items: tuple[ReceiptItem, ...]
    events: tuple[ReceiptEvent, ...]
    details: Mapping[str, Any]
    count: int
    """Items or events the action counted (``details.count`` when present)."""
    title: str | None
    """The event title the request named, when the receipt has no event (not found)."""

    @property
    def item_asked(self) -> bool:
        """A listing of one item's entry ("is milk on the list?"), found."""
        return (
            self.action == "shopping.list" and bool(self.details.get("item")) and bool(self.items)
        )

    @property
    def domain(self) -> str | None:
        return self.action.split(".", 1)[0] if self.action else None


def reason_code(reason: str | None) -> str | None:
    if not reason:
        return None
    code = reason.split(":", 1)[0].strip()
    return "invalid_request" if code in _INVALID_REQUEST else code


def _proposal(details: Mapping[str, Any]) -> Mapping[str, Any]:
    for key in _PROPOSAL_KEYS:
        value = details.get(key)
        if isinstance(value, Mapping):
            return value
    return {}


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _proposed_item(proposal: Mapping[str, Any]) -> ReceiptItem | None:
    name = proposal.get("item")
    if not isinstance(name, str) or not name.strip():
        return None
    unit = proposal.get("unit")
    return ReceiptItem(
        name=name.strip(),
        quantity=_number(proposal.get("quantity")),
        unit=unit if isinstance(unit, str) and unit else None,
    )


def _proposed_event(proposal: Mapping[str, Any]) -> ReceiptEvent | None:
    title = proposal.get("title")
    if not isinstance(title, str) or not title.strip():
        return None
    start = proposal.get("new_start") or proposal.get("start") or proposal.get("day") or ""
    start = str(start)
    all_day = len(start) == 10  # a bare date, YYYY-MM-DD
    return ReceiptEvent(title=title.strip(), start=start, all_day=all_day)


def proposed_time(v: ReceiptView) -> dt.time | None:
    """The time of a move proposed to the entry's own day ("move the dentist to 4 pm"):
    ``details.new_time``, or the proposed command's ``new_time``."""
    raw = v.details.get("new_time") or _proposal(v.details).get("new_time")
    try:
        return dt.time.fromisoformat(raw) if isinstance(raw, str) else None
    except ValueError:
        return None


def proposed_either_half(v: ReceiptView) -> bool:
    """True if a proposed move's time was said without its half of the day ("move
    dinner to 8"): the move takes the half nearer the entry's own time."""
    return bool(v.details.get(EITHER_HALF) or _proposal(v.details).get(EITHER_HALF))


def view(receipt: Receipt) -> ReceiptView:
    """The narration view of ``receipt``."""
    details: Mapping[str, Any] = receipt.details
    proposal = _proposal(details)
    action = receipt.action
    items = tuple(receipt.items)
    events = tuple(receipt.events)
    if proposal:
        proposed_action = proposal.get("action")
        if action is None and isinstance(proposed_action, str):
            action = proposed_action
        if not items and (item := _proposed_item(proposal)) is not None:
            items = (item,)
        if not events and (event := _proposed_event(proposal)) is not None:
            events = (event,)
    domain = action.split(".", 1)[0] if action else None
    raw_count = details.get("count")
    if isinstance(raw_count, int) and not isinstance(raw_count, bool) and raw_count >= 0:
        count = raw_count
    else:
        count = len(events) if domain == "agenda" else len(items)
    title = details.get("title") or proposal.get("title")
    return ReceiptView(
        action=action,
        status=receipt.status,
        reason=reason_code(receipt.reason),
        unknown_outcome=_UNKNOWN_OUTCOME in (receipt.reason or ""),
        items=items,
        events=events,
        details=details,
        count=count,
        title=title if isinstance(title, str) and title.strip() else None,
    )
