"""The guard: good and bad sentences for each receipt kind, English and Portuguese."""

from __future__ import annotations

import datetime as dt

import pytest

from appliance.narration import GuardResult, check
from appliance.narration.samples import ENGLISH, PORTUGUESE, event, item, receipt, samples
from appliance.narration.tokens import numbers, tokenize
from appliance.protocol.receipts import Receipt

BRT = dt.timezone(dt.timedelta(hours=-3))
NOW = dt.datetime(2026, 11, 30, 10, 0, tzinfo=BRT)  # a Monday
EN = samples(NOW, ENGLISH)
PT = samples(NOW, PORTUGUESE)


def verdict(sentence: str, r: Receipt, lang: str = "en") -> GuardResult:
    return check(sentence, r, lang, now=NOW)


GOOD_EN: list[tuple[str, str]] = [
    ("add", "I added 2 liters of milk to your shopping list."),
    ("add", "Added 2 liters of milk to the list."),
    ("add", "I added two liters of milk to your list."),
    ("add", "I've added 2 l of milk to your shopping list."),
    ("add", "OK, I put 2 liters of milk on the shopping list."),
    ("add_plain", "I added eggs to your shopping list."),
    ("add_plain", "I added Eggs to the list."),
    ("add_plain", "I added egg to the list."),
    ("add_count", "I added twelve eggs to your list."),
    ("add_merged", "Your shopping list now has 3 liters of milk."),
    ("add_merged", "I added 1 more liter of milk; you now have 3 liters."),
    ("add_reopened", "I put 1 liter of milk back on your list."),
    ("add_already", "Milk is already on your list."),
    ("add_already", "Milk was already on the list, so I didn't add it again."),
    ("add_already_plural", "You already have eggs on your shopping list."),
    ("add_unit_conflict", "Rice is already on the list as 1 kilo, so I didn't change it."),
    ("add_confirm", "Did you want to add oat milk?"),
    ("add_confirm", "Did you want me to add oat milk to your list?"),
    ("add_confirm_amount", "Did you want to add 3 eggs?"),
    ("remove_some", "The shopping list now has 4 eggs."),
    ("remove_some", "You now have 4 eggs on your list."),
    ("complete_some", "The shopping list still has 4 eggs."),
    ("complete_some", "You still need 4 eggs."),
    ("add_confirm_amount", "Should I add three eggs to the list?"),
    ("add_db_down", "Sorry, I couldn't reach the database, so nothing was changed."),
    ("remove", "I removed milk from your shopping list."),
    ("remove", "I took milk off the list."),
    ("remove_missing", "Eggs aren't on your list."),
    ("remove_missing", "I couldn't find eggs on the shopping list."),
    ("complete", "I checked off milk."),
    ("complete", "I marked milk as bought."),
    ("complete_already", "Eggs are already checked off."),
    ("uncomplete", "I put milk back on your list."),
    ("uncomplete_not_done", "Milk isn't checked off."),
    ("list", "You have 3 items on your list: milk, eggs and bread."),
    ("list", "Your shopping list has milk, eggs, and bread."),
    ("list_long", "You have 11 items, including milk, eggs and bread."),
    ("list_long", "Your list has milk, eggs, bread, rice, apples and 6 more."),
    ("list_empty", "Your shopping list is empty."),
    ("list_empty", "There's nothing on your shopping list."),
    ("find", "Yes, you have 2 liters of milk on your list."),
    ("find", "Yes, 2 liters of milk are on the shopping list."),
    ("find_done", "Eggs are on your list, but they are checked off."),
    ("find_done", "Eggs are on the list, ticked off."),
    ("find_missing", "Bread isn't on your shopping list."),
    ("find_missing", "No, bread is not on the list."),
    ("clear", "I removed 2 checked-off items: milk and bread."),
    ("clear", "I cleared milk and bread from the list."),
    ("clear_nothing", "There's nothing checked off to clear."),
    ("next", "Your next appointment is the dentist tomorrow at 3 PM."),
    ("next", "Next up: the dentist, tomorrow at 3 p.m."),
    ("next", "Your next appointment is the dentist tomorrow at 3."),
    ("next", "You have the dentist tomorrow at 15:00."),
    ("next", "Your next event is dentist on Tuesday at 3 PM."),
    ("next", "The dentist is tomorrow at three PM."),
    ("next_none", "You have no upcoming appointments."),
    ("agenda_add", "I added the dentist to your agenda for tomorrow at 3 PM."),
    ("agenda_add", "I scheduled the dentist for tomorrow at 3 PM."),
    ("agenda_add_all_day", "I added the dentist to your calendar for Friday."),
    ("agenda_add_far", "I added the dentist for December 20 at 4 PM."),
    ("agenda_today", "You have 2 events today: the dentist at 3 PM and the gym at 6:30 PM."),
    ("agenda_empty", "Your agenda is empty tomorrow."),
    ("move", "I moved the dentist to Friday at 4 PM."),
    ("move", "I moved the dentist from tomorrow at 3 PM to Friday at 4 PM."),
    ("move", "The dentist was rescheduled to Friday at 4 PM."),
    ("move_same", "The dentist is already on Friday at 4 PM."),
    ("move_ambiguous", "There are two events called dentist; which day?"),
    ("move_ambiguous", "I found two dentist appointments. Which one did you mean?"),
    ("agenda_remove", "I removed the dentist tomorrow at 3 PM from your agenda."),
    ("agenda_remove_missing", "I couldn't find that event on your agenda."),
    ("not_understood", "Sorry, I didn't understand that."),
]

