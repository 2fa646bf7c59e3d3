"""Does a sentence say what the receipt says, and nothing else?

``check`` runs small independent rules; each returns the problems it found:

- shape: one or two short sentences, no markup, no question unless the receipt asks
  one (``needs_confirmation``, or an ``ambiguous`` rejection asking "which day?");
- language: the words are the narration language's;
- outcome: a success is told as done (with a verb of that action, no negation), a
  failure as not done (a negation, no unnegated "I added"), a confirmation as a
  question; no verb of another action ("I removed eggs" for an add);
- names: every item or event of the receipt is named (lists: the first few, plus
  "and N more" or the total); one event told (next, added, moved) comes with its time
  (or day, when all-day);
- vocabulary: no word outside the narration vocabulary and the receipt's own words
  ("I added milk and bread" when only milk was added);
- numbers, units, dates and times: only those of the receipt ("3 liters" for a 2 l
  receipt, "kilos" for liters, "Friday" for a Thursday event, "3 AM" for 15:00).

The guard is deliberately strict: a refused sentence costs only the LLM's variety,
since the caller then speaks the template.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from appliance.narration import lexicon as lx
from appliance.narration.lang import normalize_lang
from appliance.narration.tokens import (
    Number,
    Token,
    clock_words,
    is_unit_word,
    numbers,
    tokenize,
    unit_of,
    words_of,
)
from appliance.narration.view import ReceiptView, proposed_time, view
from appliance.narration.when import default_now, parse_moment, today_for
from appliance.protocol.receipts import Receipt, ReceiptEvent, ReceiptItem

_LOGGER = logging.getLogger(__name__)

NAMED_MIN = 3
"""Items/events a list sentence must name before "and N more" may cover the rest."""
MAX_SENTENCES = 2
BASE_MAX_CHARS = 160
BASE_MAX_WORDS = 32

_MARKUP = re.compile(r"[*#_`<>\[\]{}|~\\=^$]|https?:|\n|\r|\t")
_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)")
_CLAUSE_BREAK = frozenset(",;:.!?")
_LIST_ACTIONS = frozenset(
    {"shopping.list", "shopping.clear_completed", "shopping.clear", "agenda.list"}
)
_REDUCING = frozenset({"shopping.remove", "shopping.complete"})
"""Actions whose success may leave part of an item on the list (``details.reduced``)."""
_CLAIMING = {
    "en": frozenset({"i", "we", "ive", "weve", "i've", "we've", "have", "has", "just"}),
    "pt": frozenset({"eu", "nos", "acabei", "acabamos", "foi", "foram"}),
}
"""Words before a verb that make it a claim of an action ("I checked", "we've ticked")."""
_PARTICIPLE = re.compile(r"(?:ad|id)[oa]s?$")
"""Portuguese participles ("marcados"): a state, where "marquei" is an action."""
_TIMED_ACTIONS = frozenset({"agenda.next", "agenda.add", "agenda.move"})
_TITLE_STOPWORDS = frozenset({"the", "a", "an", "of", "with", "de", "do", "da", "com", "o"})
_UNIT_GROUPS = {"carton": "box"}
_AT = {"en": frozenset({"at"}), "pt": frozenset({"as", "a"})}  # "at 3", "às 3", "à 1"
_PT_PERIODS = {"da manha": "am", "da tarde": "pm", "da noite": "pm"}
_EPSILON = 1e-6


@dataclass(frozen=True)
class GuardResult:
    """``ok`` when ``problems`` is empty."""

    ok: bool
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Facts:
    """What the receipt allows a sentence to mention."""

    words: frozenset[str]
    numbers: frozenset[float]
    units: frozenset[str]
    amounts: frozenset[tuple[float, str]]
    day_offsets: frozenset[int]
    weekdays: frozenset[int]
    months: frozenset[int]
    times: frozenset[tuple[int, int]]


@dataclass(frozen=True)
class _Sentence:
    text: str
    tokens: list[Token]
    numbers: list[Number]
    lang: str
    view: ReceiptView
    facts: _Facts


Rule = Callable[[_Sentence], list[str]]


# --- facts -----------------------------------------------------------------------
def _unit_group(unit: str) -> str:
    return _UNIT_GROUPS.get(unit, unit)


def _item_amounts(item: ReceiptItem, previous: ReceiptItem | None, *, changed: bool) -> set[float]:
    """The amounts a sentence may say of ``item`` in its unit: its quantity, and when
    it had the same unit before, what it had and, ``changed`` (merged or reduced), what
    was added to it or taken off it. "1 lb" of ham and "1 oz" are "17 oz": neither 16
    ounces added nor 17 pounds."""
    values: set[float] = set()
    if item.quantity is not None:
        values.add(item.quantity)
        if previous is not None and previous.quantity is not None and previous.unit == item.unit:
            values.add(previous.quantity)
            if changed:
                values.add(round(abs(item.quantity - previous.quantity), 3))
    return values


def _previous_item(v: ReceiptView) -> ReceiptItem | None:
    previous = v.details.get("previous")
    if not isinstance(previous, dict) or "name" not in previous:
        return None
    try:
        return ReceiptItem.model_validate(previous)
    except ValueError:
        return None


def _previous_event(v: ReceiptView) -> ReceiptEvent | None:
    previous = v.details.get("previous")
    if not isinstance(previous, dict) or "title" not in previous:
        return None
    try:
        return ReceiptEvent.model_validate(previous)
    except ValueError:
        return None


def _digits_in(text: str) -> set[float]:
    return {n.value for n in numbers(tokenize(text), "en") if n.clock is None}


def _facts(v: ReceiptView, now: dt.datetime) -> _Facts:
    words: set[str] = set()
    values: set[float] = {float(v.count), float(len(v.items)), float(len(v.events))}
    units: set[str] = set()
    amounts: set[tuple[float, str]] = set()
    previous_item = _previous_item(v)
    changed = bool(v.details.get("merged") or v.details.get("reduced"))
    for item in (*v.items, *([previous_item] if previous_item else [])):
        for token in tokenize(item.name):
            words.update({token.text, token.key})
        values |= _digits_in(item.name)
        item_values = _item_amounts(item, previous_item, changed=changed)
        values |= item_values
        if item.unit:
            units.add(_unit_group(item.unit))
            amounts.update((value, _unit_group(item.unit)) for value in item_values)
    if v.title:
        words.update(w for t in tokenize(v.title) for w in (t.text, t.key))
    if v.action in _LIST_ACTIONS:
        values |= {float(n) for n in range(max(v.count, len(v.items), len(v.events)) + 1)}
    offsets: set[int] = set()
    weekdays: set[int] = set()
    months: set[int] = set()
    times: set[tuple[int, int]] = set()
    previous_event = _previous_event(v)
    for event in (*v.events, *([previous_event] if previous_event else [])):
        for text in (event.title, event.location or ""):
            for token in tokenize(text):
                words.update({token.text, token.key})
            values |= _digits_in(text)
        for stamp in (event.start, event.end):
            moment = parse_moment(stamp)
            if moment is None:
                continue
            today = today_for(moment, now)
            offsets.add((moment.day - today).days)
            weekdays.add(moment.day.weekday())
            months.add(moment.day.month)
            values |= {float(moment.day.day), float(moment.day.year)}
            if moment.time is not None:
                hour, minute = moment.time.hour, moment.time.minute
                times.add((hour, minute))
                values |= {float(hour), float(hour % 12 or 12), float(minute)}
    if (new_time := proposed_time(v)) is not None:  # "move the dentist to 4 pm"
        times.add((new_time.hour, new_time.minute))
        values |= {float(new_time.hour), float(new_time.hour % 12 or 12), float(new_time.minute)}
    _range_facts(v, now, offsets=offsets, weekdays=weekdays, months=months, values=values)
    return _Facts(
        words=frozenset(words),
        numbers=frozenset(values),
        units=frozenset(units),
        amounts=frozenset(amounts),
        day_offsets=frozenset(offsets),
        weekdays=frozenset(weekdays),
        months=frozenset(months),
        times=frozenset(times),
    )


def _range_facts(
    v: ReceiptView,
    now: dt.datetime,
    *,
    offsets: set[int],
    weekdays: set[int],
    months: set[int],
    values: set[float],
) -> None:
    """An agenda listing may name the day (or week) it covers, even when empty."""
    if v.action != "agenda.list":
        return
    since = parse_moment(v.details.get("since") if isinstance(v.details.get("since"), str)
                         else None)  # fmt: skip
    base = now.astimezone(since.tz) if since is not None and since.tz is not None else now
    today = base.date()
    span = {"today": (0,), "tomorrow": (1,), "week": tuple(range(7))}.get(
        str(v.details.get("range")), ()
    )
    days = [today + dt.timedelta(days=n) for n in span]
    if v.details.get("range") == "day" and since is not None:
        days.append(since.day)
    until = parse_moment(v.details.get("until") if isinstance(v.details.get("until"), str)
                         else None)  # fmt: skip
    if since is not None and until is not None:
        # every day the listing covers ("this weekend": Saturday and Sunday)
        days += [since.day + dt.timedelta(days=n) for n in range((until.day - since.day).days)]
    for day in days:
        offsets.add((day - today).days)
        weekdays.add(day.weekday())
        months.add(day.month)
        values |= {float(day.day), float(day.year)}


# --- helpers ---------------------------------------------------------------------
def _has(values: Iterable[float], value: float) -> bool:
    return any(abs(value - v) < _EPSILON for v in values)


def _negated_word(token: Token, lang: str) -> bool:
    return token.text in lx.NEGATIONS[lang] or (
        lang == "en" and token.text.endswith(lx.NEGATION_SUFFIX)
    )


def _has_negation(s: _Sentence) -> bool:
    return any(_negated_word(t, s.lang) for t in s.tokens)


def _claim_only(lang: str) -> dict[str, frozenset[str]]:
    return {w: c for w, c in lx.CLAIMS[lang].items() if w not in lx.BASES[lang]}


def _action_words(s: _Sentence) -> list[tuple[int, str, frozenset[str]]]:
    table = {**lx.BASES[s.lang], **lx.CLAIMS[s.lang]}
    return [(i, t.text, table[t.text]) for i, t in enumerate(s.tokens) if t.text in table]


def _clauses(text: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    for char in text:
        if char in _CLAUSE_BREAK and not (char in ".," and current and current[-1].isdigit()):
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [p for p in parts if p.strip()]


def _contains(keys: list[str], name: list[str]) -> bool:
    if not name:
        return True
    return any(keys[i : i + len(name)] == name for i in range(len(keys) - len(name) + 1))


# --- rules -----------------------------------------------------------------------
def _shape(s: _Sentence) -> list[str]:
    problems = []
    if not any(c.isalpha() for c in s.text):
        return ["empty sentence"]
    if _MARKUP.search(s.text) or any(unicodedata.category(c) in ("So", "Cs", "Co") for c in s.text):
        problems.append("markup or symbols")
    names = [i.name for i in s.view.items[:5]] + [e.title for e in s.view.events[:4]]
    max_chars = BASE_MAX_CHARS + sum(len(n) + 12 for n in names)
    max_words = BASE_MAX_WORDS + sum(len(n.split()) + 3 for n in names)
    if len(s.text) > max_chars or len(s.text.split()) > max_words:
        problems.append(f"too long ({len(s.text)} characters)")
    sentences = [p for p in _SENTENCE_END.split(s.text) if p.strip()]
    if len(sentences) > MAX_SENTENCES:
        problems.append(f"{len(sentences)} sentences")
    asks = s.view.status == "needs_confirmation" or s.view.reason == "ambiguous"
    if "?" in s.text and not asks:
        problems.append("asks a question")
    return problems


def _language(s: _Sentence) -> list[str]:
    other = "pt" if s.lang == "en" else "en"
    own_count = sum(
        1 for t in s.tokens if t.text in lx.MARKERS[s.lang] and t.text not in s.facts.words
    )
    other_count = sum(
        1 for t in s.tokens if t.text in lx.MARKERS[other] and t.text not in s.facts.words
    )
    if other_count > own_count:
        return [f"not in the expected language ({s.lang})"]
    return []


def _tells_state(s: _Sentence, index: int, cats: frozenset[str]) -> bool:
    """A shopping list's checked-off item told as a state ("Eggs are on the list,
    checked off"), never as a claim ("I checked off eggs", "marquei os ovos")."""
    v = s.view
    if v.action != "shopping.list" or lx.COMPLETE not in cats:
        return False
    if not any(i.completed for i in v.items):
        return False
    if s.lang == "pt" and not _PARTICIPLE.search(s.tokens[index].text):
        return False
    return index > 0 and s.tokens[index - 1].text not in _CLAIMING[s.lang]


