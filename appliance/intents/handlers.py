"""From a matched template to commands: one handler per intent name."""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from pydantic import ValidationError

from appliance.actions.items import UNIT_BY_ALIAS, display_name, item_key
from appliance.intents import gate
from appliance.intents.dateparse import DateparserFallback
from appliance.intents.dates import DateGrammar, When
from appliance.intents.lexicon import Lexicon, Phrase
from appliance.intents.matching import Candidate
from appliance.intents.numbers import number_spans
from appliance.intents.quantities import (
    ItemSpec,
    ends_with,
    parse_item,
    split_items,
    trim_trailing,
)
from appliance.intents.text import Utterance, Word, fold, span_text, words_of
from appliance.protocol.commands import (
    MAX_SHIFT_MINUTES,
    AgendaAdd,
    AgendaList,
    AgendaMove,
    AgendaNext,
    AgendaRange,
    AgendaRemove,
    Command,
    MemoryAdd,
    ShoppingAdd,
    ShoppingClear,
    ShoppingClearCompleted,
    ShoppingComplete,
    ShoppingList,
    ShoppingRemove,
    ShoppingSetQuantity,
    ShoppingUncomplete,
)


class Reason:
    """Why nothing was parsed (``ParseResult.reason``)."""

    EMPTY = gate.EMPTY
    NEGATED = gate.NEGATED
    NOT_UNDERSTOOD = "not_understood"
    TOO_LONG = "too_long"
    UNKNOWN_LIST = "unknown_list"
    MULTIPLE_ITEMS = "multiple_items"
    BAD_DATE = "bad_date"
    AMBIGUOUS_DATE = "ambiguous_date"
    UNSUPPORTED_RANGE = "unsupported_range"
    RECURRING = "recurring"
    VAGUE_TIME = "vague_time"
    TWO_REQUESTS = "two_requests"

    @staticmethod
    def missing(slot: str) -> str:
        """A required slot was empty or unusable: ``missing_slot:<slot>``."""
        return f"missing_slot:{slot}"

    @staticmethod
    def invalid(field: str) -> str:
        """A value was out of range for the command: ``invalid:<field>``."""
        return f"invalid:{field}"


@dataclass(frozen=True)
class Outcome:
    """A handler's answer: commands, or a reason and whether to try other parses."""

    commands: tuple[Command, ...] = ()
    reason: str | None = None
    final: bool = True  # False: this parse does not fit, a lower-ranked one may
    # (reason None with final False: the template's condition does not hold)
    ask_time: str | None = None
    """The commands lack a time said only as a part of the day (a ``PART_MERIDIEM``
    key): "add dentist tomorrow morning" asks what time before anything is added."""
    guess: bool = False
    """The commands' day is one of two the words may mean (``When.guess``), or an
    amount was said that they do not keep ("put two apples back"): they are proposed,
    never run unasked."""


def _fail(reason: str, *, final: bool = True) -> Outcome:
    return Outcome(reason=reason, final=final)


# The template matched but its condition does not hold ("add X" is an agenda entry
# only with a time): not a reason to report, just try the next parse.
_DOES_NOT_APPLY = Outcome(final=False)


@dataclass(frozen=True)
class Context:
    """Everything a handler needs for one candidate parse."""

    utterance: Utterance
    candidate: Candidate
    lexicon: Lexicon
    grammar: DateGrammar
    fallback: DateparserFallback
    now: dt.datetime
    last_item: str | None = None
    """The item the conversation was last about: what "make that three" changes."""

    def words(self, slot: str) -> list[Word] | None:
        """The words of a wildcard slot, or None if the template has no such slot."""
        found = self.candidate.slots.get(slot)
        if found is None:
            return None
        return self.utterance.words(found.start, found.end)

    def text(self, words: Sequence[Word]) -> str:
        """The original text of ``words``."""
        return span_text(self.utterance.original, list(words))

    @property
    def today(self) -> dt.date:
        """The current date in the parser's time zone."""
        return self.now.date()


Handler = Callable[[Context], Outcome]


# -- shopping --------------------------------------------------------------------


def _usable(name: str, lexicon: Lexicon) -> bool:
    """False for "", "it", "to my list": words that cannot name an item or event."""
    words = words_of(name)
    if not words:
        return False
    return (
        " ".join(w.key for w in words) not in lexicon.pronouns
        and words[0].key not in lexicon.item_bad_starts
    )


def _misread(words: Sequence[Word], lexicon: Lexicon) -> bool:
    """True if a slot swallowed "the list"/"my calendar": the template did not fit."""
    return any(w.key in lexicon.container_words for w in words)


def _names_an_event(words: Sequence[Word], lexicon: Lexicon) -> bool:
    """True if ``words`` hold one of the lexicon's ``event_nouns`` ("dentist
    appointment", "reminder to call mom") or ``event_titles`` ("the dentist"), or a
    meal had with someone ("dinner with the smiths"): an agenda entry, never a
    shopping item."""
    if any(w.key in lexicon.event_nouns or w.key in lexicon.event_titles for w in words):
        return True
    keys = tuple(w.key for w in words)
    return any(
        keys[i : i + len(meal)] == meal and keys[i + len(meal)] in lexicon.title_joiners
        for meal in lexicon.meals
        for i in range(len(keys) - len(meal))
    )