BAD_EN: list[tuple[str, str, str]] = [
    # (a) the outcome
    ("add", "Milk is already on your list.", "failure"),
    ("add", "Sorry, I couldn't add milk.", "failure"),
    ("add", "Did you want to add 2 liters of milk?", "question"),
    ("add", "2 liters of milk.", "does not say it was done"),
    ("add", "I removed 2 liters of milk from the list.", "another action"),
    ("add_plain", "I removed eggs.", "another action"),
    ("add_already", "I added milk to your shopping list.", "does not say it failed"),
    ("add_already", "Milk is already there; I added it again.", "claims it was done"),
    ("add_merged", "I added 3 liters of milk.", "new total"),
    ("remove_missing", "I removed eggs from your list.", "does not say it failed"),
    ("add_db_down", "I added it to the shopping list.", "does not say it failed"),
    ("add_confirm", "I added oat milk to your list.", "question"),
    ("add_confirm", "Did you want to remove oat milk?", "another action"),
    ("complete", "I put milk back on the list.", "another action"),
    ("complete_already", "I didn't add eggs to the list.", "another action"),
    ("list", "I added milk, eggs and bread.", "another action"),
    ("list", "You don't have milk, eggs or bread.", "failure"),
    ("next_none", "Your next appointment is tomorrow.", "does not say it failed"),
    ("move", "I removed the dentist on Friday at 4 PM.", "another action"),
    # (b) names
    ("add", "I added 2 liters to your list.", "does not name: milk"),
    ("list", "You have 3 items on your list: milk and eggs.", "does not name: bread"),
    ("list_long", "You have 11 items: milk, eggs and 9 more.", "does not name"),
    ("add_confirm", "Did you want to add milk?", "does not name: oat milk"),
    # two of six taken off: "removed eggs" sounds like all of them
    ("remove_some", "I removed eggs from the list.", "does not say the new quantity"),
    # two of six bought: "checked off eggs" sounds like all of them
    ("complete_some", "I checked off eggs.", "does not say the new quantity"),
    # a yes adds three: the question says so
    ("add_confirm_amount", "Did you want to add eggs?", "does not say the quantity asked about"),
    # a yes takes two off, or checks two off: not the whole entry
    ("remove_confirm_amount", "Did you want to remove eggs?", "does not say the quantity"),
    ("complete_confirm_amount", "Did you want to check off eggs?", "does not say the quantity"),
    ("next", "Your next appointment is tomorrow at 3 PM.", "does not name: dentist"),
    ("next", "Your next appointment is the dentist.", "does not say the time"),
    ("agenda_add_all_day", "I added the dentist to your agenda.", "does not say the day"),
    # (c) nothing that is not in the receipt
    ("add", "I added 3 liters of milk to your list.", "number not in the receipt: 3"),
    ("add", "I added three liters of milk to your list.", "number not in the receipt: 3"),
    ("add", "I added 2 kilos of milk to your list.", "unit not in the receipt"),
    ("add", "I added a liter of milk to your list.", "amount not in the receipt"),
    ("add", "I added 2 liters of milk and bread to your list.", "does not: bread"),
    ("add", "I added 2 liters of oat milk to your list.", "does not: oat"),
    ("add", "I added 2 liters of milk to your list for tomorrow.", "date not in the receipt"),
    ("add_plain", "I added a dozen eggs to your list.", "unit not in the receipt"),
    ("add_plain", "I added 6 eggs to your list.", "number not in the receipt: 6"),
    ("list", "You have 4 items on your list: milk, eggs and bread.", "number not"),
    ("next", "Your next appointment is the dentist on Friday at 3 PM.", "weekday not"),
    ("next", "Your next appointment is the dentist tomorrow at 3 AM.", "time not"),
    ("next", "Your next appointment is the dentist tomorrow at 4 PM.", "time not"),
    ("next", "Your next appointment is the dentist today at 3 PM.", "date not"),
    ("next", "Your next appointment is the dentist tomorrow at 3:30 PM.", "time not"),
    ("next", "Your next appointment is the dentist in March at 3 PM.", "month not"),
    ("next", "Your next appointment is the dentist with Ana tomorrow at 3 PM.", "does not: ana"),
    ("move", "I moved the dentist to Saturday at 4 PM.", "weekday not"),
    ("move_ambiguous", "There are three events called dentist; which day?", "number not"),
    # (d) shape
    ("add", "I added **2 liters** of milk to your list.", "markup"),
    ("add", "I added 2 liters of milk to your list. 🥛", "markup"),
    ("add", "<b>I added 2 liters of milk.</b>", "markup"),
    ("add", "I added 2 liters of milk. It's on the list. Enjoy it.", "3 sentences"),
    (
        "add",
        "I added 2 liters of milk to your list, " + "and it is on the list, " * 8 + "ok.",
        "too long",
    ),
    ("add", "", "empty"),
    ("add", "I added 2 liters of milk to your list?", "question"),
    ("add_already", "Is milk already on your list?", "question"),
    # (e) language
    ("add", "Adicionei 2 litros de milk à sua lista.", "language"),
    # (f) one item asked about: a checked-off item is told as a state, not a deed
    ("find_done", "I checked off eggs.", "another action"),
    ("find_done", "I've ticked off eggs.", "another action"),
    ("find_done", "Eggs are on your list.", "does not say it is checked off"),
    ("find", "Milk is on the list, checked off.", "another action"),
    ("find", "I added 2 liters of milk.", "another action"),
    ("find", "Yes, the list has 3 liters of milk.", "number not in the receipt: 3"),
    # a count is not an amount: "1 item", never "1 milk" for milk without a quantity
    ("list_one", "You have 1 milk on the list.", "amount not in the receipt: 1 milk"),
    ("find", "Yes, the list has 1 milk.", "amount not in the receipt: 1 milk"),
]

