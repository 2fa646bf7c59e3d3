"""Actions against a real PostgreSQL: what each command changes and what its receipt says."""

from __future__ import annotations

import datetime as dt
import zoneinfo

import pytest

from appliance.actions.service import HANDLERS, ActionService, Request, new_request_id
from appliance.protocol import commands as c
from appliance.protocol.receipts import Receipt, Source
from appliance.protocol.topics import Topics
from appliance.settings import Settings
from appliance.store.db import Database

pytestmark = pytest.mark.integration
TZ = zoneinfo.ZoneInfo("America/Sao_Paulo")
SOURCE = Source(kind="cli", user="ana")


@pytest.fixture
def service(database: Database, settings: Settings) -> ActionService:
    return ActionService(database, settings, Topics())


async def run(service: ActionService, command: c.Command, request_id: str | None = None) -> Receipt:
    result = await service.execute(
        Request(request_id=request_id or new_request_id(), source=SOURCE, command=command)
    )
    return result.receipt


async def listed(service: ActionService) -> list[tuple[str, float | None, str | None, bool]]:
    receipt = await run(service, c.ShoppingList(include_completed=True))
    return [(i.name, i.quantity, i.unit, i.completed) for i in receipt.items]


async def test_add_then_list_shows_quantity_and_unit(service: ActionService) -> None:
    receipt = await run(service, c.ShoppingAdd(item="milk", quantity=2, unit="liters"))
    assert receipt.status == "success"
    assert receipt.action == "shopping.add"
    assert [(i.name, i.quantity, i.unit) for i in receipt.items] == [("milk", 2.0, "l")]
    assert await listed(service) == [("milk", 2.0, "l", False)]


async def test_adding_an_open_item_merges_same_unit_quantities(service: ActionService) -> None:
    await run(service, c.ShoppingAdd(item="milk", quantity=2, unit="l"))
    receipt = await run(service, c.ShoppingAdd(item="Milk", quantity=1, unit="litre"))
    assert receipt.status == "success"
    assert receipt.details["merged"] is True
    assert await listed(service) == [("milk", 3.0, "l", False)]


async def test_adding_an_open_item_without_quantity_changes_nothing(
    service: ActionService,
) -> None:
    await run(service, c.ShoppingAdd(item="eggs", quantity=12))
    receipt = await run(service, c.ShoppingAdd(item="the eggs"))
    assert (receipt.status, receipt.reason) == ("no_change", "already_on_list")
    assert await listed(service) == [("eggs", 12.0, None, False)]


async def test_adding_in_another_unit_is_a_conflict(service: ActionService) -> None:
    await run(service, c.ShoppingAdd(item="rice", quantity=1, unit="kg"))
    receipt = await run(service, c.ShoppingAdd(item="rice", quantity=2, unit="bag"))
    assert (receipt.status, receipt.reason) == ("no_change", "unit_conflict")
    # without a unit, two of it is not two kilos, unless said as more of it
    receipt = await run(service, c.ShoppingAdd(item="rice", quantity=2))
    assert (receipt.status, receipt.reason) == ("no_change", "unit_conflict")
    receipt = await run(service, c.ShoppingAdd(item="rice", quantity=2, unit="bag", more=True))
    assert (receipt.status, receipt.reason) == ("no_change", "unit_conflict")
    assert await listed(service) == [("rice", 1.0, "kg", False)]


async def test_units_of_one_measure_add_up_and_take_away(service: ActionService) -> None:
    """ "1 kg" of flour and "500 g" were a unit conflict (nothing changed). Units that
    measure the same thing in one system add up and take away, in the listed unit, or
    in the smaller where the listed would need more than three decimals; never across
    systems."""
    await run(service, c.ShoppingAdd(item="flour", quantity=1, unit="kg"))
    more = await run(service, c.ShoppingAdd(item="flour", quantity=500, unit="g"))
    assert (more.status, more.details["merged"]) == ("success", True)
    await run(service, c.ShoppingAdd(item="milk", quantity=2, unit="l"))
    await run(service, c.ShoppingRemove(item="milk", quantity=500, unit="ml"))
    await run(service, c.ShoppingAdd(item="ham", quantity=1, unit="lb"))
    await run(service, c.ShoppingAdd(item="ham", quantity=1, unit="oz"))  # 1.0625 lb
    await run(service, c.ShoppingAdd(item="cream", quantity=1, unit="quart"))
    await run(service, c.ShoppingComplete(item="cream", quantity=1, unit="pint"))
    assert sorted(await listed(service)) == [
        ("cream", 0.5, "quart", False),
        ("flour", 1.5, "kg", False),
        ("ham", 17.0, "oz", False),
        ("milk", 1.5, "l", False),
    ]
    across = await run(service, c.ShoppingAdd(item="flour", quantity=1, unit="lb"))
    assert (across.status, across.reason) == ("no_change", "unit_conflict")
    gone = await run(service, c.ShoppingRemove(item="milk", quantity=1500, unit="ml"))
    assert (gone.status, gone.details.get("reduced")) == ("success", None)


