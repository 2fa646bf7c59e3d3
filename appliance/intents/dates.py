"""Dates, times, durations and time ranges inside a phrase.

A small grammar of regular expressions (from ``sentences/lexicon/<lang>.yaml``) runs over
the canonical form of the words: folded, spelled-out numbers turned into digits,
one space between tokens. Each match becomes a ``Fragment`` that remembers which
words it covers, so the rest of the phrase (an event title, a location) keeps the
user's own words. dateparser 1.5 got too many of our target phrases wrong
("on friday at 10", "amanhã às 15h", "sexta às 16h") to be the primary resolver;
see ``appliance/intents/dateparse.py`` for where it is still used.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from appliance.intents.lexicon import PART_MERIDIEM, DateWords, Lexicon
from appliance.intents.numbers import format_number, number_spans, parse_decimal, parse_fraction
from appliance.intents.text import Word, phrase_alternation, words_of

_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
_NIGHT_FROM = 5  # "at 8 at night" is 20:00, "at 2 at night" stays 02:00
_GUESS_PM_UNTIL = 7  # a bare "at 3" is 15:00; "at 8" is 08:00
_EITHER_HALF = range(6, 10)
"""Bare hours a person may mean in the morning or in the evening (``_other_half``):
"at 6" to "at 9". Not "at 5" (17:00) nor "at 10" (10:00): 5 am and 10 pm are seldom
what a kitchen's reminders are for."""
_LABELS = {0: "today", 1: "tomorrow"}
_PART_ENDS = {"small_hours": 6, "morning": 12, "afternoon": 18, "evening": 22, "night": 24}
"""The hour each part of the day is over by: "in the morning" said at 3 pm is tomorrow's."""


@dataclass(frozen=True)
class Clock:
    """A time as said: the hour may still need "am"/"pm" from context."""

    hour: int
    minute: int = 0
    meridiem: str | None = None
    explicit: bool = False  # "15h", "07:30": no am/pm guessing


@dataclass(frozen=True)
class Fragment:
    """One date/time expression covering ``words[start:end]``."""

    start: int
    end: int
    date: dt.date | None = None
    label: str | None = None  # "today" / "tomorrow" when said with those words
    time: Clock | None = None
    end_time: Clock | None = None
    part: str | None = None  # the part of the day said: a key of PART_MERIDIEM
    duration: int | None = None
    ahead: int | None = None  # minutes from now: "in 20 minutes", "daqui a meia hora"
    guess: bool = False  # the day may be another: "next friday" said on a monday
    weekday: int | None = None  # the date is a weekday's, said by its name (0: monday)


