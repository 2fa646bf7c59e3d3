"""Sentence tokens for the guard: folded words, numbers (digits or words), clock times.

Text is folded (lower case, no accents, plain apostrophes) before tokenizing, so
"Maçã" and "maca" are the same word. Numbers are read in digits ("2", "1.5", "1,5",
"5th", "1º") and in words ("two", "twenty-two", "dois", "duas", "vinte e dois");
clock times as "3 PM", "3:30", "15h30", "noon", "meio-dia".
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from appliance.actions.items import UNIT_BY_ALIAS, item_key

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "`": "'", "\u00b4": "'"})
_MERIDIEM_DOTS = re.compile(r"\b([ap])\.\s?m\b\.?")
_TOKEN = re.compile(
    r"(?P<num>\d+(?:[.,:]\d+)?)(?P<suffix>h(?:\d{2})?|º|ª|st|nd|rd|th)?(?![^\W_])"
    r"|(?P<word>[^\W\d_]+(?:'[^\W\d_]+)*)"
)

EN_NUMBERS: dict[str, float] = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000,
    "half": 0.5, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6,
    "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10, "twelfth": 12, "twentieth": 20,
    "thirtieth": 30, "couple": 2, "both": 2,
}  # fmt: skip
PT_NUMBERS: dict[str, float] = {
    "zero": 0, "dois": 2, "duas": 2, "tres": 3, "quatro": 4, "cinco": 5, "seis": 6,
    "sete": 7, "oito": 8, "nove": 9, "dez": 10, "onze": 11, "doze": 12, "treze": 13,
    "catorze": 14, "quatorze": 14, "quinze": 15, "dezesseis": 16, "dezessete": 17,
    "dezoito": 18, "dezenove": 19, "vinte": 20, "trinta": 30, "quarenta": 40,
    "cinquenta": 50, "sessenta": 60, "setenta": 70, "oitenta": 80, "noventa": 90,
    "cem": 100, "cento": 100, "duzentos": 200, "duzentas": 200, "trezentos": 300, "mil": 1000,
    "meio": 0.5, "meia": 0.5, "ambos": 2, "ambas": 2,
}  # fmt: skip
_ONE_WORDS = {"en": frozenset({"one"}), "pt": frozenset({"um", "uma"})}
_ARTICLE_ONE = {"en": frozenset({"a", "an"}), "pt": frozenset()}
_NOT_A_COUNT_BEFORE = frozenset({"which", "this", "that", "each", "every", "any", "no", "the"})
_JOINERS = {"en": frozenset({"and"}), "pt": frozenset({"e"})}
_CLOCK_WORDS = {
    "noon": (12, 0), "midday": (12, 0), "midnight": (0, 0),
    "meio dia": (12, 0), "meia noite": (0, 0),
}  # fmt: skip
# Adjectives that look like action verbs: "2 checked-off items" is not "I checked off".
_PHRASES = (("checked-off", "checkedoff"), ("checked off item", "checkedoff item"))
_AMBIGUOUS_UNIT_WORDS = frozenset({"can", "cans", "tin", "l", "g", "lt", "piece", "pieces"})


@dataclass(frozen=True)
class Token:
    text: str
    """Folded text as written ("eggs", "2", "15h30")."""
    key: str
    """Folded and singular ("egg"); numbers keep their text."""


@dataclass(frozen=True)
class Number:
    index: int
    """Token index where the number starts."""
    end: int
    value: float
    clock: tuple[int, int] | None = None
    """(hour, minute) when written as a time ("3:30", "15h")."""


def fold(text: str) -> str:
    """Lower case, accents off, apostrophes plain."""
    text = unicodedata.normalize("NFD", text.translate(_APOSTROPHES).casefold())
    return "".join(c for c in text if not unicodedata.combining(c))


@lru_cache(maxsize=8192)
def singular(word: str) -> str:
    """The singular of one folded word ("eggs" -> "egg"); other words as they are."""
    return item_key(word) or word


def tokenize(text: str) -> list[Token]:
    folded = _MERIDIEM_DOTS.sub(r"\1m", fold(text))
    for phrase, joined in _PHRASES:
        folded = folded.replace(phrase, joined)
    tokens: list[Token] = []
    for match in _TOKEN.finditer(folded):
        text_ = match.group(0)
        key = text_ if match.group("num") else singular(text_)
        tokens.append(Token(text_, key))
    return tokens


def words_of(text: str) -> list[str]:
    """The singular keys of a name's words: "Oat Milks" -> ["oat", "milk"]."""
    return [t.key for t in tokenize(text)]