def _second_request(words: Sequence[Word], lexicon: Lexicon) -> bool:
    """True if an item or a title holds another request after "and" ("eggs and remind
    me to call mom", "call mom and then add eggs"): the lexicon's ``request_verbs`` up
    to three words after a conjunction ("e depois me lembra")."""
    return any(
        w.key in lexicon.conjunctions
        and any(n.key in lexicon.request_verbs for n in words[i + 1 : i + 4])
        for i, w in enumerate(words)
    )


def _recurring(words: Sequence[Word], lexicon: Lexicon) -> bool:
    """True if ``words`` say a repetition ("yoga every tuesday", "milk each week",
    "piano lessons on mondays")."""
    return any(w.key in lexicon.dates.recurring for w in words[:-1]) or any(
        w.key in lexicon.dates.recurring_days for w in words
    )


def _items(
    ctx: Context, trailing: Sequence[Phrase] = (), *, needed_by: int = 0
) -> list[ItemSpec] | Outcome:
    """The items of the request; ``trailing``: phrases said after them that are no
    part of any ("this morning" after a bought item); ``needed_by``: how many of the
    last words (``item_trailing`` aside) say the day they are needed by. Items said
    after the list (the ``more`` slot: "add milk to the list, and eggs") come after."""
    specs = _items_of(ctx, ctx.words("item"), trailing, needed_by)
    more = ctx.words("more")
    if more is None or isinstance(specs, Outcome):
        return specs
    if any(w.key in ctx.lexicon.request_verbs for w in more[:3]):
        # "... and remind me to call mom", "... e me lembra de ligar pra mãe"
        return _fail(Reason.TWO_REQUESTS, final=False)
    also = _items_of(ctx, more, trailing, 0)
    return also if isinstance(also, Outcome) else [*specs, *also]


def _items_of(
    ctx: Context, words: list[Word] | None, trailing: Sequence[Phrase], needed_by: int
) -> list[ItemSpec] | Outcome:
    words = _said_item(words or [], trailing, needed_by, ctx.lexicon)
    if not words:
        return _fail(Reason.missing("item"))
    if any(w.key in ctx.lexicon.request_verbs for w in words[:2]):
        return _DOES_NOT_APPLY  # "me lembra ... de avisar o joão porque [está acabando]"
    if _misread(words, ctx.lexicon) or _names_an_event(words, ctx.lexicon):
        return _DOES_NOT_APPLY  # "to the list" in the item, or "a dentist appointment"
    keys = [w.key for w in words]
    if any(_holds(keys[1:], place) for place in ctx.lexicon.destinations):
        return _DOES_NOT_APPLY  # "add some salt to the soup": a recipe's step
    if _recurring(words, ctx.lexicon):
        return _fail(Reason.RECURRING)
    pieces = split_items(words, ctx.lexicon)
    if pieces and pieces[0] and pieces[0][0].key in ctx.lexicon.item_verbs:
        return _DOES_NOT_APPLY  # "add add milk": Whisper's stutter, or a misread verb
    if _second_request(words, ctx.lexicon) or any(
        piece and piece[0].key in ctx.lexicon.item_verbs for piece in pieces
    ):  # "add milk and remove eggs", "marca o dentista e me lembra de ligar pra mãe"
        return _fail(Reason.TWO_REQUESTS, final=False)
    if any(" ".join(w.key for w in piece) in ctx.lexicon.not_items for piece in pieces):
        return _DOES_NOT_APPLY  # "I need help"
    specs = [parse_item(ctx.utterance.original, piece, ctx.lexicon) for piece in pieces]
    if not specs or not all(spec.name and _usable(spec.name, ctx.lexicon) for spec in specs):
        return _fail(Reason.missing("item"))
    return specs


def _said_item(
    words: list[Word], trailing: Sequence[Phrase], needed_by: int, lexicon: Lexicon
) -> list[Word]:
    """The words that name the items of ``words``: without the ``trailing`` phrases
    said after them, the day they are needed by (their ``needed_by`` last words, the
    lexicon's ``item_trailing`` aside) and what they are for ("flour to make bread");
    none when they are only a trailing phrase ("add to the list, we're out": what?)."""
    while words and (size := ends_with(words, trailing)):
        words = words[:-size]
    if tuple(w.key for w in words) in trailing:
        return []
    if words and needed_by:
        words = list(trim_trailing(words, lexicon))[:-needed_by]
    return _before_purpose(words, lexicon)


def _before_purpose(words: Sequence[Word], lexicon: Lexicon) -> list[Word]:
    """``words`` up to what the item is for ("flour to make bread": the lexicon's
    ``purpose_markers``), all of them when they say none after a first word."""
    keys = [w.key for w in words]
    for start in range(1, len(keys)):
        if any(tuple(keys[start : start + len(p)]) == p for p in lexicon.purpose_markers):
            return list(words[:start])
    return list(words)


def _build(factory: Callable[[ItemSpec], Command], specs: Sequence[ItemSpec]) -> Outcome:
    return Outcome(commands=tuple(factory(spec) for spec in specs))