GOOD_PT: list[tuple[str, str]] = [
    ("add", "Adicionei 2 litros de leite à sua lista de compras."),
    ("add", "Adicionei dois litros de leite à lista."),
    ("add", "Coloquei 2 litros de leite na lista de compras."),
    ("add_already", "Leite já está na sua lista."),
    ("add_already_plural", "Os ovos já estão na lista de compras."),
    ("add_confirm", "Você quis adicionar leite de aveia?"),
    ("add_unit_conflict", "A lista já tem 1 quilo de arroz, então não mudei nada."),
    ("add_db_down", "Desculpe, não consegui acessar o banco de dados; nada foi alterado."),
    ("remove", "Tirei leite da sua lista de compras."),
    ("remove_missing", "Ovos não estão na sua lista."),
    ("complete", "Marquei o leite como comprado."),
    ("complete_some", "A lista de compras ainda tem 4 ovos."),
    ("list", "Você tem 3 itens na lista: leite, ovos e pão."),
    ("list_empty", "Sua lista de compras está vazia."),
    ("find", "Sim, 2 litros de leite estão na sua lista."),
    ("find_done", "Os ovos estão na lista, marcados como comprados."),
    ("find_missing", "Pão não está na sua lista."),
    ("next", "Seu próximo compromisso é o dentista amanhã às 15h."),
    ("next", "Seu próximo compromisso é o dentista amanhã às 15:00."),
    ("next", "Seu próximo compromisso é o dentista na terça-feira às três da tarde."),
    ("move", "Mudei o dentista para sexta-feira às 16h."),
    ("move_ambiguous", "Há dois compromissos chamados dentista; de qual dia?"),
    ("agenda_today", "Você tem dois compromissos hoje: o dentista às 15h e a academia às 18h30."),
]

