"""Per-language word lists (``sentences/lexicon/<lang>.yaml``), folded and typed."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, cast

from appliance.intents.resources import data_file, load_yaml
from appliance.intents.text import FillerRules, fold, phrase_alternation, tokenize
from appliance.protocol.voice import BUILTIN_WAKE_WORDS

LANGUAGES: tuple[str, ...] = ("en", "pt")

Phrase = tuple[str, ...]


def phrase(text: str) -> Phrase:
    """The folded tokens of ``text``."""
    if not isinstance(text, str):
        raise TypeError(f"lexicon entries must be text, got {text!r}")
    folded = fold(text)
    return tuple(w.key for w in tokenize(folded, folded, 0, len(folded)))


def _phrases(values: Iterable[str]) -> tuple[Phrase, ...]:
    found = {phrase(v) for v in values}
    found.discard(())
    return tuple(sorted(found, key=len, reverse=True))


def _table(values: Mapping[str, Any]) -> dict[str, Any]:
    return {" ".join(phrase(k)): v for k, v in values.items()}


def _words(values: Iterable[str]) -> frozenset[str]:
    return frozenset(" ".join(phrase(v)) for v in values)


PART_MERIDIEM = {
    "small_hours": "am",
    "morning": "am",
    "afternoon": "pm",
    "evening": "pm",
    "night": "night",
}
"""The parts of the day a lexicon's ``periods`` name, and how each reads an hour:
"at 8 in the evening" is 20:00, "at 3 in the small hours" ("da madrugada") 03:00."""


@dataclass(frozen=True)
class DateWords:
    """Words and patterns of the date/time grammar."""

    relative_days: Mapping[str, int]
    relative_periods: Mapping[str, tuple[int, str]]
    weekdays: Mapping[str, int]
    months: Mapping[str, int]
    periods: Mapping[str, str]
    meridiem: Mapping[str, str]
    clock_words: Mapping[str, dt.time]
    minute_words: Mapping[str, int]
    day_units: Mapping[str, int]
    duration_units: Mapping[str, int]
    one_words: frozenset[str]
    week: frozenset[str]
    weekend: frozenset[str]
    next_week: frozenset[str]
    unsupported_ranges: frozenset[str]
    vague_times: tuple[Phrase, ...]
    """When said without a day or a time ("in a bit", "daqui a pouco")."""
    answer_fillers: frozenset[str]
    """Words a time said on its own may come with ("let's say ten"): ``time_of_day``."""
    recurring: frozenset[str]
    """Words of a repetition ("every tuesday"): not supported."""
    recurring_days: frozenset[str]
    """Days said as a repetition ("on mondays", "às terças"): not supported."""
    amount_markers: frozenset[str]
    """Words a bare hour or day may follow that also come before an amount ("around
    three apples", "the 3 apples", "as duas cervejas"): with a word after it that no
    time has, the number is an amount, as it is after a number ("3 to 4 apples");
    ``DateGrammar._an_amount``."""
    after_time: frozenset[str]
    """Words that may follow such a time ("around 5 with dad"), besides the start of
    another date or time."""
    numeric_order: str
    patterns: tuple[str, ...]

    def tables(self) -> dict[str, Iterable[str]]:
        """The word tables a pattern may refer to as ``{name}``."""
        return {
            "relative_days": self.relative_days,
            "relative_periods": self.relative_periods,
            "weekdays": self.weekdays,
            "months": self.months,
            "periods": self.periods,
            "meridiem": self.meridiem,
            "clock_words": self.clock_words,
            "minute_words": self.minute_words,
            "day_units": self.day_units,
            "duration_units": self.duration_units,
            "one_words": self.one_words,
        }


@dataclass(frozen=True)
class Quantities:
    """Words around a shopping quantity."""

    vague: tuple[Phrase, ...]
    words: Mapping[Phrase, float]
    fractions: Mapping[Phrase, float]
    """A part of a unit said before it ("a quarter pound", "um quarto de quilo")."""
    half: frozenset[str]
    half_articles: frozenset[str]
    and_a_half: tuple[Phrase, ...]
    one: frozenset[str]
    of: frozenset[str]
    more: tuple[Phrase, ...]
    partitive: tuple[Phrase, ...]
    """After a number: a part of what there is ("two of the apples", "duas das maçãs")."""
    percent: tuple[Phrase, ...]
    ranges: frozenset[str]
    """Words between two counts of one item ("3 or 4 apples", "3 a 4 maçãs"): one item,
    its amount said as a range, kept in its name."""
    alternatives: frozenset[str]
    """Words between two counted items said as a choice ("3 apples or 4 pears", "3
    maçãs ou 4 peras"): one item, named as said, with no amount of its own."""
    articles: frozenset[str]
    """Articles an amount may follow ("the 3 apples", "as duas cervejas"): dropped
    before it, kept (for the item's name to drop) before no amount."""


@dataclass(frozen=True)
class Negation:
    """What makes a request negative."""

    words: frozenset[str]
    suffixes: tuple[str, ...]
    phrases: re.Pattern[str] | None
    exempt: re.Pattern[str] | None
    exempt_reads: Mapping[str, str] = field(default_factory=dict)
    """A folded exempt phrase -> how the parser reads it when the request without it
    means nothing ("don't forget to" -> "remember to": "don't forget to call mom at 5");
    no longer than the phrase."""
    exempt_asked: frozenset[str] = frozenset()
    """Folded exempt phrases whose reading is a guess ("don't forget the milk" is "buy the
    milk"; "don't forget your keys" is no purchase): a request read through one is only
    ever asked."""
    openers: re.Pattern[str] | None = None
    """Phrases that correct what was said before them ("add two apples, actually make
    that three": a negation phrase), but said first, with only fillers before them,
    start a request of their own ("actually, make that three apples": the list's
    apples changed)."""


@dataclass(frozen=True)
class Corrections:
    """How a request corrected as it is said ("add milk, no wait, oat milk", "add two
    apples, actually three") is read again: asked about as corrected, never run."""

    markers: re.Pattern[str] | None
    """A run of the words that start a correction ("no wait", "sorry", "i mean", and
    "no" before a comma), each a whole word, with commas and spaces between them."""
    again: Mapping[str, str]
    """An item request's action -> a sentence that says it, ``{}`` for its item: what a
    correction that names only an item ("oat milk") is read as."""
    amount: tuple[str, ...]
    """Ways to say an amount with the item it is of (``{amount}``, ``{item}``): a
    correction that names only an amount ("three", "three liters") is of the item."""
    at_hour: str
    """The word before an hour: a correction that names only a number ("at five, no,
    six") is that hour."""


@dataclass(frozen=True)
class Shifts:
    """Words of a move by an amount of time ("push the dentist back a week")."""

    units: Mapping[str, int]
    """A unit's word and its minutes."""
    by: frozenset[str]
    one: frozenset[str]
    counts: Mapping[Phrase, float]
    half: tuple[Phrase, ...]
    half_hour: tuple[Phrase, ...]
    next_week: tuple[Phrase, ...]
    """A day said as the next week's ("move the dentist to next week"): a week later."""


@dataclass(frozen=True)
class Lexicon:
    """All word lists of one language."""

    language: str
    fillers: FillerRules
    buying_fillers: FillerRules
    """The fillers, and why an item is bought, said last ("add coffee to the list,
    we're almost out": ``fillers.reasons``): those of a request to buy only. Elsewhere
    the words are what was said ("remind me at five to tell john we're out")."""
    done_fillers: FillerRules
    """The fillers, and why an item is taken off or crossed off, said last ("take the
    milk off the list, we have plenty": ``fillers.done_reasons``): those of such a
    request only."""
    negation: Negation
    pronouns: frozenset[str]
    refers_back: frozenset[str]
    """Pronouns that stand for the item the conversation was last about ("take it off
    the list", "tira isso da lista")."""
    amount_homophones: Mapping[str, str]
    """A number word as Whisper writes it when nothing says it is a number, said first
    in an amount ("make that too", "make it for cartons"): the number."""
    more_of_it: frozenset[str]
    """Words that make a count said without an item more of the item the conversation
    was last about ("add two more", "coloca mais dois")."""
    another: frozenset[str]
    """Phrases that say one more of it ("add another one", "adiciona mais um")."""
    corrections: Corrections
    purpose_markers: tuple[Phrase, ...]
    """Words that start what an item is for ("to make bread"): the item ends before."""
    item_trailing: tuple[Phrase, ...]
    needed_by_markers: frozenset[str]
    done_trailing: tuple[Phrase, ...]
    reasons: tuple[Phrase, ...]
    """Why an item is bought ("we're almost out"), said after it: no part of an added
    item ("buy milk, we're out"; said after the list: ``buying_fillers``)."""
    done_reasons: tuple[Phrase, ...]
    """Why an item comes off the list, said after it ("remove bread, I already bought
    it"): no part of an item taken off or crossed off, and no filler anywhere else (a
    reminder's title may end with them: "check if we have enough")."""
    item_bad_starts: frozenset[str]
    item_verbs: frozenset[str]
    request_verbs: frozenset[str]
    not_items: frozenset[str]
    own_list_words: frozenset[str]
    time_marker: str
    container_words: frozenset[str]
    unspeakable: frozenset[str]
    """Slurs and obscenities the node never says back (``voice.gate.unspeakable``)."""
    quantities: Quantities
    conjunctions: frozenset[str]
    unfinished_words: tuple[Phrase, ...]
    compounds: tuple[Phrase, ...]
    location_markers: frozenset[str]
    title_joiners: frozenset[str]
    shifts: Shifts
    generic_events: frozenset[str]
    event_nouns: frozenset[str]
    event_titles: frozenset[str]
    meals: tuple[Phrase, ...]
    """A meal: had with someone ("dinner with the smiths"), an entry."""
    destinations: tuple[Phrase, ...]
    evening_titles: tuple[Phrase, ...]
    morning_titles: tuple[Phrase, ...]
    event_links: frozenset[str]
    dates: DateWords
    raw: Mapping[str, Any]

    def words(self) -> frozenset[str]:
        """Every word the lexicon knows, as written (for grammars and vocabularies)."""
        return frozenset(_raw_words(self.raw))


_STRUCTURE_DEPTH = 2  # section and table names are not words; keys below them are
_SKIPPED = frozenset({"patterns", "language", "numeric_order", "suffixes"})


def _raw_words(value: Any, depth: int = 0) -> Iterator[str]:
    if isinstance(value, str):
        yield from re.findall(r"[^\W\d_]+(?:['-][^\W\d_]+)*", value)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if key in _SKIPPED:
                continue
            if depth >= _STRUCTURE_DEPTH:
                yield from _raw_words(key, depth + 1)
            yield from _raw_words(item, depth + 1)
    elif isinstance(value, Sequence):
        for item in value:
            yield from _raw_words(item, depth + 1)


def _corrections(raw: Mapping[str, Any]) -> Corrections:
    words = phrase_alternation(raw["markers"], r"[\s,]+")  # "no, wait"
    commas = phrase_alternation(raw.get("before_comma", ()))
    one = "|".join(
        ([rf"(?:{words})(?![\w'])"] if words else []) + ([rf"(?:{commas})\s*,"] if commas else [])
    )
    return Corrections(
        markers=re.compile(rf"(?<![\w'])(?:(?:{one})[\s,]*)+") if one else None,
        again={str(k): str(v) for k, v in raw["again"].items()},
        amount=tuple(str(form) for form in raw["amount"]),
        at_hour=str(raw["at_hour"]),
    )


def _compile(template: str, phrases: Iterable[str]) -> re.Pattern[str] | None:
    alternation = phrase_alternation(phrases)
    return re.compile(template.format(alternation)) if alternation else None


def _reads(raw: Mapping[str, str], exempt: Iterable[str]) -> dict[str, str]:
    """Folded phrase -> folded reading, for phrases of ``exempt`` only, each reading no
    longer than its phrase: the matching text keeps the original's length
    (``text.Utterance``)."""
    reads = {fold(k): fold(v) for k, v in raw.items()}
    phrases = {fold(p) for p in exempt}
    for phrase, reading in reads.items():
        if phrase not in phrases:
            raise ValueError(f"exempt_reads: {phrase!r} is not an exempt phrase")
        if len(reading) > len(phrase):
            raise ValueError(f"exempt_reads: {reading!r} is longer than {phrase!r}")
    return reads


def _asked(raw: Iterable[str], reads: Mapping[str, str]) -> frozenset[str]:
    """Folded phrases of ``raw``, each one with a reading in ``reads``."""
    asked = frozenset(fold(p) for p in raw)
    if unread := sorted(asked - set(reads)):
        raise ValueError(f"exempt_asked: {unread} have no reading in exempt_reads")
    return asked


def _clock(value: str) -> dt.time:
    hour, minute = value.split(":")
    return dt.time(int(hour), int(minute))


def _dates(raw: Mapping[str, Any]) -> DateWords:
    relative_periods = {
        k: (int(v[0]), str(v[1])) for k, v in _table(raw["relative_periods"]).items()
    }
    periods = _table(raw["periods"])
    unknown = {*periods.values(), *(part for _, part in relative_periods.values())} - set(
        PART_MERIDIEM
    )
    if unknown:
        raise ValueError(f"unknown parts of the day in the lexicon: {sorted(unknown)}")
    return DateWords(
        relative_days=_table(raw["relative_days"]),
        relative_periods=relative_periods,
        weekdays=_table(raw["weekdays"]),
        months=_table(raw["months"]),
        periods=periods,
        meridiem=_table(raw["meridiem"]),
        clock_words={k: _clock(v) for k, v in _table(raw["clock_words"]).items()},
        minute_words=_table(raw["minute_words"]),
        day_units=_table(raw["day_units"]),
        duration_units=_table(raw["duration_units"]),
        one_words=_words(raw["one_words"]),
        week=_words(raw["week"]),
        weekend=_words(raw["weekend"]),
        next_week=_words(raw["next_week"]),
        unsupported_ranges=_words(raw["unsupported_ranges"]),
        vague_times=_phrases(raw["vague_times"]),
        answer_fillers=_words(raw["answer_fillers"]),
        recurring=_words(raw["recurring"]),
        recurring_days=_words(raw["recurring_days"]),
        amount_markers=_words(raw["amount_markers"]),
        after_time=_words(raw["after_time"]),
        numeric_order=str(raw["numeric_order"]),
        patterns=tuple(str(p) for p in raw["patterns"]),
    )


def _read(lang: str) -> Mapping[str, Any]:
    return cast("Mapping[str, Any]", load_yaml(data_file("sentences", "lexicon", f"{lang}.yaml")))


def _with_wake_words(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    """``raw`` with the satellites' wake words among the leading fillers, whole ("hey
    jarvis") and by their last word (a stream that starts with the end of one): a
    recording of a whole request may start with one ("hey jarvis, add milk")."""
    phrases = [name.replace("_", " ") for name in BUILTIN_WAKE_WORDS]
    wake = dict.fromkeys([*phrases, *(p.rsplit(maxsplit=1)[-1] for p in phrases)])
    fillers = raw["fillers"]
    leading = [*fillers["leading"], *(w for w in wake if w not in fillers["leading"])]
    return {**raw, "fillers": {**fillers, "leading": leading}}


@cache
def load_lexicon(lang: str) -> Lexicon:
    """Load and fold the lexicon of ``lang`` ("en" or "pt")."""
    if lang not in LANGUAGES:
        raise ValueError(f"unsupported language: {lang!r}")
    raw = _with_wake_words(_read(lang))
    fillers = raw["fillers"]
    negation = raw["negation"]
    quantities = raw["quantities"]
    dates = _dates(raw["dates"])
    return Lexicon(
        language=lang,
        fillers=FillerRules.build(
            fillers["anywhere"], fillers["leading"], fillers["trailing"], fillers["kept"]
        ),
        buying_fillers=FillerRules.build(
            fillers["anywhere"],
            fillers["leading"],
            [*fillers["trailing"], *fillers["reasons"]],
            fillers["kept"],
        ),
        done_fillers=FillerRules.build(
            fillers["anywhere"],
            fillers["leading"],
            [*fillers["trailing"], *fillers["done_reasons"]],
            fillers["kept"],
        ),
        negation=Negation(
            words=_words(negation["words"]),
            suffixes=tuple(fold(s) for s in negation["suffixes"]),
            phrases=_compile(r"(?<![\w'])(?:{})(?![\w'])", negation["phrases"]),
            exempt=_compile(r"(?<![\w'])(?:{})(?![\w'])", negation["exempt"]),
            exempt_reads=(reads := _reads(negation.get("exempt_reads", {}), negation["exempt"])),
            exempt_asked=_asked(negation.get("exempt_asked", ()), reads),
            openers=_compile(r"^\s*(?:{})(?![\w'])", negation.get("openers", ())),
        ),
        pronouns=_words(raw["pronouns"]),
        refers_back=_words(raw.get("refers_back", ())),
        more_of_it=_words(raw.get("more_of_it", ())),
        another=_words(raw.get("another", ())),
        amount_homophones={
            fold(k): fold(v) for k, v in (raw.get("amount_homophones") or {}).items()
        },
        corrections=_corrections(raw["corrections"]),
        purpose_markers=_phrases(raw.get("purpose_markers", ())),
        item_trailing=_phrases(raw["item_trailing"]),
        needed_by_markers=_words(raw["needed_by_markers"]),
        done_trailing=_phrases(raw["done_trailing"]),
        reasons=_phrases(fillers["reasons"]),
        done_reasons=_phrases(fillers["done_reasons"]),
        item_bad_starts=_words(raw["item_bad_starts"]),
        item_verbs=_words(raw["item_verbs"]),
        request_verbs=_words(raw["request_verbs"]),
        not_items=_words(raw["not_items"]),
        own_list_words=_words(raw["own_list_words"]),
        time_marker=fold(str(raw["time_marker"])),
        container_words=_words(raw["container_words"]),
        unspeakable=_words(raw["unspeakable"]),
        quantities=Quantities(
            vague=_phrases(quantities["vague"]),
            words={phrase(k): float(v) for k, v in quantities["words"].items()},
            fractions=dict(  # longest first: "three quarters" before "quarter"
                sorted(
                    ((phrase(k), float(v)) for k, v in (quantities.get("fractions") or {}).items()),
                    key=lambda kv: -len(kv[0]),
                )
            ),
            half=_words(quantities["half"]),
            half_articles=_words(quantities["half_articles"]),
            and_a_half=_phrases(quantities["and_a_half"]),
            one=_words(quantities["one"]),
            of=_words(quantities["of"]),
            more=_phrases(quantities["more"]),
            partitive=_phrases(quantities["partitive"]),
            percent=_phrases(quantities["percent"]),
            articles=_words(quantities["articles"]),
            ranges=_words(quantities["ranges"]),
            alternatives=_words(quantities["alternatives"]),
        ),
        conjunctions=_words(raw["conjunctions"]),
        unfinished_words=_phrases(raw["unfinished_words"]),
        compounds=_phrases(raw["compounds"]),
        location_markers=_words(raw["location_markers"]),
        title_joiners=_words(raw["title_joiners"]),
        shifts=Shifts(
            units={**dates.duration_units, **{k: v * 24 * 60 for k, v in dates.day_units.items()}},
            by=_words(raw["shifts"]["by"]),
            one=dates.one_words,
            counts={phrase(k): float(v) for k, v in raw["shifts"]["counts"].items()},
            half=_phrases(raw["shifts"]["half"]),
            half_hour=_phrases(raw["shifts"]["half_hour"]),
            next_week=_phrases(raw["shifts"]["next_week"]),
        ),
        generic_events=_words(raw["generic_events"]),
        event_nouns=_words(raw["event_nouns"]),
        event_titles=_words(raw["event_titles"]),
        meals=_phrases(raw["meals"]),
        destinations=_phrases(raw["destinations"]),
        evening_titles=_phrases(raw["evening_titles"]),
        morning_titles=_phrases(raw["morning_titles"]),
        event_links=_words(raw["event_links"]),
        dates=dates,
        raw=raw,
    )