def _dated(ctx: Context) -> bool:
    """A sentence that names no list (``dateless``) said with a date or a time: "buy
    flowers on friday" is a reminder, "delete the meeting at 3 pm" an event. What an
    item is for ("for next week", ``item_trailing``) is neither."""
    if not ctx.candidate.metadata.get("dateless"):
        return False
    when = ctx.grammar.when(trim_trailing(ctx.words("item") or [], ctx.lexicon), ctx.today)
    return not when.empty or when.part is not None or when.vague


def _needed_by(ctx: Context) -> int:
    """How many of the item's last words (``item_trailing`` aside) say only the day the
    items are needed by, in a request to buy (``needed_by`` metadata, ``_day_needed``)."""
    how = ctx.candidate.metadata.get("needed_by")
    words = trim_trailing(ctx.words("item") or [], ctx.lexicon)
    return _day_needed(ctx, words, any_day=how == "any") if how else 0


def _said_after_the_list(ctx: Context) -> bool:
    """True if the words said after the list ("add eggs to the list for saturday",
    the ``when`` slot) only say what or when the items are needed for: the lexicon's
    ``item_trailing`` ("for the weekend"), a purpose ("to make a cake") or a day after
    a marker (``_day_needed``)."""
    item, after = ctx.words("item") or [], ctx.words("when") or []
    words = trim_trailing([*item, *after], ctx.lexicon)
    if len(_before_purpose(words, ctx.lexicon)) <= len(item):
        return True  # "... to the list to make a cake", "... pra fazer bolo"
    return len(words) <= len(item) or _day_needed(ctx, words) == len(words) - len(item)


def _day_needed(ctx: Context, words: Sequence[Word], *, any_day: bool = False) -> int:
    """How many of the last of ``words`` (an item's) say only a day, or a part of one,
    with no clock time, read after one of the lexicon's ``needed_by_markers`` ("buy
    flowers for friday", "compra leite pra amanhã"), or read alone with ``any_day``
    ("we need milk tomorrow"); 0 if they say none. Said with a clock time ("buy
    flowers at 5"), or without the marker where one is wanted ("buy flowers on
    friday"), it is a reminder's day."""
    when = ctx.grammar.when(words, ctx.today)
    covered = when.covered()
    if when.date is None or when.timed or when.end_time is not None or when.conflict:
        return 0
    start = min(covered, default=0)
    if start == 0 or covered != set(range(start, len(words))) or when.vague:
        return 0
    if any_day or words[start].key in ctx.lexicon.needed_by_markers:
        return len(words) - start
    return 0


def _shopping_add(ctx: Context) -> Outcome:
    if "when" in ctx.candidate.slots and not _said_after_the_list(ctx):
        return _DOES_NOT_APPLY  # "add eggs to the list for dinner with sam at 8"
    needed_by = _needed_by(ctx)
    if not needed_by and _dated(ctx):
        return _DOES_NOT_APPLY  # agenda.add
    more = _more_of_it(ctx)
    if more is not None:
        return more
    specs = _items(ctx, ctx.lexicon.reasons, needed_by=needed_by)  # "..., we're out"
    if ctx.candidate.metadata.get("unit_needed") and (
        isinstance(specs, Outcome) or any(s.unit is None for s in specs)
    ):
        return _DOES_NOT_APPLY  # "one more carton of eggs" is an item; "another thing" no
    if isinstance(specs, Outcome):
        return specs
    return _build(lambda s: ShoppingAdd(item=s.name, quantity=s.quantity, unit=s.unit), specs)


def _more_of_it(ctx: Context) -> Outcome | None:
    """More of the item the conversation was last about (``Context.last_item``), said
    without naming it: "add two more", "add another one", "coloca mais dois" (lexicon
    ``more_of_it``, ``another``). None when the words are no such amount."""
    words = ctx.words("item")
    if not words or ctx.words("more"):
        return None
    keys = [w.key for w in words]
    another = " ".join(keys) in ctx.lexicon.another
    if not another and (
        not ctx.lexicon.more_of_it & set(keys)
        or parse_item(ctx.utterance.original, words, ctx.lexicon).name
    ):
        return None  # no "more", or "two more apples": named
    if not ctx.last_item:
        return _fail(Reason.missing("item"))  # "add another": of what?
    if another:
        command = ShoppingAdd(item=display_name(ctx.last_item), quantity=1, more=True)
        return Outcome(commands=(command,))
    spec = _amount_of(ctx, words, ctx.last_item)
    if spec is None:
        return _fail(Reason.missing("item"))  # "add some more": how much?
    command = ShoppingAdd(item=spec.name, quantity=spec.quantity, unit=spec.unit, more=True)
    return Outcome(commands=(command,))


