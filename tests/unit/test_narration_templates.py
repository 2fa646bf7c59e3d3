"""Deterministic sentences: every action x status x reason, English and Portuguese."""

from __future__ import annotations

import datetime as dt

import pytest

from appliance.actions.items import UNIT_BY_ALIAS
from appliance.llm.narrator import TEMPLATE_ONLY_PREFIXES
from appliance.narration import check, template_sentence
from appliance.narration.phrases import EN_UNITS, PT_UNITS, format_number, is_plural, pt_gender
from appliance.narration.samples import ENGLISH, PORTUGUESE, event, item, receipt, samples
from appliance.narration.templates import TEMPLATES, template_key
from appliance.narration.view import view
from appliance.protocol.receipts import STATUSES

BRT = dt.timezone(dt.timedelta(hours=-3))
NOW = dt.datetime(2026, 11, 30, 10, 0, tzinfo=BRT)  # a Monday
EN = samples(NOW, ENGLISH)
PT = samples(NOW, PORTUGUESE)

EXPECTED_EN = {
    "add": "I added 2 liters of milk to the shopping list.",
    "add_plain": "I added eggs to the shopping list.",
    "add_count": "I added 12 eggs to the shopping list.",
    "add_merged": "The shopping list now has 3 liters of milk.",
    "add_reopened": "I put 1 liter of milk back on the shopping list.",
    "add_already": "Milk is already on the list.",
    "add_already_plural": "Eggs are already on the list.",
    "add_unit_conflict": "The list already has 1 kilo of rice; I didn't change it.",
    "add_confirm": "Did you want to add oat milk?",
    "add_db_down": "Sorry, I couldn't reach the database; nothing was changed.",
    "remove": "I removed milk from the shopping list.",
    "remove_missing": "Eggs aren't on the list.",
    "remove_unit_conflict": "The list has 1 kilo of rice; I didn't change it.",
    "complete": "I checked off milk.",
    "complete_some": "The shopping list still has 4 eggs.",
    "move_shift_confirm": "Did you want to move the dentist to Friday at 4 PM?",
    "move_all_day_shift": (
        "The dentist on Friday takes the whole day; nothing was changed. Say the day to move it to."
    ),
    "complete_confirm": "Did you want to check off milk?",
    "complete_confirm_amount": "Did you want to check off 2 eggs?",
    "remove_confirm_amount": "Did you want to remove 2 eggs from the list?",
    "complete_already": "Eggs are already checked off.",
    "uncomplete_not_done": "Milk isn't checked off.",
    "list": "You have 3 items on the list: milk, eggs and bread.",
    "list_one": "You have 1 item on the list: milk.",
    "list_long": "You have 11 items on the list: milk, eggs, bread, rice, apples and 6 more.",
    "list_empty": "Your shopping list is empty.",
    "find": "Yes, the list has 2 liters of milk.",
    "find_done": "Eggs are on the list, checked off.",
    "find_missing": "Bread isn't on the list.",
    "agenda_add_confirm": "Did you want to add the dentist to your agenda tomorrow at 3 PM?",
    "agenda_add_time": "What time should I add the dentist tomorrow morning?",
    "move_time": "What time tomorrow afternoon should I move the dentist to?",
    "agenda_add_vague": "I need a day or a time for that; nothing was added.",
    "agenda_add_recurring": "Sorry, I can't add repeating entries yet; nothing was added.",
    "agenda_list_unsupported": "Sorry, I can only read the agenda for a day, a weekend or a week.",
    "two_requests": "Please say those requests separately; nothing was changed.",
    "agenda_add_untitled": "I need to know what it's for; nothing was added.",
    "shopping_add_no_item": "I didn't catch what to add; nothing was added.",
    "clear_all": "I cleared the shopping list: milk and bread.",
    "clear_all_empty": "The shopping list is already empty.",
    "clear_all_confirm": "Did you want to clear the whole shopping list?",
    "clear": "I removed 2 checked-off items from the list: milk and bread.",
    "clear_nothing": "There's nothing checked off to clear.",
    "agenda_add": "I added the dentist to your agenda for tomorrow at 3 PM.",
    "agenda_add_all_day": "I added the dentist to your agenda for Friday.",
    "agenda_add_far": "I added the dentist to your agenda for December 20 at 4 PM.",
    "agenda_today": "You have 2 events today: the dentist at 3 PM and the gym at 6:30 PM.",
    "agenda_week": "You have 2 events this week: the dentist tomorrow at 3 PM and the gym on "
    "Friday at 4 PM.",
    "agenda_empty": "You have nothing on your agenda tomorrow.",
    "agenda_weekend": "You have 1 event this weekend: the dentist on Saturday at 10 AM.",
    "agenda_next_week_empty": "You have nothing on your agenda next week.",
    "next": "Your next appointment is the dentist tomorrow at 3 PM.",
    "next_none": "You have no upcoming appointments.",
    "next_titled": "The dentist is on Friday at 4 PM.",
    "next_titled_missing": "I couldn't find the gym on your agenda.",
    "move": "I moved the dentist to Friday at 4 PM.",
    "move_same": "The dentist is already on Friday at 4 PM; I didn't change it.",
    "move_ambiguous": "There are two events called dentist; which day?",
    "move_confirm": "Did you want to move the dentist to Friday at 4 PM?",
    "move_time_confirm": "Did you want to move the dentist to 4 PM?",
    "move_either_half_confirm": "Did you want to move the dentist to 8?",
    "agenda_remove_missing": "I couldn't find that event on your agenda.",
    "not_understood": "Sorry, I didn't understand that; nothing was changed.",
    "called_off": "Okay, I didn't change anything.",
}
EXPECTED_PT = {
    "add": "Adicionei 2 litros de leite à lista de compras.",
    "add_merged": "A lista de compras agora tem 3 litros de leite.",
    "add_already": "Leite já está na lista.",
    "add_already_plural": "Ovos já estão na lista.",
    "add_unit_conflict": "A lista já tem 1 quilo de arroz; não mudei nada.",
    "add_confirm": "Você quis adicionar leite de aveia?",
    "add_db_down": "Desculpe, não consegui acessar o banco de dados; nada foi alterado.",
    "remove_missing": "Ovos não estão na lista.",
    "remove_unit_conflict": "A lista tem 1 quilo de arroz; não mudei nada.",
    "complete": "Marquei o leite como comprado.",
    "complete_some": "A lista de compras ainda tem 4 ovos.",
    "move_shift_confirm": "Você quis mudar o dentista para sexta-feira às 16h?",
    "move_all_day_shift": (
        "O dentista na sexta-feira ocupa o dia todo; nada foi alterado. Diga para que dia mudar."
    ),
    "complete_confirm": "Você quis marcar o leite como comprado?",
    "complete_confirm_amount": "Você quis marcar 2 ovos como comprados?",
    "remove_confirm_amount": "Você quis tirar 2 ovos da lista?",
    "complete_already": "Os ovos já estão marcados como comprados.",
    "uncomplete_not_done": "O leite não está marcado como comprado.",
    "list": "Você tem 3 itens na lista: leite, ovos e pão.",
    "list_one": "Você tem 1 item na lista: leite.",
    "list_long": "Você tem 11 itens na lista: leite, ovos, pão, arroz, maçãs e mais 6.",
    "list_empty": "Sua lista de compras está vazia.",
    "find": "Sim, a lista tem 2 litros de leite.",
    "find_done": "Os ovos estão na lista, marcados como comprados.",
    "find_missing": "Pão não está na lista.",
    "agenda_add_confirm": "Você quis anotar o dentista na agenda amanhã às 15h?",
    "agenda_add_time": "A que horas eu anoto o dentista amanhã de manhã?",
    "move_time": "Para que horas amanhã à tarde eu mudo o dentista?",
    "agenda_add_vague": "Preciso de um dia ou de uma hora para isso; nada foi anotado.",
    "agenda_add_recurring": "Desculpe, ainda não sei anotar compromissos que se repetem; "
    "nada foi anotado.",
    "agenda_list_unsupported": "Desculpe, só sei ler a agenda de um dia, de um fim de semana "
    "ou de uma semana.",
    "two_requests": "Por favor, faça esses pedidos separadamente; nada foi alterado.",
    "agenda_add_untitled": "Preciso saber do que se trata; nada foi anotado.",
    "shopping_add_no_item": "Não entendi o que adicionar; nada foi adicionado.",
    "clear_all": "Limpei a lista de compras: leite e pão.",
    "clear_all_empty": "A lista de compras já está vazia.",
    "clear_all_confirm": "Você quer limpar a lista de compras inteira?",
    "clear_one": "Tirei 1 item comprado da lista: leite.",
    "agenda_add": "Anotei o dentista na agenda para amanhã às 15h.",
    "agenda_today": "Você tem 2 compromissos hoje: o dentista às 15h e a academia às 18h30.",
    "agenda_weekend": "Você tem 1 compromisso neste fim de semana: o dentista no sábado às 10h.",
    "agenda_next_week_empty": "Você não tem nada na agenda na semana que vem.",
    "next": "Seu próximo compromisso é o dentista amanhã às 15h.",
    "move": "Mudei o dentista para sexta-feira às 16h.",
    "move_same": "O dentista já está marcado para sexta-feira às 16h; não mudei nada.",
    "move_ambiguous": "Há dois compromissos chamados dentista; de qual dia?",
    "move_time_confirm": "Você quis mudar o dentista para as 16h?",
    "move_either_half_confirm": "Você quis mudar o dentista para as 8?",
    "agenda_add_far": "Anotei o dentista na agenda para 20 de dezembro às 16h.",
    "next_none": "Você não tem nenhum compromisso marcado.",
    "next_titled": "O dentista é na sexta-feira às 16h.",
    "next_titled_missing": "Não encontrei a academia na agenda.",
    "called_off": "Tudo bem, não mudei nada.",
}


