"""Written text to the words a TTS voice reads right, in English or Brazilian Portuguese.

    speakable("Added 2 l milk.", "en")        -> "Added two liters of milk."
    speakable("R$ 12,50 às 15:00", "pt")      -> "doze reais e cinquenta centavos às quinze horas"
    speakable("2026-12-01", "en")             -> "December first"

For speech only: receipts and logs keep the raw values. ``RULES`` is an ordered table of
regular-expression rules; each pattern is built from the language's tables in
``lexicon`` (units, currencies, months, abbreviations), so new words are table rows.
Rules run in order over the whole text, and each turns the digits it matches into words,
so later rules never see them again: abbreviations, dates, times, money, ordinals, then
every remaining number with its unit or counted noun.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from functools import cache

from appliance.tts.clock import (
    say_date,
    say_day_of_month,
    say_time,
    time_preposition,
    to_24h,
)
from appliance.tts.lexicon import LANGUAGES, TABLES, Lang, Tables, language, pt_is_feminine
from appliance.tts.numbers import (
    DIGITS_READ_ONE_BY_ONE,
    cardinal,
    counted,
    decimal,
    ends_in_million,
    is_one,
    ordinal,
    parse_money,
    parse_number,
    year,
)

Handler = Callable[[re.Match[str], Lang], str]

_NUM = r"\d+(?:[.,]\d+)*"
_NO_LETTER = r"(?![^\W\d_])"
_NUM_START = r"(?<![\w.,])"
_MERIDIEM = r"(?P<mer>[ap])\.?\s?m\b(?:\.(?!\s*(?:$|(?-i:[A-Z]))))?"
_NEXT_WORD = re.compile(r"\s+([^\W\d_]+)")
_COUNTED_WORD = re.compile(r"\s+(?:(?:a|até|e|ou)\s+[\d.,]*\d\s+)?([^\W\d_]+)", re.IGNORECASE)
"""The noun a Portuguese number agrees with, past a second number: "2 a 3 garrafas"."""
_PREVIOUS_WORD = re.compile(r"([^\W\d_]+)\s+$")
_LEAP_YEAR = 2000


@dataclass(frozen=True)
class Rule:
    """One normalization step: a pattern built from a language's tables, and its words."""

    name: str
    pattern: Callable[[Tables], str]
    handler: Handler
    languages: tuple[Lang, ...] = LANGUAGES
    flags: re.RegexFlag = re.IGNORECASE


def _alternation(keys: Iterable[str]) -> str:
    return "|".join(re.escape(k) for k in sorted(set(keys), key=len, reverse=True))


def _units(tables: Tables) -> str:
    """Units as written: lower case, and capitalized or upper case when longer than a letter.

    "L" is liters too, but "4G" and "2 M" are not grams and meters.
    """
    forms = {"L"}
    for key in tables.units:
        forms.add(key)
        if len(key) > 1:
            forms.update((key.upper(), key.capitalize()))
    return "(?-i:" + _alternation(forms) + ")"


def _months(tables: Tables) -> str:
    if tables.months[0][0].isupper():  # English: "May", "March" are months, "may" a verb
        return "(?-i:" + _alternation(k.capitalize() for k in tables.month_keys) + ")"
    return _alternation(tables.month_keys)


def _next_word(match: re.Match[str], pattern: re.Pattern[str] = _NEXT_WORD) -> str | None:
    found = pattern.match(match.string, match.end())
    return found.group(1).casefold() if found else None


def _previous_word(match: re.Match[str]) -> str | None:
    found = _PREVIOUS_WORD.search(match.string, 0, match.start())
    return found.group(1).casefold() if found else None


# --- dates and times ----------------------------------------------------------------------


def _date(year_: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year_, month, day)
    except ValueError:
        return None


def _iso_date(m: re.Match[str], lang: Lang) -> str:
    date = _date(int(m["year"]), int(m["month"]), int(m["day"]))
    if date is None:
        return m.group(0)
    words = say_date(date, lang)
    if m["hour"] is not None:
        hm = to_24h(int(m["hour"]), int(m["minute"]), None)
        if hm is not None:
            words += f" {time_preposition(hm[0], lang)} {say_time(*hm, lang)}"
    return words


