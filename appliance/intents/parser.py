"""The intent parser: typed or spoken text (en, pt-BR) to one or more Commands."""

from __future__ import annotations

import datetime as dt
import logging
import re
from dataclasses import dataclass, replace
from zoneinfo import ZoneInfo

from hassil import Intents

from appliance.actions.items import item_key
from appliance.intents.dateparse import DateparserFallback
from appliance.intents.dates import DateGrammar
from appliance.intents.gate import (
    NEGATED,
    Why,
    correction,
    exempt_phrases,
    prepare,
    said_why,
)
from appliance.intents.handlers import (
    HANDLERS,
    UNIT_WORDS,
    Context,
    Outcome,
    Reason,
    statement_command,
)
from appliance.intents.lexicon import LANGUAGES, Lexicon, load_lexicon
from appliance.intents.matching import Candidate, match
from appliance.intents.templates import TemplateSet, load_templates
from appliance.intents.text import Utterance, Word, fold, words_of
from appliance.protocol.commands import Command
from appliance.protocol.receipts import ASK, ASK_TIME, PART

_LOGGER = logging.getLogger(__name__)

_BUY = "shopping.add"
_DONE = frozenset({"shopping.remove", "shopping.complete"})
MAX_CHARS = 300  # a spoken or typed request; longer input is refused unread
_LANGUAGE_TAG = re.compile(r"^([a-z]{2})(?:[-_][a-z0-9]+)*$", re.IGNORECASE)
_WARM_UP = {
    "en": ("add two liters of milk to the shopping list", "what's on my agenda tomorrow"),
    "pt": ("adicione dois litros de leite à lista", "marca dentista amanhã às 15h na agenda"),
}


@dataclass(frozen=True)
class ParseResult:
    """What a text asks for: a command, or why there is none."""

    command: Command | None
    intent: str | None
    reason: str | None
    matched_template: str | None = None
    commands: tuple[Command, ...] = ()
    ask: bool = False
    """The reading is a guess ("add dentist on friday": the agenda, though no agenda was
    named): propose the commands, never run them unasked."""
    negated: bool = False
    """Said with a negation ("we don't need bread anymore"): asked, and no other reading
    of the words may stand in for it."""
    ask_time: str | None = None
    """The part of the day said without a time ("add dentist tomorrow morning"): the
    commands are a proposal for that day, and what is asked is the time (``ask``)."""

    def question(self) -> dict[str, str]:
        """What a receipt proposing these commands asks beyond a yes (its ``details``
        ``ask`` and ``part``, docs/mqtt-api.md); empty for a yes/no question."""
        return {} if self.ask_time is None else {ASK: ASK_TIME, PART: self.ask_time}


@dataclass(frozen=True)
class _Frame:
    """What words are read against: the time they were said, and the item the
    conversation was last about."""

    now: dt.datetime
    last_item: str | None = None


@dataclass(frozen=True)
class _Language:
    lexicon: Lexicon
    templates: TemplateSet
    grammar: DateGrammar


def normalize_language(lang: str) -> str:
    """Map a language tag ("pt-BR", "pt_BR", "en-GB", ...) to "en" or "pt"; else ValueError."""
    found = _LANGUAGE_TAG.match(lang.strip())
    code = found.group(1).lower() if found else ""
    if code not in LANGUAGES:
        raise ValueError(f"unsupported language: {lang!r} (supported: {', '.join(LANGUAGES)})")
    return code