def _outcome(s: _Sentence) -> list[str]:
    v = s.view
    category = lx.ACTION_CATEGORY.get(v.action or "")
    words = _action_words(s)
    problems = []
    if v.status in ("success", "needs_confirmation"):
        for index, word, cats in words:
            if (category is None or category not in cats) and not _tells_state(s, index, cats):
                problems.append(f"names another action: {word!r}")
    bought = v.item_asked and all(i.completed for i in v.items)  # asked about, and bought
    if bought and not any(_tells_state(s, index, cats) for index, _, cats in words):
        problems.append("does not say it is checked off")
    if v.status == "success":
        problems += _success_outcome(s, category, words)
    elif v.status == "needs_confirmation":
        if not s.text.rstrip().endswith("?"):
            problems.append("a confirmation must be a question")
        said = [n.value for n in s.numbers]
        if any(i.quantity is not None and not _has(said, i.quantity) for i in v.items):
            # "Did you want to add apples?" for three apples: a yes adds three
            problems.append("does not say the quantity asked about")
        claims = _claim_only(s.lang)
        problems += [f"claims it was done: {t.text!r}" for t in s.tokens if t.text in claims]
    else:
        related = lx.RELATED.get(category or "", frozenset())
        for _, word, cats in words:
            if category is not None and lx.GENERIC not in cats and not cats & related:
                problems.append(f"names another action: {word!r}")
        problems += _failure_outcome(s)
    return problems


