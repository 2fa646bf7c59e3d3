"""Numbers for speech: written numbers parse right, words read back to the same value.

Round trips use ``text2num`` (spoken numbers to digits, an independent implementation)
to check the words num2words and the gender rules produce.
"""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from text_to_num import text2num  # type: ignore[import-untyped,unused-ignore]

from appliance.tts import TtsError, speakable
from appliance.tts.lexicon import language, pt_is_feminine
from appliance.tts.numbers import cardinal, decimal, ordinal, parse_money, parse_number

FAST = settings(max_examples=150, deadline=None)
DIGIT = re.compile(r"\d")


@pytest.mark.parametrize(
    ("written", "lang", "value"),
    [
        ("1,000", "en", Decimal(1000)),
        ("1,000.5", "en", Decimal("1000.5")),
        ("2.5", "en", Decimal("2.5")),
        ("1,5", "en", None),
        ("1,00", "en", None),
        ("1.000", "pt", Decimal(1000)),
        ("1.000,5", "pt", Decimal("1000.5")),
        ("1,5", "pt", Decimal("1.5")),
        ("1.5", "pt", Decimal("1.5")),
        ("1.000.000", "pt", Decimal(1000000)),
        ("1.00.0", "pt", None),
    ],
)
def test_parse_number(written: str, lang: str, value: Decimal | None) -> None:
    assert parse_number(written, language(lang)) == value


@pytest.mark.parametrize(
    ("written", "value"),
    [
        ("12,50", Decimal("12.50")),
        ("12.50", Decimal("12.50")),
        ("1.234,56", Decimal("1234.56")),
        ("1,234.56", Decimal("1234.56")),
        ("1,234", Decimal(1234)),
        ("1.234", Decimal(1234)),
        ("1.000.000", Decimal(1000000)),
        ("5", Decimal(5)),
        ("1,2,3,4", None),
    ],
)
def test_parse_money_either_convention(written: str, value: Decimal | None) -> None:
    assert parse_money(written, "pt") == value
    assert parse_money(written, "en") == value


@pytest.mark.parametrize(
    ("value", "feminine", "words"),
    [
        (1, True, "uma"),
        (2, True, "duas"),
        (2, False, "dois"),
        (200, True, "duzentas"),
        (2002, True, "duas mil e duas"),
        (2_000_000, True, "dois milhões"),
        (1_000_001, True, "um milhão e uma"),
        (2_200_000, True, "dois milhões e duzentas mil"),
    ],
)
def test_portuguese_gender(value: int, feminine: bool, words: str) -> None:
    assert cardinal(value, "pt", feminine=feminine) == words


def test_ordinals() -> None:
    assert ordinal(1, "pt", feminine=True) == "primeira"
    assert ordinal(22, "pt", feminine=True) == "vigésima segunda"
    assert ordinal(22, "en") == "twenty-second"


def test_decimals() -> None:
    assert decimal(Decimal("0.5"), "en") == "zero point five"
    assert decimal(Decimal("-1.25"), "pt") == "menos um vírgula vinte e cinco"
    assert decimal(Decimal("1.0001"), "pt") == "um vírgula zero zero zero um"
    assert decimal(Decimal("1.5"), "pt", feminine=True) == "uma vírgula cinco"


@pytest.mark.parametrize(
    ("word", "feminine"),
    [
        ("garrafa", True),
        ("Garrafas", True),
        ("maçãs", True),
        ("unidades", True),
        ("embalagem", True),
        ("vezes", True),
        ("alface", True),
        ("ovos", False),
        ("dias", False),
        ("pães", False),
        ("iogurte", False),
        ("de", False),
        ("a", False),
        ("problema", False),
    ],
)
def test_portuguese_noun_gender(word: str, feminine: bool) -> None:
    assert pt_is_feminine(word) is feminine


def test_unknown_language_is_a_tts_error() -> None:
    with pytest.raises(TtsError, match="unsupported speech language 'de'"):
        speakable("2 l", "de")


@FAST
@given(st.integers(min_value=0, max_value=999_999_999))
def test_english_integers_read_back(n: int) -> None:
    spoken = speakable(f"{n:,}", "en")
    assert not DIGIT.search(spoken)
    assert text2num(spoken.replace("-", " "), "en") == n


@FAST
@given(st.integers(min_value=0, max_value=999_999_999))
def test_portuguese_integers_read_back(n: int) -> None:
    spoken = speakable(f"{n:,}".replace(",", "."), "pt")
    assert not DIGIT.search(spoken)
    assert text2num(spoken, "pt") == n


@FAST
@given(st.integers(min_value=1, max_value=999_999_999))
def test_portuguese_feminine_counts_read_back(n: int) -> None:
    spoken = speakable(f"{n:,} garrafas".replace(",", "."), "pt")
    number = spoken.removesuffix(" de garrafas").removesuffix(" garrafas")
    assert "dois" not in number.split(" milh")[-1].split(" bilh")[-1]
    assert text2num(number, "pt") == n


@FAST
@given(st.integers(min_value=0, max_value=99_999_999), st.sampled_from(["en", "pt"]))
def test_money_has_no_digits_left(cents: int, lang: str) -> None:
    amount = f"{cents // 100:,}.{cents % 100:02d}"
    if lang == "pt":
        amount = amount.replace(",", "_").replace(".", ",").replace("_", ".")
    spoken = speakable(f"R$ {amount}", lang)
    assert not DIGIT.search(spoken)
    assert spoken.endswith(("reais", "real", "centavos", "centavo"))


@FAST
@given(st.text(max_size=80), st.sampled_from(["en", "pt"]))
def test_any_text_normalizes_without_error(text: str, lang: str) -> None:
    speakable(text, lang)


@FAST
@given(
    st.lists(
        st.one_of(
            st.sampled_from(["milk", "leite", "Dr.", "etc.", "$", "R$", "%", "-", ":", "/", "."]),
            st.integers(min_value=0, max_value=100_000).map(str),
            st.decimals(min_value=0, max_value=1000, places=2).map(str),
            st.sampled_from(["kg", "l", "°C", "dúzias", "15:00", "3 pm", "2026-12-01", "1º"]),
        ),
        max_size=12,
    ),
    st.sampled_from(["en", "pt"]),
)
def test_number_soup_normalizes_without_error(tokens: list[str], lang: str) -> None:
    speakable(" ".join(tokens), lang)