def _shopping_set_quantity(ctx: Context) -> Outcome:
    """One item and how much of it: said together ("make that three apples", the
    ``item`` slot alone) or apart ("change the milk to two liters", ``item`` and
    ``amount``). A quantity is needed: "make it pasta" is no change of quantity."""
    amount = ctx.words("amount")
    said = [*(ctx.words("item") or ()), *(amount or ())]
    if not _a_count(amount, ctx.lexicon) and not ctx.grammar.when(said, ctx.today).empty:
        return _DOES_NOT_APPLY  # "make it three pm", "change the dentist to friday"
    if amount is not None and "item" not in ctx.candidate.slots:
        return _last_item_amount(ctx, amount)  # "make that three"
    if ctx.candidate.metadata.get("amount_after"):  # "make the milk, two liters"
        after = _amount_after(ctx, [w for w in ctx.words("item") or () if w.key != ","])
        return _DOES_NOT_APPLY if after is None else Outcome(commands=(after,))  # "the bed"
    specs = _items(ctx)
    if isinstance(specs, Outcome):  # "three" is no item: "make that three" may be
        return replace(specs, final=False)
    if len(specs) != 1:
        return _fail(Reason.TWO_REQUESTS, final=False)  # "make it two apples and a pear"
    spec = specs[0]
    if fold(spec.name) in UNIT_WORDS:
        return _fail(Reason.missing("item"), final=False)  # "make it four cartons": of what?
    if amount is not None:
        said_apart = _set_to(ctx, amount, spec.name)
        if said_apart is None:
            return _fail(Reason.missing("quantity"), final=False)  # "to oat milk": a swap
        return Outcome(commands=(said_apart,))
    if spec.quantity is None:
        return _fail(Reason.missing("quantity"), final=False)
    command = ShoppingSetQuantity(item=spec.name, quantity=spec.quantity, unit=spec.unit)
    return Outcome(commands=(command,))


def _amount_after(ctx: Context, words: Sequence[Word]) -> ShoppingSetQuantity | None:
    """An item said first and how much of it after ("make the milk two liters", "make
    the apples three", "make the eggs a dozen"), as a quantity set; None when no amount
    of it ends the words."""
    q = ctx.lexicon.quantities
    numbers = {span.start for span in number_spans(words, ctx.lexicon.language)}
    for start in range(1, len(words)):
        key = words[start].key
        if start in numbers or key in q.one or key in q.half:  # "two", "a dozen", "half"
            if any(w.key in q.one for w in words[:start]):
                return None  # "make the coffee a big one": no item, then its amount
            command = _set_to(ctx, words[start:], ctx.text(words[:start]))
            if command is not None or start in numbers:
                return command
    return None


def _last_item_amount(ctx: Context, amount: list[Word]) -> Outcome:
    """How much of the item the conversation was last about (``Context.last_item``):
    "make that three", "make it two liters". Not when the amount names an item itself
    ("make that three apples", read with the item said)."""
    if not ctx.last_item:
        said = _amount_text(ctx, amount)
        alone = parse_item(said, words_of(said), ctx.lexicon)
        if alone.name and fold(alone.name) not in UNIT_WORDS:
            return _DOES_NOT_APPLY  # "make it pasta": no amount, read with the item
        return _fail(Reason.missing("item"), final=False)  # "make that three": of what?
    command = _set_to(ctx, amount, ctx.last_item)
    return _DOES_NOT_APPLY if command is None else Outcome(commands=(command,))


def _set_to(ctx: Context, amount: Sequence[Word], name: str) -> ShoppingSetQuantity | None:
    """``amount`` (said apart from the item) set as how much of ``name`` is needed."""
    spec = _amount_of(ctx, amount, name)
    if spec is None or spec.quantity is None:  # a spec comes with its quantity
        return None
    return ShoppingSetQuantity(item=spec.name, quantity=spec.quantity, unit=spec.unit)


def _amount_of(ctx: Context, amount: Sequence[Word], name: str) -> ItemSpec | None:
    """``amount`` (said apart from the item: "two liters", "two more") read as how much
    of ``name`` ("two liters milk"); None when it says no quantity, or names another
    item ("oat milk", "three apples" of the milk)."""
    whole = f"{_amount_text(ctx, amount)} {name}"
    spec = parse_item(whole, words_of(whole), ctx.lexicon)
    if spec.quantity is None or fold(spec.name) != fold(display_name(name)):
        return None
    return spec


def _amount_text(ctx: Context, amount: Sequence[Word]) -> str:
    """The words of an amount, its first a number where Whisper wrote its homophone."""
    first = ctx.lexicon.amount_homophones.get(amount[0].key)
    return f"{first} {ctx.text(amount[1:])}".strip() if first else ctx.text(amount)


UNIT_WORDS = frozenset(fold(alias) for alias in UNIT_BY_ALIAS)
"""Every unit's names, folded: an item named only by one is no item ("two bags")."""


@functools.cache
def grocery_keys(lang: str) -> frozenset[str]:
    """The ``item_key`` of each item of the built-in grocery vocabulary of ``lang``."""
    from appliance.asr.grammar import groceries  # it reads this package's templates

    return frozenset(item_key(name) for name in groceries(lang))


def _a_count(words: Sequence[Word] | None, lexicon: Lexicon) -> bool:
    """True if ``words`` are one number and nothing else ("3", "twenty four"): "change
    the milk to 3" is a count of milk, not three o'clock."""
    spans = number_spans(words, lexicon.language) if words else []
    whole = len(spans) == 1 and (spans[0].start, spans[0].end) == (0, len(words or ()))
    return whole and not spans[0].ordinal