BAD_PT: list[tuple[str, str, str]] = [
    ("add", "Adicionei 3 litros de leite à lista.", "number not in the receipt: 3"),
    ("add", "Adicionei três litros de leite à lista.", "number not in the receipt: 3"),
    ("add", "Adicionei 2 quilos de leite à lista.", "unit not in the receipt"),
    ("add", "Adicionei um litro de leite à lista.", "amount not in the receipt"),
    ("add", "Adicionei 2 litros de leite e pão à lista.", "does not: pao"),
    ("add", "Tirei 2 litros de leite da lista.", "another action"),
    ("add", "Leite já está na lista.", "failure"),
    ("add_already", "Adicionei leite à lista.", "does not say it failed"),
    ("add_plain", "Adicionei duas dúzias de ovos à lista.", "number not in the receipt: 2"),
    ("remove_missing", "Tirei os ovos da lista.", "does not say it failed"),
    ("complete_some", "Marquei os ovos como comprados.", "does not say the new quantity"),
    ("next", "Seu próximo compromisso é o dentista amanhã às 16h.", "time not"),
    ("next", "Seu próximo compromisso é o dentista na sexta-feira às 15h.", "weekday not"),
    ("next", "Seu próximo compromisso é o dentista hoje às 15h.", "date not"),
    ("next", "Seu próximo compromisso é o dentista depois de amanhã às 15h.", "date not"),
    ("add", "I added 2 liters of leite to the list.", "language"),
    ("add_confirm", "Adicionei leite de aveia.", "question"),
    ("find_done", "Marquei os ovos como comprados.", "another action"),
    ("find_done", "Os ovos foram marcados.", "another action"),
]


@pytest.mark.parametrize(("label", "sentence"), GOOD_EN)
def test_good_english(label: str, sentence: str) -> None:
    result = verdict(sentence, EN[label])
    assert result.ok, result.problems


@pytest.mark.parametrize(("label", "sentence", "problem"), BAD_EN)
def test_bad_english(label: str, sentence: str, problem: str) -> None:
    result = verdict(sentence, EN[label])
    assert not result.ok
    assert any(_matches(problem, p) for p in result.problems), result.problems


@pytest.mark.parametrize(("label", "sentence"), GOOD_PT)
def test_good_portuguese(label: str, sentence: str) -> None:
    result = verdict(sentence, PT[label], "pt")
    assert result.ok, result.problems


@pytest.mark.parametrize(("label", "sentence", "problem"), BAD_PT)
def test_bad_portuguese(label: str, sentence: str, problem: str) -> None:
    result = verdict(sentence, PT[label], "pt")
    assert not result.ok
    assert any(_matches(problem, p) for p in result.problems), result.problems