class IntentParser:
    """Parses text into commands. Build one and reuse it: loading takes a while."""

    def __init__(self, *, timezone: str = "UTC", log_texts: bool = False) -> None:
        """``log_texts``: put the text and the commands read from it in the debug log
        (settings ``log_transcripts``); else only the intent, the reason, the length."""
        self._tz = ZoneInfo(timezone)
        self._log_texts = log_texts
        self._languages: dict[str, _Language] = {}
        for lang in LANGUAGES:
            lexicon = load_lexicon(lang)
            self._languages[lang] = _Language(
                lexicon=lexicon, templates=load_templates(lang), grammar=DateGrammar(lexicon)
            )
        self._fallback = DateparserFallback(LANGUAGES)
        for lang, phrases in _WARM_UP.items():
            for text in phrases:
                self.parse(text, lang=lang)

    def languages(self) -> tuple[str, ...]:
        """The supported language codes."""
        return LANGUAGES

    def templates(self, lang: str) -> Intents:
        """The hassil templates of ``lang`` as written, e.g. to build an ASR grammar."""
        return self._languages[normalize_language(lang)].templates.intents

    def _now(self, now: dt.datetime | None) -> dt.datetime:
        if now is None:
            return dt.datetime.now(self._tz)
        if now.tzinfo is None or now.utcoffset() is None:
            raise ValueError("now must be timezone-aware")
        return now.astimezone(self._tz)

    def parse(
        self,
        text: str,
        *,
        lang: str = "en",
        now: dt.datetime | None = None,
        last_item: str | None = None,
    ) -> ParseResult:
        """Parse ``text`` in ``lang`` ("en" or "pt"); dates are relative to ``now``.
        ``last_item``: the item the conversation was last about ("make that three" after
        "add two apples" is three apples); without it, such a request names no item."""
        language = self._languages[normalize_language(lang)]
        frame = _Frame(self._now(now), last_item)
        result = self._parse(text, language, frame, why="bought")
        whys = said_why(text, language.lexicon)
        if not _buys(result) and "bought" in whys:
            # "remind me at five to tell john we're out": why an item is bought is no
            # filler of another request, but what it says ("... at five to tell john
            # we're out" is to tell john that), unless they read as a request to buy
            said = self._parse(text, language, frame)
            if not result.commands or (said.commands and not _buys(said)):
                result = said
        if not _takes_off(result) and "done" in whys:
            # "take the milk off the list, we have plenty": why, after the list
            done = self._parse(text, language, frame, why="done")
            result = done if _takes_off(done) else result
        corrected = self._corrected(text, language, frame, result)
        if corrected is not None:  # "add milk, no wait, oat milk": asked, as corrected
            result = corrected
        if self._log_texts:
            _LOGGER.debug(
                "parse %r (%s) -> %s %s",
                text,
                language.lexicon.language,
                result.intent,
                result.reason or result.commands,
            )
        else:
            _LOGGER.debug(
                "parse %d characters (%s) -> %s %s",
                len(text),
                language.lexicon.language,
                result.intent,
                result.reason
                or f"{len(result.commands) or int(result.command is not None)} command(s)",
            )
        return result

    def time_of_day(
        self, text: str, *, lang: str = "en", part: str | None = None
    ) -> dt.time | None:
        """A time of day said on its own, the answer to "what time?": "at ten thirty",
        "half past nine", "10.30", "às dez e meia", "uh, let's say nine". ``part``: the
        part of the day the question named ("what time tomorrow evening?"), which reads
        an hour the answer gives alone ("at 8" is 20:00). None when the text says more
        than a time and a few fillers (the lexicon's ``answer_fillers``), a date, or
        two different times."""
        language = self._languages[normalize_language(lang)]
        grammar, fillers = language.grammar, language.lexicon.dates.answer_fillers
        today = dt.datetime.now(self._tz).date()
        said = [w for w in words_of(text) if w.key != ","]
        lead = next((i for i, w in enumerate(said) if w.key not in fillers), len(said))
        marker = language.lexicon.time_marker
        at = Word(text=marker, key=marker, start=0, end=0)
        # a bare hour ("ten", "dez e meia") is read as after the time marker ("at")
        for words in (said, [*said[:lead], at, *said[lead:]]):
            when = grammar.when(words, today, part=part)
            covered = when.covered()
            if (
                when.time is not None
                and when.date is None
                and when.ahead_minutes is None
                and when.end_time is None
                and not when.conflict
                and all(i in covered or w.key in fillers for i, w in enumerate(words))
            ):
                return when.time
        return None

    def _corrected(
        self, text: str, language: _Language, frame: _Frame, result: ParseResult
    ) -> ParseResult | None:
        """A request to buy, take off or cross off an item corrected as it is said ("add
        milk, no wait, oat milk", "add two apples, actually three"), as corrected: the
        words after the correction's markers said as a request again, or as its item
        ("oat milk"), or as an amount of its one item ("three"). Only ever asked (and
        ``negated``: no other reading of the words may stand in for it). None when
        ``text`` says no correction, or when ``result`` has commands that do not hold
        its markers ("add milk, actually add eggs too": two items)."""
        lexicon = language.lexicon
        said = correction(text, lexicon)
        if said is None or (result.commands and not _holds_words(result.commands, said.markers)):
            return None
        first = self._parse(said.before, language, frame, why="bought")
        actions = {c.action for c in first.commands}
        if not first.negated and actions and actions <= _TIMED_ACTIONS:
            return self._when_corrected(said.before, said.after, language, frame)
        if first.negated or len(actions) != 1 or not actions <= lexicon.corrections.again.keys():
            return None  # "remind me to call mom, no, dad": said again, never half read
        action = actions.pop()
        item = getattr(first.commands[0], "item", None) if len(first.commands) == 1 else None
        readings = _correction_readings(said.after, action, item, lexicon)
        fresh = _Frame(frame.now)  # the item the correction is of is said, not recalled
        for reading, of in readings:
            read = self._parse(reading, language, fresh, why="bought")
            commands = read.commands
            if not commands or read.negated or not all(c.changes_state for c in commands):
                continue
            if reading != said.after and {c.action for c in commands} != {action}:
                continue
            if of is None and item is not None and _only_units(commands):
                continue  # "a bag of rice, no, two bags": two bags of the rice
            if of is not None and [item_key(getattr(c, "item", "")) for c in commands] != [
                item_key(of)
            ]:
                continue  # "three liters" of milk: of the milk, or no reading
            if of is not None and getattr(commands[0], "unit", "") is None:
                # "add two cans of beans, no, three": three cans
                unit = getattr(first.commands[0], "unit", None)
                commands = (commands[0].model_copy(update={"unit": unit}),)
                read = replace(read, command=commands[0], commands=commands)
            return replace(read, ask=True, negated=True, ask_time=None)
        return None

    def _when_corrected(
        self, before: str, after: str, language: _Language, frame: _Frame
    ) -> ParseResult | None:
        """An entry added or moved whose day or time is corrected as it is said
        ("remind me to call mom at five, no, six", "move the dentist to friday, no,
        thursday", "add the dentist on friday, no wait, thursday at 3"), as corrected:
        the words before the markers with their last day or time (of the kind the
        correction says) said as the words after. Only ever asked. None when the words
        after are no day or time alone ("remind me to call mom, no, dad")."""
        grammar, today = language.grammar, frame.now.date()
        said = _when_alone(after, language, today)
        if said is None:
            return None
        text, dated, timed = said
        words = words_of(before)
        # a day or a time said, not how long ("for an hour") or a part of the day alone
        fragments = [
            f for f in grammar.scan(words, today) if f.date is not None or f.time is not None
        ]
        kinds = [(f.date is not None, f.time is not None) for f in fragments]
        if dated and timed:  # "thursday at 3": in place of all the day and time said
            spans = [(f.start, f.end) for f in fragments]
        else:  # "six": in place of the last time said; "thursday", of the last day
            said_kind = [i for i, k in enumerate(kinds) if k == (dated, timed)]
            spans = (
                [(fragments[said_kind[-1]].start, fragments[said_kind[-1]].end)]
                if said_kind
                else []
            )
        if not spans:
            return None  # "at five, no, friday": a day for a time, or one said with both
        # the day or time said in its place, or after the word that led it ("pra sexta":
        # "pra quinta", where "quinta" alone would leave the move without its "pra")
        for keep in (0, 1):
            reading = before
            for index, (start, end) in reversed(list(enumerate(spans))):
                first = min(start + keep, end - 1)
                replaced = text if index == len(spans) - 1 else ""
                reading = (
                    f"{reading[: words[first].start]}{replaced}{reading[words[end - 1].end :]}"
                )
            read = self._parse(reading, language, _Frame(frame.now))
            actions = {c.action for c in read.commands}
            if actions and not read.negated and actions <= _TIMED_ACTIONS:
                return replace(read, ask=True, negated=True)
        return None

    def _parse(
        self, text: str, language: _Language, frame: _Frame, *, why: Why = None
    ) -> ParseResult:
        """``why``: why an item is bought or taken off, said last, is left out (``prepare``)."""
        if len(text) > MAX_CHARS:
            return ParseResult(None, None, Reason.TOO_LONG)
        # A stated preference first: "I don't like coffee" is a statement, not a
        # refused command.
        statement = statement_command(text, language.lexicon.language)
        if statement is not None:
            return ParseResult(statement, statement.action, None, None, (statement,))
        utterance = prepare(text, language.lexicon, why=why)
        if utterance == NEGATED:
            return self._parse_negated(text, language, frame, why=why)
        if isinstance(utterance, str):
            return ParseResult(None, None, utterance)
        result = self._match(language.templates.matcher, utterance, language, frame)
        if len(result.commands) > 1 or result.reason == Reason.TWO_REQUESTS:
            return self._clauses(utterance, language, frame, why=why) or result
        if result.reason == Reason.NOT_UNDERSTOOD:
            # "don't forget to call mom at 5": "call mom at 5" means nothing, "remember
            # to call mom at 5" a reminder ("... to call mom": one asked when)
            read = prepare(text, language.lexicon, read_exempt=True, why=why)
            if isinstance(read, Utterance) and read.folded != utterance.folded:
                reading = self._match(language.templates.matcher, read, language, frame)
                if reading.reason != Reason.NOT_UNDERSTOOD:
                    # "don't forget the milk": "buy the milk", asked
                    asked = language.lexicon.negation.exempt_asked
                    guess = bool(exempt_phrases(text, language.lexicon) & asked)
                    return replace(reading, ask=True) if guess else reading
        return result

    def _clauses(
        self, utterance: Utterance, language: _Language, frame: _Frame, *, why: Why
    ) -> ParseResult | None:
        """One request said as two sentences of one kind, joined: "we need milk and we
        need bread", "add milk, and put eggs on the list too", "Add milk. Add eggs."
        (Whisper's full stop is a comma). Without this, "we need bread" was an item and
        "add milk and add eggs" two requests. Split at the first conjunction where the
        words before it are a request on their own and those after it one of the same
        action (themselves split the same way); None where there is no such place: "add
        milk and eggs" ("eggs" says nothing alone), "add milk and remove eggs" (two
        actions, still refused)."""
        words = utterance.words()
        original = utterance.original
        for word in words[1:-1]:
            if word.key not in language.lexicon.conjunctions:
                continue
            # the words before: one request, matched as is (its own parts are not
            # split again); those after: any reading, split the same way
            before = prepare(original[: word.start], language.lexicon)
            if isinstance(before, str):
                continue
            left = self._match(language.templates.matcher, before, language, frame)
            action = _item_action(left.commands)
            if action is None:
                continue
            right = self._parse(original[word.end :], language, frame, why=why)
            if not right.negated and _item_action(right.commands) == action:
                commands = (*left.commands, *right.commands)
                ask = left.ask or right.ask
                return ParseResult(
                    None, action, Reason.MULTIPLE_ITEMS, left.matched_template, commands, ask
                )
        return None

    def _parse_negated(
        self, text: str, language: _Language, frame: _Frame, *, why: Why
    ) -> ParseResult:
        """A request said with a negation: refused, unless it is one of the sentences
        that say one themselves ("we don't need bread anymore"), always only asked."""
        negated_matcher = language.templates.negated_matcher
        utterance = prepare(text, language.lexicon, negated=True, why=why)
        if negated_matcher is None or isinstance(utterance, str):
            return ParseResult(None, None, NEGATED)
        result = self._match(negated_matcher, utterance, language, frame)
        if not result.commands:
            return ParseResult(None, None, NEGATED)
        return replace(result, ask=True, negated=True)

    def _match(
        self, matcher: Intents, utterance: Utterance, language: _Language, frame: _Frame
    ) -> ParseResult:
        candidates = match(matcher, utterance)
        failure: tuple[Candidate, Outcome] | None = None
        for candidate in candidates:
            context = Context(
                utterance=utterance,
                candidate=candidate,
                lexicon=language.lexicon,
                grammar=language.grammar,
                fallback=self._fallback,
                now=frame.now,
                last_item=frame.last_item,
            )
            outcome = HANDLERS[candidate.intent](context)
            if outcome.commands:
                result = _success(candidate, outcome.commands, language.templates)
                if outcome.ask_time is not None:
                    return replace(result, ask=True, ask_time=outcome.ask_time)
                return replace(result, ask=True) if outcome.guess else result
            if outcome.reason is not None and (
                failure is None or (outcome.final and not failure[1].final)
            ):
                failure = (candidate, outcome)  # a definite refusal explains best
            if outcome.final:
                break
        if failure is None or failure[1].reason is None:
            return ParseResult(None, None, Reason.NOT_UNDERSTOOD)
        candidate, outcome = failure
        intent = candidate.intent if "." in candidate.intent else None  # not "unknown_list"
        template = language.templates.as_written(candidate.template)
        return ParseResult(None, intent, outcome.reason, template)