def _item_handler(command: Callable[[ItemSpec], Command], *, done: bool = False) -> Handler:
    """``done``: the request says an item was bought (its ``done_trailing`` go)."""

    def handle(ctx: Context) -> Outcome:
        if _dated(ctx):
            return _DOES_NOT_APPLY  # an event: agenda.remove
        said = " ".join(w.key for w in ctx.words("item") or ())
        if ctx.last_item and said in ctx.lexicon.refers_back:
            return Outcome(commands=(command(ItemSpec(ctx.last_item)),))  # "take it off"
        lexicon = ctx.lexicon
        why = lexicon.done_reasons  # "remove bread, I already bought it"
        specs = _items(ctx, (*why, *lexicon.done_trailing) if done else why)
        if isinstance(specs, Outcome):
            return specs
        commands = _build(command, specs)
        # "put two apples back on the list": the whole entry comes back, whatever its
        # amount; asked, since two of the six apples listed may be all that was meant
        kept = all(getattr(c, "quantity", None) == s.quantity for c, s in zip(
            commands.commands, specs, strict=True))  # fmt: skip
        return commands if kept else replace(commands, guess=True)

    return handle


def _shopping_list(ctx: Context) -> Outcome:
    if "item" in ctx.candidate.slots:  # "is milk on the list?": that item's entry
        specs = _items(ctx)
        if isinstance(specs, Outcome):
            return specs
        return _build(lambda s: ShoppingList(item=s.name), specs)
    include = bool(ctx.candidate.values.get("include_completed", False))
    return Outcome(commands=(ShoppingList(include_completed=include),))


def _shopping_clear_completed(_: Context) -> Outcome:
    return Outcome(commands=(ShoppingClearCompleted(),))


def _shopping_clear(_: Context) -> Outcome:
    return Outcome(commands=(ShoppingClear(),))


def _unknown_list(ctx: Context) -> Outcome:
    name = ctx.words("list_name") or ()
    if not name or any(w.key in ctx.lexicon.own_list_words for w in name):
        # "to my list", "add add milk to the shopping list": no list called "my" or
        # "milk to the shopping"
        return _DOES_NOT_APPLY
    return _fail(Reason.UNKNOWN_LIST)


# -- agenda ----------------------------------------------------------------------


def _segments(words: Sequence[Word], when: When) -> list[tuple[int, list[Word]]]:
    """Runs of words outside the date/time expressions, with their start index."""
    covered = when.covered()
    runs: list[tuple[int, list[Word]]] = []
    for index, word in enumerate(words):
        if index in covered or word.key == ",":
            continue
        if runs and runs[-1][0] + len(runs[-1][1]) == index:
            runs[-1][1].append(word)
        else:
            runs.append((index, [word]))
    return runs


def _title_and_location(
    ctx: Context, words: Sequence[Word], when: When, *, with_location: bool
) -> tuple[str, str | None]:
    first = min((f.start for f in when.fragments), default=len(words))
    title: list[str] = []
    location: str | None = None
    for start, run in _segments(words, when):
        marked = run[0].key in ctx.lexicon.location_markers and len(run) > 1
        if with_location and location is None and start > first and marked:
            location = display_name(ctx.text(run[1:]))
        else:
            title.append(ctx.text(run))
    return display_name(" ".join(title)), location


def _full_date(ctx: Context, words: Sequence[Word]) -> When | None:
    """A ``{when}`` slot read completely as a date/time, with dateparser as fallback."""
    when = ctx.grammar.when(words, ctx.today)
    uncovered = [w for i, w in enumerate(words) if i not in when.covered() and w.key != ","]
    if not uncovered and (not when.empty or when.part_only):
        return when
    parsed = ctx.fallback.parse(ctx.text(words), ctx.lexicon.language, ctx.now)
    if parsed is None:
        return None
    return When(date=parsed[0], time=parsed[1])


@dataclass(frozen=True)
class _Event:
    title: str
    location: str | None
    when: When


def _event_when(ctx: Context, words: list[Word], *, adding: bool) -> When | Outcome:
    """The date/time said with an event, or why this parse does not fit."""
    # Adding, a {when} slot completes the event's date ("put X on my calendar for
    # tomorrow at 3"); moving, it is the new date and is read separately.
    after = (ctx.words("when") or []) if adding else []
    when = ctx.grammar.when([*words, *after], ctx.today)
    if after and not _all_covered(when, len(words), after):
        # "set a reminder for 7 to ...": a bare hour, read as after the time marker
        at_after = _after_time_marker(ctx, after)
        marked = ctx.grammar.when([*words, *at_after], ctx.today)
        if _all_covered(marked, len(words), at_after):
            when, after = marked, at_after
    if when.vague:  # "add dentist in a bit": no day or time to add it on; said again
        return _fail(Reason.VAGUE_TIME)
    metadata = ctx.candidate.metadata
    if after and not _any_covered(when, len(words), after):
        # "me lembra {when} pra {event}" read on "me lembra de ligar pra mãe": no word
        # of the date slot says a date, so the template does not fit
        return _DOES_NOT_APPLY
    if not _all_covered(when, len(words), after):
        if metadata.get("when_first"):
            # "{when} remind me to ..." read on "add the dentist at 3 and then remind
            # me to ...": the words before are not a date, so the template does not fit
            return _DOES_NOT_APPLY
        return _fail(Reason.BAD_DATE, final=False)
    if (
        (metadata.get("require_time") and not (when.timed or when.part_only))
        or (metadata.get("require_date") and when.date is None)
        or (metadata.get("require_when") and when.empty)
    ):
        if not (when.empty and _names_an_event(words, ctx.lexicon)):
            if adding and when.empty and metadata.get("when_needed"):
                return _fail(Reason.VAGUE_TIME, final=False)  # "remind me to call mom": when?
            return _DOES_NOT_APPLY
        if adding:  # "add a dentist appointment": an entry, but when?
            return _fail(Reason.VAGUE_TIME, final=False)
        # "delete the dentist appointment", "desmarca a consulta": an entry, not an item
    if when.conflict:
        return _fail(Reason.AMBIGUOUS_DATE)
    return when


