"""Yes/no answers in both languages, and the rule that both engines must say yes."""

from __future__ import annotations

import pytest

from appliance.voice.answers import combine, heard_answer, parse_answer, unsure_yes


@pytest.mark.parametrize(
    "text",
    [
        "Yes.",
        "yeah",
        "Yep!",
        "sure",
        "Yes, please.",
        "that's right",
        "do it",
        "OK",
        "uh, yes",
        "go for it",
        "Sure, why not.",
        "OK, do it.",
        # Whisper writes a word said once in noise twice or three times
        "sure sure",
        "okay, okay",
        # answers said in a row, with courtesy
        "Sure, go ahead.",
        "Okay, sure.",
        "Perfect, thanks.",
        "mm-hmm",
        # the request's own verb
        "add it",
        "Yes, add it.",
        "go ahead and add it",
        "put it on the list",
    ],
)
def test_english_yes(text: str) -> None:
    assert parse_answer(text, "en") == "yes"


@pytest.mark.parametrize(
    "text",
    [
        "No.",
        "nope",
        "No, thanks.",
        "cancel that",
        "never mind",
        "don't",
        "forget it",
        # a no with whatever follows it drops the proposal: nothing is done
        "No, I said milk.",
        "no no no",
        "Please don't.",
        "No, don't.",
        # a no among yeses is a no
        "Yeah, no.",
        "Okay, no.",
        "absolutely not",
        "Not that one.",
        "don't add it",
        "skip it",
    ],
)
def test_english_no(text: str) -> None:
    assert parse_answer(text, "en") == "no"


@pytest.mark.parametrize(
    "text",
    [
        "Sim.",
        "isso mesmo",
        "pode",
        "Claro!",
        "pode sim",
        "é isso",
        "claro claro",
        "Claro, pode.",
        "coloca",
        "pode colocar",
        "adiciona",
    ],
)
def test_portuguese_yes(text: str) -> None:
    assert parse_answer(text, "pt") == "yes"


@pytest.mark.parametrize(
    "text",
    [
        "Não.",
        "não, obrigado",
        "cancela",
        "deixa pra lá",
        "esquece",
        "Sim, não.",
        "não precisa",
        "Não é isso.",
    ],
)
def test_portuguese_no(text: str) -> None:
    assert parse_answer(text, "pt") == "no"


@pytest.mark.parametrize(
    "text", ["", "add milk", "maybe", "I don't know", "what did you say", "Thank you.", "please"]
)
def test_unclear_is_neither(text: str) -> None:
    assert parse_answer(text, "en") is None


def test_both_engines_must_say_yes() -> None:
    assert combine("yes", "yes", have_verifier=True) == "yes"
    assert combine("yes", None, have_verifier=True) is None
    assert combine("yes", "no", have_verifier=True) == "no"
    assert combine(None, "yes", have_verifier=True) is None
    assert combine("yes", None, have_verifier=False) == "yes"
    assert combine("no", None, have_verifier=False) == "no"


def test_an_answer_turn_is_heard_as_both_engines_read_it() -> None:
    said = {"whisper": "Yeah, sure.", "verifier": "sure"}
    assert heard_answer(said, "en", have_verifier=True) == "yes"
    assert heard_answer({**said, "verifier": "cancel that"}, "en", have_verifier=True) == "no"
    assert heard_answer({**said, "verifier": ""}, "en", have_verifier=True) is None
    # a language without a verifier: Whisper's clear answer (the verifier's text is empty)
    assert heard_answer({**said, "verifier": ""}, "en", have_verifier=False) == "yes"


def test_only_a_yes_whisper_alone_heard_is_worth_asking_again() -> None:
    said = {"whisper": "Yes, go ahead.", "verifier": "cancel that"}
    # the verifier heard a no, or nothing it knows: ask once more rather than drop
    assert heard_answer(said, "en", have_verifier=True) == "no"
    assert unsure_yes(said, "en", have_verifier=True)
    assert unsure_yes({**said, "verifier": ""}, "en", have_verifier=True)
    assert unsure_yes({"whisper": "Sim, pode.", "verifier": "cancela"}, "pt", have_verifier=True)
    # both heard the yes: nothing to ask
    assert not unsure_yes({**said, "verifier": "yes go ahead"}, "en", have_verifier=True)
    # Whisper heard a no, or no answer: never asked again, whatever the verifier heard
    assert not unsure_yes(
        {"whisper": "No thanks.", "verifier": "go ahead"}, "en", have_verifier=True
    )
    assert not unsure_yes({"whisper": "Yeah, no.", "verifier": "yes"}, "en", have_verifier=True)
    assert not unsure_yes({"whisper": "add milk", "verifier": "yes"}, "en", have_verifier=True)
    assert not unsure_yes({"whisper": "", "verifier": ""}, "en", have_verifier=True)
    # without a verifier, Whisper's yes is the answer itself
    assert not unsure_yes({**said, "verifier": ""}, "en", have_verifier=False)
