"""Event dates and times as words, relative to now when close.

Dates are read in the receipt's own offset (an event's ``start`` carries it): "today",
"tomorrow", "yesterday", a weekday within the coming week, else the date. Times stay
digits ("3 PM", "15h"); spelling numbers out is the TTS's job.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

EN_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
PT_WEEKDAYS = (
    "segunda-feira", "terça-feira", "quarta-feira", "quinta-feira", "sexta-feira",
    "sábado", "domingo",
)  # fmt: skip
EN_MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August",
    "September", "October", "November", "December",
)  # fmt: skip
PT_MONTHS = (
    "janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto",
    "setembro", "outubro", "novembro", "dezembro",
)  # fmt: skip

WEEK_AHEAD = 6
"""Days ahead that are still named by their weekday."""


@dataclass(frozen=True)
class Moment:
    """An event boundary: a day, and a local time unless the event is all-day."""

    day: dt.date
    time: dt.time | None
    tz: dt.tzinfo | None


def parse_moment(value: str | None) -> Moment | None:
    """``"2026-12-01T15:00:00-03:00"`` or ``"2026-12-01"``; None when unreadable."""
    if not value:
        return None
    try:
        if len(value) == 10:
            return Moment(dt.date.fromisoformat(value), None, None)
        stamp = dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    return Moment(stamp.date(), stamp.time().replace(second=0, microsecond=0), stamp.tzinfo)


def default_now() -> dt.datetime:
    """Now, aware, in the machine's local zone."""
    return dt.datetime.now(dt.UTC).astimezone()


def today_for(moment: Moment, now: dt.datetime) -> dt.date:
    """Today's date in the moment's own offset (in ``now``'s zone for all-day events)."""
    if now.tzinfo is None:
        return now.date()
    return now.astimezone(moment.tz).date() if moment.tz is not None else now.date()


@dataclass(frozen=True)
class DayWords:
    adverbial: str
    """"tomorrow", "on Friday", "on March 5" / "amanhã", "na sexta-feira", "em 5 de março"."""
    bare: str
    """"tomorrow", "Friday", "March 5" (after "to"/"for") / "amanhã", "sexta-feira"."""


def _en_day(day: dt.date, today: dt.date) -> DayWords:
    delta = (day - today).days
    if delta == 0:
        return DayWords("today", "today")
    if delta == 1:
        return DayWords("tomorrow", "tomorrow")
    if delta == -1:
        return DayWords("yesterday", "yesterday")
    if 2 <= delta <= WEEK_AHEAD:
        name = EN_WEEKDAYS[day.weekday()]
        return DayWords(f"on {name}", name)
    date = f"{EN_MONTHS[day.month - 1]} {day.day}"
    if day.year != today.year:
        date += f", {day.year}"
    return DayWords(f"on {date}", date)


def _pt_day(day: dt.date, today: dt.date) -> DayWords:
    delta = (day - today).days
    if delta == 0:
        return DayWords("hoje", "hoje")
    if delta == 1:
        return DayWords("amanhã", "amanhã")
    if delta == -1:
        return DayWords("ontem", "ontem")
    if 2 <= delta <= WEEK_AHEAD:
        name = PT_WEEKDAYS[day.weekday()]
        article = "no" if day.weekday() >= 5 else "na"
        return DayWords(f"{article} {name}", name)
    number = "1º" if day.day == 1 else str(day.day)
    date = f"{number} de {PT_MONTHS[day.month - 1]}"
    if day.year != today.year:
        date += f" de {day.year}"
    return DayWords(f"em {date}", date)


def day_words(day: dt.date, today: dt.date, lang: str) -> DayWords:
    return _pt_day(day, today) if lang == "pt" else _en_day(day, today)


def time_words(time: dt.time, lang: str) -> str:
    """ "at 3 PM", "at 3:30 PM", "at noon" / "às 15h", "às 15h30", "ao meio-dia"."""
    hour, minute = time.hour, time.minute
    if lang == "pt":
        if minute == 0 and hour == 12:
            return "ao meio-dia"
        if minute == 0 and hour == 0:
            return "à meia-noite"
        preposition = "à" if hour in (0, 1) else "às"
        return f"{preposition} {hour}h" + (f"{minute:02d}" if minute else "")
    if minute == 0 and hour == 12:
        return "at noon"
    if minute == 0 and hour == 0:
        return "at midnight"
    clock = str(hour % 12 or 12) + (f":{minute:02d}" if minute else "")
    return f"at {clock} {'PM' if hour >= 12 else 'AM'}"


def bare_time_words(time: dt.time, lang: str, *, either_half: bool = False) -> str:
    """A time to follow "to"/"para": "4 PM", "noon" / "as 16h", "o meio-dia";
    ``either_half``, its hour as said, without its half of the day: "8" / "as 8"."""
    if either_half:
        hour = time.hour % 12 or 12
        if lang == "pt":
            return f"as {hour}" + (f"h{time.minute:02d}" if time.minute else "")
        return str(hour) + (f":{time.minute:02d}" if time.minute else "")
    words = time_words(time, lang)
    if lang == "pt":
        first, _, rest = words.partition(" ")
        return f"{ {'às': 'as', 'à': 'a', 'ao': 'o'}.get(first, first) } {rest}"
    return words.removeprefix("at ")


def when(moment: Moment, now: dt.datetime, lang: str, *, bare: bool = False) -> str:
    """ "tomorrow at 3 PM" (``bare``: "Friday at 4 PM", to follow "to"/"for")."""
    words = day_words(moment.day, today_for(moment, now), lang)
    day = words.bare if bare else words.adverbial
    if moment.time is None:
        return day
    return f"{day} {time_words(moment.time, lang)}"


_EN_PARTS = {  # after "tomorrow" or a weekday / after a date / today
    "morning": ("morning", "in the morning", "this morning"),
    "afternoon": ("afternoon", "in the afternoon", "this afternoon"),
    "evening": ("evening", "in the evening", "this evening"),
    "night": ("night", "at night", "tonight"),
    "small_hours": ("in the small hours", "in the small hours", "in the small hours"),
}
_PT_PARTS = {
    "morning": "de manhã",
    "afternoon": "à tarde",
    "evening": "à noite",
    "night": "à noite",
    "small_hours": "de madrugada",
}


def part_of_day(day: dt.date, part: str | None, now: dt.datetime, lang: str) -> str:
    """A day and a part of it: "tomorrow morning", "this evening", "tonight", "on
    Friday afternoon", "on March 5 in the morning" / "amanhã de manhã", "hoje à noite",
    "na sexta-feira à tarde"; the day alone without a part (or one not known)."""
    today = now.date()
    words = day_words(day, today, lang).adverbial
    if lang == "pt":
        pt_part = _PT_PARTS.get(part or "")
        return f"{words} {pt_part}" if pt_part else words
    en_part = _EN_PARTS.get(part or "")
    if en_part is None:
        return words
    short, long, this = en_part
    if day == today:
        return this
    named = day == today + dt.timedelta(days=1) or 2 <= (day - today).days <= WEEK_AHEAD
    return f"{words} {short if named else long}"