async def test_more_of_an_item_is_in_its_own_unit(service: ActionService) -> None:
    """ "add two more" of the milk listed in liters: two more liters."""
    await run(service, c.ShoppingAdd(item="milk", quantity=2, unit="l"))
    receipt = await run(service, c.ShoppingAdd(item="milk", quantity=2, more=True))
    assert (receipt.status, receipt.details["merged"]) == ("success", True)
    assert [(i.name, i.quantity, i.unit) for i in receipt.items] == [("milk", 4.0, "l")]
    assert receipt.details["previous"]["quantity"] == 2.0
    await run(service, c.ShoppingAdd(item="apples", quantity=3))  # no unit: a count
    await run(service, c.ShoppingAdd(item="apples", quantity=1, more=True))
    await run(service, c.ShoppingAdd(item="flour"))  # no quantity: it takes the one said
    await run(service, c.ShoppingAdd(item="flour", quantity=2, more=True))
    assert sorted(await listed(service)) == [
        ("apples", 4.0, None, False), ("flour", 2.0, None, False), ("milk", 4.0, "l", False)
    ]  # fmt: skip


async def test_a_dozen_and_a_count_add_up_one_by_one(service: ActionService) -> None:
    """ "1 dozen eggs" and two more are 14 eggs, not 3 dozen; 6 eggs and a dozen, 18."""
    await run(service, c.ShoppingAdd(item="eggs", quantity=1, unit="dozen"))
    receipt = await run(service, c.ShoppingAdd(item="eggs", quantity=2, more=True))
    assert [(i.name, i.quantity, i.unit) for i in receipt.items] == [("eggs", 14.0, None)]
    await run(service, c.ShoppingAdd(item="rolls", quantity=6))
    await run(service, c.ShoppingAdd(item="rolls", quantity=1, unit="dozen"))
    await run(service, c.ShoppingAdd(item="bagels", quantity=1, unit="dozen"))
    await run(service, c.ShoppingAdd(item="bagels", quantity=1, unit="dozen", more=True))
    assert sorted(await listed(service)) == [
        ("bagels", 2.0, "dozen", False), ("eggs", 14.0, None, False), ("rolls", 18.0, None, False)
    ]  # fmt: skip


async def test_setting_a_quantity_replaces_it(service: ActionService) -> None:
    await run(service, c.ShoppingAdd(item="apples", quantity=2))
    receipt = await run(service, c.ShoppingSetQuantity(item="apple", quantity=3))
    assert (receipt.status, receipt.action) == ("success", "shopping.set_quantity")
    assert [(i.name, i.quantity, i.unit) for i in receipt.items] == [("apples", 3.0, None)]
    assert receipt.details["previous"]["quantity"] == 2
    assert await listed(service) == [("apples", 3.0, None, False)]
    same = await run(service, c.ShoppingSetQuantity(item="apples", quantity=3))
    assert (same.status, same.reason) == ("no_change", "same_quantity")


async def test_a_quantity_said_without_a_unit_keeps_the_items_own(
    service: ActionService,
) -> None:
    await run(service, c.ShoppingAdd(item="milk", quantity=2, unit="l"))
    await run(service, c.ShoppingAdd(item="eggs", quantity=1, unit="dozen"))
    await run(service, c.ShoppingAdd(item="bread"))
    await run(service, c.ShoppingSetQuantity(item="milk", quantity=3))
    # a dozen counts: "make that six eggs" is six eggs, not six dozen
    await run(service, c.ShoppingSetQuantity(item="eggs", quantity=6))
    await run(service, c.ShoppingSetQuantity(item="bread", quantity=2))
    # another unit said replaces the item's
    gallon = await run(service, c.ShoppingSetQuantity(item="milk", quantity=1, unit="gallon"))
    assert gallon.items[0].unit == "gallon"
    assert sorted(await listed(service)) == [
        ("bread", 2.0, None, False),
        ("eggs", 6.0, None, False),
        ("milk", 1.0, "gallon", False),
    ]


async def test_setting_the_quantity_of_an_item_not_on_the_list_adds_nothing(
    service: ActionService,
) -> None:
    receipt = await run(service, c.ShoppingSetQuantity(item="pears", quantity=4))
    assert (receipt.status, receipt.reason) == ("not_found", "not_on_list")
    assert await listed(service) == []


