"""Statements about oneself that become memories, by rules, in English and Portuguese."""

from __future__ import annotations

import pytest

from appliance.memory.statements import detect


@pytest.mark.parametrize(
    ("text", "lang", "stance", "subject"),
    [
        ("I prefer oat milk", "en", "likes", "oat milk"),
        ("I really like dark chocolate.", "en", "likes", "dark chocolate"),
        ("we love sourdough bread", "en", "likes", "sourdough bread"),
        ("I only drink decaf coffee", "en", "likes", "decaf coffee"),
        ("I don't like coffee", "en", "dislikes", "coffee"),
        ("I don’t eat pork", "en", "dislikes", "pork"),
        ("I do not drink alcohol", "en", "dislikes", "alcohol"),
        ("I hate olives", "en", "dislikes", "olives"),
        ("I can't stand cilantro", "en", "dislikes", "cilantro"),
        ("I'm allergic to peanuts", "en", "allergic", "peanuts"),
        ("I am allergic to shellfish", "en", "allergic", "shellfish"),
        ("I have a nut allergy to cashews", "en", "allergic", "cashews"),
        ("My favourite cheese is brie", "en", "favourite", "brie (cheese)"),
        ("my favorite tea is earl grey", "en", "favourite", "earl grey (tea)"),
        ("Eu prefiro leite de aveia", "pt", "likes", "leite de aveia"),
        ("gosto muito de pão integral", "pt", "likes", "pão integral"),
        ("adoro chocolate amargo", "pt", "likes", "chocolate amargo"),
        ("Não gosto de café", "pt", "dislikes", "café"),
        ("eu não gosto de coentro", "pt", "dislikes", "coentro"),
        ("odeio azeitonas", "pt", "dislikes", "azeitonas"),
        ("Sou alérgica a amendoim", "pt", "allergic", "amendoim"),
        ("eu sou alérgico a camarão", "pt", "allergic", "camarão"),
        ("tenho alergia a lactose", "pt", "allergic", "lactose"),
        ("meu queijo favorito é o brie", "pt", "favourite", "o brie (queijo)"),
    ],
)
def test_statements_about_oneself(text: str, lang: str, stance: str, subject: str) -> None:
    found = detect(text, lang)
    assert found is not None, text
    assert (found.stance, found.subject) == (stance, subject)
    assert found.text.endswith(".")
    assert found.text[0].isupper()
    assert 1 <= found.importance <= 10


def test_allergies_matter_most() -> None:
    allergy = detect("I'm allergic to peanuts", "en")
    liking = detect("I like peanuts", "en")
    assert allergy is not None and liking is not None
    assert allergy.importance > liking.importance


def test_the_stored_text_is_the_users_own_words() -> None:
    found = detect("  i prefer   oat milk please ", "en")
    assert found is not None
    assert found.text == "I prefer oat milk please."
    assert found.subject == "oat milk"


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        # questions
        ("which milk do I like?", "en"),
        ("do I like coffee", "en"),
        ("what am I allergic to", "en"),
        ("I like coffee?", "en"),
        ("qual leite eu prefiro?", "pt"),
        ("eu gosto de café?", "pt"),
        ("o que eu comprei ontem", "pt"),
        # commands and other talk
        ("add oat milk to the shopping list", "en"),
        ("what's on my agenda tomorrow", "en"),
        ("adicione leite à lista de compras", "pt"),
        ("the kids like pancakes", "en"),
        ("she is allergic to cats", "en"),
        # hedges
        ("I'm not sure I like this cheese", "en"),
        ("I think I like oat milk", "en"),
        ("maybe I prefer tea", "en"),
        ("I used to like coffee", "en"),
        ("I would like a pizza", "en"),
        ("acho que gosto de chá", "pt"),
        ("não sei se gosto de café", "pt"),
        ("eu gostaria de uma pizza", "pt"),
        # empty and too long
        ("", "en"),
        ("I like " + "very " * 12 + "long things", "en"),
    ],
)
def test_not_statements(text: str, lang: str) -> None:
    assert detect(text, lang) is None