def _any_covered(when: When, start: int, after: Sequence[Word]) -> bool:
    """True if the date/time ``when`` read covers any word of ``after`` (its words from
    index ``start`` on)."""
    covered = when.covered()
    return any(start + i in covered for i in range(len(after)))


def _all_covered(when: When, start: int, after: Sequence[Word]) -> bool:
    """True if the date/time ``when`` read covers each word of ``after`` (its words from
    index ``start`` on), commas aside."""
    covered = when.covered()
    return all(start + i in covered for i, w in enumerate(after) if w.key != ",")


def _event(
    ctx: Context, *, adding: bool = False, words: Sequence[Word] | None = None
) -> _Event | Outcome:
    """Title, location and date/time of the ``{event}`` slot (or of ``words``, a part
    of it), or why it is unusable."""
    words = ctx.words("event") if words is None else list(words)
    if not words:
        return _fail(Reason.missing("title"))
    if _misread(words, ctx.lexicon):
        return _DOES_NOT_APPLY
    if _recurring(words, ctx.lexicon):
        return _fail(Reason.RECURRING)
    if _second_request(words, ctx.lexicon):
        return _fail(Reason.TWO_REQUESTS, final=False)
    if words[0].key in ctx.lexicon.title_joiners:
        # "add a meeting with john": the word before the slot is the title's first
        before = ctx.utterance.words(0, words[0].start)
        if before:
            words = [before[-1], *words]
    when = _event_when(ctx, words, adding=adding)
    if isinstance(when, Outcome):
        return when
    title, location = _title_and_location(ctx, words, when, with_location=adding)
    metadata = ctx.candidate.metadata
    if title and len(title.split()) < metadata.get("min_title_words", 1):
        return _DOES_NOT_APPLY  # "I have to go at five": no task named
    if metadata.get("ask") and not (title and _usable(title, ctx.lexicon)):
        return _DOES_NOT_APPLY  # told, not asked ("tenho que sair às 5"): nothing to explain
    if not title or not _usable(title, ctx.lexicon):
        # "add a meeting tomorrow at ten": "meeting" is the title of the reading
        # "(add|put) {event}", which needs a time (else it is a shopping item)
        return _fail(Reason.missing("title"), final=not (when.timed or when.part_only))
    return _Event(title, location, when)


def _half_by_title(when: When, title: str, lexicon: Lexicon) -> When:
    """``when`` with a bare hour of either half read in the half the title says
    ("dinner tomorrow at 8": 20:00; the lexicon's ``evening_titles`` and
    ``morning_titles``), as it was when the title says neither."""
    words = tuple(fold(title).split())
    for titles, evening in ((lexicon.evening_titles, True), (lexicon.morning_titles, False)):
        if any(_holds(words, t) for t in titles):
            return when.in_half(evening)
    return when


def _holds(words: Sequence[str], phrase: Sequence[str]) -> bool:
    size = len(phrase)
    return any(tuple(words[i : i + size]) == tuple(phrase) for i in range(len(words) - size + 1))


def _agenda_add(ctx: Context) -> Outcome:
    event = _event(ctx, adding=True)
    if isinstance(event, Outcome):
        return event
    when = _half_by_title(event.when, event.title, ctx.lexicon)
    if when.part_only:
        # "dentist tomorrow morning": neither an all-day entry nor a time made up;
        # proposed for that day, and the time is asked for (voice/sessions.py)
        command = AgendaAdd(
            title=event.title,
            start=when.day_of_part(ctx.now),
            duration_minutes=when.duration_minutes,
            location=event.location,
        )
        return Outcome(commands=(command,), ask_time=when.part)
    start = when.start(ctx.now)
    if start is None:  # "schedule a haircut": no day or time to add it on
        return _fail(Reason.VAGUE_TIME if when.empty else Reason.missing("start"))
    command = AgendaAdd(
        title=event.title,
        start=start,
        end=when.end(start),
        duration_minutes=when.duration_minutes,
        location=event.location,
    )
    return Outcome(commands=(command,), guess=when.guess)


_LABEL_RANGES: Mapping[str, AgendaRange] = {"today": "today", "tomorrow": "tomorrow"}


def _day_listing(day: dt.date, label: str | None) -> Outcome:
    """The agenda of one day: "today" and "tomorrow" by name, any other by date."""
    label_range = _LABEL_RANGES.get(label or "")
    if label_range is not None:
        return Outcome(commands=(AgendaList(range=label_range),))
    return Outcome(commands=(AgendaList(range="day", day=day),))


def _list_day(ctx: Context, words: Sequence[Word]) -> Outcome:
    when = _full_date(ctx, words)
    if when is None or when.date is None:
        return _fail(Reason.BAD_DATE, final=False)
    if when.conflict:
        return _fail(Reason.AMBIGUOUS_DATE)
    return _day_listing(when.date, when.label)


