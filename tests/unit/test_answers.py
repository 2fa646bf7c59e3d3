"""Yes/no answers in both languages, and the rule that both engines must say yes."""

from __future__ import annotations

import pytest

from appliance.voice.answers import (
    ask_again,
    asks_to_repeat,
    combine,
    corrected_request,
    heard_answer,
    parse_answer,
    question_again,
    unsure_yes,
)


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


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("Uh-huh.", "yes"),
        ("uh huh", "yes"),
        ("Mm-hmm.", "yes"),
        ("mhm", "yes"),
        ("Uh-uh.", "no"),
        # "huh?" asks what was said: no yes, whatever "uh-huh" folds to
        ("Huh?", None),
        ("huh", None),
        # a pause before an answer is no "uh-uh"
        ("Uh, uh, yes.", "yes"),
    ],
)
def test_sounds_that_answer_and_sounds_that_do_not(text: str, answer: str | None) -> None:
    assert parse_answer(text, "en") == answer


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("What?", "en"),
        ("Huh?", "en"),
        ("Sorry?", "en"),
        ("Sorry, what was that?", "en"),
        ("Could you repeat that, please?", "en"),
        ("I didn't catch that.", "en"),
        ("Hein?", "pt"),
        ("O quê?", "pt"),
        ("Não entendi.", "pt"),
        ("Pode repetir, por favor?", "pt"),
    ],
)
def test_asking_for_the_question_again(text: str, lang: str) -> None:
    assert asks_to_repeat(text, lang)
    said = {"whisper": text, "verifier": "no"}
    assert ask_again(said, lang, have_verifier=True) == "repeat"
    # it is no yes, whatever the verifier heard: the question is said again
    assert heard_answer({**said, "verifier": "yes"}, lang, have_verifier=True) != "yes"


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("yes", "en"),
        ("no", "en"),
        ("what milk", "en"),
        ("add milk", "en"),
        ("sim", "pt"),
        ("", "en"),
    ],
)
def test_answers_and_other_words_do_not_ask_for_the_question_again(text: str, lang: str) -> None:
    assert not asks_to_repeat(text, lang)


def test_why_a_question_is_asked_again() -> None:
    for whisper in ("yes", "Uh-huh."):  # the verifier's grammar hears "uh-huh" as "nah"
        said = {"whisper": whisper, "verifier": "nah"}
        assert ask_again(said, "en", have_verifier=True) == "unsure_yes"
    assert ask_again({"whisper": "What?", "verifier": ""}, "en", have_verifier=False) == "repeat"
    for whisper, verifier in (("yes", "yes"), ("no", "yes"), ("add milk", "yes"), ("", "")):
        said = {"whisper": whisper, "verifier": verifier}
        assert ask_again(said, "en", have_verifier=True) is None


def test_what_is_said_to_ask_a_question_again() -> None:
    asked = "Did you want to add tahini?"
    assert question_again(asked, "repeat", "en") == asked
    assert question_again(asked, "unsure_yes", "en") == f"Sorry, I didn't catch that. {asked}"
    assert question_again("Quer pôr ovos?", "unsure_time", "pt-BR") == (
        "Desculpe, não entendi. Quer pôr ovos?"
    )


@pytest.mark.parametrize(
    ("answer", "lang", "said"),
    [
        ("No, oat milk.", "en", "Add milk to the list, No, oat milk."),
        ("no oat milk", "en", "Add milk to the list, no, oat milk"),
        ("Uh, nope, the eggs.", "en", "Add milk to the list, nope, the eggs."),
        ("Não, leite de aveia.", "pt", "Add milk to the list, Não, leite de aveia."),
        # a whole no corrects nothing
        ("No.", "en", None),
        ("No, thanks.", "en", None),
        ("No, never mind.", "en", None),
        ("no no", "en", None),
        ("Não, obrigado.", "pt", None),
        # nor does anything that is no no
        ("Yes, oat milk.", "en", None),
        ("Oat milk.", "en", None),
    ],
)
def test_a_no_followed_by_words_is_the_request_corrected(
    answer: str, lang: str, said: str | None
) -> None:
    assert corrected_request("Add milk to the list.", answer, lang) == said


def test_the_request_corrected_by_an_answer_reads_as_corrected() -> None:
    from appliance.intents import IntentParser
    from appliance.protocol.commands import ShoppingAdd

    parser = IntentParser()
    for answer, expected in [
        ("No, oat milk.", ShoppingAdd(item="oat milk")),
        ("No, I said oat milk.", ShoppingAdd(item="oat milk")),
        ("No, I want oat milk.", ShoppingAdd(item="oat milk")),
        ("No, it's oat milk.", ShoppingAdd(item="oat milk")),
        ("Nope, three.", ShoppingAdd(item="milk", quantity=3)),
    ]:
        said = corrected_request("Add milk to the list.", answer, "en")
        assert said is not None
        result = parser.parse(said, lang="en")
        assert result.commands == (expected,), answer
        assert result.ask and result.negated


def test_a_correction_proposes_something_new_and_prefers_known_items() -> None:
    """What a corrected request proposes: only a question (``ask`` and ``negated``),
    never what was asked already; a reading naming items the node knows is preferred
    ("no, I said oat milk" over Whisper's "no, I said or milk")."""
    from appliance.intents import IntentParser
    from appliance.protocol.receipts import Receipt, Source
    from appliance.voice.sessions import _corrected_commands, _known_items

    parser = IntentParser()
    proposal = Receipt(
        request_id="voice-x",
        action="shopping.add",
        status="needs_confirmation",
        source=Source(kind="voice", site="kitchen", user="household"),
        details={"proposal": [{"action": "shopping.add", "item": "milk", "quantity": None,
                               "unit": None, "more": False}]},
    )  # fmt: skip
    corrected = _corrected_commands(parser.parse("Add milk, no, oat milk."), proposal)
    assert [c.model_dump()["item"] for c in corrected] == ["oat milk"]
    assert _corrected_commands(parser.parse("Add milk, no, milk."), proposal) == ()
    assert _corrected_commands(parser.parse("Add oat milk."), proposal) == ()  # no question
    assert _known_items(corrected, "en", ())
    assert not _known_items(parser.parse("Add milk, no, or milk.").commands, "en", ())
    assert _known_items(parser.parse("Add milk, no, or milk.").commands, "en", ("or milk",))