def unit_of(word: str) -> str | None:
    """The canonical unit of a folded unit word ("litros" -> "l"), else None."""
    return _FOLDED_UNITS.get(word)


_FOLDED_UNITS: dict[str, str] = {
    **{fold(alias): unit for alias, unit in UNIT_BY_ALIAS.items()},
    "forma": "loaf", "formas": "loaf", "kilos": "kg", "quilos": "kg",
}  # fmt: skip


def is_unit_word(tokens: list[Token], index: int) -> bool:
    word = tokens[index].text
    if unit_of(word) is None:
        return False
    if word in _AMBIGUOUS_UNIT_WORDS:
        return index > 0 and _digit_or_word_number(tokens[index - 1].text)
    return True


def _digit_or_word_number(word: str) -> bool:
    return word[:1].isdigit() or word in EN_NUMBERS or word in PT_NUMBERS


def _digits(match_text: str, lang: str) -> tuple[float, tuple[int, int] | None]:
    found = _TOKEN.fullmatch(match_text)
    if found is None or found.group("num") is None:
        return float("nan"), None
    num, suffix = found.group("num"), found.group("suffix") or ""
    if ":" in num:
        hour, minute = (int(p) for p in num.split(":", 1))
        return float(hour), (hour, minute)
    if suffix.startswith("h"):
        return float(num), (int(num), int(suffix[1:] or 0))
    if "," in num and lang == "en" and len(num.split(",")[1]) == 3:
        return float(num.replace(",", "")), None  # 1,500
    return float(num.replace(",", ".")), None


def _word_value(tokens: list[Token], index: int, lang: str) -> float | None:
    word = tokens[index].text
    table = PT_NUMBERS if lang == "pt" else EN_NUMBERS
    following = tokens[index + 1].text if index + 1 < len(tokens) else ""
    previous = tokens[index - 1].text if index > 0 else ""
    if word in _ARTICLE_ONE[lang] or (lang == "pt" and word in _ONE_WORDS["pt"]):
        nxt = index + 1
        return 1.0 if nxt < len(tokens) and unit_of(tokens[nxt].text) is not None else None
    if word in _ONE_WORDS[lang]:
        if previous in _NOT_A_COUNT_BEFORE or following == "of":
            return None
        return 1.0
    if lang == "en" and word == "second" and following in {"", "item", "items"}:
        return None
    if word in {"meio", "meia"} and following in {"dia", "noite"}:
        return None
    return table.get(word)


def numbers(tokens: list[Token], lang: str) -> list[Number]:
    """Every number in the tokens, with compounds joined ("vinte e dois" -> 22)."""
    found: list[Number] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.text[:1].isdigit():
            value, clock = _digits(token.text, lang)
            found.append(Number(index, index + 1, value, clock))
            index += 1
            continue
        value_ = _word_value(tokens, index, lang)
        if value_ is None:
            index += 1
            continue
        start, total, index = index, value_, index + 1
        while index < len(tokens):
            step = index + 1 if tokens[index].text in _JOINERS[lang] else index
            nxt = _continuation(tokens, step, lang)
            if nxt is None or not _combines(total, nxt):
                break
            total = total * nxt if nxt in (100, 1000) and total < nxt else total + nxt
            index = step + 1
        found.append(Number(start, index, float(total)))
    return found


def _continuation(tokens: list[Token], index: int, lang: str) -> float | None:
    if index >= len(tokens):
        return None
    if tokens[index].text in _ONE_WORDS[lang]:
        return 1.0
    return _word_value(tokens, index, lang)


def _combines(total: float, nxt: float) -> bool:
    if nxt in (100, 1000):
        return total < nxt and total.is_integer()
    if total >= 100 and total % 100 == 0:
        return nxt < 100
    return 20 <= total < 100 and total % 10 == 0 and 0 < nxt < 10


def clock_words(tokens: list[Token]) -> list[tuple[int, tuple[int, int]]]:
    """(index, (hour, minute)) for "noon", "midnight", "meio-dia", "meia-noite"."""
    found = []
    for index, token in enumerate(tokens):
        if token.text in _CLOCK_WORDS:
            found.append((index, _CLOCK_WORDS[token.text]))
        elif index + 1 < len(tokens):
            pair = f"{token.text} {tokens[index + 1].text}"
            if pair in _CLOCK_WORDS:
                found.append((index, _CLOCK_WORDS[pair]))
    return found
