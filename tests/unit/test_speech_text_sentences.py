"""Sentence splitting before synthesis: decimals, abbreviations and initials do not end one."""

from __future__ import annotations

import pytest

from appliance.tts import split_sentences

CASES: list[tuple[str, str, list[str]]] = [
    ("en", "I added milk.", ["I added milk."]),
    ("en", "I added milk. Anything else?", ["I added milk.", "Anything else?"]),
    ("en", "Done! Anything else?", ["Done!", "Anything else?"]),
    ("en", "Really?! Yes.", ["Really?!", "Yes."]),
    ("en", "I added 2.5 l of milk. Okay.", ["I added 2.5 l of milk.", "Okay."]),
    ("en", "That is 1,000.50 dollars. Okay.", ["That is 1,000.50 dollars.", "Okay."]),
    ("en", "It costs $12.50. Thanks.", ["It costs $12.50.", "Thanks."]),
    ("en", "Dr. Smith comes tomorrow. Okay.", ["Dr. Smith comes tomorrow.", "Okay."]),
    ("en", "Mr. and Mrs. Jones are here.", ["Mr. and Mrs. Jones are here."]),
    ("en", "Call No. 5 now.", ["Call No. 5 now."]),
    ("en", "Milk, e.g. oat milk. Done.", ["Milk, e.g. oat milk.", "Done."]),
    ("en", "At 3 p.m. tomorrow. Okay.", ["At 3 p.m. tomorrow.", "Okay."]),
    ("en", "Meet at 3 p.m. Then leave.", ["Meet at 3 p.m.", "Then leave."]),
    ("en", "Milk, eggs, etc. and bread.", ["Milk, eggs, etc. and bread."]),
    ("en", "Milk, eggs, etc. Done.", ["Milk, eggs, etc.", "Done."]),
    ("en", "J. Smith called. Okay.", ["J. Smith called.", "Okay."]),
    ("en", "Added 2. Then stop.", ["Added 2.", "Then stop."]),
    ("en", '"Hello." She said.', ['"Hello."', "She said."]),
    ("en", "(Added milk.) Next.", ["(Added milk.)", "Next."]),
    ("en", "Wait... ok then.", ["Wait... ok then."]),
    ("en", "Wait... Okay.", ["Wait...", "Okay."]),
    ("en", "Wait… Okay.", ["Wait…", "Okay."]),
    ("en", "First line\nSecond line", ["First line", "Second line"]),
    ("en", "One.\n\nTwo.", ["One.", "Two."]),
    ("en", "  padded.   ", ["padded."]),
    ("en", "no final stop", ["no final stop"]),
    ("en", "...", []),
    ("en", "", []),
    ("en", "2026-12-01. Okay.", ["2026-12-01.", "Okay."]),
    ("en", "At 15:00. Okay.", ["At 15:00.", "Okay."]),
    ("pt", "Adicionei leite. Mais alguma coisa?", ["Adicionei leite.", "Mais alguma coisa?"]),
    ("pt", "Adicionei 1,5 l de leite. Pronto.", ["Adicionei 1,5 l de leite.", "Pronto."]),
    ("pt", "Foram 1.000 itens. Pronto.", ["Foram 1.000 itens.", "Pronto."]),
    ("pt", "Total: R$ 12,50. Obrigado.", ["Total: R$ 12,50.", "Obrigado."]),
    ("pt", "A Sra. Silva chega às 15h. Ok?", ["A Sra. Silva chega às 15h.", "Ok?"]),
    ("pt", "O Dr. Lima e a Dra. Souza vêm.", ["O Dr. Lima e a Dra. Souza vêm."]),
    ("pt", "Av. Paulista, nº 5. Pronto.", ["Av. Paulista, nº 5.", "Pronto."]),
    ("pt", "Leite, ovos etc. e pão.", ["Leite, ovos etc. e pão."]),
    ("pt", "Leite, ovos etc. Pronto.", ["Leite, ovos etc.", "Pronto."]),
    ("pt", 'Ele disse: "Pronto!" E saiu.', ['Ele disse: "Pronto!"', "E saiu."]),
]


@pytest.mark.parametrize(("lang", "text", "sentences"), CASES, ids=[c[1] for c in CASES])
def test_split(lang: str, text: str, sentences: list[str]) -> None:
    assert split_sentences(text, lang) == sentences


def test_splitting_keeps_all_the_words() -> None:
    text = "Dr. Smith paid $12.50 at 3 p.m. on Dec. 1. Then he left, etc. Bye!"
    assert " ".join(split_sentences(text, "en")) == text
    assert split_sentences(text, "en") == [
        "Dr. Smith paid $12.50 at 3 p.m. on Dec. 1.",
        "Then he left, etc.",
        "Bye!",
    ]
