"""Shopping list actions.

Adding an item that is already open (policy, see docs/mqtt-api.md):
- without a quantity: ``no_change`` (reason ``already_on_list``);
- with a quantity, in the same unit (or the open item has none): quantities merge
  (``success``, ``details.merged``), "2 l milk" + "1 l milk" is "3 l milk";
- with a quantity in another unit: ``no_change`` (reason ``unit_conflict``); but a
  dozen and a count add up, one by one ("6 eggs" and a dozen are "18 eggs"), and so do
  units of one measure in one system ("1 kg" and "500 g" of flour are "1.5 kg");
- said as more of it (``ShoppingAdd.more``, "add two more"), a quantity without a unit
  is in the item's own unit ("2 l milk" and two more are "4 l milk"), or one by one
  where it has a dozen ("1 dozen eggs" and two more are "14 eggs").
Adding an item that was checked off reopens it with the new quantity.

Setting an item's quantity ("make that three apples") replaces its quantity and unit,
whatever they were. Said without a unit, the item keeps its own ("2 l milk" set to 3
is "3 l milk"), but a dozen ("1 dozen eggs" set to 6 is 6 eggs). ``no_change``
(reason ``same_quantity``) when it already has them, ``not_found`` when it is not on
the list. A checked-off item stays checked off.

Taking an amount of an item off the list ("take two apples off") leaves the rest
(``success``, ``details.reduced``): said without a unit, in the item's own unit, or one
by one where it is listed by the dozen. The entry goes when nothing is left, or when
it has no amount of its own; ``no_change`` (reason ``unit_conflict``) when the units do
not take away ("1 kg apples" less "2 bags").

Checking off an amount of an item ("I bought two apples") likewise leaves the rest on
the list to buy (``success``, ``details.reduced``, the entry still open). The entry is
checked off when no more than that is listed, when it has no amount of its own, or
when the amount bought is in a unit that does not take away from it ("I bought a bag
of apples" of the six listed): what was bought is taken to cover it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from appliance.actions.context import Context, Handler, Outcome
from appliance.actions.items import display_name, item_key
from appliance.protocol.commands import (
    ShoppingAdd,
    ShoppingClear,
    ShoppingClearCompleted,
    ShoppingComplete,
    ShoppingList,
    ShoppingRemove,
    ShoppingSetQuantity,
    ShoppingUncomplete,
)
from appliance.protocol.receipts import ReceiptItem
from appliance.store import shopping as repo

_COUNTED = "dozen"
"""A unit that counts, not measures: "make that six eggs" is six, not six dozen."""
_DOZEN = 12


def _receipt_item(
    name: str, quantity: float | None, unit: str | None, *, completed: bool
) -> ReceiptItem:
    return ReceiptItem(name=name, quantity=quantity, unit=unit, completed=completed)


def _row_item(row: repo.ItemRow) -> ReceiptItem:
    return _receipt_item(row.name, row.quantity, row.unit, completed=row.completed)


def _not_on_list(name: str) -> Outcome:
    return Outcome("not_found", "not_on_list", items=[_receipt_item(
        display_name(name), None, None, completed=False)])  # fmt: skip


def _key(name: str) -> str | None:
    key = item_key(name)
    return key or None


async def add(ctx: Context, cmd: ShoppingAdd) -> Outcome:
    key = _key(cmd.item)
    if key is None:
        return Outcome("rejected", "invalid_item")
    name = display_name(cmd.item)
    row = await repo.find(ctx.conn, ctx.list_id, key)
    if row is None:
        await repo.insert(
            ctx.conn, list_id=ctx.list_id, name=name, key=key, quantity=cmd.quantity,
            unit=cmd.unit, user_id=ctx.user_id,
        )  # fmt: skip
        return Outcome("success", items=[_receipt_item(name, cmd.quantity, cmd.unit,
                                                       completed=False)])  # fmt: skip
    if row.completed:
        await repo.reopen(
            ctx.conn, row.id, name=name, quantity=cmd.quantity, unit=cmd.unit, user_id=ctx.user_id
        )
        return Outcome(
            "success",
            items=[_receipt_item(name, cmd.quantity, cmd.unit, completed=False)],
            details={"reopened": True},
        )
    if cmd.quantity is None:
        return Outcome("no_change", "already_on_list", items=[_row_item(row)])
    merged = _merged(row, cmd.quantity, cmd.unit, more=cmd.more)
    if merged is None:
        return Outcome("no_change", "unit_conflict", items=[_row_item(row)])
    previous = _row_item(row)
    quantity, unit = merged
    await repo.set_quantity(ctx.conn, row.id, quantity, unit)
    return Outcome(
        "success",
        items=[_receipt_item(row.name, quantity, unit, completed=False)],
        details={"merged": True, "previous": previous.model_dump()},
    )


def _merged(
    row: repo.ItemRow, quantity: float, unit: str | None, *, more: bool
) -> tuple[float, str | None] | None:
    """The quantity and unit of an open item once ``quantity`` of ``unit`` is added to
    it; None when the two are in units that do not add up ("1 kg" and "2 bags")."""
    if more and unit is None and row.quantity is not None and row.unit != _COUNTED:
        unit = row.unit  # "two more" of the milk listed in liters: two liters
    if row.quantity is None or row.unit == unit:
        return round((row.quantity or 0) + quantity, 3), unit
    if {row.unit, unit} == {_COUNTED, None}:  # a dozen and a count: one by one
        return round(_one_by_one(row.quantity, row.unit) + _one_by_one(quantity, unit), 3), None
    return _measured(row.quantity, row.unit, quantity, unit, 1)  # "1 kg" and "500 g"


def _one_by_one(quantity: float, unit: str | None) -> float:
    return quantity * _DOZEN if unit == _COUNTED else quantity


_SCALES: dict[str, tuple[str, int]] = {
    "g": ("metric mass", 1), "kg": ("metric mass", 1000),
    "ml": ("metric volume", 1), "l": ("metric volume", 1000),
    "oz": ("mass", 1), "lb": ("mass", 16),
    "pint": ("volume", 1), "quart": ("volume", 2), "gallon": ("volume", 8),
}  # fmt: skip
"""Units that measure the same thing in one system, and how many of the smallest each
is: "500 g" of flour comes off "1 kg" of it. Never across systems (a pound of flour
and 500 g)."""


def _measured(
    listed: float, unit: str | None, quantity: float, said: str | None, sign: int
) -> tuple[float, str | None] | None:
    """``listed`` of ``unit`` with ``quantity`` of ``said`` added (``sign`` 1) or taken
    off (-1), where the two units measure the same thing ("1 kg" and "500 g" are 1.5
    kg): in the listed unit, or in the smaller one where the listed would need more
    than three decimals ("1 lb" and "1 oz" are 17 oz). None for units that do not."""
    if unit is None or said is None or unit not in _SCALES or said not in _SCALES:
        return None
    (kind, scale), (said_kind, said_scale) = _SCALES[unit], _SCALES[said]
    if kind != said_kind:
        return None
    smallest = max(0.0, listed * scale + sign * quantity * said_scale)
    whole = smallest / scale
    if abs(round(whole, 3) - whole) < 1e-9:
        return round(whole, 3), unit
    smaller = unit if scale < said_scale else said
    return round(smallest / min(scale, said_scale), 3), smaller


async def set_quantity(ctx: Context, cmd: ShoppingSetQuantity) -> Outcome:
    key = _key(cmd.item)
    row = await repo.find(ctx.conn, ctx.list_id, key) if key else None
    if row is None:
        return _not_on_list(cmd.item)
    quantity = round(cmd.quantity, 3)
    unit = cmd.unit
    if unit is None and row.quantity is not None and row.unit != _COUNTED:
        unit = row.unit
    if row.quantity == quantity and row.unit == unit:
        return Outcome("no_change", "same_quantity", items=[_row_item(row)])
    previous = _row_item(row)
    await repo.set_quantity(ctx.conn, row.id, quantity, unit)
    return Outcome(
        "success",
        items=[_receipt_item(row.name, quantity, unit, completed=row.completed)],
        details={"previous": previous.model_dump()},
    )


async def remove(ctx: Context, cmd: ShoppingRemove) -> Outcome:
    key = _key(cmd.item)
    row = await repo.find(ctx.conn, ctx.list_id, key) if key else None
    if row is None:
        return _not_on_list(cmd.item)
    if cmd.quantity is not None and row.quantity is not None:
        left = _left(row, row.quantity, cmd.quantity, cmd.unit)
        if left is None:
            return Outcome("no_change", "unit_conflict", items=[_row_item(row)])
        if left[0] > 0:  # "take two apples off": six listed are four
            return await _reduce(ctx, row, left)
    await repo.delete(ctx.conn, row.id)
    return Outcome("success", items=[_row_item(row)])


async def _reduce(ctx: Context, row: repo.ItemRow, left: tuple[float, str | None]) -> Outcome:
    """Leave ``left`` of ``row`` on the list (``details.reduced``)."""
    previous = _row_item(row)
    await repo.set_quantity(ctx.conn, row.id, *left)
    return Outcome(
        "success",
        items=[_receipt_item(row.name, *left, completed=row.completed)],
        details={"reduced": True, "previous": previous.model_dump()},
    )


def _left(
    row: repo.ItemRow, listed: float, quantity: float, unit: str | None
) -> tuple[float, str | None] | None:
    """What is left of a listed item (``listed`` of its unit) once ``quantity`` of
    ``unit`` is taken off it (nothing left: 0); None when the two are in units that do
    not take away ("1 kg" and "2 bags"). A quantity without a unit is in the item's own
    unit (two of the milk listed in liters), or counts one by one where it is listed by
    the dozen."""
    if unit is None and row.unit != _COUNTED:
        unit = row.unit
    if row.unit == unit:
        return max(round(listed - quantity, 3), 0.0), unit
    if {row.unit, unit} == {_COUNTED, None}:  # a dozen and a count: one by one
        left = _one_by_one(listed, row.unit) - _one_by_one(quantity, unit)
        return max(round(left, 3), 0.0), None
    return _measured(listed, row.unit, quantity, unit, -1)  # "500 g" off "1 kg"


async def _set_completed(
    ctx: Context, item: str, *, completed: bool, bought: ShoppingComplete | None = None
) -> Outcome:
    """``bought``: the amount checked off, when one was said ("I bought two apples")."""
    key = _key(item)
    row = await repo.find(ctx.conn, ctx.list_id, key) if key else None
    if row is None:
        return _not_on_list(item)
    if row.completed == completed:
        reason = "already_completed" if completed else "not_completed"
        return Outcome("no_change", reason, items=[_row_item(row)])
    said: dict[str, Any] = {}  # what was bought, when an amount was said
    if bought is not None and bought.quantity is not None:
        said["bought"] = {"quantity": bought.quantity, "unit": bought.unit}
        if row.quantity is not None:
            left = _left(row, row.quantity, bought.quantity, bought.unit)
            if left is not None and left[0] > 0:  # two of the six apples listed: four
                reduced = await _reduce(ctx, row, left)
                return replace(reduced, details={**reduced.details, **said})
    await repo.set_completed(ctx.conn, row.id, completed=completed, user_id=ctx.user_id)
    return Outcome(
        "success",
        items=[_receipt_item(row.name, row.quantity, row.unit, completed=completed)],
        details=said,
    )


async def complete(ctx: Context, cmd: ShoppingComplete) -> Outcome:
    return await _set_completed(ctx, cmd.item, completed=True, bought=cmd)


async def uncomplete(ctx: Context, cmd: ShoppingUncomplete) -> Outcome:
    return await _set_completed(ctx, cmd.item, completed=False)


async def list_(ctx: Context, cmd: ShoppingList) -> Outcome:
    if cmd.item is not None:
        return await _find(ctx, cmd.item)
    rows = await repo.list_items(ctx.conn, ctx.list_id, include_completed=cmd.include_completed)
    return Outcome("success", items=[_row_item(r) for r in rows], details={"count": len(rows)})


async def _find(ctx: Context, item: str) -> Outcome:
    """One item's entry: ``success`` with it (open or checked off), or ``not_found``."""
    key = _key(item)
    row = await repo.find(ctx.conn, ctx.list_id, key, lock=False) if key else None
    if row is None:
        return _not_on_list(item)
    return Outcome("success", items=[_row_item(row)], details={"count": 1, "item": row.name})


async def clear_completed(ctx: Context, cmd: ShoppingClearCompleted) -> Outcome:
    rows = await repo.clear_completed(ctx.conn, ctx.list_id)
    if not rows:
        return Outcome("no_change", "nothing_completed")
    return Outcome("success", items=[_row_item(r) for r in rows], details={"count": len(rows)})


async def clear(ctx: Context, cmd: ShoppingClear) -> Outcome:
    rows = await repo.clear_all(ctx.conn, ctx.list_id)
    if not rows:
        return Outcome("no_change", "list_empty")
    return Outcome("success", items=[_row_item(r) for r in rows], details={"count": len(rows)})


HANDLERS: dict[str, Handler] = {
    "shopping.add": add,
    "shopping.set_quantity": set_quantity,
    "shopping.remove": remove,
    "shopping.complete": complete,
    "shopping.uncomplete": uncomplete,
    "shopping.list": list_,
    "shopping.clear_completed": clear_completed,
    "shopping.clear": clear,
}