def _success_outcome(
    s: _Sentence, category: str | None, words: list[tuple[int, str, frozenset[str]]]
) -> list[str]:
    v = s.view
    problems = []
    empty_listing = v.action in _LIST_ACTIONS and not v.items and not v.events
    if _has_negation(s) and not empty_listing:
        negations = [t.text for t in s.tokens if _negated_word(t, s.lang)]
        problems.append(f"sounds like a failure: {', '.join(negations)}")
    merged = v.action == "shopping.add" and bool(v.details.get("merged"))
    reduced = v.action in _REDUCING and bool(v.details.get("reduced"))
    # "The shopping list now has ...": a merge, an amount taken off or bought, or a
    # quantity set, told as the total
    total = merged or reduced or v.action == "shopping.set_quantity"
    claims = lx.CLAIMS[s.lang]
    claimed = any(w in claims and category in cats for _, w, cats in words)
    if category is not None and not total and not claimed:
        problems.append("does not say it was done")
    if v.action == "shopping.set_quantity" or reduced:
        said = [n.value for n in s.numbers]
        if any(i.quantity is not None and not _has(said, i.quantity) for i in v.items):
            problems.append("does not say the new quantity")  # "I removed eggs": all?
    if merged and claimed and not any(t.text in lx.TOTAL_WORDS for t in s.tokens):
        totals = {i.quantity for i in v.items if i.quantity is not None}
        if any(_has(totals, n.value) for n in s.numbers):
            problems.append("says the new total was added (the quantities were merged)")
    return problems