async def test_a_checked_off_item_keeps_its_check_when_its_quantity_is_set(
    service: ActionService,
) -> None:
    await run(service, c.ShoppingAdd(item="coffee", quantity=1, unit="pack"))
    await run(service, c.ShoppingComplete(item="coffee"))
    receipt = await run(service, c.ShoppingSetQuantity(item="coffee", quantity=2))
    assert receipt.status == "success" and receipt.items[0].completed
    assert await listed(service) == [("coffee", 2.0, "pack", True)]


async def test_an_amount_taken_off_leaves_the_rest(service: ActionService) -> None:
    """ "take two apples off the list": six listed are four (the rest said as the
    total), in the item's own unit when none is said, one by one from a dozen; the
    entry goes when nothing is left or it has no amount; other units change nothing."""
    await run(service, c.ShoppingAdd(item="apples", quantity=6))
    some = await run(service, c.ShoppingRemove(item="apples", quantity=2))
    assert (some.status, some.details["reduced"]) == ("success", True)
    assert some.details["previous"]["quantity"] == 6
    assert await listed(service) == [("apples", 4.0, None, False)]
    await run(service, c.ShoppingAdd(item="milk", quantity=3, unit="l"))
    await run(service, c.ShoppingRemove(item="milk", quantity=1))  # a liter of it
    await run(service, c.ShoppingAdd(item="eggs", quantity=1, unit="dozen"))
    await run(service, c.ShoppingRemove(item="eggs", quantity=4))  # four of the twelve
    assert sorted(await listed(service)) == [
        ("apples", 4.0, None, False),
        ("eggs", 8.0, None, False),
        ("milk", 2.0, "l", False),
    ]
    other = await run(service, c.ShoppingRemove(item="milk", quantity=2, unit="bottle"))
    assert (other.status, other.reason) == ("no_change", "unit_conflict")
    gone = await run(service, c.ShoppingRemove(item="apples", quantity=5))  # more than left
    assert (gone.status, gone.details.get("reduced")) == ("success", None)
    await run(service, c.ShoppingAdd(item="bread"))
    await run(service, c.ShoppingRemove(item="bread", quantity=2))  # no amount of its own
    assert sorted(await listed(service)) == [("eggs", 8.0, None, False), ("milk", 2.0, "l", False)]


async def test_an_amount_bought_leaves_the_rest_to_buy(service: ActionService) -> None:
    """ "I bought two apples" checked off all six listed: four stay open to buy. The
    entry is checked off when no more is listed, it has no amount of its own, or the
    amount bought is in another unit; a purchase memory is kept either way."""
    await run(service, c.ShoppingAdd(item="apples", quantity=6))
    some = await run(service, c.ShoppingComplete(item="apples", quantity=2))
    assert (some.status, some.details["reduced"]) == ("success", True)
    assert some.details["previous"]["quantity"] == 6
    assert [(i.name, i.quantity, i.completed) for i in some.items] == [("apples", 4.0, False)]
    assert await listed(service) == [("apples", 4.0, None, False)]
    await run(service, c.ShoppingAdd(item="eggs", quantity=1, unit="dozen"))
    await run(service, c.ShoppingComplete(item="eggs", quantity=6))  # six of the twelve
    await run(service, c.ShoppingAdd(item="milk", quantity=2, unit="l"))
    other = await run(service, c.ShoppingComplete(item="milk", quantity=1, unit="gallon"))
    assert (other.status, other.details.get("reduced")) == ("success", None)
    await run(service, c.ShoppingAdd(item="bread"))
    await run(service, c.ShoppingComplete(item="bread", quantity=2))  # no amount of its own
    assert sorted(await listed(service)) == [
        ("apples", 4.0, None, False),
        ("bread", None, None, True),
        ("eggs", 6.0, None, False),
        ("milk", 2.0, "l", True),
    ]
    rest = await run(service, c.ShoppingComplete(item="apples", quantity=4))  # all that's left
    assert (rest.status, rest.details.get("reduced")) == ("success", None)
    again = await run(service, c.ShoppingComplete(item="apples", quantity=1))
    assert (again.status, again.reason) == ("no_change", "already_completed")
    missing = await run(service, c.ShoppingComplete(item="pears", quantity=2))
    assert (missing.status, missing.reason) == ("not_found", "not_on_list")
    assert ("apples", 4.0, None, True) in await listed(service)


async def test_plural_and_singular_are_the_same_item(service: ActionService) -> None:
    await run(service, c.ShoppingAdd(item="tomatoes", quantity=3))
    receipt = await run(service, c.ShoppingRemove(item="tomato"))
    assert receipt.status == "success"
    assert await listed(service) == []


