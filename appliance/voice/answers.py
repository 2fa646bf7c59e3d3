"""Yes/no answers to a confirmation question, English and Brazilian Portuguese.

An answer counts as "yes" only when both engines heard yes; "no" from either engine
drops the proposal (doing nothing is always safe). A "yes" only Whisper heard, or a
"what?", has the question asked once more (``ask_again``) rather than dropped.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Literal

Answer = Literal["yes", "no"]

_YES = {
    "en": (
        "yes", "yeah", "yep", "yup", "sure", "ok", "okay", "correct", "right", "that's right",
        "that is right", "exactly", "do it", "go ahead", "please do", "yes please", "affirmative",
        "of course", "absolutely", "definitely", "confirm", "confirmed", "uh huh", "indeed",
        "sure thing", "that's correct", "sounds good", "all right", "alright", "go for it",
        "why not", "sure why not", "ok do it", "okay do it", "ok go ahead", "okay go ahead",
        "perfect", "great", "that's it", "that is it", "that is correct", "that's fine", "fine",
        "uh huh", "mm hmm", "mhm", "go on", "yes i do",
        # the request's own verb: "add it", "go ahead and add it"
        "add it", "please add it", "go ahead and add it", "put it on", "put it on the list",
        "do that", "sounds right", "that's what i said", "i do",
    ),
    "pt": (
        "sim", "isso", "isso mesmo", "pode", "pode ser", "claro", "certo", "correto", "exato",
        "isso ai", "com certeza", "confirmo", "confirma", "manda ver", "beleza", "ok", "positivo",
        "sim por favor", "pode sim", "quero", "e isso", "é isso aí", "claro que sim",
        "está certo", "tá certo", "exatamente", "confirmado", "tá bom", "está bem", "tá",
        "pode fazer", "faz isso", "fechado", "perfeito", "ótimo", "aham", "uhum",
        "pode colocar", "pode adicionar", "pode marcar", "pode pôr", "pode por",
        "coloca", "adiciona", "põe", "bota", "pode botar",
    ),
}  # fmt: skip
_NO = {
    "en": (
        "no", "nope", "nah", "no thanks", "no thank you", "cancel", "cancel that", "never mind",
        "nevermind", "stop", "don't", "do not", "wrong", "that's wrong", "negative", "forget it",
        "not really", "no way", "not now", "please don't", "please do not",
        "absolutely not", "definitely not", "of course not", "not at all", "not that",
        "not that one", "don't add it", "do not add it", "skip it", "leave it", "uh-uh",
    ),
    "pt": (
        "nao", "nao obrigado", "nao obrigada", "cancela", "cancelar", "deixa pra la", "esquece",
        "errado", "esta errado", "negativo", "para", "nem pensar", "de jeito nenhum", "nao quero",
        "cancele", "deixa para lá", "pare", "tá errado", "agora não", "nada",
        "nem", "não precisa", "deixa", "deixa quieto", "não é isso", "não é", "errou",
    ),
}  # fmt: skip
_NO_WORDS = {"en": frozenset({"no", "nope", "nah"}), "pt": frozenset({"nao"})}
"""A word that makes any answer a no ("yeah, no")."""
_COURTESY = {
    "en": ("please", "then", "thanks", "thank you", "sir"),
    "pt": ("por favor", "obrigado", "obrigada", "então", "aí"),
}
"""Words said around an answer that change nothing ("sure, go ahead, thanks")."""
ANSWER_WORDS = {
    "en": "yes no sure yeah nope okay go ahead",
    "pt": "sim não isso pode claro certo nada",
}
"""What Whisper is biased toward while it hears a yes or no, instead of the commands'
words and items. Said by Piper (deepened) and flite slt, 10 answers each in white noise
and in babble at 20 dB (40 utterances, Whisper alone): with the commands' words it
heard 7 of them as something else or nothing ("share" for "sure", "mess" for "yes", a
"no" in babble as nothing), with these 3."""
TIME_WORDS = {
    "en": "half past quarter o'clock a.m. p.m. noon midnight morning afternoon evening tonight",
    "pt": "meio-dia meia-noite horas e meia da manhã da tarde da noite",
}
"""What Whisper is biased toward while it hears the time a question asked for ("half
past nine"), instead of requests: with those, it wrote "Add 10 in the morning" and
"Have past nine". Nine answers said by Piper, flite slt and espeak-ng (27, Whisper
alone): with these words, 23 read as the time said, against 17 with the commands' words
once given (with those, Whisper wrote "930", which is no time). The Portuguese words:
seven answers by espeak-ng's two voices, 2 of 14 read as the time said, as with the
requests, against none with the command words (Whisper base hears little of that voice)."""

_AGAIN = {"en": "Sorry, I didn't catch that.", "pt": "Desculpe, não entendi."}
"""Said before the question when it is asked once more for an answer only Whisper
heard; a question asked for again (``repeat``) is just said again."""

_REPEAT = {
    "en": (
        "what", "huh", "sorry", "pardon", "pardon me", "excuse me", "come again",
        "say that again", "say again", "say it again", "what did you say", "what was that",
        "what do you mean",
        "repeat", "repeat that", "can you repeat that", "could you repeat that",
        "i didn't hear you", "i didn't catch that", "i didn't get that", "one more time",
    ),
    "pt": (
        "o que", "que", "como", "hein", "oi", "desculpa", "desculpe", "perdão", "pode repetir",
        "repete", "repita", "fala de novo", "de novo", "como é", "o que você disse",
        "não entendi", "não ouvi", "não escutei",
    ),
}  # fmt: skip
"""What asks for the question again rather than answering it ("what?", "sorry?",
"hein?")."""

_FILLER = re.compile(r"\b(uh|um|er|hmm|well|oh|ah|é|ah|hã|bom)\b")
_PUNCT = re.compile(r"[^\w\s']")
_SOUNDS = (
    (re.compile(r"\b(?:uh[- ]?huh|uh[- ]hum|mm[- ]?hmm?|mhm|mm[- ]hm)\b"), " uhhuh "),
    (re.compile(r"\buh-uh\b"), " uhuh "),
)
"""The sounds that answer, kept whole before fillers go: "uh-huh" is yes, where "huh"
alone asks what was said; "uh-uh" (written with its hyphen) is no, where "uh, uh"
is a pause."""


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKD", text.casefold())
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    for sound, token in _SOUNDS:
        text = sound.sub(token, text)
    text = _PUNCT.sub(" ", text)
    text = _FILLER.sub(" ", text)
    words = text.split()
    # Whisper writes a word said once in noise twice or three times ("sure sure")
    return " ".join(w for i, w in enumerate(words) if i == 0 or w != words[i - 1])


_YES_FOLDED = {lang: frozenset(_fold(p) for p in phrases) for lang, phrases in _YES.items()}
_NO_FOLDED = {lang: frozenset(_fold(p) for p in phrases) for lang, phrases in _NO.items()}
_COURTESY_FOLDED = {lang: frozenset(_fold(p) for p in words) for lang, words in _COURTESY.items()}
_REPEAT_FOLDED = {lang: frozenset(_fold(p) for p in phrases) for lang, phrases in _REPEAT.items()}


def _phrases_of(folded: str, known: frozenset[str]) -> list[str] | None:
    """``folded`` cut into phrases of ``known``, longest first from the left ("sure go
    ahead": "sure", "go ahead"); None when a word is left over."""
    words = folded.split()
    longest = max(len(p.split()) for p in known)
    found: list[str] = []
    index = 0
    while index < len(words):
        for size in range(min(longest, len(words) - index), 0, -1):
            phrase = " ".join(words[index : index + size])
            if phrase in known:
                found.append(phrase)
                index += size
                break
        else:
            return None
    return found


def parse_answer(text: str, lang: str) -> Answer | None:
    """``yes``, ``no``, or None when the text is not a clear answer."""
    folded = _fold(text)
    if not folded:
        return None
    key = "pt" if lang.startswith("pt") else "en"
    yes, no = _YES_FOLDED[key], _NO_FOLDED[key]
    # A short answer may repeat or add a courtesy: "yes yes", "no, thanks". A no phrase
    # first, or a "no" word anywhere, is no, whatever else is said ("no, I said milk",
    # "yeah, no", "sim, não"): doing nothing is safe. ("no" is not one in Portuguese,
    # where it means "in the".)
    if folded in no or any(folded.startswith(p + " ") for p in no if len(p) > 2):
        return "no"
    if _NO_WORDS[key] & set(folded.split()):
        return "no"
    if folded in yes or (folded.split()[0] in {"yes", "yeah", "yep", "sim"} and len(folded) < 30):
        return "yes"
    # Answers said in a row, and courtesy: "sure, go ahead", "okay, sure", "claro, pode";
    # any no among them is a no ("okay, no")
    courtesy = _COURTESY_FOLDED[key]
    said = _phrases_of(folded, yes | no | courtesy)
    if said is None or all(p in courtesy for p in said):
        return None
    return "no" if any(p in no and p not in yes for p in said) else "yes"


def heard_answer(
    transcripts: Mapping[str, str], lang: str, *, have_verifier: bool
) -> Answer | None:
    """The answer an answer turn heard (its ``transcripts``, "whisper" and "verifier"),
    the two engines' readings combined (``combine``)."""
    return combine(
        parse_answer(transcripts["whisper"], lang),
        parse_answer(transcripts["verifier"], lang) if have_verifier else None,
        have_verifier=have_verifier,
    )


def combine(
    primary: Answer | None, verifier: Answer | None, *, have_verifier: bool
) -> Answer | None:
    """Both engines must say yes; either saying no is no.

    A language without a verifier engine relies on the spoken question itself: the
    user heard exactly what will be done, so engine A's clear "yes" is taken.
    """
    if "no" in (primary, verifier):
        return "no"
    if primary == "yes" and (verifier == "yes" or not have_verifier):
        return "yes"
    return None


def asks_to_repeat(text: str, lang: str) -> bool:
    """True if ``text`` asks for the question again ("what?", "sorry, what was that?",
    "hein?", "não entendi") instead of answering it."""
    folded = _fold(text)
    key = "pt" if lang.startswith("pt") else "en"
    repeat, courtesy = _REPEAT_FOLDED[key], _COURTESY_FOLDED[key]
    said = _phrases_of(folded, repeat | courtesy) if folded else None
    return said is not None and any(p in repeat for p in said)


_LEADING_NO = {
    "en": re.compile(r"^\W*(?:(?:uh|um|oh|er|ah)\W+)?(no|nope|nah)\b[\s,.!]*", re.IGNORECASE),
    "pt": re.compile(r"^\W*(?:(?:é|ah|hã|ih)\W+)?(não|nao)\b[\s,.!]*", re.IGNORECASE),
}


def corrected_request(request: str, answer: str, lang: str) -> str | None:
    """The request said with the correction a no answer went on to ("Did you want to
    add milk?" "No, oat milk."): ``request`` (Whisper's words for it), then the answer
    as its correction ("add milk to the list, no, oat milk"), for the parser to read as
    corrected. None when ``answer`` is no "no" followed by words, or is a whole no ("no,
    thanks", "no, never mind")."""
    key = "pt" if lang.startswith("pt") else "en"
    found = _LEADING_NO[key].match(answer)
    if found is None or parse_answer(answer, lang) != "no":
        return None
    rest = answer[found.end() :].strip()
    if (
        not rest
        or parse_answer(rest, lang) is not None
        or rest.casefold().strip(" .!") in _COURTESY[key]
    ):
        return None  # "no, no", "no, cancel that", "no thanks"
    return f"{request.strip().rstrip('.!?')}, {found.group(1)}, {rest}"


Again = Literal["repeat", "unsure_yes", "unsure_time"]
"""Why a question is asked once more: the user asked for it ("what?"), or only
Whisper heard a yes, or (to "what time...?") a time."""


def ask_again(transcripts: Mapping[str, str], lang: str, *, have_verifier: bool) -> Again | None:
    """Why the question is worth asking once more rather than dropping the proposal:
    Whisper heard the user ask for it again (``repeat``), or heard a yes the verifier
    did not (``unsure_yes``); None when the answer stands as heard."""
    if asks_to_repeat(transcripts["whisper"], lang):
        return "repeat"
    if unsure_yes(transcripts, lang, have_verifier=have_verifier):
        return "unsure_yes"
    return None


def question_again(question: str, why: Again, lang: str) -> str:
    """What is said to ask ``question`` once more, ``why`` (``ask_again``)."""
    if why == "repeat":  # "what?": the question as it was
        return question
    return f"{_AGAIN['pt' if lang.startswith('pt') else 'en']} {question}"


def unsure_yes(transcripts: Mapping[str, str], lang: str, *, have_verifier: bool) -> bool:
    """Whisper heard a clear yes and the verifier did not: the question is worth asking
    once more, where ``heard_answer`` alone would drop the proposal.

    Among people talking (babble at 20 dB, four voices, 80 answers), Whisper heard
    every yes and every no right; the verifier's answer grammar heard the talkers as a
    yes or a no about as often, and took 5 of 48 spoken yeses for a no ("please don't",
    "cancel that"). A no Whisper heard is never asked again, and the second answer
    must again be a yes from both engines."""
    if not have_verifier:
        return False
    return (
        parse_answer(transcripts["whisper"], lang) == "yes"
        and parse_answer(transcripts["verifier"], lang) != "yes"
    )
