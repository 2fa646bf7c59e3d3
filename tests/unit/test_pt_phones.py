"""Brazilian Portuguese words in the English acoustic model's phones."""

from __future__ import annotations

import pytest

from appliance.asr.grammar import PAUSE, build_grammar
from appliance.asr.pt_phones import phones, pronunciations

# The en-us model's phones (CMU), stress left out, and its silence.
EN_US_PHONES = frozenset(
    [
        "AA",
        "AE",
        "AH",
        "AO",
        "AW",
        "AY",
        "B",
        "CH",
        "D",
        "DH",
        "EH",
        "ER",
        "EY",
        "F",
        "G",
        "HH",
        "IH",
        "IY",
        "JH",
        "K",
        "L",
        "M",
        "N",
        "NG",
        "OW",
        "OY",
        "P",
        "R",
        "S",
        "SH",
        "SIL",
        "T",
        "TH",
        "UH",
        "UW",
        "V",
        "W",
        "Y",
        "Z",
        "ZH",
    ]
)


@pytest.mark.parametrize(
    ("word", "said"),
    [
        ("leite", "L EY CH IY"),  # a final "e" is [i], and a "t" before it [tʃ]
        ("tarde", "T AA R JH IY"),
        ("de", "JH IY"),
        ("ovos", "OW V UW S"),  # a final "o" is [u]
        ("pão", "P AW N"),
        ("limões", "L IY M OY N S"),
        ("arroz", "AA HH OW S"),  # "rr" and a first "r" are strong, a last "z" is [s]
        ("rua", "HH UW AH"),
        ("pera", "P EH R AH"),  # a single "r" between vowels is a tap
        ("sal", "S AA W"),  # an "l" closing a syllable is [w]
        ("alho", "AA L Y UW"),
        ("banho", "B AA N Y UW"),
        ("queijo", "K EY ZH UW"),
        ("água", "AA G W AH"),
        ("guerra", "G EH HH AH"),
        ("açúcar", "AA S UW K AA R"),
        ("compras", "K OW N P R AH S"),  # a vowel before "m" or "n" and a consonant is nasal
        ("casa", "K AA Z AH"),  # an "s" between vowels is [z]
        ("massa", "M AA S AH"),
        ("hoje", "OW ZH IY"),  # "h" says nothing
        ("couve-flor", "K OW V IY F L OW R"),
    ],
)
def test_words(word: str, said: str) -> None:
    assert phones(word) == said


def test_other_pronunciations_of_the_stressed_vowel_and_of_a_nasal_end() -> None:
    # The spelling does not say whether a stressed "e" or "o" is open or closed.
    assert pronunciations("pode") == ["P OW JH IY", "P AO JH IY"]
    assert pronunciations("mesa") == ["M EH Z AH", "M EY Z AH"]
    assert pronunciations("coloca") == ["K OW L OW K AH", "K OW L AO K AH"]
    # An accent says it, and which vowel is stressed.
    assert pronunciations("café") == ["K AA F EH"]
    assert pronunciations("você") == ["V OW S EY"]
    # A nasal vowel at the end may be heard without a closing N.
    assert pronunciations("sim") == ["S IY N", "S IY"]
    assert pronunciations("também") == ["T AH N B EY N", "T AH N B EY"]


def test_every_word_of_the_portuguese_grammar_is_said_in_the_models_phones() -> None:
    grammar = build_grammar("pt", ["pão de queijo", "güaraná"])
    assert grammar.dropped == ()
    assert set(grammar.pronunciations) == set(grammar.words)
    assert grammar.pronunciations[PAUSE] == "SIL"
    for word, said in grammar.pronunciations.items():
        assert said and set(said.split()) <= EN_US_PHONES, word
    for word, others in grammar.variants.items():
        for other in others:
            assert set(other.split()) <= EN_US_PHONES, word