async def test_an_item_written_with_or_without_its_spaces_is_one_item(
    service: ActionService,
) -> None:
    await run(service, c.ShoppingAdd(item="corn flakes"))
    again = await run(service, c.ShoppingAdd(item="cornflakes"))
    assert (again.status, again.reason) == ("no_change", "already_on_list")
    await run(service, c.ShoppingAdd(item="ice-cream", quantity=1, unit="l"))
    merged = await run(service, c.ShoppingAdd(item="ice cream", quantity=1, unit="l"))
    assert merged.status == "success" and merged.items[0].quantity == 2
    done = await run(service, c.ShoppingComplete(item="Cornflakes"))
    assert done.status == "success"
    assert sorted(await listed(service)) == [
        ("corn flakes", None, None, True),
        ("ice-cream", 2.0, "l", False),
    ]


async def test_different_items_never_merge(service: ActionService) -> None:
    await run(service, c.ShoppingAdd(item="milk"))
    receipt = await run(service, c.ShoppingAdd(item="oat milk"))
    assert receipt.status == "success"
    assert sorted(n for n, *_ in await listed(service)) == ["milk", "oat milk"]


async def test_complete_uncomplete_clear(service: ActionService) -> None:
    await run(service, c.ShoppingAdd(item="bread"))
    await run(service, c.ShoppingAdd(item="jam"))
    done = await run(service, c.ShoppingComplete(item="bread"))
    assert done.status == "success" and done.items[0].completed
    again = await run(service, c.ShoppingComplete(item="bread"))
    assert (again.status, again.reason) == ("no_change", "already_completed")
    open_only = await run(service, c.ShoppingList())
    assert [i.name for i in open_only.items] == ["jam"]
    back = await run(service, c.ShoppingUncomplete(item="bread"))
    assert back.status == "success" and not back.items[0].completed
    await run(service, c.ShoppingComplete(item="jam"))
    cleared = await run(service, c.ShoppingClearCompleted())
    assert cleared.status == "success" and [i.name for i in cleared.items] == ["jam"]
    assert await listed(service) == [("bread", None, None, False)]
    nothing = await run(service, c.ShoppingClearCompleted())
    assert nothing.status == "no_change"


async def test_adding_a_completed_item_reopens_it(service: ActionService) -> None:
    await run(service, c.ShoppingAdd(item="coffee", quantity=1, unit="pack"))
    await run(service, c.ShoppingComplete(item="coffee"))
    receipt = await run(service, c.ShoppingAdd(item="coffee", quantity=2, unit="pack"))
    assert receipt.status == "success" and receipt.details["reopened"] is True
    assert await listed(service) == [("coffee", 2.0, "pack", False)]


async def test_asking_about_one_item(service: ActionService) -> None:
    await run(service, c.ShoppingAdd(item="oat milk", quantity=2, unit="l"))
    await run(service, c.ShoppingAdd(item="eggs"))
    await run(service, c.ShoppingComplete(item="eggs"))
    found = await run(service, c.ShoppingList(item="Oat Milks"))
    assert (found.status, found.action, found.details["item"]) == ("success", "shopping.list",
                                                                   "oat milk")  # fmt: skip
    assert [(i.name, i.quantity, i.unit, i.completed) for i in found.items] == [
        ("oat milk", 2.0, "l", False)
    ]
    bought = await run(service, c.ShoppingList(item="egg"))
    assert [(i.name, i.completed) for i in bought.items] == [("eggs", True)]
    missing = await run(service, c.ShoppingList(item="milk"))  # never "oat milk"
    assert (missing.status, missing.reason) == ("not_found", "not_on_list")
    assert [i.name for i in missing.items] == ["milk"]
    assert await listed(service) == [("oat milk", 2.0, "l", False), ("eggs", None, None, True)]


async def test_clearing_the_whole_list(service: ActionService) -> None:
    await run(service, c.ShoppingAdd(item="milk", quantity=2, unit="l"))
    await run(service, c.ShoppingAdd(item="eggs"))
    await run(service, c.ShoppingComplete(item="eggs"))
    cleared = await run(service, c.ShoppingClear())
    assert (cleared.status, cleared.details["count"]) == ("success", 2)
    assert [(i.name, i.quantity, i.completed) for i in cleared.items] == [
        ("milk", 2.0, False), ("eggs", None, True),
    ]  # fmt: skip
    assert await listed(service) == []
    again = await run(service, c.ShoppingClear())
    assert (again.status, again.reason) == ("no_change", "list_empty")