def _numeric_date(m: re.Match[str], lang: Lang) -> str:
    first, second, year_ = int(m["a"]), int(m["b"]), int(m["year"])
    if len(m["year"]) == 2:
        year_ += 2000
    month, day = (first, second) if lang == "en" else (second, first)
    date = _date(year_, month, day)
    return m.group(0) if date is None else say_date(date, lang, with_year=True)


def _month_day(m: re.Match[str], lang: Lang) -> str:
    month = TABLES[lang].month_keys[m["month"].casefold()]
    date = _date(int(m["year"] or _LEAP_YEAR), month, int(m["day"]))
    if date is None:
        return m.group(0)
    return say_date(date, lang, with_year=m["year"] is not None)


def _month_year(m: re.Match[str], lang: Lang) -> str:
    month = TABLES[lang].month_keys[m["month"].casefold()]
    return f"{TABLES[lang].months[month - 1]} {year(int(m['year']), lang)}"


def _day_month(m: re.Match[str], lang: Lang) -> str:
    month = TABLES[lang].month_keys[m["month"].casefold()]
    date = _date(int(m["year"] or _LEAP_YEAR), month, int(m["day"]))
    if date is None:
        return m.group(0)
    if lang == "pt":
        return say_date(date, lang, with_year=m["year"] is not None)
    words = say_day_of_month(date.day, date.month, lang)
    if _previous_word(m) == "the":
        words = words.removeprefix("the ")
    if m["year"] is not None:
        words += f", {year(date.year, lang)}"
    return words


def _weekday(m: re.Match[str], lang: Lang) -> str:
    abbreviation = m["abbr"]
    if lang == "en" and not abbreviation[0].isupper():
        return m.group(0)
    name = TABLES[lang].weekday_abbreviations[abbreviation.casefold()]
    return name + ("," if m.group(0).endswith(",") else "")


def _clock(m: re.Match[str], lang: Lang) -> str:
    minute = m.groupdict().get("minute")
    meridiem = m.groupdict().get("mer")
    hm = to_24h(int(m["hour"]), int(minute or 0), meridiem)
    return m.group(0) if hm is None else say_time(*hm, lang)


# --- money, ordinals, quantities ------------------------------------------------------------


def _money(m: re.Match[str], lang: Lang) -> str:
    tables = TABLES[lang]
    currency = tables.currencies.get(m["sym"]) or tables.currencies[m["sym"].upper()]
    amount = parse_money(m["num"], lang)
    if amount is None:
        return m.group(0)
    if m["scale"]:
        scale = tables.scales[m["scale"].casefold()]
        words = decimal(amount, lang, feminine=currency.unit.feminine)
        words += " " + (scale.singular if abs(amount) < 2 else scale.plural)
        if scale.takes_de:
            words += " de"
        return f"{words} {currency.unit.plural}"
    cents_total = amount * 100
    if cents_total != cents_total.to_integral_value():
        return f"{decimal(amount, lang)} {currency.unit.plural}"
    whole, cents = divmod(int(cents_total), 100)
    parts = []
    if whole or not cents:
        parts.append(counted(Decimal(whole), currency.unit, lang))
    if cents:
        parts.append(counted(Decimal(cents), currency.cent, lang))
    return f" {tables.words.and_} ".join(parts)


def _ordinal(m: re.Match[str], lang: Lang) -> str:
    return ordinal(int(m["num"]), lang, feminine="ª" in m["suffix"])


def _loose_number(text: str, lang: Lang) -> str:
    """Digits that are no valid number ("1,2,3"): each run of digits on its own."""
    words = re.sub(r"\d+", lambda d: _integer(d.group(0), lang), text)
    return words.replace(",", ", ").replace(".", f" {TABLES[lang].words.point} ")


def _integer(text: str, lang: Lang, *, feminine: bool = False) -> str:
    if len(text) >= DIGITS_READ_ONE_BY_ONE:
        return " ".join(cardinal(int(d), lang) for d in text)
    return cardinal(int(text), lang, feminine=feminine)