@pytest.mark.parametrize(("label", "expected"), EXPECTED_EN.items())
def test_english_sentences(label: str, expected: str) -> None:
    assert template_sentence(EN[label], "en", now=NOW) == expected


@pytest.mark.parametrize(("label", "expected"), EXPECTED_PT.items())
def test_portuguese_sentences(label: str, expected: str) -> None:
    assert template_sentence(PT[label], "pt", now=NOW) == expected


@pytest.mark.parametrize("lang", ["en", "pt"])
@pytest.mark.parametrize("label", sorted(EN))
def test_every_sample_has_a_sentence_the_guard_accepts(label: str, lang: str) -> None:
    sample = (PT if lang == "pt" else EN)[label]
    sentence = template_sentence(sample, lang, now=NOW)
    assert sentence[0].isupper()
    assert sentence[-1] in ".?"
    assert "{" not in sentence
    assert "  " not in sentence
    assert sentence.endswith("?") == (
        sample.status == "needs_confirmation" or sample.reason == "ambiguous"
    )
    if sample.action is not None and sample.action.startswith(TEMPLATE_ONLY_PREFIXES):
        return  # never an LLM sentence, so never guarded (see test_llm_narrator)
    verdict = check(sentence, sample, lang, now=NOW)
    assert verdict.ok, (sentence, verdict.problems)


