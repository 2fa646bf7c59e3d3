"""What a user says about themselves that becomes a memory, found by rules.

"I prefer oat milk", "I don't like coffee", "I'm allergic to peanuts", "my favourite
cheese is brie"; "eu prefiro leite de aveia", "não gosto de café", "sou alérgica a
amendoim". Questions ("which milk do I like?"), commands, hedges ("I'm not sure I
like it") and reports about others are not statements. The LLM never decides what is
kept: a memory is what these rules read, in the user's own words.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

Stance = Literal["likes", "dislikes", "allergic", "favourite"]

MAX_SUBJECT_WORDS = 8


@dataclass(frozen=True)
class Statement:
    """A preference the user stated: what to store and what it is about."""

    stance: Stance
    subject: str
    text: str
    """The sentence as it will be stored (the user's words, tidied)."""
    importance: int


_IMPORTANCE: dict[Stance, int] = {"allergic": 9, "dislikes": 6, "likes": 6, "favourite": 6}

_HEDGES = {
    "en": re.compile(
        r"\b(not sure|don'?t know|do not know|maybe|perhaps|i think|i guess|if i|whether|"
        r"used to|would|wonder)\b"
    ),
    "pt": re.compile(r"\b(nao sei|talvez|acho que|sera que|se eu|costumava|gostaria)\b"),
}
_QUESTION_START = {
    "en": re.compile(
        r"^(what|which|who|whom|whose|when|where|why|how|do|does|did|am|is|are|can|could|"
        r"should|tell me|remind me)\b"
    ),
    "pt": re.compile(
        r"^(o que|que|qual|quais|quem|quando|onde|por que|porque|como|sera|eu gosto de que|"
        r"me diga|me lembre)\b"
    ),
}
_PATTERNS: dict[str, list[tuple[Stance, re.Pattern[str]]]] = {
    "en": [
        (
            "allergic",
            re.compile(r"^(?:i'?m|i am|we'?re|we are) (?:very |really )?allergic to (.+)$"),
        ),
        ("allergic", re.compile(r"^(?:i|we) (?:have|got) an? (?:\w+ )?allergy to (.+)$")),
        (
            "dislikes",
            re.compile(
                r"^(?:i|we) (?:really |just )?(?:don'?t|do not|never|can'?t|cannot) "
                r"(?:really )?(?:like|eat|drink|stand) (.+)$"
            ),
        ),
        ("dislikes", re.compile(r"^(?:i|we) (?:really )?(?:hate|dislike|can'?t stand) (.+)$")),
        (
            "favourite",
            re.compile(r"^(?:my|our) (?:favou?rite|preferred) ([\w ]+?) (?:is|are) (.+)$"),
        ),
        (
            "likes",
            re.compile(
                r"^(?:i|we) (?:really |always |usually )?(?:prefer|like|love|enjoy|only "
                r"(?:eat|drink|buy)) (.+)$"
            ),
        ),
    ],
    "pt": [
        (
            "allergic",
            re.compile(r"^(?:eu )?(?:sou|somos) (?:muito )?alergic[oa]s? (?:a|ao|aos|as) (.+)$"),
        ),
        ("allergic", re.compile(r"^(?:eu )?tenho alergia (?:a|ao|aos|as|de) (.+)$")),
        (
            "dislikes",
            re.compile(r"^(?:eu )?nao (?:gosto|gostamos) (?:muito )?(?:de|do|da|dos|das) (.+)$"),
        ),
        ("dislikes", re.compile(r"^(?:eu )?(?:odeio|detesto|nao como|nao bebo) (.+)$")),
        (
            "favourite",
            re.compile(
                r"^(?:o |a )?(?:meu|minha|nosso|nossa) ([\w ]+?) "
                r"(?:favorit[oa]|preferid[oa]) e (.+)$"
            ),
        ),
        ("likes", re.compile(r"^(?:eu )?(?:prefiro|preferimos|adoro|amo) (.+)$")),
        (
            "likes",
            re.compile(r"^(?:eu )?(?:gosto|gostamos) (?:muito |mais )?(?:de|do|da|dos|das) (.+)$"),
        ),
    ],
}
_TRAILING = re.compile(
    r"[\s,]+(please|too|as well|a lot|very much|so much|por favor|tambem|muito)$"
)


def _fold(text: str) -> str:
    """Lower case, accents off, apostrophes straight, punctuation at the ends off."""
    text = text.replace("’", "'").replace("`", "'")
    decomposed = unicodedata.normalize("NFKD", text.lower())
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(plain.strip(" .!,;:").split())


def detect(text: str, lang: str) -> Statement | None:
    """The statement about the speaker in ``text``, or None."""
    raw = " ".join(text.split())
    if not raw or raw.rstrip().endswith("?"):
        return None
    lang = "pt" if lang.startswith("pt") else "en"
    folded = _fold(raw)
    if _QUESTION_START[lang].match(folded) or _HEDGES[lang].search(folded):
        return None
    for stance, pattern in _PATTERNS[lang]:
        match = pattern.match(folded)
        if match is None:
            continue
        if stance == "favourite":
            subject = f"{match.group(2)} ({match.group(1)})"
        else:
            subject = match.group(1)
        subject = _TRAILING.sub("", subject).strip(" ,.")
        words = subject.split()
        if not words or len(words) > MAX_SUBJECT_WORDS:
            return None
        return Statement(stance, _as_said(subject, raw), _tidy(raw), _IMPORTANCE[stance])
    return None


def _as_said(subject: str, raw: str) -> str:
    """``subject`` (folded) in the user's own spelling ("cafe" -> "café"), when the
    words can be found in ``raw``; else as it is."""
    wanted = subject.split()
    said = raw.split()
    folded = [_fold(w) for w in said]
    for start in range(len(said) - len(wanted), -1, -1):
        if folded[start : start + len(wanted)] == wanted:
            return " ".join(w.strip(" .!,;:?") for w in said[start : start + len(wanted)])
    return subject


def _tidy(raw: str) -> str:
    sentence = raw.strip().rstrip(" .!,;:")
    return sentence[:1].upper() + sentence[1:] + "."