def _number(text: str, value: Decimal, lang: Lang, *, feminine: bool) -> str:
    if text.isdigit():
        return _integer(text, lang, feminine=feminine)
    return decimal(value, lang, feminine=feminine)


def _counts_feminine(m: re.Match[str], lang: Lang) -> bool:
    """Portuguese: the number agrees with the noun after it ("duas garrafas") or hours."""
    if lang != "pt":
        return False
    noun = _next_word(m, _COUNTED_WORD)
    if noun is not None and pt_is_feminine(noun):
        return True
    return _previous_word(m) in TABLES[lang].feminine_after  # "às duas"


def _quantity(m: re.Match[str], lang: Lang) -> str:
    """A number, or a range, with its unit or the word it counts: "2 l milk", "2-3 kg"."""
    tables = TABLES[lang]
    first = parse_number(m["num"], lang)
    second = parse_number(m["num2"], lang) if m["num2"] else None
    if first is None or (m["num2"] and second is None):
        return _loose_number(m.group(0), lang)
    unit = tables.units[m["unit"].casefold()] if m["unit"] else None
    following = _next_word(m)
    feminine = unit.feminine if unit is not None else _counts_feminine(m, lang)
    negative = m["neg"] is not None
    part = unit.part(first) if unit is not None and not negative and second is None else None
    if part:  # "half a pound", "a quarter pound", "três quartos de quilo"
        words = part
    else:
        words = _number(m["num"], first, lang, feminine=feminine)
        if negative:
            words = f"{tables.words.minus} {words}"
        count = -first if negative else first
        if second is not None and m["num2"]:
            joiner = tables.words.to if second > count else ""
            words = " ".join(
                filter(None, (words, joiner, _number(m["num2"], second, lang, feminine=feminine)))
            )
            count = second
        if (
            lang == "pt"
            and ends_in_million(words)
            and (
                unit is not None
                or (following is not None and following not in tables.function_words)
            )
        ):
            words += " de"
        if unit is not None:
            words += " " + (unit.singular if is_one(count) and second is None else unit.plural)
    if unit and unit.measure and following and following not in tables.function_words:
        words += f" {tables.words.of}"
    return words


def _constant(text: str) -> Handler:
    def handler(_m: re.Match[str], _lang: Lang) -> str:
        return text

    return handler


# --- the table --------------------------------------------------------------------------------

