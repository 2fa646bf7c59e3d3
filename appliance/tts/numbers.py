"""Numbers as words (num2words, plus Portuguese gender) and written numbers as values.

Written forms follow each language's convention: English "1,000.5", Portuguese "1.000,5"
(a lone dot with other than three digits after it, "1.5", is a decimal point there too).
Money is read by its own, convention-free rule (``parse_money``): two digits after the last
separator make it a decimal separator, three make it a thousands separator.
"""

from __future__ import annotations

import re
from decimal import Decimal

from num2words import num2words  # type: ignore[import-untyped,unused-ignore]

from appliance.tts.lexicon import TABLES, Lang, Noun

_N2W_LANG: dict[Lang, str] = {"en": "en", "pt": "pt_BR"}
DIGITS_READ_ONE_BY_ONE = 10
"""Integers written with this many digits or more (ids, phone numbers) are read digit by digit."""

_PT_FEMININE = {
    "um": "uma",
    "dois": "duas",
    "duzentos": "duzentas",
    "trezentos": "trezentas",
    "quatrocentos": "quatrocentas",
    "quinhentos": "quinhentas",
    "seiscentos": "seiscentas",
    "setecentos": "setecentas",
    "oitocentos": "oitocentas",
    "novecentos": "novecentas",
}
_PT_MASCULINE_SCALES = frozenset({"milhão", "milhões", "bilhão", "bilhões", "trilhão", "trilhões"})

_EN_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")
_PT_THOUSANDS = re.compile(r"\d{1,3}(?:\.\d{3})+(?:,\d+)?")
_PT_PLAIN = re.compile(r"\d+(?:[,.]\d+)?")


def _n2w(value: int, lang: Lang, to: str = "cardinal") -> str:
    words = str(num2words(value, lang=_N2W_LANG[lang], to=to))
    return words.replace(",", "")


def _pt_feminine(words: str) -> str:
    """ "dois mil e duzentos e um" -> "duas mil e duzentas e uma"; millions keep their gender."""
    tokens = words.split(" ")
    start = 0
    for i, token in enumerate(tokens):
        if token in _PT_MASCULINE_SCALES:
            start = i + 1
    return " ".join(tokens[:start] + [_PT_FEMININE.get(t, t) for t in tokens[start:]])


def cardinal(value: int, lang: Lang, *, feminine: bool = False) -> str:
    """``value`` in words; ``feminine`` agrees with a feminine Portuguese noun."""
    if value < 0:
        return f"{TABLES[lang].words.minus} {cardinal(-value, lang, feminine=feminine)}"
    words = _n2w(value, lang)
    if feminine and lang == "pt":
        words = _pt_feminine(words)
    return words


def ordinal(value: int, lang: Lang, *, feminine: bool = False) -> str:
    """``value`` as an ordinal ("first", "primeiro", "primeira")."""
    words = _n2w(value, lang, "ordinal")
    if feminine and lang == "pt":
        words = " ".join(w[:-1] + "a" if w.endswith("o") else w for w in words.split(" "))
    return words


def year(value: int, lang: Lang) -> str:
    """A calendar year: "twenty twenty-six", "dois mil e vinte e seis"."""
    if lang == "en" and 1000 <= value <= 2999:
        return _n2w(value, lang, "year")
    return cardinal(value, lang)


def digits(text: str, lang: Lang) -> str:
    """Every digit of ``text`` on its own ("zero zero seven")."""
    return " ".join(cardinal(int(d), lang) for d in text if d.isdigit())


def decimal(value: Decimal, lang: Lang, *, feminine: bool = False) -> str:
    """A number that may have a fraction: "two point five", "dois vírgula cinco".

    Trailing zeros of the fraction are not read ("2.50" is "two point five"). Portuguese
    reads a short fraction as a number ("um vírgula vinte e cinco"), English digit by digit.
    """
    sign = value < 0
    text = format(abs(value), "f")
    whole, _, fraction = text.partition(".")
    fraction = fraction.rstrip("0")
    words = cardinal(int(whole), lang, feminine=feminine)
    if fraction:
        point = TABLES[lang].words.point
        if lang == "pt" and not fraction.startswith("0") and len(fraction) <= 3:
            words = f"{words} {point} {cardinal(int(fraction), lang)}"
        else:
            words = f"{words} {point} {digits(fraction, lang)}"
    return f"{TABLES[lang].words.minus} {words}" if sign else words


def is_one(value: Decimal) -> bool:
    return abs(value) == 1


def ends_in_million(words: str) -> bool:
    """Portuguese "um milhão" / "dois bilhões": a noun after it needs "de"."""
    return words.rsplit(" ", 1)[-1] in _PT_MASCULINE_SCALES


def counted(value: Decimal, noun: Noun, lang: Lang) -> str:
    """``value`` followed by ``noun`` in the right number and gender.

    "one liter", "two kilos", "duas dúzias", "um milhão de reais".
    """
    words = decimal(value, lang, feminine=noun.feminine)
    name = noun.singular if is_one(value) else noun.plural
    if lang == "pt" and ends_in_million(words):
        return f"{words} de {name}"
    return f"{words} {name}"


def parse_number(text: str, lang: Lang) -> Decimal | None:
    """A written number in ``lang``'s convention; None when it is not one."""
    if lang == "en":
        if _EN_NUMBER.fullmatch(text):
            return Decimal(text.replace(",", ""))
        return None
    if _PT_THOUSANDS.fullmatch(text):
        return Decimal(text.replace(".", "").replace(",", "."))
    if _PT_PLAIN.fullmatch(text):
        return Decimal(text.replace(",", "."))
    return None


def parse_money(text: str, lang: Lang) -> Decimal | None:
    """An amount of money written either way: "12,50", "12.50", "1.234,56", "1,234.56"."""
    last = max(text.rfind("."), text.rfind(","))
    if last < 0:
        return Decimal(text) if text.isdigit() else None
    separator, head, tail = text[last], text[:last], text[last + 1 :]
    other = "," if separator == "." else "."
    if len(tail) == 3 and re.fullmatch(rf"\d{{1,3}}(?:{re.escape(separator)}\d{{3}})*", head):
        return Decimal(head.replace(separator, "") + tail)
    if len(tail) in (1, 2) and tail.isdigit():
        if re.fullmatch(rf"\d+|\d{{1,3}}(?:{re.escape(other)}\d{{3}})+", head):
            return Decimal(head.replace(other, "") + "." + tail)
        return None
    return parse_number(text, lang)
