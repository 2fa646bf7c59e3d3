"""The parser's public API, its package data, speed, and robustness on any text."""

from __future__ import annotations

import dataclasses
import datetime as dt
import importlib.resources
import statistics
import time
from functools import cache
from zoneinfo import ZoneInfo

import pytest
from hassil import Intents
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from appliance.intents import IntentParser, ParseResult, templates, vocabulary
from appliance.protocol.commands import ACTIONS, AgendaAdd, ShoppingAdd, parse_command

SP = ZoneInfo("America/Sao_Paulo")
NOW = dt.datetime(2026, 11, 30, 10, 0, tzinfo=SP)


@cache
def parser() -> IntentParser:
    return IntentParser(timezone="America/Sao_Paulo")


def test_languages() -> None:
    assert parser().languages() == ("en", "pt")


@pytest.mark.parametrize("lang", ["fr", "es", "", "english", "p"])
def test_unknown_language_is_an_error(lang: str) -> None:
    with pytest.raises(ValueError, match="unsupported language"):
        parser().parse("add milk", lang=lang, now=NOW)


@pytest.mark.parametrize("lang", ["en", "EN", "en-US", "en_GB"])
def test_english_tags(lang: str) -> None:
    assert parser().parse("add milk", lang=lang, now=NOW).command == ShoppingAdd(item="milk")


def test_naive_now_is_an_error() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        parser().parse("add milk", now=dt.datetime(2026, 11, 30, 10, 0))  # noqa: DTZ001


def test_default_now_is_the_current_time_in_the_parser_zone() -> None:
    before = dt.datetime.now(SP).date()
    result = parser().parse("add dentist tomorrow to my calendar")
    after = dt.datetime.now(SP).date()
    assert isinstance(result.command, AgendaAdd)
    assert result.command.start in (before + dt.timedelta(days=1), after + dt.timedelta(days=1))


def test_datetimes_are_aware_in_the_configured_zone() -> None:
    utc_now = NOW.astimezone(dt.UTC)
    result = parser().parse("add dentist tomorrow at 3 pm to my calendar", now=utc_now)
    assert isinstance(result.command, AgendaAdd)
    start = result.command.start
    assert isinstance(start, dt.datetime)
    assert start.tzinfo == SP
    assert start == dt.datetime(2026, 12, 1, 15, 0, tzinfo=SP)


def test_result_fields() -> None:
    result = parser().parse("add two liters of milk to the shopping list", now=NOW)
    assert result.command == ShoppingAdd(item="milk", quantity=2, unit="l")
    assert result.intent == "shopping.add"
    assert result.reason is None
    assert result.commands == (result.command,)
    assert result.matched_template is not None
    assert "{" in result.matched_template  # a template, not the input
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.intent = "x"  # type: ignore[misc]


def test_matched_template_is_shown_as_written() -> None:
    result = parser().parse("adicione leite à lista de compras", lang="pt", now=NOW)
    assert result.matched_template is not None
    assert "à" in result.matched_template


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_templates_cover_every_action(lang: str) -> None:
    intents = templates(lang)
    assert isinstance(intents, Intents)
    # Editing or deleting a memory needs its id: MQTT and the CLI only.
    spoken = set(ACTIONS) - {"memory.edit", "memory.delete"}
    assert spoken <= set(intents.intents)
    assert parser().templates(lang).intents.keys() == intents.intents.keys()


def test_home_assistant_sentences_are_reused() -> None:
    sources = [
        (block.metadata or {}).get("source", "")
        for block in templates("pt").intents["shopping.add"].data
    ]
    assert "home-assistant:HassShoppingListAddItem" in sources


@pytest.mark.parametrize(
    ("lang", "words"),
    [
        ("en", {"add", "shopping", "calendar", "schedule", "tomorrow", "december", "dozen"}),
        ("pt", {"adicione", "lista", "compras", "compromisso", "amanhã", "sexta-feira", "dúzia"}),
    ],
)
def test_vocabulary_for_a_speech_grammar(lang: str, words: set[str]) -> None:
    vocab = vocabulary(lang)
    assert words <= vocab
    assert all(" " not in w and w == w.lower() for w in vocab)


def test_package_data_is_reachable_through_importlib_resources() -> None:
    root = importlib.resources.files("appliance.intents") / "sentences"
    for lang in ("en", "pt"):
        names = {r.name for r in (root / lang).iterdir()}
        assert {"_common.yaml", "shopping.yaml", "agenda.yaml"} <= names
        assert (root / "lexicon" / f"{lang}.yaml").is_file()


# -- speed -------------------------------------------------------------------------

CORPUS = {
    "en": [
        "add two liters of milk to the shopping list",
        "add milk, bread and two dozen eggs",
        "schedule a meeting with Ana next Friday at 10",
        "what's on my agenda on December 5th",
        "move the dentist to Friday at 4 pm",
        "I bought milk",
        "what's the weather",
        "don't add milk",
    ],
    "pt": [
        "adicione dois litros de leite à lista de compras",
        "marca dentista amanhã às 15h na agenda",
        "o que tenho na agenda hoje",
        "muda o dentista para sexta às 16h",
        "cancela o dentista de amanhã",
        "conta uma piada",
    ],
}


def test_parsing_takes_a_few_milliseconds() -> None:
    timings: list[float] = []
    for _ in range(5):
        for lang, phrases in CORPUS.items():
            for text in phrases:
                start = time.perf_counter()
                parser().parse(text, lang=lang, now=NOW)
                timings.append(time.perf_counter() - start)
    assert statistics.median(timings) < 0.010
    assert max(timings) < 0.250


# -- robustness ----------------------------------------------------------------------

_WORDS = [
    *sorted(vocabulary("en") | vocabulary("pt")),
    *["milk", "leite", "3", "15h", "10:30", "1,5", "12/05", ",", "dentist", "Ana", "-", "'s"],
]
_SOUP = st.lists(st.sampled_from(_WORDS), max_size=14).map(" ".join)


def _check(result: ParseResult) -> None:
    assert isinstance(result, ParseResult)
    if result.command is not None:
        assert result.reason is None
        assert result.intent == result.command.action
        assert result.commands == (result.command,)
    else:
        assert result.reason
    for command in result.commands:
        assert command.action in ACTIONS
        assert parse_command(command.model_dump()) == command  # always a valid command


@settings(
    max_examples=300,
    deadline=dt.timedelta(milliseconds=250),
    suppress_health_check=[HealthCheck.too_slow],
)
@given(text=st.text(max_size=400), lang=st.sampled_from(["en", "pt"]))
def test_any_text_parses_without_error(text: str, lang: str) -> None:
    _check(parser().parse(text, lang=lang, now=NOW))


@settings(
    max_examples=400,
    deadline=dt.timedelta(milliseconds=250),
    suppress_health_check=[HealthCheck.too_slow],
)
@given(text=_SOUP, lang=st.sampled_from(["en", "pt"]))
def test_any_word_soup_parses_without_error(text: str, lang: str) -> None:
    _check(parser().parse(text, lang=lang, now=NOW))


def test_long_input_is_refused_unread() -> None:
    result = parser().parse("add milk " * 100, now=NOW)
    assert result.command is None
    assert result.reason == "too_long"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("cancel the " + "very " * 45 + "long meeting", "invalid:title"),
        ("add " + "super " * 25 + "milk", "invalid:item"),
    ],
)
def test_values_the_commands_reject_are_refused(text: str, reason: str) -> None:
    result = parser().parse(text, now=NOW)
    assert result.command is None
    assert result.reason == reason