RULES: tuple[Rule, ...] = (
    Rule(
        "weekday abbreviation",
        lambda t: (
            rf"\b(?P<abbr>{_alternation(t.weekday_abbreviations)})(?:\.,?|,)"
            rf"(?=\s+(?:\d|{_months(t)}))"
        ),
        _weekday,
    ),
    Rule(
        "ISO date (and time)",
        lambda _t: (
            r"(?<![\w-])(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})"
            r"(?:[T ](?P<hour>\d{2}):(?P<minute>\d{2})(?::\d{2}(?:\.\d+)?)?"
            r"(?:Z|[+-]\d{2}:?\d{2})?)?(?![\w-])"
        ),
        _iso_date,
    ),
    Rule(
        "numeric date (en m/d/y, pt d/m/y)",
        lambda _t: r"(?<![\w/])(?P<a>\d{1,2})/(?P<b>\d{1,2})/(?P<year>\d{4}|\d{2})(?![\w/])",
        _numeric_date,
    ),
    Rule(
        "month day (December 1st, 2026)",
        lambda t: (
            rf"\b(?P<month>{_months(t)})\.?\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?"
            rf"(?![\w:])(?:,?\s+(?P<year>\d{{4}})(?!\d))?"
        ),
        _month_day,
        languages=("en",),
    ),
    Rule(
        "month year (December 2026)",
        lambda t: rf"\b(?P<month>{_months(t)})\.?,?\s+(?P<year>\d{{4}})(?!\d)",
        _month_year,
        languages=("en",),
    ),
    Rule(
        "day month (1st of December; 1º de dezembro de 2026)",
        lambda t: (
            rf"{_NUM_START}(?P<day>\d{{1,2}})(?:st|nd|rd|th|\s?º|\s?°|o)?\s+"
            rf"(?:of\s+|de\s+)?(?P<month>{_months(t)})\b\.?"
            rf"(?:,?\s+(?:de\s+)?(?P<year>\d{{4}})(?!\d))?"
        ),
        _day_month,
    ),
    Rule(
        "clock time (15:00, 3:30 pm)",
        lambda _t: (
            rf"(?<![\d:.,])(?P<hour>\d{{1,2}}):(?P<minute>\d{{2}})(?::\d{{2}})?"
            rf"(?:\s?{_MERIDIEM})?(?:h{_NO_LETTER})?(?![\d:])"
        ),
        _clock,
    ),
    Rule(
        "hour with meridiem (3 pm)",
        lambda _t: rf"(?<![\d:.,])(?P<hour>\d{{1,2}})\s?{_MERIDIEM}",
        _clock,
    ),
    Rule(
        "Portuguese hours (15h, 15h30)",
        lambda _t: rf"(?<![\d:.,])(?P<hour>\d{{1,2}})\s?h(?P<minute>\d{{2}})?{_NO_LETTER}",
        _clock,
        languages=("pt",),
    ),
    Rule(
        "money, symbol first (R$ 12,50; $5 million)",
        lambda t: (
            rf"(?<![\w$])(?P<sym>{_alternation(t.currencies)})\s?(?P<num>{_NUM})"
            rf"(?:\s?(?P<scale>{_alternation(t.scales)}){_NO_LETTER})?(?!\d)"
        ),
        _money,
    ),
    Rule(
        "money, symbol last (12,50 €)",
        lambda t: (
            rf"{_NUM_START}(?P<num>{_NUM})(?:\s?(?P<scale>{_alternation(t.scales)}))?"
            rf"\s?(?P<sym>{_alternation(k for k in t.currencies if '$' not in k)}){_NO_LETTER}"
        ),
        _money,
    ),
    Rule(
        "ordinal (1st, 2nd)",
        lambda _t: rf"{_NUM_START}(?P<num>\d+)(?P<suffix>st|nd|rd|th)\b",
        _ordinal,
        languages=("en",),
    ),
    Rule(
        "ordinal (1º, 2ª)",
        lambda _t: rf"{_NUM_START}(?P<num>\d+)(?P<suffix>\.?[ºª])(?!\s?[cf]{_NO_LETTER})",
        _ordinal,
        languages=("pt",),
    ),
    Rule(
        "quantity (2 l, 1,5 kg, 2-3 dúzias, -3 °C, 50%, 1.000)",
        lambda t: (
            rf"(?:(?<![\w-])(?P<neg>-))?{_NUM_START}(?P<num>{_NUM})"
            rf"(?:\s?[-–]\s?(?P<num2>{_NUM}))?"
            rf"(?:[ \u00a0]?(?P<unit>{_units(t)}){_NO_LETTER}|{_NO_LETTER})"
        ),
        _quantity,
    ),
)


@cache
def _compiled(lang: Lang) -> tuple[tuple[re.Pattern[str], Handler], ...]:
    tables = TABLES[lang]
    steps = [(re.compile(pattern), _constant(words)) for pattern, words in tables.abbreviations]
    steps += [
        (re.compile(rule.pattern(tables), rule.flags), rule.handler)
        for rule in RULES
        if lang in rule.languages
    ]
    return tuple(steps)


def _bound(handler: Handler, lang: Lang) -> Callable[[re.Match[str]], str]:
    def replace(m: re.Match[str]) -> str:
        return handler(m, lang)

    return replace


_SPACES = re.compile(r"\s+")
_SPACE_BEFORE_PUNCTUATION = re.compile(r"\s+([,.;:!?])")


def speakable(text: str, lang: str) -> str:
    """``text`` with numbers, units, money, dates, times and abbreviations as words.

    ``lang`` is "en" or "pt" (tags such as "pt-BR" too); anything else raises TtsError.
    """
    code = language(lang)
    spoken = unicodedata.normalize("NFC", text)
    for pattern, handler in _compiled(code):
        spoken = pattern.sub(_bound(handler, code), spoken)
    return _SPACE_BEFORE_PUNCTUATION.sub(r"\1", _SPACES.sub(" ", spoken)).strip()