def _failure_outcome(s: _Sentence) -> list[str]:
    problems = []
    asks_back = s.view.reason == "ambiguous" and s.text.rstrip().endswith("?")
    if not _has_negation(s) and not asks_back:
        problems.append(f"does not say it failed ({s.view.status})")
    claims = _claim_only(s.lang)
    for clause in _clauses(s.text):
        tokens = tokenize(clause)
        for index, token in enumerate(tokens):
            if token.text in claims and not any(_negated_word(t, s.lang) for t in tokens[:index]):
                problems.append(f"claims it was done: {token.text!r}")
    return problems


def _when_said(s: _Sentence) -> list[str]:
    """Telling one event (next, added, moved), say when it is."""
    v = s.view
    if v.status != "success" or v.action not in _TIMED_ACTIONS or len(v.events) != 1:
        return []
    moment = parse_moment(v.events[0].start)
    if moment is None:
        return []
    if moment.time is not None:
        return [] if _sentence_times(s) else ["does not say the time"]
    texts = {t.text for t in s.tokens}
    days = set(lx.RELATIVE_DAYS[s.lang]) | set(lx.WEEKDAYS[s.lang]) | set(lx.MONTHS[s.lang])
    return [] if texts & days else ["does not say the day"]


def _names(s: _Sentence) -> list[str]:
    v = s.view
    keys = [t.key for t in s.tokens]
    problems = []
    listing = v.action in _LIST_ACTIONS
    total = max(v.count, len(v.items)) if v.items else max(v.count, len(v.events))
    item_names = [i.name for i in v.items]
    event_titles = list(dict.fromkeys(e.title for e in v.events))
    for names, missing in (
        (item_names, [n for n in item_names if not _contains(keys, words_of(n))]),
        (event_titles, [n for n in event_titles if not _title_named(keys, n)]),
    ):
        if not missing:
            continue
        named = len(names) - len(missing)
        if listing and len(names) > NAMED_MIN and named >= NAMED_MIN and _mentions_rest(s, total):
            continue
        problems.append(f"does not name: {', '.join(missing[:5])}")
    return problems


