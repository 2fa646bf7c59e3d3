"""Item names and units: the normal form that decides which items are the same."""

from __future__ import annotations

import pytest

from appliance.actions.items import display_name, item_key, normalize_unit


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("eggs", "egg"),
        ("The Eggs", "eggs"),
        ("tomatoes", "tomato"),
        ("strawberries", "strawberry"),
        ("peaches", "peach"),
        ("loaves", "loaf"),
        ("oat milks", "Oat milk"),
        ("limões", "limão"),
        ("pães", "pão"),
        ("nozes", "noz"),
        ("os ovos", "ovo"),
        ("pastéis", "pastel"),
        ("  milk ", "milk"),
        ("milk.", "milk"),
    ],
)
def test_same_item(a: str, b: str) -> None:
    assert item_key(a) == item_key(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("milk", "oat milk"),
        ("milk", "silk"),
        ("grapes", "crepes"),
        ("soap", "soup"),
        ("rice", "ice"),
        ("cheese", "chee"),
        ("pepper", "peppers mill"),
    ],
)
def test_different_items_never_share_a_key(a: str, b: str) -> None:
    assert item_key(a) != item_key(b)


def test_words_that_end_in_s_in_the_singular_are_kept() -> None:
    assert item_key("hummus") == "hummus"
    assert item_key("rice") == "rice"
    assert item_key("lápis") == "lápis"


def test_display_name_drops_leading_articles_only() -> None:
    assert display_name("the  Eggs") == "Eggs"
    assert display_name("a") == "a"
    assert display_name("uma maçã") == "maçã"


@pytest.mark.parametrize(
    ("unit", "canonical"),
    [
        ("Liters", "l"),
        ("litros", "l"),
        ("kilo", "kg"),
        ("quilos", "kg"),
        ("dúzia", "dozen"),
        ("dozen", "dozen"),
        ("pacotes", "pack"),
        ("cans", "can"),
        ("g", "g"),
        ("sachets", "sachets"),
    ],
)
def test_units(unit: str, canonical: str) -> None:
    assert normalize_unit(unit) == canonical
