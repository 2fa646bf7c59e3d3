"""Is a memory a statement or its negation? (English and Portuguese, by word lists.)

The commit gate uses this to tell a contradiction ("I like coffee" / "I don't like
coffee", "eu gosto de café" / "eu não gosto de café") from a paraphrase: two texts of
opposite polarity whose *neutral* forms (negation words dropped, "hate" read as "love")
say the same thing contradict each other. Similarity alone cannot tell: to an
embedding model a sentence and its negation are near neighbours.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)

# Negation words and what stands in their place in the neutral form ("" drops them).
_NEGATORS_EN: dict[str, str] = {
    "not": "", "never": "", "no": "", "don't": "", "dont": "", "doesn't": "",
    "doesnt": "", "didn't": "", "didnt": "", "isn't": "is", "aren't": "are",
    "wasn't": "was", "weren't": "were", "won't": "will", "wouldn't": "would",
    "can't": "can", "cant": "can", "cannot": "can", "couldn't": "could",
    "shouldn't": "should", "haven't": "have", "hasn't": "has", "hadn't": "had",
    "mustn't": "must", "neither": "", "nor": "",
}  # fmt: skip
_NEGATORS_PT: dict[str, str] = {
    "não": "", "nao": "", "nunca": "", "jamais": "", "nem": "", "nenhum": "um",
    "nenhuma": "uma",
}  # fmt: skip
# Verbs that state the opposite of a liking, and the liking they oppose.
_OPPOSITES: dict[str, str] = {
    "hate": "love", "hates": "loves", "hated": "loved", "dislike": "like",
    "dislikes": "likes", "disliked": "liked", "detest": "like", "detests": "likes",
    "loathe": "love", "loathes": "loves",
    "odeio": "adoro", "odeia": "adora", "odiamos": "adoramos", "odeiam": "adoram",
    "odiava": "adorava", "detesto": "gosto", "detesta": "gosta",
    "detestamos": "gostamos", "detestam": "gostam", "detestava": "gostava",
}  # fmt: skip
# Function words that tell Portuguese from English ("no" negates only in English:
# in Portuguese it means "in the").
_PT_WORDS = frozenset({
    "eu", "não", "nao", "de", "da", "do", "das", "dos", "que", "minha", "meu", "nós", "é",
    "são", "com", "para", "uma", "um", "os", "as", "em", "na", "no", "temos", "tenho", "sou",
    "somos", "gosto", "gosta",
})  # fmt: skip
_EN_WORDS = frozenset({
    "i", "the", "a", "an", "we", "is", "my", "to", "of", "and", "have", "has", "am", "are",
    "in", "on", "at", "our",
})  # fmt: skip


@dataclass(frozen=True)
class Polarity:
    negative: bool
    """True when the text denies or opposes (odd count of negation + opposite verb)."""
    neutral: str
    """The text with its negation removed: what it would say if it were positive."""


def _is_portuguese(words: list[str]) -> bool:
    pt = sum(w in _PT_WORDS for w in words)
    en = sum(w in _EN_WORDS for w in words)
    return pt > en


def polarity(text: str) -> Polarity:
    """The polarity of ``text`` and its neutral form."""
    normal = text.replace("\u2019", "'")
    words = [w.lower() for w in _WORD.findall(normal)]
    # Portuguese: "no" is "in the"; English text may still quote a "não".
    negators = _NEGATORS_PT if _is_portuguese(words) else {**_NEGATORS_PT, **_NEGATORS_EN}
    negated = any(w in negators for w in words)
    opposed = any(w in _OPPOSITES for w in words)

    def neutralise(match: re.Match[str]) -> str:
        word = match[0].lower()
        if word in negators:
            return negators[word]
        return _OPPOSITES.get(word, match[0])

    neutral = " ".join(_WORD.sub(neutralise, normal).split())
    if neutral and normal[:1].isupper() and neutral[0].islower():
        # "Não sou alérgico" -> "Sou alérgico": models tell case apart.
        neutral = neutral[0].upper() + neutral[1:]
    return Polarity(negative=negated != opposed, neutral=neutral)