@dataclass(frozen=True)
class When:
    """Everything a phrase said about when."""

    date: dt.date | None = None
    label: str | None = None
    time: dt.time | None = None
    end_time: dt.time | None = None
    duration_minutes: int | None = None
    ahead_minutes: int | None = None
    """A time said from now ("in 20 minutes"): no date, time or part of the day with it."""
    part: str | None = None
    """The part of the day said ("tomorrow morning", "hoje à noite"): a key of
    ``PART_MERIDIEM``, with a clock time or without one."""
    other_time: dt.time | None = None
    """The other half of the day a bare hour may be in ("at 8": ``time`` 08:00, and
    20:00), when a person may mean either; ``start`` takes the first still ahead."""
    conflict: bool = False
    vague: bool = False
    """A when said without a day or a time ("in a bit", "daqui a pouco": the lexicon's
    ``vague_times``), outside the date/time expressions."""
    fragments: tuple[Fragment, ...] = field(default=())
    guess: bool = False
    """The day said may be another: "next friday" said earlier in the same week may
    mean that week's friday (the date) or the next week's."""

    @property
    def empty(self) -> bool:
        """True when no date or time was found."""
        return self.date is None and not self.timed

    @property
    def timed(self) -> bool:
        """True when a time of day was said, as a clock time or as a time from now."""
        return self.time is not None or self.ahead_minutes is not None

    @property
    def part_only(self) -> bool:
        """True when a part of the day was said but no time in it ("tomorrow morning")."""
        return self.part is not None and not self.timed and self.end_time is None

    def day_of_part(self, now: dt.datetime) -> dt.date:
        """The day a part of the day said without a date falls on: today, or tomorrow
        once today's is over ("in the morning" said in the afternoon)."""
        if self.date is not None:
            return self.date
        if self.part is not None and now.hour >= _PART_ENDS[self.part]:
            return now.date() + dt.timedelta(days=1)
        return now.date()

    def covered(self) -> set[int]:
        """Indexes of the words that belong to a date/time expression."""
        return {i for f in self.fragments for i in range(f.start, f.end)}

    def start(self, now: dt.datetime) -> dt.datetime | dt.date | None:
        """Start as an aware datetime, a date (all day) or None.

        A time from now counts from ``now`` to the minute, in real time (across a
        daylight-saving change too), and is given in the time zone of ``now``.
        """
        tz = now.tzinfo
        if self.ahead_minutes is not None:
            minute = now.replace(second=0, microsecond=0).astimezone(dt.UTC)
            return (minute + dt.timedelta(minutes=self.ahead_minutes)).astimezone(tz)
        if self.time is not None:
            readings = [self.time] if self.other_time is None else [self.time, self.other_time]
            if self.date is not None:
                # a day said: the usual reading, unless it is over and the other is
                # not ("today at 8" said at 4 pm)
                said = [dt.datetime.combine(self.date, t, tzinfo=tz) for t in readings]
                return next((c for c in said if c > now), said[0])
            # none: the first still ahead ("at 8" said at 10 am is 8 pm, said at 9 pm
            # tomorrow's 8 am; "at 7" said at 9 pm is 7 am)
            days = (now.date(), now.date() + dt.timedelta(days=1))
            return min(
                c
                for day in days
                for t in readings
                if (c := dt.datetime.combine(day, t, tzinfo=tz)) > now
            )
        return self.date

    def in_half(self, evening: bool) -> When:
        """This when with a bare hour of either half (``other_time``) read in the evening
        half or the morning one ("dinner at 8": 20:00), its end with it."""
        if self.time is None or self.other_time is None:
            return self
        if (self.time.hour >= 12) == evening:
            return replace(self, other_time=None)
        # an end has its start's half whenever the start has another ("from 8 to 10")
        end = self.end_time
        if end is not None:
            end = end.replace(hour=(end.hour + self.other_time.hour - self.time.hour) % 24)
        return replace(self, time=self.other_time, other_time=None, end_time=end)

    def end(self, start: dt.datetime | dt.date | None) -> dt.datetime | None:
        """End as an aware datetime when an end time was said."""
        if self.end_time is None or not isinstance(start, dt.datetime):
            return None
        end_time = self.end_time
        if (
            self.time is not None
            and self.other_time is not None
            and start.time() == self.other_time
        ):
            # the start in the other half of the day: the end with it
            shift = self.other_time.hour - self.time.hour
            end_time = end_time.replace(hour=(end_time.hour + shift) % 24)
        end = dt.datetime.combine(start.date(), end_time, tzinfo=start.tzinfo)
        if end <= start:
            end += dt.timedelta(days=1)
        return end


def _same_day(dates: list[Fragment]) -> list[Fragment]:
    """``dates`` without the weekdays said with a date they fall on: "friday the 11th",
    "sexta, 11 de dezembro" is the 11th (the weekday alone would be the next Friday).
    Unchanged when the dates disagree ("thursday the 11th" of a Friday)."""
    dated = [f for f in dates if f.weekday is None]
    days = {f.date for f in dated}
    if len(days) != 1 or len(dated) == len(dates):
        return dates
    day = days.pop()
    if day is None or any(f.weekday != day.weekday() for f in dates if f.weekday is not None):
        return dates
    return dated