async def test_removing_a_missing_item_is_not_found(service: ActionService) -> None:
    receipt = await run(service, c.ShoppingRemove(item="caviar"))
    assert (receipt.status, receipt.reason) == ("not_found", "not_on_list")


async def test_same_request_id_returns_original_receipt_and_changes_nothing(
    service: ActionService,
) -> None:
    first = await run(service, c.ShoppingAdd(item="milk", quantity=1, unit="l"), "req-1")
    second = await run(service, c.ShoppingAdd(item="milk", quantity=1, unit="l"), "req-1")
    assert second.receipt_id == first.receipt_id
    assert second.duplicate is True
    assert await listed(service) == [("milk", 1.0, "l", False)]


async def test_a_rehearsal_tells_the_receipts_and_changes_nothing(service: ActionService) -> None:
    await run(service, c.ShoppingAdd(item="milk"))
    heard: list[object] = []
    service.on_receipts(heard.append)
    requests = [
        Request(request_id="dry-1", source=SOURCE, command=c.ShoppingAdd(item="eggs", quantity=6)),
        Request(request_id="dry-2", source=SOURCE, command=c.ShoppingRemove(item="caviar")),
        Request(request_id="dry-3", source=SOURCE, command=c.ShoppingRemove(item="milk")),
    ]
    rehearsed = await service.rehearse(requests)
    assert [(r.status, r.reason) for r in rehearsed] == [
        ("success", None), ("not_found", "not_on_list"), ("success", None)
    ]  # fmt: skip
    assert all(r.details["dry_run"] for r in rehearsed)
    assert heard == []  # nothing committed, so nobody is told
    assert await listed(service) == [("milk", None, None, False)]
    # the request ids are still free: a real run does it, and is no duplicate
    done = await run(service, c.ShoppingAdd(item="eggs", quantity=6), "dry-1")
    assert (done.status, done.duplicate, done.details.get("dry_run")) == ("success", False, None)
    assert sorted(await listed(service)) == [
        ("eggs", 6.0, None, False),
        ("milk", None, None, False),
    ]


async def test_rejection_is_recorded_and_changes_nothing(service: ActionService) -> None:
    result = await service.execute(
        Request(request_id="bad-1", source=SOURCE, rejection="invalid_json", action=None)
    )
    assert result.stored and result.receipt.status == "rejected"
    assert result.receipt.reason == "invalid_json"
    assert await listed(service) == []


def at(day: dt.date, hour: int, minute: int = 0) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(hour, minute), tzinfo=TZ)


async def test_agenda_add_list_next_move_remove(service: ActionService) -> None:
    tomorrow = dt.datetime.now(TZ).date() + dt.timedelta(days=1)
    added = await run(
        service,
        c.AgendaAdd(
            title="Dentist", start=at(tomorrow, 15), duration_minutes=45, location="Clinic"
        ),
    )
    assert added.status == "success"
    assert added.events[0].start == at(tomorrow, 15).isoformat()
    assert added.events[0].end == at(tomorrow, 15, 45).isoformat()
    await run(service, c.AgendaAdd(title="Piano lesson", start=at(tomorrow, 9)))
    day_list = await run(service, c.AgendaList(range="tomorrow"))
    assert [e.title for e in day_list.events] == ["Piano lesson", "Dentist"]
    today = await run(service, c.AgendaList(range="today"))
    assert today.events == []
    nxt = await run(service, c.AgendaNext())
    assert nxt.events[0].title == "Piano lesson"
    moved = await run(service, c.AgendaMove(title="dentist", new_start=at(tomorrow, 16)))
    assert moved.status == "success"
    assert moved.events[0].start == at(tomorrow, 16).isoformat()
    assert moved.events[0].end == at(tomorrow, 16, 45).isoformat()
    removed = await run(service, c.AgendaRemove(title="piano lesson"))
    assert removed.status == "success"
    left = await run(service, c.AgendaList(range="week"))
    assert [e.title for e in left.events] == ["Dentist"]


async def test_all_day_event_and_day_listing(service: ActionService) -> None:
    day = dt.datetime.now(TZ).date() + dt.timedelta(days=3)
    added = await run(service, c.AgendaAdd(title="Grandma's birthday", start=day))
    assert added.events[0].all_day and added.events[0].start == day.isoformat()
    listed_day = await run(service, c.AgendaList(range="day", day=day))
    assert [e.title for e in listed_day.events] == ["Grandma's birthday"]
    other_day = await run(service, c.AgendaList(range="day", day=day + dt.timedelta(days=1)))
    assert other_day.events == []


