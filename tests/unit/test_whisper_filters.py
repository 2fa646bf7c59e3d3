"""Whisper's output checks on plain strings: loops, hallucinations, echoes, the bias text.

No model is loaded here.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from appliance.asr.base import (
    REJECT_HALLUCINATION,
    REJECT_LOW_CONFIDENCE,
    REJECT_NO_SPEECH,
    REJECT_PROMPT_ECHO,
    REJECT_REPETITION,
    REJECT_TIMEOUT,
    AsrError,
    Hints,
    Transcript,
)
from appliance.asr.whisper import (
    WhisperEngine,
    WhisperSettings,
    _Decode,
    bias_text,
    compression_ratio,
    encoder_frames,
    find_repetition,
    is_echo,
    is_hallucination,
    normalize_lang,
    normalize_text,
)
from appliance.errors import ApplianceError


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("Add milk. Add milk. Add milk. Add milk. Add milk. Add milk. Add milk", "add milk"),
        ("Add milk. Add milk.", "add milk"),
        ("add eggs add eggs add eggs please", "add eggs"),
        ("ok, bem, bem, bem, bem, bem, bem, bem, bem", "bem"),
        (
            "remover ok o adicione remover ok o adicione remover ok o adicione remover",
            "remover ok o adicione",
        ),
        ("E eu vou lá, eu vou lá, eu vou lá.", "eu vou lá"),
        ("the the the the", "the"),
        ("milk " * 40, "milk"),
    ],
)
def test_repetition_loops_are_found(text: str, phrase: str) -> None:
    assert find_repetition(text) == phrase


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Add two liters of milk to the shopping list.",
        "add milk and eggs",
        "remove eggs, eggs and bacon",  # a word twice is not a loop
        "no no no",  # three times one word is still speech
        "add milk to the list and add eggs to the list",
        "what's on my agenda tomorrow?",
        "adicione dois litros de leite na lista de compras",
        "bye bye",
    ],
)
def test_normal_commands_are_not_loops(text: str) -> None:
    assert find_repetition(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "Thank you.",
        " you",
        "Thanks for watching!",
        "Thank you for watching, see you next time.",
        "So, we'll see you next time.",
        "[Music]",
        "(upbeat music)",
        "♪ ♪",
        "*applause*",
        "Please like and subscribe.",
        "Obrigado.",
        "Muito obrigada!",
        "Legendas pela comunidade Amara.org",
        "Legenda Adriana Zanotto",
        "Inscreva-se no canal!",
        "Subtitles by the Amara.org community",
        "Bye.",
        "and",
        "Tchau, tchau.",
    ],
)
def test_hallucinations_are_recognised(text: str) -> None:
    assert is_hallucination(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "add milk",
        "thank you add milk to the shopping list",  # speech around it is not made up
        "yes",
        "no",
        "okay",
        "sim",
        "não",
        "adicione pão com manteiga",  # "com" is a Portuguese word, not a web address
        "remove the music box from the list",
        "add you know what, bread",
    ],
)
def test_real_requests_are_not_hallucinations(text: str) -> None:
    assert not is_hallucination(text)


def test_normalize_text() -> None:
    assert normalize_text("  What’s on MY agenda?! ") == "what's on my agenda"
    assert normalize_text("Amara.org") == "amara org"
    assert normalize_text("Adicione PÃO.") == "adicione pão"
    assert normalize_text("...") == ""


def test_echo_of_the_bias_words() -> None:
    bias = "add remove shopping list agenda calendar tomorrow today milk eggs"
    assert is_echo("Add, remove, shopping.", bias)
    assert is_echo("milk eggs", bias, min_words=2)
    assert not is_echo("add milk", bias)  # too short to be an echo
    assert not is_echo("add milk to the shopping list", bias)
    assert not is_echo("remove eggs", bias)


def test_echo_of_a_sentence_of_the_bias() -> None:
    """Requests written as sentences: one written whole is an echo, a request said as
    a part of one is not; the items after them are words, as before."""
    bias = (
        "Put dish soap and foil on my list. Take the onions and the yeast off the list. milk eggs"
    )
    assert is_echo("Take the onions and the yeast off the list.", bias)
    assert is_echo("put dish soap and foil on my list", bias)
    assert not is_echo("Take the onions off the list.", bias)
    assert not is_echo("put dish soap on my list", bias)
    assert not is_echo("on my list take the onions", bias)  # across two sentences
    assert is_echo("milk eggs", bias, min_words=2)
    for default in WhisperSettings().vocabulary.values():
        assert is_echo(default.split(". ")[1], default)
    # the items as bias_text writes them, before the requests: a run of them is an echo
    listed = bias_text(bias, ["bread", "oat milk", "coffee"], max_items=10, max_chars=400)
    assert listed.startswith("bread, oat milk, coffee. ")
    assert is_echo("Oat milk, coffee.", listed)
    assert is_echo("Bread, oat milk, coffee.", listed)
    assert not is_echo("add oat milk and coffee", listed)
    assert is_echo("Take the onions and the yeast off the list.", listed)
    assert not is_echo("Take the onions off the list.", listed)


def test_compression_ratio_flags_loops() -> None:
    assert compression_ratio("") == 0
    assert compression_ratio("Add two liters of milk to the shopping list.") < 1.5
    assert compression_ratio("Add milk. " * 20) > 2.4


def test_bias_text_dedupes_cleans_and_caps() -> None:
    text = bias_text(
        "Add milk.",
        ["Milk", "milk", "  oat   milk ", "eggs!", "", "add", "x" * 60],
        max_items=40,
        max_chars=400,
    )
    # the items first, as a list; the vocabulary's sentence last
    assert text == "oat milk, eggs, " + "x" * 40 + ". Add milk."
    capped = bias_text("Add.", [f"item{i}" for i in range(100)], max_items=5, max_chars=400)
    assert capped == "item0, item1, item2, item3, item4. Add."
    # the vocabulary is kept whole; the items are cut at an item's end
    cut = bias_text("Add milk.", ["apples", "bananas"], max_items=10, max_chars=22)
    assert cut == "apples. Add milk."
    assert bias_text("Add milk.", ["apples"], max_items=10, max_chars=12) == "Add milk."
    # a vocabulary longer than the cap ends at a sentence's end, else at a word's
    two = "Add milk. Take the eggs off the list."
    assert bias_text(two, ["apples"], max_items=10, max_chars=20) == "apples. Add milk."
    assert bias_text(two, ["apples"], max_items=10, max_chars=9) == "Add milk."
    words = "add remove shopping list"
    assert bias_text(words, [], max_items=3, max_chars=16) == "add remove"
    assert bias_text("", [], max_items=3, max_chars=10) == ""


@pytest.mark.parametrize(
    ("lang", "expected"), [("en", "en"), ("EN-us", "en"), ("pt-BR", "pt"), ("pt_br", "pt")]
)
def test_languages(lang: str, expected: str) -> None:
    assert normalize_lang(lang) == expected


def test_unknown_language() -> None:
    with pytest.raises(AsrError, match="no Whisper model"):
        normalize_lang("ko")
    assert issubclass(AsrError, ApplianceError)


def test_settings() -> None:
    s = WhisperSettings()
    assert s.beam_size == 5
    assert s.cpu_threads == 2
    assert s.temperatures == (0.0,)
    assert s.encoder_window_s == 30.0  # Whisper's own
    assert "add" in normalize_text(s.vocabulary["en"]).split()
    # both forms of the imperative a household says
    assert {"adicione", "coloca", "remova", "tira"} <= set(
        normalize_text(s.vocabulary["pt"]).split()
    )
    with pytest.raises(ValidationError):
        WhisperSettings(beam_size=0)
    with pytest.raises(ValidationError):
        WhisperSettings.model_validate({"beam": 5})
    with pytest.raises(ValidationError):
        WhisperSettings(temperatures=())
    for name, field in WhisperSettings.model_fields.items():
        assert field.description, name


def test_encoder_frames() -> None:
    """The encoder reads the window, or the whole utterance when it is longer (an even
    number of frames), never more than Whisper's 30 s."""
    assert encoder_frames(280, 20.0) == 2000  # a 2.8 s command: the window
    assert encoder_frames(1999, 20.0) == 2000
    assert encoder_frames(2345, 20.0) == 2346  # longer than the window: all of it
    assert encoder_frames(2800, 20.0) == 2800
    assert encoder_frames(3500, 20.0) == 3000  # Whisper reads 30 s at most
    assert encoder_frames(280, 30.0) == 3000  # faster-whisper's own
    with pytest.raises(ValidationError):
        WhisperSettings(encoder_window_s=5)
    with pytest.raises(ValidationError):
        WhisperSettings(encoder_window_s=31)