def test_the_samples_use_every_specific_template_row() -> None:
    used = {template_key(view(r)) for r in EN.values()}
    specific = {key for key in TEMPLATES if key[0] != "*" or key[2] != "*"}
    assert specific <= used


@pytest.mark.parametrize("status", STATUSES)
@pytest.mark.parametrize("lang", ["en", "pt"])
def test_unknown_actions_and_reasons_fall_back_per_status(status: str, lang: str) -> None:
    r = receipt("garden.water", status, "something_new")  # type: ignore[arg-type]
    sentence = template_sentence(r, lang, now=NOW)
    assert sentence
    assert check(sentence, r, lang, now=NOW).ok


def test_needs_confirmation_names_the_proposed_command() -> None:
    r = receipt(None, "needs_confirmation",
                proposed={"action": "shopping.add", "item": "leite de aveia", "quantity": 2,
                          "unit": "l"})  # fmt: skip
    assert template_sentence(r, "pt", now=NOW) == (
        "Você quis adicionar 2 litros de leite de aveia?"
    )
    assert template_sentence(r, "en", now=NOW) == "Did you want to add 2 liters of leite de aveia?"


@pytest.mark.parametrize(
    ("days", "hour", "en", "pt"),
    [
        (0, 15, "today at 3 PM", "hoje às 15h"),
        (1, 9, "tomorrow at 9 AM", "amanhã às 9h"),
        (-1, 12, "yesterday at noon", "ontem ao meio-dia"),
        (3, 13, "on Thursday at 1 PM", "na quinta-feira às 13h"),
        (5, 0, "on Saturday at midnight", "no sábado à meia-noite"),
        (7, 1, "on December 7 at 1 AM", "em 7 de dezembro à 1h"),
        (32, 20, "on January 1, 2027 at 8 PM", "em 1º de janeiro de 2027 às 20h"),
    ],
)
def test_dates_are_relative_when_close(days: int, hour: int, en: str, pt: str) -> None:
    start = (NOW + dt.timedelta(days=days)).replace(hour=hour)
    r = receipt("agenda.next", "success", events=[event("dentist", start)])
    assert template_sentence(r, "en", now=NOW) == f"Your next appointment is the dentist {en}."
    r_pt = receipt("agenda.next", "success", events=[event("dentista", start)])
    assert template_sentence(r_pt, "pt", now=NOW) == (f"Seu próximo compromisso é o dentista {pt}.")