async def test_next_by_title_is_the_soonest_entry_of_that_title(service: ActionService) -> None:
    today = dt.datetime.now(TZ).date()
    yesterday = today - dt.timedelta(days=1)
    await run(service, c.AgendaAdd(title="Dentist appointment", start=at(yesterday, 15)))
    await run(service, c.AgendaAdd(title="Dentist", start=at(today + dt.timedelta(days=9), 9)))
    await run(service, c.AgendaAdd(title="Dentist appointment",
                                   start=at(today + dt.timedelta(days=2), 15)))  # fmt: skip
    await run(service, c.AgendaAdd(title="Gym", start=at(today + dt.timedelta(days=1), 7)))
    found = await run(service, c.AgendaNext(title="dentist"))
    assert found.status == "success"
    assert [(e.title, e.start) for e in found.events] == [
        ("Dentist appointment", at(today + dt.timedelta(days=2), 15).isoformat())
    ]
    assert (await run(service, c.AgendaNext())).events[0].title == "Gym"
    missing = await run(service, c.AgendaNext(title="piano lesson"))
    assert (missing.status, missing.reason) == ("not_found", "no_matching_event")
    assert missing.details["title"] == "piano lesson"


async def test_a_move_to_a_time_keeps_the_entry_on_its_day(service: ActionService) -> None:
    day = dt.datetime.now(TZ).date() + dt.timedelta(days=3)
    await run(service, c.AgendaAdd(title="Dentist", start=at(day, 10), duration_minutes=45))
    await run(service, c.AgendaAdd(title="Picnic", start=day + dt.timedelta(days=1)))
    moved = await run(service, c.AgendaMove(title="dentist", new_time=dt.time(16)))
    assert moved.status == "success"
    assert (moved.events[0].start, moved.events[0].end) == (
        at(day, 16).isoformat(),
        at(day, 16, 45).isoformat(),
    )
    # an all-day entry moved to a time gets that time on its day
    timed = await run(service, c.AgendaMove(title="picnic", new_time=dt.time(12, 30)))
    assert timed.events[0].start == at(day + dt.timedelta(days=1), 12, 30).isoformat()
    assert not timed.events[0].all_day
    again = await run(service, c.AgendaMove(title="dentist", new_time=dt.time(16)))
    assert (again.status, again.reason) == ("no_change", "same_time")


async def test_a_move_to_an_hour_of_either_half_takes_the_nearer(service: ActionService) -> None:
    # "move dinner to 8": dinner at 7 pm goes to 8 pm, breakfast at 7 am to 8 am
    day = dt.datetime.now(TZ).date() + dt.timedelta(days=2)
    await run(service, c.AgendaAdd(title="Dinner", start=at(day, 19), duration_minutes=90))
    await run(service, c.AgendaAdd(title="Breakfast", start=at(day, 7)))
    await run(service, c.AgendaAdd(title="Fair", start=day))
    eight = dt.time(8)
    dinner = await run(service, c.AgendaMove(title="dinner", new_time=eight, either_half=True))
    assert (dinner.events[0].start, dinner.events[0].end) == (
        at(day, 20).isoformat(),
        at(day, 21, 30).isoformat(),
    )
    breakfast = await run(
        service, c.AgendaMove(title="breakfast", new_time=eight, either_half=True)
    )
    assert breakfast.events[0].start == at(day, 8).isoformat()
    # said as guessed in the evening ("at 7" is 19:00): a morning entry stays a morning's
    seven_pm = dt.time(19)
    early = await run(service, c.AgendaMove(title="breakfast", new_time=seven_pm, either_half=True))
    assert early.events[0].start == at(day, 7).isoformat()
    # an all-day entry has no time to be near: the time as given
    fair = await run(service, c.AgendaMove(title="fair", new_time=eight, either_half=True))
    assert fair.events[0].start == at(day, 8).isoformat()


async def test_a_move_to_a_day_keeps_the_entrys_time(service: ActionService) -> None:
    # "move the dentist to Friday": the same time on Friday, for as long as it was
    day = dt.datetime.now(TZ).date() + dt.timedelta(days=3)
    await run(service, c.AgendaAdd(title="Dentist", start=at(day, 10), duration_minutes=45))
    await run(service, c.AgendaAdd(title="Picnic", start=day))
    later = day + dt.timedelta(days=2)
    moved = await run(service, c.AgendaMove(title="dentist", new_start=later))
    assert moved.status == "success"
    assert (moved.events[0].start, moved.events[0].end) == (
        at(later, 10).isoformat(),
        at(later, 10, 45).isoformat(),
    )
    assert not moved.events[0].all_day
    assert moved.details["previous"]["start"] == at(day, 10).isoformat()
    # an all-day entry stays all-day on its new day
    picnic = await run(service, c.AgendaMove(title="picnic", new_start=later))
    assert picnic.events[0].all_day and picnic.events[0].start == later.isoformat()
    same = await run(service, c.AgendaMove(title="dentist", new_start=later))
    assert (same.status, same.reason) == ("no_change", "same_time")


