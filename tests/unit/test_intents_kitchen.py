"""How people ask a kitchen assistant to add things, beyond "add X to the list"."""

from __future__ import annotations

import pytest

from appliance.intents import IntentParser
from appliance.protocol import commands as c


@pytest.fixture(scope="module")
def parser() -> IntentParser:
    return IntentParser(timezone="UTC")


@pytest.mark.parametrize(
    ("text", "lang", "item"),
    [
        ("we need bread", "en", "bread"),
        ("I need some apples", "en", "apples"),
        ("we also need more coffee", "en", "coffee"),
        ("shopping list, add butter", "en", "butter"),
        ("we're out of eggs", "en", "eggs"),
        ("preciso de pão", "pt", "pão"),
        ("a gente precisa de café", "pt", "café"),
    ],
)
def test_needs_are_additions(parser: IntentParser, text: str, lang: str, item: str) -> None:
    assert parser.parse(text, lang=lang).commands == (c.ShoppingAdd(item=item),)


@pytest.mark.parametrize(
    ("text", "lang"),
    [("we don't need milk", "en"), ("I need to call mom", "en"), ("não preciso de pão", "pt")],
)
def test_not_additions(parser: IntentParser, text: str, lang: str) -> None:
    assert parser.parse(text, lang=lang).commands == ()