@pytest.mark.parametrize(
    ("days", "part", "en", "pt"),
    [
        (1, "morning", "tomorrow morning", "amanhã de manhã"),
        (0, "night", "tonight", "hoje à noite"),
        (0, "afternoon", "this afternoon", "hoje à tarde"),
        (4, "evening", "on Friday evening", "na sexta-feira à noite"),
        (20, "morning", "on December 20 in the morning", "em 20 de dezembro de manhã"),
        (1, "small_hours", "tomorrow in the small hours", "amanhã de madrugada"),
        (1, None, "tomorrow", "amanhã"),  # the engines heard different parts of the day
    ],
)
def test_the_time_question_names_the_day_and_its_part(
    days: int, part: str | None, en: str, pt: str
) -> None:
    day = NOW.date() + dt.timedelta(days=days)
    asks = {"ask": "time", **({"part": part} if part else {})}
    r = receipt("agenda.add", "needs_confirmation", events=[event("dentist", day)], **asks)
    assert template_sentence(r, "en", now=NOW) == f"What time should I add the dentist {en}?"
    r_pt = receipt("agenda.add", "needs_confirmation", events=[event("dentista", day)], **asks)
    assert template_sentence(r_pt, "pt", now=NOW) == f"A que horas eu anoto o dentista {pt}?"


def test_dates_are_read_in_the_receipt_offset() -> None:
    # 01:00 UTC on December 1 is still November 30, 22:00, in Sao Paulo.
    now_utc = dt.datetime(2026, 12, 1, 1, 0, tzinfo=dt.UTC)
    r = receipt(
        "agenda.next",
        "success",
        events=[event("dentist", dt.datetime(2026, 11, 30, 23, 0, tzinfo=BRT))],
    )
    assert template_sentence(r, "en", now=now_utc) == (
        "Your next appointment is the dentist today at 11 PM."
    )
    tokyo = dt.timezone(dt.timedelta(hours=9))
    r = receipt(
        "agenda.next",
        "success",
        events=[event("dentist", dt.datetime(2026, 12, 2, 9, 0, tzinfo=tokyo))],
    )
    assert template_sentence(r, "en", now=now_utc) == (
        "Your next appointment is the dentist tomorrow at 9 AM."
    )