def _resolve_clock(clock: Clock, part: str | None) -> dt.time:
    hour = clock.hour
    if clock.explicit and (hour == 0 or hour >= 12) and clock.meridiem is None:
        return dt.time(hour, clock.minute)  # "noon", "15h", "00:30": no part changes it
    period = PART_MERIDIEM.get(part or "")
    meridiem = clock.meridiem or (period if period in ("am", "pm") else None)
    if meridiem == "am":
        hour = 0 if hour == 12 else hour
    elif meridiem == "pm":
        hour = hour + 12 if hour < 12 else hour
    elif period == "night":
        if hour == 12:
            hour = 0
        elif _NIGHT_FROM <= hour < 12:
            hour += 12
    elif not clock.explicit and 1 <= hour <= _GUESS_PM_UNTIL:
        hour += 12
    return dt.time(hour, clock.minute)


def _other_half(clock: Clock, part: str | None) -> dt.time | None:
    """The reading of a bare hour that ``_resolve_clock`` did not guess, when it is
    one a person may mean (``_EITHER_HALF``): 06:00 and 07:00 for "at 6" and "at 7"
    (guessed 18:00 and 19:00), 20:00 and 21:00 for "at 8" and "at 9" (guessed 08:00 and
    09:00). None for a time said with its half of the day ("8 pm", "in the morning",
    "20:00", "07:30")."""
    if clock.explicit or clock.meridiem is not None or part is not None:
        return None
    if clock.hour not in _EITHER_HALF:
        return None
    guessed = _resolve_clock(clock, None).hour
    return dt.time(clock.hour if guessed >= 12 else clock.hour + 12, clock.minute)


def _share_meridiem(start: Clock, end: Clock) -> Clock:
    """ "from 3 to 4 pm": the start takes the end's am/pm when that keeps it earlier."""
    if start.meridiem is not None or end.meridiem is None:
        return start
    same = replace(start, meridiem=end.meridiem)
    if _resolve_clock(same, None) <= _resolve_clock(end, None):
        return same
    return replace(start, meridiem="am" if end.meridiem == "pm" else "pm")


def _next_day_of_month(today: dt.date, day: int) -> dt.date | None:
    year, month = today.year, today.month
    for _ in range(13):
        try:
            candidate = dt.date(year, month, day)
        except ValueError:
            candidate = None
        if candidate is not None and candidate >= today:
            return candidate
        month += 1
        if month > 12:
            year, month = year + 1, 1
    return None


def _dated(today: dt.date, year: int | None, month: int, day: int) -> dt.date | None:
    try:
        candidate = dt.date(year or today.year, month, day)
        if year is None and candidate < today:
            candidate = dt.date(today.year + 1, month, day)
    except ValueError:
        return None
    return candidate