async def test_a_move_by_an_amount_of_time_counts_from_the_entry(service: ActionService) -> None:
    """ "push the dentist back a week": the same time a week on, as long as it was;
    "an hour earlier" on the clock; an all-day entry by whole days only."""
    day = dt.datetime.now(TZ).date() + dt.timedelta(days=3)
    await run(service, c.AgendaAdd(title="Dentist", start=at(day, 10), duration_minutes=45))
    await run(service, c.AgendaAdd(title="Picnic", start=day))
    week = await run(service, c.AgendaMove(title="dentist", shift_minutes=7 * 24 * 60))
    later = day + dt.timedelta(days=7)
    assert week.status == "success"
    assert (week.events[0].start, week.events[0].end) == (
        at(later, 10).isoformat(),
        at(later, 10, 45).isoformat(),
    )
    earlier = await run(service, c.AgendaMove(title="dentist", shift_minutes=-90))
    assert earlier.events[0].start == at(later, 8, 30).isoformat()
    picnic = await run(service, c.AgendaMove(title="picnic", shift_minutes=-2 * 24 * 60))
    assert picnic.events[0].all_day
    assert picnic.events[0].start == (day - dt.timedelta(days=2)).isoformat()
    hours = await run(service, c.AgendaMove(title="picnic", shift_minutes=60))
    assert (hours.status, hours.reason) == ("rejected", "all_day_shift")
    missing = await run(service, c.AgendaMove(title="gym", shift_minutes=60))
    assert missing.status == "not_found"
    kept = await run(service, c.AgendaList(range="day", day=day - dt.timedelta(days=2)))
    assert [(e.title, e.all_day) for e in kept.events] == [("Picnic", True)]


async def test_a_move_by_an_amount_of_time_asks_where_the_entry_would_go(
    service: ActionService,
) -> None:
    """The question names the entry's new day and time, so a yes runs what was heard;
    with no such entry there is nothing to ask. Nothing moves either way."""
    day = dt.datetime.now(TZ).date() + dt.timedelta(days=2)
    await run(service, c.AgendaAdd(title="Dentist", start=at(day, 15)))
    shift = c.AgendaMove(title="dentist", shift_minutes=7 * 24 * 60)
    asked = await service.execute(Request.proposing(new_request_id(), SOURCE, [shift], {}))
    receipt = asked.receipt
    assert (receipt.status, receipt.action) == ("needs_confirmation", "agenda.move")
    week = day + dt.timedelta(days=7)
    assert [(e.title, e.start) for e in receipt.events] == [("Dentist", at(week, 15).isoformat())]
    assert receipt.details["proposal"] == [shift.model_dump(mode="json")]
    gym = c.AgendaMove(title="gym", shift_minutes=60)
    missing = await service.execute(Request.proposing(new_request_id(), SOURCE, [gym], {}))
    assert (missing.receipt.status, missing.receipt.reason) == ("not_found", "no_matching_event")
    listed = await run(service, c.AgendaList(range="day", day=day))
    assert [e.start for e in listed.events] == [at(day, 15).isoformat()]


async def test_next_week_lists_monday_to_sunday_of_the_next_calendar_week(
    service: ActionService,
) -> None:
    today = dt.datetime.now(TZ).date()
    monday = today + dt.timedelta(days=7 - today.weekday())
    for title, day, hour in [
        ("Before", monday - dt.timedelta(days=1), 23),
        ("First", monday, 0),
        ("Last", monday + dt.timedelta(days=6), 22),
        ("After", monday + dt.timedelta(days=7), 0),
    ]:
        await run(service, c.AgendaAdd(title=title, start=at(day, hour)))
    listed = await run(service, c.AgendaList(range="next_week"))
    assert [e.title for e in listed.events] == ["First", "Last"]
    assert listed.details["since"] == at(monday, 0).isoformat()


async def test_ambiguous_remove_changes_nothing(service: ActionService) -> None:
    base = dt.datetime.now(TZ).date() + dt.timedelta(days=1)
    await run(service, c.AgendaAdd(title="Dentist", start=at(base, 10)))
    await run(service, c.AgendaAdd(title="Dentist", start=at(base + dt.timedelta(days=7), 10)))
    receipt = await run(service, c.AgendaRemove(title="dentist"))
    assert (receipt.status, receipt.reason) == ("rejected", "ambiguous")
    assert len(receipt.events) == 2
    on_day = await run(service, c.AgendaRemove(title="dentist", day=base))
    assert on_day.status == "success"
    week = await run(service, c.AgendaList(range="week"))
    assert len(week.events) == 0 or all(e.title == "Dentist" for e in week.events)