def test_transcript_and_hints_types() -> None:
    t = Transcript(text="add milk", engine="whisper", elapsed_ms=12.0)
    assert t.usable
    assert t.details == {}
    assert not Transcript(text="add milk", engine="whisper", elapsed_ms=1, rejected="x").usable
    assert not Transcript(text="", engine="whisper", elapsed_ms=1).usable
    h = Hints()
    assert (h.lang, h.items, h.prompt) == ("en", (), None)
    with pytest.raises(AttributeError):
        h.lang = "pt"  # type: ignore[misc]


def decode(
    raw: str,
    *,
    logprob: float = -0.2,
    no_speech: float = 0.05,
    tokens: int = 10,
) -> _Decode:
    return _Decode(raw, tokens, logprob, no_speech, compression_ratio(raw), 0.0)


BIAS = "add remove shopping list agenda calendar tomorrow today"


@pytest.mark.parametrize(
    ("result", "audio_ms", "reason"),
    [
        (decode("Add milk to the shopping list."), 2500, None),
        (decode(" ."), 2000, REJECT_NO_SPEECH),
        (decode(""), 2000, REJECT_NO_SPEECH),
        (decode("Add milk. Add milk. Add milk."), 3000, REJECT_REPETITION),
        (decode("Thank you.", no_speech=0.7), 2000, REJECT_HALLUCINATION),
        (
            decode("add eggs and bread and jam and milk and rice and tea"),
            1000,
            REJECT_HALLUCINATION,
        ),
        (decode("Add milk.", logprob=-1.12, no_speech=0.92), 2000, REJECT_NO_SPEECH),
        (decode("add milk", no_speech=0.61), 2000, REJECT_NO_SPEECH),
        (decode("add milk to the", tokens=40), 2000, REJECT_TIMEOUT),
        (decode("added doesn't", logprob=-1.3), 2000, REJECT_LOW_CONFIDENCE),
        (decode("add remove shopping list"), 2000, REJECT_PROMPT_ECHO),
    ],
)
def test_rejection_rules(result: _Decode, audio_ms: float, reason: str | None) -> None:
    engine = WhisperEngine()  # loads no model until it transcribes
    assert engine._check(result, audio_ms, budget=40, bias=BIAS) == reason