def _matches(expected: str, problem: str) -> bool:
    if expected.startswith("does not: "):  # a word the receipt does not have
        word = expected.removeprefix("does not: ")
        return problem.startswith("says what the receipt does not") and word in problem
    return expected in problem


def test_merged_quantities_allow_previous_and_added_amounts() -> None:
    r = EN["add_merged"]
    assert verdict("I added 1 more liter of milk; the list now has 3 liters.", r).ok
    assert verdict("Milk went from 2 liters to 3 liters; the list now has 3 liters.", r).ok
    assert not verdict("The list now has 4 liters of milk.", r).ok


def test_an_amount_in_another_unit_is_no_difference_of_the_two() -> None:
    """ "1 lb" of ham and "1 oz" are "17 oz": the guard let "16 ounces added" and "17
    pounds" through, taking each number for the other's unit."""
    previous = item("ham", 1, "lb").model_dump()
    r = receipt("shopping.add", "success", items=[item("ham", 17, "oz")], merged=True,
                previous=previous)  # fmt: skip
    assert verdict("The list now has 17 ounces of ham.", r).ok
    assert verdict("Ham went from 1 pound to 17 ounces.", r).ok
    assert not verdict("I added 16 ounces of ham; the list now has 17 ounces.", r).ok
    assert not verdict("The list now has 17 pounds of ham.", r).ok


def test_accents_case_and_plurals_are_normalized() -> None:
    r = receipt("shopping.add", "success", items=[item("Maçãs")])
    assert check("Adicionei maca à lista.", r, "pt", now=NOW).ok
    assert check("I added apples... no: I added MAÇÃS to the list.", r, "en", now=NOW).ok is False
    assert check("I added maçã to the list.", r, "en", now=NOW).ok


def test_unsupported_language_is_refused() -> None:
    result = check("Ich habe Milch hinzugefügt.", EN["add"], "de", now=NOW)
    assert not result.ok
    assert "unsupported language" in result.problems[0]


def test_event_times_in_other_offsets() -> None:
    utc_event = event("dentist", dt.datetime(2026, 12, 1, 18, 0, tzinfo=dt.UTC))
    r = receipt("agenda.next", "success", events=[utc_event])
    assert verdict("Your next appointment is the dentist tomorrow at 6 PM.", r).ok
    assert not verdict("Your next appointment is the dentist tomorrow at 3 PM.", r).ok


def test_numbers_in_item_names_are_allowed() -> None:
    r = receipt("shopping.add", "success", items=[item("7 up", 2, "bottle")])
    assert verdict("I added 2 bottles of 7 up to your list.", r).ok
    assert not verdict("I added 3 bottles of 7 up to your list.", r).ok


@pytest.mark.parametrize(
    ("text", "lang", "values"),
    [
        ("twenty-two and 3", "en", [22, 3]),
        ("one hundred and five", "en", [105]),
        ("which one of these", "en", []),
        ("vinte e dois, duas e um litro", "pt", [22, 2, 1]),
        ("um compromisso", "pt", []),
        ("1,5 kg or 1.5 kg", "en", [1.5, 1.5]),
        ("1,5 quilo", "pt", [1.5]),
        ("às 15h30 e às 9h", "pt", [15, 9]),
        ("the 5th", "en", [5]),
        ("a liter", "en", [1]),
    ],
)
def test_numbers_in_words_and_digits(text: str, lang: str, values: list[float]) -> None:
    assert [n.value for n in numbers(tokenize(text), lang)] == values


def test_a_title_named_by_the_request_may_be_said_when_not_found() -> None:
    r = receipt("agenda.remove", "not_found", "no_matching_event", title="piano lesson")
    assert verdict("I couldn't find the piano lesson on your agenda.", r).ok
    assert not verdict("I couldn't find the guitar lesson on your agenda.", r).ok
