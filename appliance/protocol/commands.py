"""Commands: what a caller asks the node to do.

One frozen pydantic model per action. The MQTT API, the CLI, the text parser and
(later) the voice turn all produce these models, and the action service is the only
consumer. Two commands compare equal exactly when they would do the same thing, which
is what the voice gate relies on.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    StringConstraints,
    TypeAdapter,
    model_validator,
)
from pydantic_core import PydanticCustomError

ItemName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=120)]
Title = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
Unit = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=24)]

AgendaRange = Literal["today", "tomorrow", "week", "weekend", "next_week", "day"]

FIRST_YEAR, LAST_YEAR = 1900, 2999
"""Dates a command may name. Near year 1 or 9999 a time zone or a duration steps out
of what ``datetime`` can hold (an ``OverflowError`` deep in an action)."""
QUANTITY_DIGITS = 3
"""Decimals a quantity is stored with (``numeric(12, 3)``): less than half of the last
one would be stored as 0, which the table refuses."""


def _in_years(value: dt.date) -> dt.date:
    if not FIRST_YEAR <= value.year <= LAST_YEAR:
        raise PydanticCustomError("date_range", f"years {FIRST_YEAR} to {LAST_YEAR} only")
    return value


def _storable_quantity(value: float | None) -> float | None:
    if value is not None and round(value, QUANTITY_DIGITS) <= 0:
        raise PydanticCustomError("quantity", f"at least {10**-QUANTITY_DIGITS:g}")
    return value


def _normalized_unit(value: str) -> str:
    from appliance.actions.items import normalize_unit  # the actions import this module

    return normalize_unit(value)


ItemUnit = Annotated[Unit, AfterValidator(_normalized_unit)]
"""A unit as said ("liters", "litros") or written ("l"), stored as its code ("l")."""

Day = Annotated[dt.date, AfterValidator(_in_years)]
Moment = Annotated[AwareDatetime | dt.date, AfterValidator(_in_years)]
Instant = Annotated[AwareDatetime, AfterValidator(_in_years)]


class _Command(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    @property
    def action_name(self) -> str:
        return str(self.action)  # type: ignore[attr-defined]

    @property
    def changes_state(self) -> bool:
        return self.action_name not in READ_ONLY_ACTIONS


class ShoppingAdd(_Command):
    action: Literal["shopping.add"] = "shopping.add"
    item: ItemName
    quantity: Annotated[float | None, AfterValidator(_storable_quantity)] = Field(
        default=None, gt=0, le=10_000
    )
    unit: ItemUnit | None = None
    more: bool = False
    """More of what the list has ("add two more"): a quantity without a unit is in the
    open item's unit (two more liters of the milk listed in liters), or counts one by
    one where it is listed by the dozen."""


class ShoppingSetQuantity(_Command):
    """Set how much of an item on the list is needed ("make that three apples", "change
    the milk to two liters"), in place of what it had; the item stays open or checked
    off as it was."""

    action: Literal["shopping.set_quantity"] = "shopping.set_quantity"
    item: ItemName
    quantity: Annotated[float, AfterValidator(_storable_quantity)] = Field(gt=0, le=10_000)
    unit: ItemUnit | None = None


class ShoppingRemove(_Command):
    """Take an item off the list; with ``quantity``, only that much of it ("take two
    apples off the list": six apples listed are four), the entry going when nothing is
    left of it or it has no amount of its own."""

    action: Literal["shopping.remove"] = "shopping.remove"
    item: ItemName
    quantity: Annotated[float | None, AfterValidator(_storable_quantity)] = Field(
        default=None, gt=0, le=10_000
    )
    unit: ItemUnit | None = None


class ShoppingComplete(_Command):
    """Check an item off as bought; with ``quantity``, only that much of it was bought
    ("I bought two apples": of six apples listed, four stay on the list to buy), the
    entry checked off when no less is listed, it has no amount of its own, or the amount
    bought is in another unit."""

    action: Literal["shopping.complete"] = "shopping.complete"
    item: ItemName
    quantity: Annotated[float | None, AfterValidator(_storable_quantity)] = Field(
        default=None, gt=0, le=10_000
    )
    unit: ItemUnit | None = None


class ShoppingUncomplete(_Command):
    action: Literal["shopping.uncomplete"] = "shopping.uncomplete"
    item: ItemName


class ShoppingList(_Command):
    """The shopping list; with ``item``, only that item's entry ("is milk on the list?"),
    open or checked off."""

    action: Literal["shopping.list"] = "shopping.list"
    include_completed: bool = False
    item: ItemName | None = None


class ShoppingClearCompleted(_Command):
    action: Literal["shopping.clear_completed"] = "shopping.clear_completed"


class ShoppingClear(_Command):
    """Empty the shopping list: every item, open or checked off."""

    action: Literal["shopping.clear"] = "shopping.clear"


class AgendaAdd(_Command):
    action: Literal["agenda.add"] = "agenda.add"
    title: Title
    start: Moment
    end: Instant | None = None
    duration_minutes: int | None = Field(default=None, gt=0, le=60 * 24 * 14)
    location: Annotated[str, StringConstraints(strip_whitespace=True, max_length=200)] | None = None

    @property
    def all_day(self) -> bool:
        return not isinstance(self.start, dt.datetime)


class AgendaList(_Command):
    action: Literal["agenda.list"] = "agenda.list"
    range: AgendaRange = "today"
    day: Day | None = None


class AgendaNext(_Command):
    action: Literal["agenda.next"] = "agenda.next"
    title: Title | None = None


class AgendaRemove(_Command):
    action: Literal["agenda.remove"] = "agenda.remove"
    title: Title
    day: Day | None = None


MAX_SHIFT_MINUTES = 366 * 24 * 60
"""The furthest an entry moves by an amount of time: a year."""


class AgendaMove(_Command):
    """Move an entry to ``new_start`` (a moment, or a day for an all-day entry), to
    ``new_time`` on the day it is on ("move the dentist to 4 pm"), or by
    ``shift_minutes`` from where it is, later or (negative) earlier ("push the dentist
    back a week"; an all-day entry by whole days): one of the three.

    ``either_half``: ``new_time`` was said without its half of the day ("move dinner
    to 8"); the move takes ``new_time`` or the same hour in the other half of the day,
    whichever is nearer the entry's own time (dinner at 7 pm goes to 8 pm, breakfast at
    7 am to 8 am)."""

    action: Literal["agenda.move"] = "agenda.move"
    title: Title
    day: Day | None = None
    new_start: Moment | None = None
    new_time: dt.time | None = None
    shift_minutes: StrictInt | None = Field(  # a JSON true is no minute
        default=None, ge=-MAX_SHIFT_MINUTES, le=MAX_SHIFT_MINUTES
    )
    either_half: bool = False

    @model_validator(mode="after")
    def _one_target(self) -> AgendaMove:
        targets = (self.new_start, self.new_time, self.shift_minutes)
        if sum(t is not None for t in targets) != 1:
            raise PydanticCustomError(
                "move_target", "exactly one of new_start, new_time and shift_minutes"
            )
        if self.shift_minutes == 0:
            raise PydanticCustomError("move_target", "shift_minutes must not be 0")
        if self.either_half and self.new_time is None:
            raise PydanticCustomError("move_target", "either_half needs new_time")
        return self


MemoryText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500)]
MemoryKind = Literal["preference", "purchase", "fact"]
Stance = Literal["likes", "dislikes", "allergic", "favourite"]


class MemoryAdd(_Command):
    """Remember something about the user (through the memory's commit gate).

    ``subject`` and ``stance`` are set when the text is a stated preference ("I prefer
    oat milk": likes, "oat milk"); they shape the spoken answer only.
    """

    action: Literal["memory.add"] = "memory.add"
    text: MemoryText
    kind: MemoryKind = "fact"
    importance: int = Field(default=5, ge=1, le=10)
    subject: Annotated[str, StringConstraints(strip_whitespace=True, max_length=120)] | None = None
    stance: Stance | None = None


class MemoryEdit(_Command):
    """Change one of the user's memories: new text (the old one is kept as history,
    superseded) and/or a new importance."""

    action: Literal["memory.edit"] = "memory.edit"
    id: int = Field(gt=0)
    text: MemoryText | None = None
    importance: int | None = Field(default=None, ge=1, le=10)


class MemoryDelete(_Command):
    """Forget one of the user's memories for good."""

    action: Literal["memory.delete"] = "memory.delete"
    id: int = Field(gt=0)


Command = Annotated[
    ShoppingAdd
    | ShoppingSetQuantity
    | ShoppingRemove
    | ShoppingComplete
    | ShoppingUncomplete
    | ShoppingList
    | ShoppingClearCompleted
    | ShoppingClear
    | AgendaAdd
    | AgendaList
    | AgendaNext
    | AgendaRemove
    | AgendaMove
    | MemoryAdd
    | MemoryEdit
    | MemoryDelete,
    Field(discriminator="action"),
]

COMMAND_ADAPTER: TypeAdapter[Command] = TypeAdapter(Command)

ACTIONS: tuple[str, ...] = (
    "shopping.add",
    "shopping.set_quantity",
    "shopping.remove",
    "shopping.complete",
    "shopping.uncomplete",
    "shopping.list",
    "shopping.clear_completed",
    "shopping.clear",
    "agenda.add",
    "agenda.list",
    "agenda.next",
    "agenda.remove",
    "agenda.move",
    "memory.add",
    "memory.edit",
    "memory.delete",
)
MEMORY_ACTIONS = frozenset({"memory.add", "memory.edit", "memory.delete"})
READ_ONLY_ACTIONS = frozenset({"shopping.list", "agenda.list", "agenda.next"})


def parse_command(data: dict[str, Any]) -> Command:
    """Validate a command dict whose ``action`` key names the action.

    Raises ``pydantic.ValidationError`` on anything malformed.
    """
    return COMMAND_ADAPTER.validate_python(data)