def _title_named(keys: list[str], title: str) -> bool:
    words = [w for w in words_of(title) if w not in _TITLE_STOPWORDS] or words_of(title)
    return all(w in keys for w in words)


def _mentions_rest(s: _Sentence, total: int) -> bool:
    return any(t.text in lx.MORE_WORDS for t in s.tokens) or any(
        abs(n.value - total) < _EPSILON for n in s.numbers
    )


def _vocabulary(s: _Sentence) -> list[str]:
    vocabulary = lx.vocabulary(s.lang)
    unknown = [
        t.text
        for t in s.tokens
        if not t.text[:1].isdigit()
        and t.text not in vocabulary
        and t.key not in vocabulary
        and t.text not in s.facts.words
        and t.key not in s.facts.words
    ]
    if unknown:
        return [f"says what the receipt does not: {', '.join(dict.fromkeys(unknown))}"]
    return []


def _numbers(s: _Sentence) -> list[str]:
    problems = []
    for number in s.numbers:
        if number.clock is not None:
            continue  # checked as a time
        if not _has(s.facts.numbers, number.value):
            problems.append(f"number not in the receipt: {number.value:g}")
        elif (counted := _counted_item(s, number.end)) is not None and not (
            counted.quantity is not None and abs(counted.quantity - number.value) < _EPSILON
        ):
            problems.append(f"amount not in the receipt: {number.value:g} {counted.name}")
    return problems


def _counted_item(s: _Sentence, index: int) -> ReceiptItem | None:
    """The receipt item whose name starts at token ``index`` ("1 milk": the number counts
    it), if any."""
    for item in s.view.items:
        keys = [t.key for t in tokenize(item.name)]
        if keys and [t.key for t in s.tokens[index : index + len(keys)]] == keys:
            return item
    return None


def _units(s: _Sentence) -> list[str]:
    problems = []
    by_end = {n.end: n for n in s.numbers}
    for index, token in enumerate(s.tokens):
        if not is_unit_word(s.tokens, index):
            continue
        unit = _unit_group(unit_of(token.text) or "")
        if unit not in s.facts.units:
            problems.append(f"unit not in the receipt: {token.text!r}")
            continue
        number = by_end.get(index)
        if number is not None and (number.value, unit) not in {
            (v, u) for v, u in s.facts.amounts if abs(v - number.value) < _EPSILON
        }:
            problems.append(f"amount not in the receipt: {number.value:g} {token.text}")
    return problems