async def test_an_entry_said_as_an_appointment_is_found_by_its_title(
    service: ActionService,
) -> None:
    day = dt.datetime.now(TZ).date() + dt.timedelta(days=2)
    await run(service, c.AgendaAdd(title="dentist", start=at(day, 10)))
    await run(service, c.AgendaAdd(title="call mom", start=at(day, 17)))
    await run(service, c.AgendaAdd(title="team lunch", start=at(day, 12)))
    await run(service, c.AgendaAdd(title="Reunião de pais", start=at(day, 19)))
    await run(service, c.AgendaAdd(title="appointment with the vet", start=at(day, 8)))
    vet = await run(service, c.AgendaRemove(title="vet appointment"))
    assert [e.title for e in vet.events] == ["appointment with the vet"]
    asked = await run(service, c.AgendaNext(title="dentist appointment"))
    assert [e.title for e in asked.events] == ["dentist"]
    moved = await run(service, c.AgendaMove(title="my dentist appointment", new_time=dt.time(11)))
    assert (moved.status, moved.events[0].start) == ("success", at(day, 11).isoformat())
    # only an entry's whole title: "team" of "team meeting" is no "team lunch"
    other = await run(service, c.AgendaRemove(title="team meeting"))
    assert (other.status, other.reason) == ("not_found", "no_matching_event")
    reminder = await run(service, c.AgendaRemove(title="reminder to call mom"))
    assert [e.title for e in reminder.events] == ["call mom"]
    removed = await run(service, c.AgendaRemove(title="dentist appointment"))
    assert (removed.status, [e.title for e in removed.events]) == ("success", ["dentist"])
    # a title that holds the noun itself is found as said
    pais = await run(service, c.AgendaRemove(title="reunião de pais"))
    assert [e.title for e in pais.events] == ["Reunião de pais"]
    left = await run(service, c.AgendaList(range="day", day=day))
    assert [e.title for e in left.events] == ["team lunch"]


async def test_remove_missing_event_is_not_found(service: ActionService) -> None:
    receipt = await run(service, c.AgendaRemove(title="opera"))
    assert (receipt.status, receipt.reason) == ("not_found", "no_matching_event")


async def test_a_command_failing_in_the_database_does_not_sink_its_batch(
    service: ActionService, database: Database
) -> None:
    async with database.transaction() as conn:
        await conn.execute(
            "CREATE FUNCTION poison() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "IF NEW.name = 'poison' THEN RAISE EXCEPTION 'poisoned'; END IF; RETURN NEW; END $$"
        )
        await conn.execute(
            "CREATE TRIGGER poison BEFORE INSERT ON shopping_items "
            "FOR EACH ROW EXECUTE FUNCTION poison()"
        )
    requests = [
        Request(request_id=f"batch-{name}", source=SOURCE, command=c.ShoppingAdd(item=name))
        for name in ("milk", "poison", "eggs")
    ]
    results = await service.execute_batch(requests)
    assert [r.receipt.status for r in results] == ["success", "rejected", "success"]
    assert results[1].receipt.reason is not None
    assert results[1].receipt.reason.startswith("database_error")
    assert all(r.stored for r in results)
    assert sorted(n for n, *_ in await listed(service)) == ["eggs", "milk"]
    # The rejection is final for that request id.
    again = await service.execute(requests[1])
    assert again.receipt.duplicate and again.receipt.status == "rejected"


async def test_a_defect_in_one_command_refuses_it_and_runs_the_others(
    service: ActionService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A defect in one action (not a database error): here the agenda's handler breaks.
    async def broken(ctx: object, command: object) -> object:
        raise OverflowError("date value out of range")

    monkeypatch.setitem(HANDLERS, "agenda.add", broken)
    source = Source(kind="mqtt", user="household")
    tomorrow = dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1)
    requests = [
        Request(new_request_id(), source, command=c.ShoppingAdd(item="milk")),
        Request(new_request_id(), source, command=c.AgendaAdd(title="x", start=tomorrow)),
        Request(new_request_id(), source, command=c.ShoppingAdd(item="eggs")),
    ]
    results = await service.execute_batch(requests)
    assert [(r.receipt.status, r.receipt.reason) for r in results] == [
        ("success", None),
        ("rejected", "internal_error: nothing was changed"),
        ("success", None),
    ]
    assert all(r.stored for r in results)
    assert sorted(i[0] for i in await listed(service)) == ["eggs", "milk"]