class DateGrammar:
    """The compiled date/time patterns of one language."""

    def __init__(self, lexicon: Lexicon) -> None:
        self._lang = lexicon.language
        self._words: DateWords = lexicon.dates
        tables = self._words.tables()
        self._not_numbers = frozenset(
            word
            for name in ("weekdays", "months", "relative_periods", "minute_words", "clock_words")
            for key in tables[name]
            for word in key.split()
        )

        def expand(match: re.Match[str]) -> str:
            return f"(?:{phrase_alternation(tables[match.group(1)])})"

        self._patterns = tuple(
            re.compile(_PLACEHOLDER.sub(expand, pattern) + "(?= |$)")
            for pattern in self._words.patterns
        )

    # -- canonical text -----------------------------------------------------

    def _canonical(self, words: Sequence[Word]) -> tuple[str, list[int], dict[int, int]]:
        """Canonical text, the word index of each token, and token ends -> word end."""
        spans = {s.start: s for s in number_spans(words, self._lang, self._not_numbers)}
        tokens: list[str] = []
        first_words: list[int] = []
        ends: dict[int, int] = {}
        index = 0
        offset = 0
        while index < len(words):
            if words[index].key == ",":  # "December 5, 2027"
                index += 1
                continue
            span = spans.get(index)
            if span is not None and span.digits is None:
                pieces, nxt = [format_number(span.value)], span.end
            else:
                key = words[index].key
                pieces, nxt = self._pieces(key[:-2] if key.endswith("'s") else key), index + 1
            for piece in pieces:
                tokens.append(piece)
                first_words.append(index)
                offset += len(piece) + 1
            ends[offset - 1] = nxt
            index = nxt
        return " ".join(tokens), first_words, ends

    def _pieces(self, key: str) -> list[str]:
        """A word's tokens: two numbers joined by a hyphen ("nine-thirty", as Whisper
        writes a time) are two, as if said apart ("9 30"); any other word is one."""
        parts = key.split("-")
        if len(parts) < 2 or not all(parts):
            return [key]
        values = []
        for part in parts:
            spans = number_spans(words_of(part), self._lang, self._not_numbers)
            if len(spans) != 1 or spans[0].digits is not None:
                return [key]
            values.append(format_number(spans[0].value))
        return values

    # -- interpretation -----------------------------------------------------

    def _date(self, g: Mapping[str, str], today: dt.date) -> tuple[dt.date | None, str | None]:
        """The date of a match and its label ("today"/"tomorrow"), by the groups present."""
        readers = (
            ("rel", self._relative),
            ("relp", self._relative),
            ("wd", self._weekday),
            ("numdate", self._numeric),
            ("day", self._day_of_month),
            ("in_n", self._in_days),
        )
        for group, reader in readers:
            if group in g:
                return reader(g, today)
        return None, None

    def _relative(self, g: Mapping[str, str], today: dt.date) -> tuple[dt.date | None, str | None]:
        w = self._words
        offset = w.relative_days[g["rel"]] if "rel" in g else w.relative_periods[g["relp"]][0]
        return today + dt.timedelta(days=offset), _LABELS.get(offset)

    def _weekday(self, g: Mapping[str, str], today: dt.date) -> tuple[dt.date | None, str | None]:
        if "wdnext" in g:  # "tuesday next week": that day of the next calendar week
            monday = today + dt.timedelta(days=7 - today.weekday())
            return monday + dt.timedelta(days=self._words.weekdays[g["wd"]]), None
        delta = (self._words.weekdays[g["wd"]] - today.weekday()) % 7
        if "wdthis" not in g and delta == 0:
            delta = 7
        return today + dt.timedelta(days=delta), None

    def _numeric(self, g: Mapping[str, str], today: dt.date) -> tuple[dt.date | None, str | None]:
        return self._numeric_date(g["numdate"], today), None

    def _day_of_month(
        self, g: Mapping[str, str], today: dt.date
    ) -> tuple[dt.date | None, str | None]:
        day = int(g["day"])
        if "month" in g:
            year = int(g["year"]) if "year" in g else None
            return _dated(today, year, self._words.months[g["month"]], day), None
        return _next_day_of_month(today, day), None

    def _in_days(self, g: Mapping[str, str], today: dt.date) -> tuple[dt.date | None, str | None]:
        w = self._words
        count = 1 if g["in_n"] in w.one_words else int(g["in_n"])
        start = w.relative_days[g["in_rel"]] if "in_rel" in g else 0  # "... from tomorrow"
        return today + dt.timedelta(days=start + count * w.day_units[g["in_unit"]]), None

    def _numeric_date(self, text: str, today: dt.date) -> dt.date | None:
        if "-" in text:
            iso_year, iso_month, iso_day = (int(p) for p in text.split("-"))
            return _dated(today, iso_year, iso_month, iso_day)
        parts = [int(p) for p in text.split("/")]
        first, second = parts[0], parts[1]
        month, day = (first, second) if self._words.numeric_order == "mdy" else (second, first)
        year: int | None = None
        if len(parts) == 3:
            year = parts[2] + 2000 if parts[2] < 100 else parts[2]
        return _dated(today, year, month, day)

    def _clock(self, g: Mapping[str, str], prefix: str = "") -> Clock | None:
        w = self._words
        minute = next((int(v) for k, v in g.items() if k.startswith(prefix + "m_")), 0)
        if prefix + "clock" in g:
            base = w.clock_words[g[prefix + "clock"]]
            extra = w.minute_words.get(g.get("mword", ""), 0)
            return Clock(base.hour, base.minute + extra, explicit=True)
        if prefix + "h" not in g:
            return None
        raw_hour = g[prefix + "h"]
        hour = int(raw_hour)
        word = g.get("mword", g.get("mword_b"))  # two places in a pattern: two names
        if not prefix and word is not None:
            minute = w.minute_words[word] if word in w.minute_words else int(word)
            if g.get("mdir") in ("to", "before"):
                hour, minute = (hour - 1) % 24, 60 - minute
        meridiem = w.meridiem.get(g.get(prefix + "ampm", ""))
        if meridiem is not None and hour == 0:  # "a quarter to one am" is 12:45 am
            hour = 12
        if hour > 23 or minute > 59 or (meridiem is not None and not 1 <= hour <= 12):
            return None
        explicit = (
            hour > 12
            or hour == 0
            or (len(raw_hour) == 2 and raw_hour[0] == "0")  # "07:30"
            or prefix + "h24" in g  # "7h", "7h30"
        )
        return Clock(hour, minute, meridiem, explicit)

    def _duration(self, g: Mapping[str, str]) -> int | None:
        if "dur_halfhour" in g:
            return 30
        if "dur_n" not in g:
            return None
        raw = g["dur_n"]
        count = 1.0 if raw in self._words.one_words else parse_decimal(raw)
        if count is None:
            return None
        minutes = count * self._words.duration_units[g["dur_unit"]]
        if "dur_half" in g:
            minutes += 30 if self._words.duration_units[g["dur_unit"]] == 60 else 0.5
        if "dur_m" in g:
            minutes += int(g["dur_m"])
        return round(minutes) if minutes >= 1 else None

    def _fragment(
        self, g: Mapping[str, str], today: dt.date, start: int, end: int
    ) -> Fragment | None:
        date, label = self._date(g, today)
        if ("day" in g or "numdate" in g) and date is None:
            return None  # "February 30"
        time = self._clock(g)
        end_time = self._clock(g, "e")
        if ("h" in g and time is None) or ("eh" in g and end_time is None):
            return None
        if time is not None and end_time is not None:
            time = _share_meridiem(time, end_time)
        part = self._words.periods.get(g.get("period", ""))
        if "relp" in g:
            part = self._words.relative_periods[g["relp"]][1]
        duration = self._duration(g)
        ahead: int | None = None
        if "ahead" in g:  # "in 20 minutes": a duration counted from now
            if duration is None:
                return None
            ahead, duration = duration, None
        # "next friday" said on a monday: this week's friday (the date), or next week's
        near = (
            "wdnear" in g and date is not None and date.isocalendar()[:2] == today.isocalendar()[:2]
        )
        return Fragment(
            start=start,
            end=end,
            date=date,
            label=label,
            guess=near,
            weekday=self._words.weekdays[g["wd"]] if "wd" in g else None,
            time=time,
            end_time=end_time,
            part=part,
            duration=duration,
            ahead=ahead,
        )

    # -- public ---------------------------------------------------------------

    def scan(self, words: Sequence[Word], today: dt.date) -> list[Fragment]:
        """All date/time fragments in ``words``, left to right, longest first."""
        text, first_words, ends = self._canonical(words)
        starts = [0]
        for index, char in enumerate(text):
            if char == " ":
                starts.append(index + 1)
        fragments: list[Fragment] = []
        token = 0
        while token < len(first_words):
            best: tuple[int, Fragment] | None = None
            for pattern in self._patterns:
                match = pattern.match(text, starts[token])
                if match is None or match.end() not in ends:
                    continue
                if best is not None and match.end() <= best[0]:
                    continue
                if self._an_amount(match, text):
                    continue
                groups = {k: v for k, v in match.groupdict().items() if v is not None}
                fragment = self._fragment(groups, today, first_words[token], ends[match.end()])
                if fragment is not None:
                    best = (match.end(), fragment)
            if best is None:
                token += 1
                continue
            fragments.append(best[1])
            while token < len(first_words) and first_words[token] < best[1].end:
                token += 1
        return fragments

    def _an_amount(self, match: re.Match[str], text: str) -> bool:
        """True if ``match`` ends in a bare number (an hour, a day, a fraction) that a
        word follows that no time has, and it starts with one of the
        ``amount_markers`` or with a number: "add around 3 apples" is three apples, "add
        the 3 apples" no entry on the 3rd, "as 2 cervejas" two beers, "3 to 4 apples"
        no 3:57, "1/2 gallon of milk" no January 2. Not "around 3", "around 3 pm",
        "around 3 with dad", "around 3 tomorrow" (the start of another date or time)."""
        groups = {k: v for k, v in match.groupdict().items() if v is not None}
        bare = [
            name
            for name in ("h", "day", "numdate")
            if name in groups
            and match.end(name) == match.end()
            and (name != "numdate" or parse_fraction(groups[name]) is not None)
        ]
        if not bare:
            return False
        first = min(match.start(name) for name in groups)
        marker = text[match.start() : first].strip()
        if marker not in self._words.amount_markers and not (
            not marker and text[first : first + 1].isdigit()
        ):
            return False
        following = text[match.end() :].split(maxsplit=1)
        if not following or not following[0][0].isalpha():
            return False
        if following[0] in self._words.after_time:
            return False
        start = match.end() + 1
        return not any(pattern.match(text, start) for pattern in self._patterns)

    def when(self, words: Sequence[Word], today: dt.date, *, part: str | None = None) -> When:
        """Combine the fragments of ``words`` into one ``When``; ``part``: the part of
        the day to read an hour in when the words name none (a question named it)."""
        fragments = tuple(self.scan(words, today))
        dates = _same_day([f for f in fragments if f.date is not None])
        times = [f for f in fragments if f.time is not None]
        ends = [f for f in fragments if f.end_time is not None]
        durations = [f.duration for f in fragments if f.duration is not None]
        parts = [f.part for f in fragments if f.part is not None]
        aheads = [f.ahead for f in fragments if f.ahead is not None]
        conflict = (
            len({f.date for f in dates}) > 1
            or len({f.time for f in times}) > 1
            or len(ends) > 1
            or len(set(durations)) > 1
            or len(set(aheads)) > 1
            # "tomorrow in 20 minutes", "in an hour at 3 pm": never merged
            or bool(aheads and (dates or times or parts))
        )
        part = parts[0] if parts else part
        end_clock = ends[0].end_time if ends else None
        time: dt.time | None = None
        start_clock = times[0].time if times else None
        if start_clock is not None:
            if end_clock is not None and times[0] is not ends[0]:
                start_clock = _share_meridiem(start_clock, end_clock)
            time = _resolve_clock(start_clock, part)
        end_time = _resolve_clock(end_clock, part) if end_clock is not None else None
        if (
            time is not None
            and end_time is not None
            and end_clock is not None
            and not (end_clock.explicit or end_clock.meridiem or part)
            and end_time < time
            and end_time.hour < 12
            and end_time.replace(hour=end_time.hour + 12) > time
        ):
            # "from 7 to 9": a start read in the evening takes its end there (19:00 to
            # 21:00), never to the next morning
            end_time = end_time.replace(hour=end_time.hour + 12)
        # "from 8 to 9" may be in the evening, its end with its start; not "from 9 to 5"
        # (a day's work) nor "from 8 to 9 pm" (its half said)
        movable = end_clock is None or (
            not (end_clock.explicit or end_clock.meridiem)
            and time is not None
            and end_time is not None
            and (end_time.hour < 12) == (time.hour < 12)
        )
        other_time = _other_half(start_clock, part) if start_clock and movable else None
        return When(
            date=dates[0].date if dates else None,
            label=dates[0].label if dates else None,
            guess=bool(dates) and dates[0].guess,
            time=time,
            end_time=end_time,
            other_time=other_time,
            duration_minutes=durations[0] if durations else None,
            ahead_minutes=aheads[0] if aheads else None,
            part=part,
            conflict=conflict,
            vague=self._vague(words, fragments),
            fragments=fragments,
        )

    def _vague(self, words: Sequence[Word], fragments: Sequence[Fragment]) -> bool:
        covered = {i for f in fragments for i in range(f.start, f.end)}
        keys = [w.key if i not in covered else "" for i, w in enumerate(words)]
        return any(
            tuple(keys[i : i + len(p)]) == p
            for p in self._words.vague_times
            for i in range(len(keys) - len(p) + 1)
        )