def _agenda_list(ctx: Context) -> Outcome:
    words = ctx.words("when")
    if words is None:
        return Outcome(commands=(AgendaList(range="today"),))
    said = " ".join(w.key for w in words)
    dates = ctx.lexicon.dates
    spans: tuple[tuple[frozenset[str], AgendaRange], ...] = (
        (dates.week, "week"), (dates.weekend, "weekend"), (dates.next_week, "next_week"),
    )  # fmt: skip
    for phrases, name in spans:
        if said in phrases:
            return Outcome(commands=(AgendaList(range=name),))
    if said in ctx.lexicon.dates.unsupported_ranges:
        return _fail(Reason.UNSUPPORTED_RANGE)
    return _list_day(ctx, words)


def _agenda_next(ctx: Context) -> Outcome:
    if ctx.words("event") is None:
        return Outcome(commands=(AgendaNext(),))
    # "when is my dentist appointment": the next entry of that title. Any other
    # reading of the words comes first ("what time is it" is no title).
    event = _event(ctx)
    if isinstance(event, Outcome) or event.when.conflict:
        return _DOES_NOT_APPLY
    title_key = fold(event.title)
    if title_key.split()[0] in ctx.lexicon.pronouns:
        return _DOES_NOT_APPLY  # "what time is it in tokyo"
    when = event.when
    if when.date is not None:
        # "what time is the game tomorrow": that day's agenda answers it
        return _day_listing(when.date, when.label)
    if not when.empty:
        return _DOES_NOT_APPLY  # a time alone ("when is the meeting at 3") asks nothing
    if title_key in ctx.lexicon.generic_events:
        return Outcome(commands=(AgendaNext(),))
    return Outcome(commands=(AgendaNext(title=event.title),))


def _agenda_remove(ctx: Context) -> Outcome:
    event = _event(ctx)
    if isinstance(event, Outcome):
        return event
    return Outcome(commands=(AgendaRemove(title=event.title, day=event.when.date),))


def _after_time_marker(ctx: Context, words: Sequence[Word]) -> list[Word]:
    """``words`` after the lexicon's ``time_marker`` ("7" as "at 7"), which takes no
    characters of the text."""
    marker = ctx.lexicon.time_marker
    return [Word(text=marker, key=marker, start=words[0].start, end=words[0].start), *words]


def _bare_time(ctx: Context, words: Sequence[Word]) -> When | None:
    """A target said as a bare hour ("move dinner to 7", "change it to 7 30"): read as
    "at 7" (the lexicon's ``time_marker``). Only for a move: elsewhere a bare number
    is a quantity."""
    if not 0 < len(words) <= 3:
        return None
    when = ctx.grammar.when(_after_time_marker(ctx, words), ctx.today)
    complete = len(when.covered()) == len(words) + 1
    return when if complete and when.time is not None and when.date is None else None


def _shift(words: Sequence[Word], lexicon: Lexicon) -> tuple[int, int] | None:
    """The minutes of an amount of time that ends ``words`` ("a week", "by two hours",
    "an hour and a half", "half an hour", "uma semana", "em duas horas") and the index
    of its first word (its "by" with it); None when no amount of time ends them."""
    shifts = lexicon.shifts
    keys = [w.key for w in words]
    for said in shifts.half_hour:  # "half an hour"
        if tuple(keys[-len(said) :]) == said:
            start, minutes = len(keys) - len(said), 30.0
            break
    else:
        end = len(keys) - ends_with(words, shifts.half)  # "an hour and a half"
        if end < 2 or keys[end - 1] not in shifts.units:
            return None
        unit = shifts.units[keys[end - 1]]
        count = _count_before(words, end - 1, lexicon)
        if count is None:
            return None
        value, start = count
        minutes = value * unit + (unit / 2 if end < len(keys) else 0)
    if start > 0 and keys[start - 1] in shifts.by:
        start -= 1
    return (round(minutes), start) if minutes >= 1 else None


def _count_before(words: Sequence[Word], at: int, lexicon: Lexicon) -> tuple[float, int] | None:
    """How many of a unit said at ``words[at]`` ("two", "a", "a couple of") and the
    index where the count starts."""
    for span in number_spans(words[:at], lexicon.language):
        if span.end == at and not span.ordinal:
            return span.value, span.start
    keys = tuple(w.key for w in words[:at])
    for said, value in lexicon.shifts.counts.items():
        if keys[-len(said) :] == said:
            return value, at - len(said)
    if at > 0 and keys[-1] in lexicon.shifts.one:
        return 1.0, at - 1
    return None


def _agenda_shift(ctx: Context, *, later: bool) -> Outcome:
    """A move by an amount of time, said in ``{shift}`` ("push the dentist back a
    week") or at the end of ``{event}`` ("move the meeting an hour later")."""
    words = ctx.words("event") or []
    said = ctx.words("shift")
    found = _shift(said or words, ctx.lexicon)
    if found is None or (said is not None and found[1] != 0):
        return _DOES_NOT_APPLY  # "postpone the dentist to friday": a day, read so
    if said is None:
        words = words[: found[1]]
    event = _event(ctx, words=words)
    if isinstance(event, Outcome):
        return event
    if event.when.timed:
        return _DOES_NOT_APPLY  # "move the dentist at 3 an hour later": a day names it
    minutes = found[0] if later else -found[0]
    if abs(minutes) > MAX_SHIFT_MINUTES:
        return _fail(Reason.missing("new_start"))
    command = AgendaMove(title=event.title, day=event.when.date, shift_minutes=minutes)
    return Outcome(commands=(command,))