_TIMED_ACTIONS = frozenset({"agenda.add", "agenda.move"})
"""Requests whose day or time a correction said as it is said may change."""


def _when_alone(after: str, language: _Language, today: dt.date) -> tuple[str, bool, bool] | None:
    """The words after a correction's markers as a day or a time and nothing else
    ("six" said as "at six", "thursday", "on thursday at 3"), and whether they say a day
    and a time; None when they say more or other than that."""
    at = language.lexicon.corrections.at_hour
    for text in (after, f"{at} {after}"):
        words = words_of(text)
        fragments = language.grammar.scan(words, today)
        covered = {i for f in fragments for i in range(f.start, f.end)}
        if words and covered == set(range(len(words))):
            dated = any(f.date is not None for f in fragments)
            timed = any(f.time is not None for f in fragments)
            return (text, dated, timed) if dated or timed else None
    return None


def _correction_readings(
    after: str, action: str, item: str | None, lexicon: Lexicon
) -> list[tuple[str, str | None]]:
    """What a correction (``after``) of a request of ``action`` may say, in order, each
    with the item it must name (None: any): the request said again ("add oat milk"), its
    item ("oat milk"), then an amount of its one ``item`` ("three", "three liters"), its
    first word read as the number Whisper may write for it ("free"; alone, only that)."""
    again = lexicon.corrections.again[action]
    readings: list[tuple[str, str | None]] = [(after, None), (again.format(after), None)]
    if item is None:
        return readings
    amounts = [after]
    first_word, _, rest = after.partition(" ")
    number = lexicon.amount_homophones.get(fold(first_word).strip(".,!?"))
    if number is not None:  # "no wait, free": three, with nothing else to say so
        amounts.append(f"{number} {rest}".strip())
        if not rest:  # no item "free", nor "for"
            readings, amounts = [], amounts[1:]
    forms = lexicon.corrections.amount
    return readings + [
        (again.format(f.format(amount=amount, item=item)), item)
        for amount in amounts
        for f in forms
    ]


