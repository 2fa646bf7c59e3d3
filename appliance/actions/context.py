"""What an action handler gets, and what it gives back."""

from __future__ import annotations

import datetime as dt
import zoneinfo
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from appliance.protocol.receipts import ReceiptEvent, ReceiptItem, Status
from appliance.store.db import Conn


@dataclass(frozen=True)
class Context:
    """One command's view of the world, inside its transaction."""

    conn: Conn
    household_id: int
    list_id: int
    user_id: int
    tz: zoneinfo.ZoneInfo
    now: dt.datetime


@dataclass(frozen=True)
class Outcome:
    """What a handler did; the service turns it into a receipt."""

    status: Status
    reason: str | None = None
    items: list[ReceiptItem] = field(default_factory=list)
    events: list[ReceiptEvent] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)


Handler = Callable[[Context, Any], Awaitable[Outcome]]
