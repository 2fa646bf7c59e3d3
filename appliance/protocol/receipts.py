"""Receipts: the deterministic record of what an action did.

The JSON shape is a stable contract (docs/mqtt-api.md): fields may be added, the
names below stay.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Status = Literal["success", "no_change", "not_found", "rejected", "needs_confirmation"]
SourceKind = Literal["voice", "mqtt", "ha", "cli"]

STATUSES: tuple[Status, ...] = (
    "success",
    "no_change",
    "not_found",
    "rejected",
    "needs_confirmation",
)

ASK = "ask"
"""``details`` key of a ``needs_confirmation`` receipt whose question asks for more than
a yes: its value says what (``ASK_TIME``). Absent, a yes or no answers it."""
ASK_TIME = "time"
"""``details.ask``: the proposal is for a day, and the question asks what time
("add dentist tomorrow morning": "What time tomorrow morning?")."""
PART = "part"
"""``details`` key with ``ASK_TIME``: the part of the day said ("morning", "afternoon",
"evening", "night", "small_hours"), which the question names and which reads the hour
of the answer ("at 8" in the evening is 20:00)."""
EITHER_HALF = "either_half"
"""``details`` key of a ``needs_confirmation`` receipt proposing a move to
``details.new_time`` said without its half of the day ("move dinner to 8"): true, and
the move, said yes to, takes the half nearer the entry's own time."""


class ReceiptItem(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    quantity: float | None = None
    unit: str | None = None
    completed: bool = False


class ReceiptEvent(BaseModel):
    model_config = ConfigDict(frozen=True)

    title: str
    start: str
    end: str | None = None
    location: str | None = None
    all_day: bool = False


class Source(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: SourceKind
    site: str | None = None
    user: str


class Receipt(BaseModel):
    model_config = ConfigDict(frozen=True)

    receipt_id: str = Field(default_factory=lambda: str(uuid.uuid4()))
    request_id: str
    action: str | None
    status: Status
    reason: str | None = None
    items: list[ReceiptItem] = Field(default_factory=list)
    events: list[ReceiptEvent] = Field(default_factory=list)
    source: Source
    created_at: str = Field(
        default_factory=lambda: dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")
    )
    duplicate: bool = False
    """True when this is the original receipt of a request id seen before."""
    details: dict[str, Any] = Field(default_factory=dict)
    """Action-specific extras (e.g. ``merged``, ``previous``); may grow."""

    def to_payload(self) -> bytes:
        return self.model_dump_json().encode()

    @classmethod
    def from_payload(cls, payload: bytes | str) -> Receipt:
        return cls.model_validate_json(payload)

    def to_json_obj(self) -> dict[str, Any]:
        result: dict[str, Any] = json.loads(self.model_dump_json())
        return result
