"""Sample receipts for every action, status and common reason.

Used to test the templates and the guard against each other, and as the bank the
LLM prompt draws its closest example from. Names come from a ``Names`` set, so the
prompt's examples never share words with the receipt being narrated.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from appliance.protocol.receipts import Receipt, ReceiptEvent, ReceiptItem, Source, Status

_SOURCE = Source(kind="voice", user="household")


@dataclass(frozen=True)
class Names:
    """Item names and event titles used by the samples."""

    item: str = "milk"
    item_plural: str = "eggs"
    other: str = "bread"
    unit_item: str = "rice"
    proposed: str = "oat milk"
    event: str = "dentist"
    other_event: str = "gym"
    extra: tuple[str, ...] = ("apples", "coffee", "butter", "cheese", "flour", "tea", "jam")


ENGLISH = Names()
PORTUGUESE = Names(
    item="leite", item_plural="ovos", other="pão", unit_item="arroz",
    proposed="leite de aveia", event="dentista", other_event="academia",
    extra=("maçãs", "café", "manteiga", "queijo", "farinha", "chá", "geleia"),
)  # fmt: skip
EXAMPLE_NAMES = {
    "en": Names(
        item="orange juice", item_plural="tomatoes", other="yogurt", unit_item="flour",
        proposed="almond milk", event="vet", other_event="yoga class",
        extra=("pears", "honey", "lettuce", "onions", "pasta", "salt", "soap"),
    ),
    "pt": Names(
        item="suco de laranja", item_plural="tomates", other="iogurte", unit_item="farinha",
        proposed="leite de amêndoas", event="veterinário", other_event="aula de ioga",
        extra=("peras", "mel", "alface", "cebolas", "macarrão", "sal", "sabão"),
    ),
}  # fmt: skip


def receipt(
    action: str | None,
    status: Status,
    reason: str | None = None,
    items: list[ReceiptItem] | None = None,
    events: list[ReceiptEvent] | None = None,
    **details: Any,
) -> Receipt:
    """A receipt with test-friendly defaults."""
    return Receipt(
        request_id="sample", action=action, status=status, reason=reason,
        items=items or [], events=events or [], source=_SOURCE, details=details,
    )  # fmt: skip


def item(
    name: str, quantity: float | None = None, unit: str | None = None, *, completed: bool = False
) -> ReceiptItem:
    return ReceiptItem(name=name, quantity=quantity, unit=unit, completed=completed)


def event(title: str, start: dt.datetime | dt.date) -> ReceiptEvent:
    if isinstance(start, dt.datetime):
        return ReceiptEvent(title=title, start=start.isoformat())
    return ReceiptEvent(title=title, start=start.isoformat(), all_day=True)


def _at(now: dt.datetime, days: int, hour: int, minute: int = 0) -> dt.datetime:
    return (now + dt.timedelta(days=days)).replace(hour=hour, minute=minute, second=0,
                                                   microsecond=0)  # fmt: skip


def samples(now: dt.datetime, names: Names = ENGLISH) -> dict[str, Receipt]:
    """Labelled sample receipts; dates relative to ``now`` (aware, in the local offset)."""
    n = names
    tomorrow_3pm = _at(now, 1, 15)
    to_saturday = (5 - now.weekday()) % 7
    to_monday = 7 - now.weekday()
    friday = _at(now, (4 - now.weekday()) % 7 or 7, 16)
    far = _at(now, 20, 16)
    listing = [item(x) for x in (n.item, n.item_plural, n.other)]
    many = [item(x) for x in (n.item, n.item_plural, n.other, n.unit_item, *n.extra)]
    previous = item(n.item, 2, "l").model_dump()
    proposed = {"action": "shopping.add", "item": n.proposed}
    move_from = event(n.event, tomorrow_3pm).model_dump()
    return {
        # shopping.add
        "add": receipt("shopping.add", "success", items=[item(n.item, 2, "l")]),
        "add_plain": receipt("shopping.add", "success", items=[item(n.item_plural)]),
        "add_count": receipt("shopping.add", "success", items=[item(n.item_plural, 12)]),
        "add_merged": receipt("shopping.add", "success", items=[item(n.item, 3, "l")],
                              merged=True, previous=previous),
        "add_reopened": receipt("shopping.add", "success", items=[item(n.item, 1, "l")],
                                reopened=True),
        "add_already": receipt("shopping.add", "no_change", "already_on_list",
                               items=[item(n.item)]),
        "add_already_plural": receipt("shopping.add", "no_change", "already_on_list",
                                      items=[item(n.item_plural)]),
        "add_unit_conflict": receipt("shopping.add", "no_change", "unit_conflict",
                                     items=[item(n.unit_item, 1, "kg")]),
        "add_invalid": receipt("shopping.add", "rejected", "invalid_item"),
        "add_confirm": receipt("shopping.add", "needs_confirmation", proposed=proposed),
        "add_confirm_amount": receipt(
            "shopping.add", "needs_confirmation",
            proposed={"action": "shopping.add", "item": n.item_plural, "quantity": 3}),
        "add_db_down": receipt("shopping.add", "rejected",
                               "database_unavailable: timeout; nothing was changed"),
        "add_db_unknown": receipt(
            "shopping.add", "rejected",
            "database_unavailable: connection lost while committing; the outcome is unknown: "
            "resend with the same request_id to learn it"),
        "add_db_error": receipt("shopping.add", "rejected", "database_error"),
        # shopping.set_quantity
        "set_quantity": receipt("shopping.set_quantity", "success",
                                items=[item(n.item, 3, "l")], previous=previous),
        "set_quantity_count": receipt("shopping.set_quantity", "success",
                                      items=[item(n.item_plural, 6)]),
        "set_quantity_same": receipt("shopping.set_quantity", "no_change", "same_quantity",
                                     items=[item(n.item, 2, "l")]),
        "set_quantity_missing": receipt("shopping.set_quantity", "not_found", "not_on_list",
                                        items=[item(n.other)]),
        "set_quantity_invalid": receipt("shopping.set_quantity", "rejected", "invalid_item"),
        "set_quantity_which": receipt("shopping.set_quantity", "rejected", "missing_slot:item"),
        "set_quantity_confirm": receipt(
            "shopping.set_quantity", "needs_confirmation",
            proposed={"action": "shopping.set_quantity", "item": n.item_plural, "quantity": 3}),
        # shopping.remove
        "remove": receipt("shopping.remove", "success", items=[item(n.item)]),
        "remove_some": receipt("shopping.remove", "success", items=[item(n.item_plural, 4)],
                               reduced=True, previous=item(n.item_plural, 6).model_dump()),
        "remove_unit_conflict": receipt("shopping.remove", "no_change", "unit_conflict",
                                        items=[item(n.unit_item, 1, "kg")]),
        "remove_missing": receipt("shopping.remove", "not_found", "not_on_list",
                                  items=[item(n.item_plural)]),
        "remove_confirm": receipt("shopping.remove", "needs_confirmation",
                                  proposed={"action": "shopping.remove", "item": n.other}),
        "remove_confirm_amount": receipt(
            "shopping.remove", "needs_confirmation",
            proposed={"action": "shopping.remove", "item": n.item_plural, "quantity": 2}),
        # shopping.complete / uncomplete
        "complete": receipt("shopping.complete", "success",
                            items=[item(n.item, completed=True)]),
        "complete_some": receipt("shopping.complete", "success", items=[item(n.item_plural, 4)],
                                 reduced=True, previous=item(n.item_plural, 6).model_dump()),
        "complete_already": receipt("shopping.complete", "no_change", "already_completed",
                                    items=[item(n.item_plural, completed=True)]),
        "complete_missing": receipt("shopping.complete", "not_found", "not_on_list",
                                    items=[item(n.other)]),
        "complete_confirm": receipt("shopping.complete", "needs_confirmation",
                                    items=[item(n.item)]),
        "complete_confirm_amount": receipt(
            "shopping.complete", "needs_confirmation",
            proposed={"action": "shopping.complete", "item": n.item_plural, "quantity": 2}),
        "uncomplete": receipt("shopping.uncomplete", "success", items=[item(n.item)]),
        "uncomplete_not_done": receipt("shopping.uncomplete", "no_change", "not_completed",
                                       items=[item(n.item)]),
        "uncomplete_missing": receipt("shopping.uncomplete", "not_found", "not_on_list",
                                      items=[item(n.other)]),
        "uncomplete_confirm": receipt("shopping.uncomplete", "needs_confirmation",
                                      items=[item(n.item)]),
        # shopping.list / clear_completed
        "list": receipt("shopping.list", "success", items=listing, count=3),
        "list_one": receipt("shopping.list", "success", items=[item(n.item)], count=1),
        "list_long": receipt("shopping.list", "success", items=many, count=len(many)),
        "list_empty": receipt("shopping.list", "success", count=0),
        "list_confirm": receipt("shopping.list", "needs_confirmation"),
        "find": receipt("shopping.list", "success", items=[item(n.item, 2, "l")], count=1,
                        item=n.item),
        "find_done": receipt("shopping.list", "success",
                             items=[item(n.item_plural, completed=True)], count=1,
                             item=n.item_plural),
        "find_missing": receipt("shopping.list", "not_found", "not_on_list",
                                items=[item(n.other)]),
        "clear": receipt("shopping.clear_completed", "success",
                         items=[item(n.item, completed=True), item(n.other, completed=True)],
                         count=2),
        "clear_one": receipt("shopping.clear_completed", "success",
                             items=[item(n.item, completed=True)], count=1),
        "clear_nothing": receipt("shopping.clear_completed", "no_change", "nothing_completed"),
        "clear_confirm": receipt("shopping.clear_completed", "needs_confirmation"),
        "clear_all": receipt("shopping.clear", "success",
                             items=[item(n.item), item(n.other, completed=True)], count=2),
        "clear_all_long": receipt("shopping.clear", "success", items=many, count=len(many)),
        "clear_all_empty": receipt("shopping.clear", "no_change", "list_empty"),
        "clear_all_confirm": receipt("shopping.clear", "needs_confirmation"),
        # agenda.add
        "agenda_add": receipt("agenda.add", "success", events=[event(n.event, tomorrow_3pm)]),
        "agenda_add_all_day": receipt("agenda.add", "success",
                                      events=[event(n.event, friday.date())]),
        "agenda_add_far": receipt("agenda.add", "success", events=[event(n.event, far)]),
        "agenda_add_past": receipt("agenda.add", "success",
                                   events=[event(n.event, _at(now, -1, 9))], past=True),
        "agenda_add_backwards": receipt("agenda.add", "rejected", "end_before_start"),
        "agenda_add_confirm": receipt(
            "agenda.add", "needs_confirmation",
            proposed={"action": "agenda.add", "title": n.event,
                      "start": tomorrow_3pm.isoformat()}),
        # "add the dentist tomorrow morning": a day and a part of it, the time asked
        "agenda_add_time": receipt(
            "agenda.add", "needs_confirmation", "not_confirmed",
            events=[event(n.event, tomorrow_3pm.date())], ask="time", part="morning",
            proposal=[{"action": "agenda.add", "title": n.event,
                       "start": tomorrow_3pm.date().isoformat()}]),
        "move_time": receipt(
            "agenda.move", "needs_confirmation", "not_confirmed",
            events=[event(n.event, tomorrow_3pm.date())], ask="time", part="afternoon",
            proposal=[{"action": "agenda.move", "title": n.event,
                       "new_start": tomorrow_3pm.date().isoformat()}]),
        # understood, not doable: "remind me later", "yoga every tuesday", "next weekend"
        "agenda_add_vague": receipt("agenda.add", "rejected", "vague_time"),
        "agenda_add_recurring": receipt("agenda.add", "rejected", "recurring"),
        "agenda_list_unsupported": receipt("agenda.list", "rejected", "unsupported_range"),
        "two_requests": receipt("agenda.add", "rejected", "two_requests"),
        # "remind me in 10 minutes": of what?
        "agenda_add_untitled": receipt("agenda.add", "rejected", "missing_slot:title"),
        # "add two liters": of what?
        "shopping_add_no_item": receipt("shopping.add", "rejected", "missing_slot:item"),
        # agenda.list / next
        "agenda_today": receipt(
            "agenda.list", "success",
            events=[event(n.event, _at(now, 0, 15)), event(n.other_event, _at(now, 0, 18, 30))],
            range="today", count=2),
        "agenda_week": receipt(
            "agenda.list", "success",
            events=[event(n.event, tomorrow_3pm), event(n.other_event, friday)],
            range="week", count=2),
        "agenda_day": receipt(
            "agenda.list", "success", events=[event(n.event, far)], range="day",
            since=far.replace(hour=0, minute=0).isoformat(), count=1),
        "agenda_empty": receipt("agenda.list", "success", range="tomorrow", count=0),
        "agenda_weekend": receipt(
            "agenda.list", "success", events=[event(n.event, _at(now, to_saturday, 10))],
            range="weekend", since=_at(now, to_saturday, 0).isoformat(),
            until=_at(now, to_saturday + 2, 0).isoformat(), count=1),
        "agenda_next_week_empty": receipt(
            "agenda.list", "success", range="next_week",
            since=_at(now, to_monday, 0).isoformat(),
            until=_at(now, to_monday + 7, 0).isoformat(), count=0),
        "agenda_list_confirm": receipt("agenda.list", "needs_confirmation"),
        "next": receipt("agenda.next", "success", events=[event(n.event, tomorrow_3pm)]),
        "next_none": receipt("agenda.next", "not_found", "no_upcoming_events"),
        "next_titled": receipt("agenda.next", "success", events=[event(n.event, friday)],
                               title=n.event),
        "next_titled_missing": receipt("agenda.next", "not_found", "no_matching_event",
                                       title=n.other_event),
        "next_confirm": receipt("agenda.next", "needs_confirmation"),
        # agenda.remove / move
        "agenda_remove": receipt("agenda.remove", "success",
                                 events=[event(n.event, tomorrow_3pm)]),
        "agenda_remove_missing": receipt("agenda.remove", "not_found", "no_matching_event"),
        "agenda_remove_ambiguous": receipt(
            "agenda.remove", "rejected", "ambiguous",
            events=[event(n.event, friday), event(n.event, far)]),
        "agenda_remove_ambiguous_titles": receipt(
            "agenda.remove", "rejected", "ambiguous",
            events=[event(n.event, friday), event(f"{n.event} {n.other_event}", far)]),
        "agenda_remove_confirm": receipt(
            "agenda.remove", "needs_confirmation",
            proposed={"action": "agenda.remove", "title": n.event}),
        "move": receipt("agenda.move", "success", events=[event(n.event, friday)],
                        previous=move_from),
        "move_same": receipt("agenda.move", "no_change", "same_time",
                             events=[event(n.event, friday)]),
        "move_missing": receipt("agenda.move", "not_found", "no_matching_event"),
        "move_ambiguous": receipt("agenda.move", "rejected", "ambiguous",
                                  events=[event(n.event, friday), event(n.event, far)]),
        "move_confirm": receipt(
            "agenda.move", "needs_confirmation",
            proposed={"action": "agenda.move", "title": n.event,
                      "new_start": friday.isoformat()}),
        # "push the dentist back a week": the question says where it would go
        "move_shift_confirm": receipt(
            "agenda.move", "needs_confirmation", events=[event(n.event, friday)],
            proposal=[{"action": "agenda.move", "title": n.event, "shift_minutes": 10080}]),
        # "push the holiday back an hour": an all-day entry moves by whole days
        "move_all_day_shift": receipt("agenda.move", "rejected", "all_day_shift",
                                      events=[event(n.event, friday.date())]),
        # "move the dentist to 4 pm": a time on the entry's own day
        "move_time_confirm": receipt(
            "agenda.move", "needs_confirmation",
            proposed={"action": "agenda.move", "title": n.event, "new_time": "16:00:00"}),
        # "move the dentist to 8": the hour alone, the half being the move's to take
        "move_either_half_confirm": receipt(
            "agenda.move", "needs_confirmation",
            proposed={"action": "agenda.move", "title": n.event, "new_time": "08:00:00",
                      "either_half": True}, either_half=True),
        # memory
        "memory_likes": receipt("memory.add", "success", items=[item(n.proposed)],
                                stance="likes"),
        "memory_dislikes": receipt("memory.add", "success", items=[item(n.extra[1])],
                                   stance="dislikes"),
        "memory_allergic": receipt("memory.add", "success", items=[item(n.extra[0])],
                                   stance="allergic"),
        "memory_fact": receipt("memory.add", "success", kind="fact"),
        "memory_known": receipt("memory.add", "no_change", "already_known"),
        "memory_confirm_likes": receipt("memory.add", "needs_confirmation",
                                        items=[item(n.proposed)], stance="likes"),
        "memory_confirm_dislikes": receipt("memory.add", "needs_confirmation",
                                           items=[item(n.extra[1])], stance="dislikes"),
        "memory_confirm_allergic": receipt("memory.add", "needs_confirmation",
                                           items=[item(n.extra[0])], stance="allergic"),
        "memory_confirm": receipt("memory.add", "needs_confirmation"),
        "memory_rejected": receipt("memory.add", "rejected", "memory_rejected: too_short"),
        "memory_unavailable": receipt("memory.add", "rejected",
                                      "memory_unavailable: loading; nothing was saved"),
        "memory_edit": receipt("memory.edit", "success"),
        "memory_delete": receipt("memory.delete", "success"),
        "memory_missing": receipt("memory.delete", "not_found", "no_such_memory"),
        # unusable commands
        "invalid_json": receipt(None, "rejected", "invalid_json"),
        "invalid_payload": receipt("shopping.add", "rejected",
                                   "invalid_payload: quantity: must be > 0"),
        "not_understood": receipt(None, "rejected", "not_understood: negated"),
        # a voice turn's "don't add milk": refused by the gate, as asked
        "called_off": receipt(None, "rejected", "negated"),
        "unsupported_language": receipt(None, "rejected", "unsupported_language"),
        "unknown_action": receipt(None, "rejected", "unknown_action"),
    }  # fmt: skip