def _dates(s: _Sentence) -> list[str]:
    f, lang, problems = s.facts, s.lang, []
    texts = [t.text for t in s.tokens]
    skip: set[int] = set()
    phrase = lx.AFTER_TOMORROW[lang]
    for i in range(len(texts) - len(phrase) + 1):
        if tuple(texts[i : i + len(phrase)]) == phrase:
            skip.update(range(i, i + len(phrase)))
            if 2 not in f.day_offsets:
                problems.append(f"date not in the receipt: {' '.join(phrase)!r}")
    for i, word in enumerate(texts):
        if i in skip:
            continue
        offset = lx.RELATIVE_DAYS[lang].get(word)
        if offset is not None and offset not in f.day_offsets:
            problems.append(f"date not in the receipt: {word!r}")
        weekday = lx.WEEKDAYS[lang].get(word)
        if weekday is not None and weekday not in f.weekdays:
            problems.append(f"weekday not in the receipt: {word!r}")
        month = lx.MONTHS[lang].get(word)
        is_month = month is not None and (word not in lx.AMBIGUOUS_MONTHS or _next_to_number(s, i))
        if is_month and month not in f.months:
            problems.append(f"month not in the receipt: {word!r}")
    return problems


def _next_to_number(s: _Sentence, index: int) -> bool:
    """ "May 5", "5 May", "in March": a month, not a verb."""
    previous = s.tokens[index - 1].text if index > 0 else ""
    return previous in {"in", "of"} or any(
        n.end == index or n.index == index + 1 for n in s.numbers
    )


def _sentence_times(s: _Sentence) -> list[tuple[str, int, int, bool]]:
    """(text, hour, minute, exact) for each clock time; not exact: 12 h, no AM/PM."""
    found: list[tuple[str, int, int, bool]] = []
    texts = [t.text for t in s.tokens]
    for number in s.numbers:
        following = texts[number.end] if number.end < len(texts) else ""
        meridiem = following if following in ("am", "pm") and s.lang == "en" else ""
        if s.lang == "pt":
            period = " ".join(texts[number.end : number.end + 2])
            meridiem = _PT_PERIODS.get(period, "")
        previous = texts[number.index - 1] if number.index > 0 else ""
        at_hour = previous in _AT[s.lang] and number.value.is_integer() and number.value <= 24
        if number.clock is None and not meridiem and following != "o'clock" and not at_hour:
            continue
        hour, minute = number.clock if number.clock else (int(number.value), 0)
        label = texts[number.index] + (f" {meridiem}" if meridiem else "")
        if meridiem and 1 <= hour <= 12:
            found.append((label, hour % 12 + (12 if meridiem == "pm" else 0), minute, True))
        elif s.lang == "pt" and "h" in texts[number.index]:
            found.append((label, hour, minute, True))
        else:
            found.append((label, hour, minute, hour > 12))
    for index, (hour, minute) in clock_words(s.tokens):
        found.append((texts[index], hour, minute, True))
    return found


def _times(s: _Sentence) -> list[str]:
    problems = []
    allowed = s.facts.times
    for label, hour, minute, exact in _sentence_times(s):
        if exact:
            ok = (hour, minute) in allowed
        else:
            ok = any(h % 12 == hour % 12 and m == minute for h, m in allowed)
        if not ok:
            problems.append(f"time not in the receipt: {label!r}")
    return problems


RULES: tuple[Rule, ...] = (
    _shape, _language, _outcome, _names, _when_said, _vocabulary, _numbers, _units, _dates,
    _times,
)  # fmt: skip


def check(
    sentence: str, receipt: Receipt, lang: str, *, now: dt.datetime | None = None
) -> GuardResult:
    """Whether ``sentence`` may be spoken for ``receipt`` in ``lang``.

    ``now`` (aware) anchors relative dates the same way the templates do.
    """
    code = normalize_lang(lang)
    if code is None:
        return GuardResult(ok=False, problems=[f"unsupported language {lang!r}"])
    v = view(receipt)
    tokens = tokenize(sentence)
    s = _Sentence(
        text=sentence.strip(),
        tokens=tokens,
        numbers=numbers(tokens, code),
        lang=code,
        view=v,
        facts=_facts(v, now or default_now()),
    )
    problems: list[str] = []
    for rule in RULES:
        problems.extend(rule(s))
    if problems:
        _LOGGER.debug("guard refused %r: %s", sentence, "; ".join(problems))
    return GuardResult(ok=not problems, problems=problems)