def test_portuguese_gender_and_plural() -> None:
    for name, expected in [
        ("leite", "O leite já está marcado como comprado."),
        ("farinha", "A farinha já está marcada como comprada."),
        ("ovos", "Os ovos já estão marcados como comprados."),
        ("bananas", "As bananas já estão marcadas como compradas."),
        ("pão de forma", "O pão de forma já está marcado como comprado."),
        ("leite de aveia", "O leite de aveia já está marcado como comprado."),
    ]:
        r = receipt("shopping.complete", "no_change", "already_completed",
                    items=[item(name, completed=True)])  # fmt: skip
        assert template_sentence(r, "pt", now=NOW) == expected
    assert pt_gender("reunião") == "f"
    assert pt_gender("feijão") == "m"
    assert pt_gender("reuniões") == "f"
    assert pt_gender("dia") == "m"
    assert pt_gender("alface") == "f"
    assert is_plural("ovos", "pt")
    assert not is_plural("lápis", "pt")
    assert not is_plural("hummus", "en")
    assert is_plural("Eggs", "en")


def test_every_unit_the_parser_reads_has_words_in_both_languages() -> None:
    """A unit added to the parser (``actions.items``) is said in either language."""
    assert set(EN_UNITS) == set(PT_UNITS) == set(UNIT_BY_ALIAS.values())


def test_quantities_stay_digits_with_units_in_both_languages() -> None:
    for quantity, unit, en, pt in [
        (1, "l", "1 liter of milk", "1 litro de leite"),
        (1.5, "l", "1.5 liters of milk", "1,5 litro de leite"),
        (2, "dozen", "2 dozen milk", "2 dúzias de leite"),
        (3, None, "3 milk", "3 leite"),
        (2, "pack", "2 packs of milk", "2 pacotes de leite"),
        (2, "box", "2 boxes of milk", "2 caixas de leite"),
        (1, "gallon", "1 gallon of milk", "1 galão de leite"),
        (0.5, "gallon", "0.5 gallons of milk", "0,5 galão de leite"),
        (2, "stick", "2 sticks of milk", "2 tabletes de leite"),
        (1, "jug", "1 jug of milk", "1 garrafão de leite"),
        (2, "case", "2 cases of milk", "2 fardos de leite"),
    ]:
        r = receipt("shopping.add", "success", items=[item("milk", quantity, unit)])
        assert template_sentence(r, "en", now=NOW) == f"I added {en} to the shopping list."
        r = receipt("shopping.add", "success", items=[item("leite", quantity, unit)])
        assert template_sentence(r, "pt", now=NOW) == f"Adicionei {pt} à lista de compras."
    assert format_number(0.25, "pt") == "0,25"
    assert format_number(2.0, "en") == "2"


def test_long_lists_are_capped() -> None:
    names = [f"thing{n}" for n in range(17)]
    r = receipt("shopping.list", "success", items=[item(n) for n in names], count=17)
    assert template_sentence(r, "en", now=NOW) == (
        "You have 17 items on the list: thing0, thing1, thing2, thing3, thing4 and 12 more."
    )
    assert template_sentence(r, "pt", now=NOW).endswith("thing4 e mais 12.")


def test_database_outcome_unknown_is_not_reported_as_nothing_changed() -> None:
    sentence = template_sentence(EN["add_db_unknown"], "en", now=NOW)
    assert "nothing was changed" not in sentence
    assert "not sure" in sentence


@pytest.mark.parametrize("lang", ["pt-BR", "pt_br", "PT"])
def test_language_variants(lang: str) -> None:
    assert template_sentence(EN["list_empty"], lang, now=NOW) == "Sua lista de compras está vazia."


def test_unsupported_language_falls_back_to_english() -> None:
    assert template_sentence(EN["list_empty"], "de", now=NOW) == "Your shopping list is empty."


def test_default_now_is_the_clock() -> None:
    start = dt.datetime.now(dt.UTC) + dt.timedelta(days=1)
    r = receipt("agenda.next", "success", events=[event("dentist", start)])
    assert "tomorrow" in template_sentence(r, "en")


def test_not_found_names_the_requested_title_when_known() -> None:
    r = receipt("agenda.move", "not_found", "no_matching_event", title="piano lesson")
    assert template_sentence(r, "en", now=NOW) == (
        "I couldn't find the piano lesson on your agenda."
    )
    r_pt = receipt("agenda.move", "not_found", "no_matching_event", title="aula de piano")
    assert template_sentence(r_pt, "pt", now=NOW) == "Não encontrei a aula de piano na agenda."
