"""Times of day and calendar dates as spoken words.

English: "three p m", "three thirty p m", "nine oh five a m", "noon", "midnight";
"December first", "December first, twenty twenty-six".
Portuguese: "quinze horas", "quinze e trinta", "uma hora", "meia-noite e dez";
"primeiro de dezembro", "dois de dezembro de dois mil e vinte e seis".
"""

from __future__ import annotations

import datetime as dt

from appliance.tts.lexicon import TABLES, Lang
from appliance.tts.numbers import cardinal, ordinal, year

NOON = 12


def to_24h(hour: int, minute: int, meridiem: str | None) -> tuple[int, int] | None:
    """Validate a written time; ``meridiem`` "a"/"p" (any case) makes it 12-hour."""
    if not 0 <= minute <= 59:
        return None
    if meridiem is None:
        return (hour, minute) if 0 <= hour <= 23 else None
    if not 1 <= hour <= 12:
        return None
    hour %= 12
    if meridiem.lower() == "p":
        hour += 12
    return hour, minute


def _en_time(hour: int, minute: int) -> str:
    if minute == 0 and hour in (0, NOON):
        return "midnight" if hour == 0 else "noon"
    suffix = "a m" if hour < NOON else "p m"
    words = cardinal(hour % 12 or 12, "en")
    if minute:
        words += f" oh {cardinal(minute, 'en')}" if minute < 10 else f" {cardinal(minute, 'en')}"
    return f"{words} {suffix}"


def _pt_time(hour: int, minute: int) -> str:
    words = "meia-noite" if hour == 0 else cardinal(hour, "pt", feminine=True)
    if minute:
        return f"{words} e {cardinal(minute, 'pt')}"
    if hour == 0:
        return words
    return f"{words} {'hora' if hour == 1 else 'horas'}"


def say_time(hour: int, minute: int, lang: Lang) -> str:
    """A 24-hour time of day in words."""
    return _en_time(hour, minute) if lang == "en" else _pt_time(hour, minute)


def time_preposition(hour: int, lang: Lang) -> str:
    """ "at" / "às", or "à" before "uma hora" and "meia-noite"."""
    if lang == "pt" and hour in (0, 1):
        return "à"
    return TABLES[lang].words.at


def say_date(date: dt.date, lang: Lang, *, with_year: bool = False) -> str:
    """A calendar date, without the weekday; the year only when asked for."""
    month = TABLES[lang].months[date.month - 1]
    if lang == "en":
        words = f"{month} {ordinal(date.day, 'en')}"
        return f"{words}, {year(date.year, 'en')}" if with_year else words
    day = "primeiro" if date.day == 1 else cardinal(date.day, "pt")
    words = f"{day} de {month}"
    return f"{words} de {year(date.year, 'pt')}" if with_year else words


def say_day_of_month(day: int, month: int, lang: Lang) -> str:
    """English "the first of December" (a date written day first); Portuguese as say_date."""
    name = TABLES[lang].months[month - 1]
    if lang == "en":
        return f"the {ordinal(day, 'en')} of {name}"
    return f"{'primeiro' if day == 1 else cardinal(day, 'pt')} de {name}"