def _agenda_move(ctx: Context) -> Outcome:
    if (direction := ctx.candidate.metadata.get("shift")) is not None:
        return _agenda_shift(ctx, later=direction == "later")
    event = _event(ctx)
    if isinstance(event, Outcome):
        return event
    title, old = event.title, event.when
    target = ctx.words("when")
    if target and tuple(w.key for w in target) in ctx.lexicon.shifts.next_week:
        # "move the dentist to next week": the same day and time a week on, asked
        week = AgendaMove(title=title, day=old.date, shift_minutes=7 * 24 * 60)
        return Outcome(commands=(week,), guess=True)
    if _a_count(target, ctx.lexicon) and item_key(title) in grocery_keys(ctx.lexicon.language):
        return _DOES_NOT_APPLY  # "change milk to 3": a count of milk, not 3 o'clock
    new = _full_date(ctx, target) if target else None
    if (new is None or new.empty) and target and not (new is not None and new.part_only):
        new = _bare_time(ctx, target)
    if new is not None and new.part_only and not new.conflict:
        # "move the dentist to tomorrow morning": to that day, at a time asked for
        command = AgendaMove(title=title, day=old.date, new_start=new.day_of_part(ctx.now))
        return Outcome(commands=(command,), ask_time=new.part)
    if new is None or new.empty:
        return _fail(Reason.missing("new_start"), final=False)
    if new.conflict:
        return _fail(Reason.AMBIGUOUS_DATE)
    new = _half_by_title(new, title, ctx.lexicon)  # "move dinner to tomorrow at 8": 20:00
    either_half = new.other_time is not None  # "move the dentist to 8": 8 am or 8 pm
    if new.date is None and new.time is not None and (old.date is None or either_half):
        # "move the dentist to 4 pm": the same day, whichever it is, at 4 pm
        command = AgendaMove(title=title, day=old.date, new_time=new.time, either_half=either_half)
        return Outcome(commands=(command,))
    if new.date is None and old.date is not None and new.time is not None:
        new_start: dt.datetime | dt.date | None = dt.datetime.combine(
            old.date, new.time, tzinfo=ctx.now.tzinfo
        )
    else:
        new_start = new.start(ctx.now)
    if new_start is None:
        return _fail(Reason.missing("new_start"))
    command = AgendaMove(title=title, day=old.date, new_start=new_start)
    return Outcome(commands=(command,), guess=new.guess)


def statement_command(text: str, lang: str) -> MemoryAdd | None:
    """A preference the user states about themselves ("I prefer oat milk") as the
    command that remembers it, or None (the rules of ``appliance.memory.statements``)."""
    from appliance.memory.statements import detect

    found = detect(_LEADING_FILLERS.sub("", text), lang)
    if found is None:
        return None
    return MemoryAdd(text=found.text, kind="preference", importance=found.importance,
                     subject=found.subject[:120], stance=found.stance)  # fmt: skip


_LEADING_FILLERS = re.compile(
    r"^(?:\s*\b(?:ok|okay|so|well|um|uh|oh|hey|listen|então|olha|bom|ah|é"
    # "remember that I like dark chocolate", "lembra que eu gosto de ..."
    r"|(?:please )?remember that|just so you know|for the record|fyi|note that"
    r"|lembra que|lembre que|lembre-se que|anota que|só pra você saber|pra constar)\b[\s,.:]*)+",
    re.IGNORECASE,
)


def _memory_add(ctx: Context) -> Outcome:
    command = statement_command(ctx.utterance.original, ctx.lexicon.language)
    return Outcome((command,)) if command is not None else _DOES_NOT_APPLY


def _guarded(handler: Handler) -> Handler:
    """A value the command models reject (a 300-character title, 0 apples) is a refusal."""

    def handle(ctx: Context) -> Outcome:
        try:
            return handler(ctx)
        except ValidationError as error:
            details = error.errors()
            field = str(details[0]["loc"][0]) if details and details[0]["loc"] else "value"
            return _fail(Reason.invalid(field))

    return handle


HANDLERS: Mapping[str, Handler] = {
    name: _guarded(handler)
    for name, handler in {
        "shopping.add": _shopping_add,
        "shopping.set_quantity": _shopping_set_quantity,
        "shopping.remove": _item_handler(
            lambda s: ShoppingRemove(item=s.name, quantity=s.quantity, unit=s.unit)
        ),
        "shopping.complete": _item_handler(
            lambda s: ShoppingComplete(item=s.name, quantity=s.quantity, unit=s.unit), done=True
        ),
        "shopping.uncomplete": _item_handler(lambda s: ShoppingUncomplete(item=s.name)),
        "shopping.list": _shopping_list,
        "shopping.clear_completed": _shopping_clear_completed,
        "shopping.clear": _shopping_clear,
        "agenda.add": _agenda_add,
        "agenda.list": _agenda_list,
        "agenda.next": _agenda_next,
        "agenda.remove": _agenda_remove,
        "agenda.move": _agenda_move,
        "memory.add": _memory_add,
        "unknown_list": _unknown_list,
    }.items()
}
