"""Numbers in a word sequence: digits and spelled-out numbers (via ``text2num``)."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from text_to_num import find_numbers  # type: ignore[import-untyped,unused-ignore]
from unicode_rbnf import FormatPurpose, RbnfEngine

from appliance.intents.text import Word

_DIGITS = re.compile(r"\d+(?:[.,]\d+)?")
_FRACTION = re.compile(r"(\d{1,2})/(\d{1,2})")


@dataclass(frozen=True)
class NumberSpan:
    """A number covering ``words[start:end]``."""

    start: int
    end: int
    value: float
    ordinal: bool = False
    digits: str | None = None  # the digits as written, for numbers typed as digits


class _Token:
    """The token protocol of ``text_to_num.find_numbers``."""

    __slots__ = ("_blocked", "_text")

    def __init__(self, text: str, blocked: bool) -> None:
        self._text = text
        self._blocked = blocked

    def text(self) -> str:
        return self._text

    def nt_separated(self, _previous: object) -> bool:
        return False

    def not_a_number_part(self) -> bool:
        return self._blocked


def parse_decimal(text: str) -> float | None:
    """``"1.5"``, ``"1,5"`` or ``"12"`` as a float; None for anything else."""
    if not _DIGITS.fullmatch(text):
        return None
    return float(text.replace(",", "."))


def parse_fraction(text: str) -> float | None:
    """``"1/2"``, ``"3/4"``: a fraction below one (as Whisper writes "half a gallon"
    now and then); None for anything else, "12/5" (a date) included."""
    found = _FRACTION.fullmatch(text)
    if found is None:
        return None
    numerator, denominator = int(found.group(1)), int(found.group(2))
    return numerator / denominator if 0 < numerator < denominator <= 16 else None


def number_spans(
    words: Sequence[Word], lang: str, not_numbers: Collection[str] = ()
) -> list[NumberSpan]:
    """All numbers in ``words``, in order; words in ``not_numbers`` are never numbers."""
    spans: list[NumberSpan] = []
    tokens = [
        _Token(w.key, blocked=(w.key in not_numbers or not w.key[0].isalpha())) for w in words
    ]
    for occurrence in find_numbers(tokens, lang, threshold=0):
        spans.append(
            NumberSpan(
                start=int(occurrence.start),
                end=int(occurrence.end),
                value=float(occurrence.value),
                ordinal=bool(occurrence.is_ordinal),
            )
        )
    for index, word in enumerate(words):
        value = parse_decimal(word.key)
        if value is None:
            value = parse_fraction(word.key)
        if value is not None:
            spans.append(NumberSpan(index, index + 1, value, digits=word.key))
    spans.sort(key=lambda s: s.start)
    return spans


def format_number(value: float) -> str:
    """``3.0`` -> ``"3"``, ``1.5`` -> ``"1.5"``."""
    return str(int(value)) if value.is_integer() else repr(value)


_SPELLED = (*range(101), *range(200, 1001, 100), 1500, 2000, 10_000)


def number_words(lang: str) -> frozenset[str]:
    """Spelled-out numbers (0-100, hundreds, ordinals to 31st) in ``lang``, for grammars."""
    engine = RbnfEngine.for_language(lang)
    texts: set[str] = set()
    for value in _SPELLED:
        texts.update(engine.format_number(value).text_by_ruleset.values())
    for value in range(1, 32):
        result = engine.format_number(value, purpose=FormatPurpose.ORDINAL)
        texts.update(result.text_by_ruleset.values())
    words: set[str] = set()
    for text in texts:
        for word in text.split():
            words.add(word)
            words.update(part for part in word.split("-") if part)
    return frozenset(words)