def _only_units(commands: tuple[Command, ...]) -> bool:
    """True if the item of each of ``commands`` is a unit's name ("two bags")."""
    return all(fold(getattr(c, "item", "")) in UNIT_WORDS for c in commands)


def _holds_words(commands: tuple[Command, ...], words: frozenset[str]) -> bool:
    """True if an item or a title of ``commands`` holds one of ``words`` (folded)."""
    for command in commands:
        for name in (getattr(command, "item", None), getattr(command, "title", None)):
            if isinstance(name, str) and words & {w.key for w in words_of(name)}:
                return True
    return False


def _takes_off(result: ParseResult) -> bool:
    """True if ``result`` takes items off the list or crosses them off."""
    return _item_action(result.commands) in _DONE


def _buys(result: ParseResult) -> bool:
    """True if ``result`` is a request to buy, or one refused ("add to the list")."""
    return _BUY in (result.intent, _item_action(result.commands))


def _item_action(commands: tuple[Command, ...]) -> str | None:
    """The one action of ``commands`` when each of them names an item ("add milk", "add
    eggs"); None for none, mixed actions, or a read of the whole list."""
    actions = {c.action for c in commands}
    if len(actions) != 1 or any(getattr(c, "item", None) is None for c in commands):
        return None
    return actions.pop()


def _success(
    candidate: Candidate, commands: tuple[Command, ...], templates: TemplateSet
) -> ParseResult:
    template = templates.as_written(candidate.template)
    ask = bool(candidate.metadata.get("ask", False))
    if len(commands) == 1:
        command = commands[0]
        return ParseResult(command, command.action, None, template, commands, ask)
    return ParseResult(None, candidate.intent, Reason.MULTIPLE_ITEMS, template, commands, ask)
