"""The two-transcript gate: a state-changing action runs only when both engines agree.

Both transcripts go through the same intent parser. The gate compares what they
*mean* (action, item, quantity, unit, date/time), normalised (case, articles,
plurals and quantities' number words by the parser and ``item_key``; numbers inside an
item's name, "a twelve pack", by ``command_key``), and never fuzzy-matches two
different items into one.

Decisions:
- ``act``: both engines give the same state-changing commands: run them. Engine A's
  reading may be one of the alternatives its beam found almost as likely as its best
  (``Heard.alternatives``), when no likelier reading of A was a refusal ("don't add"),
  never one that leaves out a word of A's best ("add cookies" for "and add cookies",
  said "add oat cookies"), and only to mend an item A's best reading did not name
  right: when that reading's items are all in the verifier's ``vocabulary``, another
  item from A's beam is a different item ("oat milk" and "oatmeal"), and the turn asks.
  A "weak" verifier transcript (``rejected="weak"``: unsure, not far off) counts only
  when it gives exactly the commands of A's best reading (or of that reading with a
  misheard leading "add" or "put" repaired, or its small words mended: "we're out on
  coffee"), never of A's other beam readings. A "low_confidence" one counts only in
  a quiet room, and only when it gives exactly the commands of A's best reading
  itself (``_unsure_agreeing``). (A reading A's beam lost, which A's
  model finds almost as likely as its best when asked, is the turn's to find:
  ``spliced_readings`` and ``VoiceTurn._whisper_look``.)
- ``confirm``: both heard the same change, but the parser only guessed what it means
  (``ambiguous_request``: "add dentist on friday", no agenda named); or one engine
  heard a state-changing command the other did not confirm:
  change nothing, ask ("Did you want to add oat milk?"). Engine A's best reading
  with a misheard leading "add" repaired counts as one it heard, for the question
  only; so does a mended reading of A ("two liters on milk") that gives exactly what
  a "weak" verifier heard. Also when both agree but a beam alternative of engine A
  gives the same action on another item the verifier knows (``rival_item``: "oatmeal"
  and "oat milk"); or when an added item follows an article ("add a milk") and the
  verifier knows it with one more first word that an article may have been heard for
  (``article_item``: "oat milk"; when only the verifier heard the article, in a quiet
  room, Whisper's model may settle it: ``article_readings``). And when both agree but
  the verifier's reading puts silence on speech, and Whisper's reading has no more
  words than the verifier's (``unsaid``: "remind me to take out the trash tonight"
  for "... tonight at eight"): neither engine has words for all that was said.
- ``read``: a read-only request (list, next event): runs on engine A alone; a
  disagreement is recorded. Also on the verifier's, when it was sure and engine A's
  reading is one word away from it ("what's up my agenda tomorrow"; a word that says
  what is read must sound like Whisper's there, never "diary" for "weather"); the same
  for an unsure ("weak") verifier, whose reading alone is never enough.
- ``reject``: understood, but refused (a negation, another list, a bad slot); or
  not understood: words said to a list past mending (``not_understood``), a question
  that would say a slur or an obscenity back (``unspeakable``).
- ``chat``: speech that is not a command.
- ``none``: nothing usable was heard.
"""

from __future__ import annotations

import datetime as dt
import difflib
import functools
import itertools
import re
import unicodedata
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from text_to_num import alpha2digit  # type: ignore[import-untyped,unused-ignore]

from appliance.actions.items import UNIT_BY_ALIAS, item_key
from appliance.intents.gate import NEGATED, without_negation
from appliance.protocol.commands import READ_ONLY_ACTIONS, Command
from appliance.protocol.receipts import ASK, ASK_TIME, PART
from appliance.tts.normalize import speakable

if TYPE_CHECKING:
    from appliance.intents.text import FillerRules

Decision = Literal["act", "confirm", "reject", "read", "chat", "none"]
Sounds = Callable[[str], str | None]
"""A word's phones ("pears": "P EH R Z"), None when it has none."""
REFUSALS = frozenset({"negated", "unknown_list"})
MISSING_ITEM = "missing_slot:item"
EXPLAINED = frozenset(
    {
        "vague_time",
        "recurring",
        "unsupported_range",
        "two_requests",
        "missing_slot:title",
        MISSING_ITEM,
    }
)
"""Why the parser can do nothing with a request it understood ("remind me to call mom
later": no day or time; "yoga every tuesday"; "add eggs and remind me to call mom at
5": two requests in one; "remind me in 10 minutes", "add two liters": of what?): on
engine A's word alone, such a turn is refused with that reason, which its reply
explains (nothing changes either way)."""


KNOWN_FOR_UNKNOWN = "known_for_unknown"
"""A question's detail: its commands are the verifier's known item for one of
Whisper's that the verifier does not know (``_known_for_unknown``)."""
LISTED_READING = "listed_reading"
"""A question's detail: Whisper's reading with a comma where the verifier paused
(``_listed_at_pauses``), which gave its commands."""
BEHIND_DB = 10.0
"""How far below a reading's words (its frames' median level) the verifier heard every
word of an item, or of an amount, for it to be a talker's behind the speaker
(``_talkers_behind``). Measured (dB against the reading's words): the talkers' items
and units that the verifier read before a request, Piper's and flite's voices in babble
15 dB below, 10 to 23 below ("soup" 21, "nuts" 12, "tub" 11-20, "couple" 19); in quiet,
the speaker's item words (four voices, 14 requests, 177 words) 6 below at most
("cheese", "eggs"), but its numbers down to 18 below ("two", "three": a stop or a
fricative and a short vowel). So a number is never what shows an amount was the
talkers': a unit or a count must ("tub", "couple"). In babble 10 dB below, the talkers'
words came 5-6 dB below, as loud as the speaker's quieter words: those turns ask."""
WEAK = "weak"
"""``Heard.rejected`` of a verifier transcript that may only confirm (``REJECT_WEAK``)."""
LOW_CONFIDENCE = "low_confidence"
"""``Heard.rejected`` of a verifier transcript scored below the weak cut-offs
(``REJECT_LOW_CONFIDENCE``): it confirms only engine A's very best reading, in a quiet
room (``_unsure_agreeing``)."""
UNSAID_FRAMES = 12
"""``Heard.unsaid`` from which agreeing readings ask (``_words_unsaid``). Measured on
the benchmark's 33 utterances in its 8 voices, clean, and in 4 of them with white noise
at 20 dB (396 turns, one verifier carried over from turn to turn): the verifier's own
readings of the 262 accepted turns put silence on 0-9 frames, but for 4 (12-60). For
2 of those Whisper wrote more words ("we are out on coffee", "..., thanks"), one was
taken on a second look (whose own reading left less), and one now asks (Piper in
white noise, "... at 5pm", 12). The one wrong action, "remind me to take out the
trash tonight" for "... tonight at eight", had 14, and now asks."""


_WORD = re.compile(r"[\w']+")

Parse = Callable[[str], Any]
"""Text to an ``appliance.intents.ParseResult`` (or anything with the same fields)."""


@dataclass(frozen=True)
class Heard:
    """One engine's transcript, as the gate sees it."""

    engine: str
    text: str
    rejected: str | None = None
    alternatives: tuple[str, ...] = ()
    """Other readings this engine found almost as likely, best first."""
    pauses: tuple[tuple[str, str], ...] = ()
    """The words on either side of each pause this engine heard between the items of a
    list ("milk", "eggs" in "milk, eggs and bread")."""
    brief_pauses: tuple[tuple[str, str], ...] = ()
    """The same for pauses down to 80 ms, too short to be taken for a comma alone
    (the verifier's ``_MIN_BRIEF_PAUSE_FRAMES``)."""
    quiet: bool = False
    """The audio came from a quiet room (the verifier measured its noise floor)."""
    unsaid: int = 0
    """The longest run of frames (10 ms) of speech sounds that this reading puts
    silence on (the verifier's: its phone loop heard them there)."""
    levels: tuple[tuple[str, float], ...] = ()
    """Each word of this reading and its level against all of its words', in dB (the
    verifier's); empty when not measured."""

    @property
    def usable(self) -> bool:
        return bool(self.text.strip()) and self.rejected is None


@dataclass(frozen=True)
class GateDecision:
    decision: Decision
    commands: tuple[Command, ...] = ()
    intent: str | None = None
    reason: str | None = None
    agreed: bool = False
    details: dict[str, Any] = field(default_factory=dict)


def command_key(command: Command) -> tuple[Any, ...]:
    """What must be equal for two commands to mean the same thing."""
    values: list[Any] = [command.action]
    fields = command.model_dump()
    if fields.get("stance") is not None:
        # A stated preference: what is liked and how, not the words around it
        # ("I prefer oat milk, please" and "i prefer oat milk" state the same).
        fields = {"stance": fields["stance"], "subject": fields["subject"], "kind": fields["kind"]}
    for name, value in sorted(fields.items()):
        if name == "action":
            continue
        if name == "title" and isinstance(value, str):
            values.append((name, title_key(value)))
        elif name in ("item", "subject") and isinstance(value, str):
            values.append((name, _item_compared(value)))
        elif isinstance(value, dt.datetime):
            values.append((name, value.astimezone(dt.UTC).replace(second=0, microsecond=0)))
        elif isinstance(value, float):
            values.append((name, round(value, 3)))
        else:
            values.append((name, value))
    return tuple(values)


@functools.lru_cache(maxsize=1024)
def _item_compared(name: str) -> str:
    """An item's key for comparing two readings: one item however its words are spaced
    or hyphenated ("corn flakes", "cornflakes"; "6-pack", "6 pack") and its numbers
    written ("a 12 pack of beer" and "a twelve pack of beer", as Whisper and the
    verifier write a size the item's name keeps)."""
    key = item_key(name).replace("-", " ")
    for lang in ("en", "pt"):
        key = alpha2digit(key, lang, threshold=0)
    return key.replace(" ", "")


_TITLE_SYNONYMS = {"phone": "call", "ring": "call", "telefonar": "ligar", "mum": "mom"}
"""Words of an agenda title that mean the same ("phone mom", "ring mum", "call mom"):
the grammar lets the verifier say either, and the title keeps the words Whisper heard."""


def title_key(title: str) -> str:
    """What must be equal for two agenda titles to name the same entry."""
    return " ".join(_TITLE_SYNONYMS.get(w, w) for w in item_key(title).split())


def commands_of(result: Any) -> tuple[Command, ...]:
    """The commands of a parse (``ParseResult``), none when it has none."""
    commands = tuple(getattr(result, "commands", ()) or ())
    if not commands and getattr(result, "command", None) is not None:
        commands = (result.command,)
    return commands


def said_no(result: Any) -> bool:
    """True if a parse (``ParseResult``) was refused (``REFUSALS``: "don't add milk"),
    or said a negation itself ("we don't need bread anymore", only ever asked): a
    reading that leaves the "don't" out must never stand in for it."""
    return str(getattr(result, "reason", "")) in REFUSALS or bool(getattr(result, "negated", False))


def same_commands(a: Sequence[Command], b: Sequence[Command]) -> bool:
    """True if two readings give the same commands (``command_key``), in order."""
    return len(a) == len(b) and [command_key(x) for x in a] == [command_key(y) for y in b]


def decide(
    primary: Heard,
    verifier: Heard | None,
    parse: Parse,
    vocabulary: Collection[str] = frozenset(),
    sounds: Sounds | None = None,
    *,
    lang: str = "en",
) -> GateDecision:
    """Decide what a voice turn may do from engine A (``primary``) and engine B.

    ``vocabulary``: the ``item_key`` of every item the verifier can hear (its grammar's
    items); empty, A's beam may mend any item. ``sounds``: a word's phones, to read A's
    words that sound the same as B's items the way B spells them (``respelled``).
    ``lang``: the turn's language, in which a reading's words are counted as said.
    """
    decision = _decide(primary, verifier, parse, vocabulary, sounds)
    if decision.decision == "confirm" and _negation_unheard(primary, decision, parse, lang):
        # "don't add milk to the shopping list", which the verifier's grammar (it has
        # no "don't add") heard as "oh and add milk ...": refused, never asked about
        return replace(decision, decision="reject", commands=(), reason=NEGATED)
    if decision.decision == "act" and (asked := _time_asked(decision, primary, verifier, parse)):
        # "add dentist tomorrow morning": what time is asked before anything is added
        details = {**decision.details, ASK: ASK_TIME, **({PART: asked} if asked != "?" else {})}
        return replace(decision, decision="confirm", reason="time_wanted", agreed=True,
                       details=details)  # fmt: skip
    if decision.decision == "act" and _a_guess(decision, primary, verifier, parse):
        # "add dentist on friday": both heard it, but what it means is a guess
        return replace(decision, decision="confirm", reason="ambiguous_request", agreed=True)
    if decision.decision == "act" and _words_unsaid(primary, verifier, lang):
        # "... tonight" for "... tonight at eight": both left words out
        return replace(decision, decision="confirm", reason="unsaid", agreed=True)
    return decision


def _words_unsaid(primary: Heard, verifier: Heard | None, lang: str) -> bool:
    """True if the verifier's reading puts silence on ``UNSAID_FRAMES`` or more of
    speech sounds, and Whisper's reading has no more words than the verifier's, said
    out ("5pm" as "five p m"): there are words that neither engine wrote. Whisper's
    words that the verifier left out ("we are out of coffee", "..., thanks") are
    what the verifier put silence on."""
    if verifier is None or verifier.unsaid < UNSAID_FRAMES:
        return False
    a, b = (len(_WORD.findall(speakable(h.text, lang).lower())) for h in (primary, verifier))
    return 0 < a <= b


def _time_asked(
    decision: GateDecision, primary: Heard, verifier: Heard | None, parse: Parse
) -> str | None:
    """The part of the day of a decision whose readings said one without a time
    (``ParseResult.ask_time``), ``"?"`` when its readings differ on which ("tomorrow
    morning" and "tomorrow evening" give the same proposal: the question then names
    no part), None when no reading wants a time."""
    parts = {
        getattr(result, "ask_time", None)
        for result in _parsed_readings(decision, primary, verifier, parse)
        if same_commands(commands_of(result), decision.commands)
    }
    if not parts - {None}:
        return None
    return next(iter(parts)) if len(parts) == 1 else "?"


def _a_guess(decision: GateDecision, primary: Heard, verifier: Heard | None, parse: Parse) -> bool:
    """True if a reading that gave the decision's commands is one the parser only
    guessed (``ParseResult.ask``)."""
    return any(
        getattr(result, "ask", False) and same_commands(commands_of(result), decision.commands)
        for result in _parsed_readings(decision, primary, verifier, parse)
    )


def _parsed_readings(
    decision: GateDecision, primary: Heard, verifier: Heard | None, parse: Parse
) -> Iterator[Any]:
    """The parses of every reading that may have given the decision: both engines'
    and the ones the gate agreed, mended or repaired on."""
    d = decision.details
    readings = [primary.text, verifier.text if verifier is not None else ""]
    readings += [d[k] for k in ("agreed_reading", "mended_reading", "repaired_reading") if k in d]
    return (parse(text) for text in readings if text and text.strip())


def _decide(
    primary: Heard,
    verifier: Heard | None,
    parse: Parse,
    vocabulary: Collection[str],
    sounds: Sounds | None,
) -> GateDecision:
    a = parse(primary.text) if primary.usable else None
    b = parse(verifier.text) if verifier is not None and verifier.usable else None
    a_cmds = commands_of(a) if a is not None else ()
    b_cmds = commands_of(b) if b is not None else ()
    details = {
        "primary_intent": getattr(a, "intent", None),
        "verifier_intent": getattr(b, "intent", None),
    }
    # Engine A's best reading with a misheard leading verb put back, when that is what
    # made it a command ("and kombucha to the shopping list").
    repaired = _repaired_commands(primary, a, parse) if not a_cmds else None
    # A weak verifier transcript is never "usable" (b_cmds is empty): its commands
    # count only through these two checks.
    weak_cmds = _weak_commands(primary, a, verifier, parse)
    # Where the verifier heard a list's pauses, for commas in engine A's text.
    pauses = _list_pauses(verifier, vocabulary)
    weak = _weak_agreeing(primary, a_cmds, weak_cmds, parse, repaired=repaired, pauses=pauses)
    if weak is not None:
        return _unless_rival(
            GateDecision("act", weak[0], weak[0][0].action, "weak_verifier", True,
                         {**details, "agreed_reading": weak[1]}),
            primary, verifier, parse, vocabulary,
        )  # fmt: skip
    if (unsure := _unsure_agreeing(primary, a, a_cmds, verifier, parse)) is not None:
        return _unless_rival(
            GateDecision("act", unsure, unsure[0].action, "unsure_verifier", True,
                         {**details, "agreed_reading": primary.text}),
            primary, verifier, parse, vocabulary,
        )  # fmt: skip
    if not a_cmds and not b_cmds and repaired is None:
        asked = _weak_asked(primary, a, verifier, parse, weak_cmds=weak_cmds, pauses=pauses)
        if asked is None:
            read = _weak_read(primary, verifier, a, parse, sounds)
            if read is not None:
                return GateDecision("read", read, read[0].action, "weak_verifier", False, details)
            return _nothing(primary, verifier, a, b, details)
        # Asked, never run: a verb Whisper did not hear is not a weak verifier's to
        # confirm (it confirms A's best reading, its small words mended at most).
        commands, reading, key = asked
        details = {**details, key: reading}
        return GateDecision(
            "confirm", commands, commands[0].action, "not_confirmed", False, details
        )
    if a_cmds and all(c.action in READ_ONLY_ACTIONS for c in a_cmds):
        agreed = same_commands(a_cmds, b_cmds)
        return GateDecision(
            "read", a_cmds, a_cmds[0].action, None, agreed, {**details, "agreed": agreed}
        )
    if a_cmds and b_cmds and same_commands(a_cmds, b_cmds):
        both = GateDecision("act", a_cmds, a_cmds[0].action, None, True, details)
        return _unless_rival(both, primary, verifier, parse, vocabulary)
    # An unsure verifier agrees here as it does above (``weak_cmds``), and A's reading
    # with its misheard verb put back as it does there (``repaired``), but for the
    # talkers behind the speaker that it had to read as words of the request.
    theirs, repair = (a_cmds, {}) if a_cmds or repaired is None else (
        repaired[0], {"repaired_reading": repaired[1]})  # fmt: skip
    behind = _talkers_behind(theirs, verifier, b_cmds or weak_cmds or ())
    if behind:  # "add a soup and bananas ...": the soup was the television's
        kept = GateDecision("act", theirs, theirs[0].action, "talkers_behind", True,
                            {**details, **repair, "talkers_behind": list(behind)})  # fmt: skip
        return _unless_rival(kept, primary, verifier, parse, vocabulary)
    agreeing = _alternative_agreeing(
        primary, a, b_cmds, parse, vocabulary, pauses=pauses, sounds=sounds,
        theirs=verifier.text if verifier is not None else "",
    )  # fmt: skip
    if agreeing is not None:
        rank, reading = agreeing
        details = {**details, "agreed_reading": reading, "rank": rank}
        mended = GateDecision("act", b_cmds, b_cmds[0].action, "alternative", True, details)
        return _unless_rival(mended, primary, verifier, parse, vocabulary)
    # Heard a change, not confirmed by the other engine: ask, change nothing. Prefer
    # engine A's reading (free-form, fuller), even one with a misheard leading verb
    # ("and kombucha to the shopping list"); B's when A had none.
    if not a_cmds and (repaired := repaired or verb_asked(primary, a, verifier, parse)):
        a_cmds = repaired[0]
        details = {**details, "repaired_reading": repaired[1]}
    proposal = tuple(c for c in (a_cmds or b_cmds) if c.action not in READ_ONLY_ACTIONS)
    if not proposal:
        # Only the verifier heard a read-only request. Its grammar forces what it
        # hears into a command ("can you tell me a joke" came out as "can you tell
        # me agenda"): when Whisper heard other words, they are what was said. One
        # word apart is the same request misheard ("what's up my agenda tomorrow").
        if primary.usable and not (
            verifier is not None and _one_word_apart(primary.text, verifier.text, sounds)
        ):
            return _nothing(primary, verifier, a, None, details)
        reason = "verifier_only" if not primary.usable else "one_word_apart"
        return GateDecision("read", b_cmds, b_cmds[0].action, reason, False, details)
    reason = "engines_disagree" if a_cmds and b_cmds else "not_confirmed"
    proposal, why = _asked_about(
        primary, verifier, proposal, b_cmds=b_cmds or weak_cmds or (), parse=parse,
        vocabulary=vocabulary, sounds=sounds,
        reading=str(details.get("repaired_reading") or primary.text), pauses=pauses,
    )  # fmt: skip
    return GateDecision("confirm", proposal, proposal[0].action, reason, False, {**details, **why})


def _negation_unheard(primary: Heard, asked: GateDecision, parse: Parse, lang: str) -> bool:
    """True if A's reading was refused for a negation word, and says without it exactly
    what the question would propose: the negation is what the verifier's grammar
    could not hold ("don't add milk ...", heard "oh and add milk ..."), and the
    question would offer the very change the user said not to make. A reading that
    says something else without its negation ("and don't milk ..." for "add oat
    milk ...") is still asked about."""
    from appliance.intents.lexicon import load_lexicon

    if not primary.usable or getattr(parse(primary.text), "reason", None) != NEGATED:
        return False
    positive = without_negation(primary.text, load_lexicon(lang))
    return positive is not None and same_commands(commands_of(parse(positive)), asked.commands)


def _asked_about(
    primary: Heard,
    verifier: Heard | None,
    proposal: tuple[Command, ...],
    *,
    b_cmds: Sequence[Command],
    parse: Parse,
    vocabulary: Collection[str],
    sounds: Sounds | None,
    reading: str = "",
    pauses: Sequence[tuple[str, str]] = (),
) -> tuple[tuple[Command, ...], dict[str, Any]]:
    """What a question proposes, of A's ``proposal`` (from its ``reading``) as the
    verifier heard it, and the details that say why it is the verifier's, if it is."""
    listed = _listed_by_verifier(primary, verifier, proposal, parse, vocabulary)
    if listed is not None:  # "add milk eggs and bread": asked as the verifier listed it
        return listed, {"listed_by_verifier": True}
    paused = _listed_at_pauses(reading, proposal, pauses, parse, vocabulary)
    if paused is not None:  # the same, the verifier's other words aside ("add dill, eggs")
        return paused[0], {LISTED_READING: paused[1]}
    known = _known_for_unknown(
        primary, verifier, proposal, b_cmds=b_cmds, vocabulary=vocabulary, sounds=sounds
    )
    if known is not None:  # "add out milk": asked about the "oat milk" the verifier heard
        return known, {KNOWN_FOR_UNKNOWN: True}
    return proposal, {}


def _known_for_unknown(
    primary: Heard,
    verifier: Heard | None,
    proposal: Sequence[Command],
    *,
    b_cmds: Sequence[Command],
    vocabulary: Collection[str],
    sounds: Sounds | None,
) -> tuple[Command, ...] | None:
    """The verifier's commands (sure or weak), when its words are engine A's but for one
    word that sounds like A's, and A's commands named an item the verifier does not know
    where the verifier's name one it knows: "oat milk" for Whisper's "out milk", "eggs"
    for "eggers", "a kilo of rice" for "a kill of rice" (an amount A's item took).
    Only for a question, which then names what was more likely said.

    None otherwise. The verifier hears the nearest item it knows for one it does not,
    and that one sounds like it too: on items new to the household, said clearly in
    two voices ("fish sauce", "tomato soup", "turkey bacon"), the verifier named a
    known item sounding like Whisper's in 12 of 50 turns ("salsa", "tomatoes", "thirty
    bacon"), none of them one word apart and the same amount. Nor when an item of A's
    that differs is a known one ("pickles" for "tomatoes": the grammar may have forced
    another known item onto it)."""
    if verifier is None or not vocabulary or not b_cmds or len(proposal) != len(b_cmds):
        return None
    a, b = (_WORD.findall(h.text.lower()) for h in (primary, verifier))
    if len(a) != len(b):
        return None
    differ = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
    if len(differ) != 1 or not _sound_alike(*differ[0], sounds):
        return None
    swapped = False
    for mine, theirs in zip(proposal, b_cmds, strict=True):
        x, y = getattr(mine, "item", None), getattr(theirs, "item", None)
        if not isinstance(x, str) or not isinstance(y, str) or not _same_but_item(mine, theirs):
            return None
        if _item_compared(x) == _item_compared(y):
            continue
        if item_key(x) in vocabulary or item_key(y) not in vocabulary:
            return None
        swapped = True
    return tuple(b_cmds) if swapped else None


def _same_but_item(mine: Command, theirs: Command) -> bool:
    """True if ``mine`` is ``theirs`` on another item, or on an item that ends with
    "of" and ``theirs``'s item, with no amount: the amount went into its name ("kill
    of rice" for "a kilo of rice")."""
    named = mine.model_copy(update={"item": getattr(theirs, "item", None)})
    if command_key(named) == command_key(theirs):
        return True
    if getattr(mine, "quantity", None) is not None or getattr(mine, "unit", None) is not None:
        return False
    name, item = (item_key(str(getattr(c, "item", ""))).split() for c in (mine, theirs))
    took = (
        len(name) > len(item) + 1
        and name[-len(item) - 1] in _parser_words().of
        and name[-len(item) :] == item
    )
    return took and command_key(named) == command_key(
        theirs.model_copy(update={"quantity": None, "unit": None})
    )


def _listed_by_verifier(
    primary: Heard,
    verifier: Heard | None,
    proposal: Sequence[Command],
    parse: Parse,
    vocabulary: Collection[str],
) -> tuple[Command, ...] | None:
    """The verifier's commands, sure or weak, when its words are engine A's word for
    word but it listed more items: Whisper writes a quick list without its commas
    ("add milk eggs and bread"), the verifier's grammar ends an item where the next
    one it knows starts. Only for a question, and only when each of A's items it split
    is one it does not know ("chocolate milk" stays one). None otherwise."""
    if verifier is None or not vocabulary or not verifier.text.strip():
        return None
    if _WORD.findall(primary.text.lower()) != _WORD.findall(verifier.text.lower()):
        return None
    listed = commands_of(parse(verifier.text))
    if len(listed) <= len(proposal) or any(c.action in READ_ONLY_ACTIONS for c in listed):
        return None
    theirs = {command_key(c) for c in listed}
    split = [c for c in proposal if command_key(c) not in theirs]
    items = [getattr(c, "item", None) for c in split]
    if not split or any(not isinstance(i, str) or item_key(i) in vocabulary for i in items):
        return None
    return listed


def _listed_at_pauses(
    reading: str,
    proposal: Sequence[Command],
    pauses: Sequence[tuple[str, str]],
    parse: Parse,
    vocabulary: Collection[str],
) -> tuple[tuple[Command, ...], str] | None:
    """The commands of engine A's ``reading`` with a comma where the verifier paused
    before one of its words (``listed``, the word before the pause the verifier's or
    any other: "and milk eggs and bread", the verifier "add dill, eggs and bread"),
    when they are ``proposal`` with more items and the same words: a quick list Whisper
    wrote without its commas, which the verifier heard otherwise but for its pauses.
    Only for a question, and never splitting an item the verifier knows ("chocolate
    milk"). None otherwise."""
    if not pauses or not reading:
        return None
    loose = [(before, after) for _, after in pauses for before in _words_before(reading, after)]
    text = listed(reading, [*pauses, *loose])
    listing = commands_of(parse(text))
    if len(listing) <= len(proposal) or any(c.action in READ_ONLY_ACTIONS for c in listing):
        return None
    if {c.action for c in listing} != {c.action for c in proposal}:
        return None
    at = 0
    for command in proposal:  # each of A's items said again, or split in a row
        if at < len(listing) and command_key(listing[at]) == command_key(command):
            at += 1
            continue
        item = getattr(command, "item", None)
        if not isinstance(item, str) or item_key(item) in vocabulary:
            return None
        words, parts = item.lower().split(), list[str]()
        while at < len(listing) and len(parts) < len(words):
            parts += str(getattr(listing[at], "item", "")).lower().split()
            at += 1
        if parts != words:
            return None
    return (tuple(listing), text) if at == len(listing) else None


def _words_before(text: str, after: str) -> list[str]:
    """The words of ``text`` right before ``after`` that may end an item: not a list's
    join, an article, "of" or an amount."""
    keys = [w.strip(",.!?;:").lower() for w in text.split()]
    words = _parser_words()
    return [
        before
        for before, key in itertools.pairwise(keys)
        if key == after and before not in words.joins | words.links and not _amount_word(before)
    ]


_MIN_CLOSE_WORDS = 4


_READ_TARGETS = frozenset(
    {"list", "lists", "shopping", "grocery", "groceries", "agenda", "calendar", "schedule",
     "diary", "appointment", "appointments", "meeting", "meetings", "event", "events",
     "plans", "lista", "compras", "calendário", "compromisso", "compromissos", "reunião"}
)  # fmt: skip
"""The words that say what a read-only request reads. The verifier's grammar forces other
questions into them ("what's the weather like tomorrow" heard as "what's the diary like
tomorrow")."""
_ALIKE = 0.5
"""How alike two words must sound (the ratio of their phones in common; of their
letters without phones) to be one word misheard: "dairy" and "diary" 0.5, "point"
and "appointment" 0.67; "weather" and "diary" 0.25."""


def _one_word_apart(text: str, other: str, sounds: Sounds | None = None) -> bool:
    """True if two readings of at least ``_MIN_CLOSE_WORDS`` words differ by at most
    one word (replaced, left out or added), case and punctuation aside. Where ``other``
    has a word that says what is read (``_READ_TARGETS``) in place of another word of
    ``text``, the two must sound alike: "what's the weather like tomorrow" is no
    misreading of "what's the diary like tomorrow", which the verifier's grammar forced
    it into ("well on my calendar today" is one of "what's on my calendar today")."""
    a, b = (_WORD.findall(t.lower()) for t in (text, other))
    if min(len(a), len(b)) < _MIN_CLOSE_WORDS or abs(len(a) - len(b)) > 1:
        return False
    if a == b:
        return True
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    # Past the first difference: one word replaced, added or left out.
    rest_a, rest_b = a[start:], b[start:]
    if rest_a[1:] == rest_b[1:] and len(rest_a) == len(rest_b):
        return rest_b[0] not in _READ_TARGETS or _sound_alike(rest_a[0], rest_b[0], sounds)
    return rest_a == rest_b[1:] or rest_a[1:] == rest_b


def _sound_alike(word: str, other: str, sounds: Sounds | None) -> bool:
    """True if two words share enough of their phones (``_ALIKE``), or of their letters
    when ``sounds`` cannot say."""
    phones = (sounds(word), sounds(other)) if sounds is not None else (None, None)
    if phones[0] is not None and phones[1] is not None:
        pair: tuple[Sequence[str], Sequence[str]] = (phones[0].split(), phones[1].split())
    else:
        pair = (word, other)
    return difflib.SequenceMatcher(None, *pair).ratio() >= _ALIKE


def _alternative_agreeing(
    primary: Heard,
    a: Any,
    b_cmds: Sequence[Command],
    parse: Parse,
    vocabulary: Collection[str],
    *,
    pauses: Sequence[tuple[str, str]],
    theirs: str = "",
    sounds: Sounds | None = None,
) -> tuple[int, str] | None:
    """Engine A's first other reading that gives engine B's state-changing commands,
    with its rank (2 = second best; the beam's readings, then A's best mended: its
    words that sound as B's items spelled as they are, ``respelled`` with ``sounds``,
    ``mended_readings``, with engine B's ``pauses``, and ``_with_misheard_add``, with B's
    words, ``theirs``); None when there is none, or when
    A's best reading or a likelier one was refused (a negation must never be skipped)."""
    if not b_cmds or not primary.usable:
        return None
    if any(c.action in READ_ONLY_ACTIONS for c in b_cmds):
        return None
    if said_no(a):
        return None
    if names_known_items(commands_of(a), vocabulary):
        return None
    # "turkey bacon" heard as "bacon" by a verifier that cannot hear it: a reading of
    # Whisper's beam that leaves "turkey" out is no confirmation (its small words
    # mended, "add free apples" for "three apples", still are). A list Whisper wrote
    # without its commas ("apples two pears") is read with them where the verifier
    # paused.
    listing = commands_of(parse(listed(primary.text, pauses))) if pauses else commands_of(a)
    beam = () if holds_other_items(listing, b_cmds) else primary.alternatives
    # Nor one that leaves out any other word of the best reading: Whisper wrote "and
    # add cookies" for "add oat cookies" (its "add" stood for "oat"), and its beam's
    # "add cookies" agreed with a verifier that cannot hear oat cookies.
    shorter = frozenset(t for t in beam if leaves_out_words(primary.text, t))
    # Nor one with a possessive the best reading has not, before what it names: the
    # parser drops it, and Whisper wrote "our" for "oat" ("Added cookies" best, "Add our
    # cookies" in the beam, for "add oat cookies", which the verifier cannot hear).
    shorter |= frozenset(t for t in beam if _adds_a_possessive(primary.text, t))
    same_sound = respelled(primary.text, b_cmds, sounds) if sounds is not None else None
    respelling = [listed(same_sound, pauses)] if same_sound is not None else []
    readings = [
        *beam,
        *respelling,
        *mended_readings(primary.text, pauses),
        *_with_misheard_add(primary.text, theirs),
    ]
    return _first_giving(readings, b_cmds, parse, start=2, barred=shorter)


def _first_giving(
    readings: Sequence[str],
    commands: Sequence[Command],
    parse: Parse,
    *,
    start: int,
    barred: Collection[str] = frozenset(),
) -> tuple[int, str] | None:
    """The first of ``readings`` that gives exactly ``commands``, with its rank
    (``start`` for the first); None when none does, or a reading before it was
    refused (a negation must never be skipped). ``barred`` readings are never the
    one, though their refusal counts."""
    for rank, text in enumerate(readings, start=start):
        result = parse(text)
        if said_no(result):
            return None
        if text not in barred and same_commands(commands_of(result), commands):
            return rank, text
    return None


def _talkers_behind(
    a_cmds: Sequence[Command], verifier: Heard | None, b_cmds: Sequence[Command]
) -> tuple[str, ...]:
    """What the verifier heard from talkers behind the speaker (a television, the room),
    its words far quieter than its reading's (``BEHIND_DB``), which its grammar had to
    read as part of a request, when the rest of its reading is engine A's: whole items
    before the speaker's first ("add a soup and bananas on the shopping list" for "put
    bananas on the shopping list", "soup" 21 dB below), or an amount just before an
    item of A's said without one ("add a tub of butter", "add a couple bananas": "tub"
    and "couple" 19-20 dB below). Every one of A's commands is one of B's, all of one
    action that changes something; empty otherwise.

    At most one item is left out, and none the verifier heard a pause next to: the
    speaker's own list said with its pauses can measure as quiet ("add milk, eggs and
    bread" in flite's voice, babble 20 dB below, heard as "add a thyme, a tea and
    bread", "thyme" and "tea" 13-15 dB below, a pause between them)."""
    if verifier is None or not verifier.levels or not a_cmds or len(b_cmds) < len(a_cmds):
        return ()
    if len(b_cmds) - len(a_cmds) > 1:
        return ()
    action = a_cmds[0].action
    if action in READ_ONLY_ACTIONS or any(c.action != action for c in (*a_cmds, *b_cmds)):
        return ()
    names = [getattr(c, "item", None) for c in b_cmds]
    keys = [[item_key(w) for w in _WORD.findall(n.lower())] if isinstance(n, str) else []
            for n in names]  # fmt: skip
    if not all(keys):
        return ()
    words = [item_key(word) for word, _ in verifier.levels]
    quiet = [level <= -BEHIND_DB for _, level in verifier.levels]
    extra = len(b_cmds) - len(a_cmds)
    left_out: list[str] = []
    at = 0
    for index, (command, name) in enumerate(zip(b_cmds, keys, strict=True)):
        found = next((i for i in range(at, len(words)) if words[i : i + len(name)] == name), None)
        if found is None:
            return ()
        at = found + len(name)
        if index < extra:  # an item before the speaker's first
            if not all(quiet[found:at]) or _paused_next_to(verifier, name):
                return ()
            left_out.append(" ".join(name))
            continue
        theirs = a_cmds[index - extra]
        if command_key(command) == command_key(theirs):
            continue
        amount = _amount_before(words, found)
        if (
            getattr(theirs, "quantity", 0) is not None
            or getattr(theirs, "unit", 0) is not None
            or command_key(command.model_copy(update={"quantity": None, "unit": None}))
            != command_key(theirs)
            or not any(_a_count(words[i]) for i in amount)
            or not all(quiet[i] for i in amount if _amount_word(words[i]))
        ):
            return ()
        left_out.append(" ".join(words[i] for i in amount))
    return tuple(left_out)


def _paused_next_to(verifier: Heard, name: Sequence[str]) -> bool:
    """True if the verifier heard a pause just before or after an item's words."""
    return any(item_key(w) in name for pause in verifier.pauses for w in pause)


def _amount_before(words: Sequence[str], item: int) -> list[int]:
    """The positions of the words of an amount just before ``words[item]`` ("a tub of",
    "two liters of", "uma dúzia de"): units, numbers and the small words between."""
    links = _parser_words().links
    start = item
    while start > 0 and (words[start - 1] in links or _amount_word(words[start - 1])):
        start -= 1
    return list(range(start, item))


class _ParserWords(NamedTuple):
    """Words of the parser's lexicon, in every language it reads (``item_key`` forms)."""

    links: frozenset[str]
    """What links an amount to its item ("a", "of", "uma", "de")."""
    counts: frozenset[str]
    """Counts it reads as an amount without a number ("couple", "half", "meia")."""
    of: frozenset[str]
    """What comes between a unit and the item ("of", "de")."""
    joins: frozenset[str]
    """What it splits a list of items at ("and", "e", ",")."""


@functools.cache
def _parser_words() -> _ParserWords:
    from appliance.intents.lexicon import LANGUAGES, load_lexicon

    links: set[str] = set()
    counts: set[str] = set()
    of: set[str] = set()
    joins: set[str] = set()
    for lang in LANGUAGES:
        lexicon = load_lexicon(lang)
        said = lexicon.quantities
        links |= said.one | said.of | said.half_articles
        counts |= said.half | {word for phrase in said.words for word in phrase}
        of |= said.of
        joins |= lexicon.conjunctions
    return _ParserWords(
        frozenset(map(item_key, links)),
        frozenset(map(item_key, counts - links)),
        frozenset(map(item_key, of)),
        frozenset(joins),
    )


def _a_count(word: str) -> bool:
    """A unit ("tub", "liter") or a count said without a number ("couple")."""
    return word in UNIT_BY_ALIAS or word in _parser_words().counts


def _amount_word(word: str) -> bool:
    """A unit, a count or a number ("two", "dois", "2")."""
    from appliance.intents.lexicon import LANGUAGES

    return (
        _a_count(word)
        or word.isdigit()
        or any(alpha2digit(word, lang, threshold=0) != word for lang in LANGUAGES)
    )


def _list_pauses(verifier: Heard | None, vocabulary: Collection[str]) -> list[tuple[str, str]]:
    """The verifier's pauses that may stand for a comma: not those inside the name of
    an item it knows."""
    pauses = verifier.pauses if verifier is not None else ()
    return [p for p in pauses if not _inside_an_item(p, vocabulary)]


def _inside_an_item(pause: tuple[str, str], vocabulary: Collection[str]) -> bool:
    """True if the two words around a pause follow each other in a known item's name:
    "chocolate" and "milk" in "chocolate milk" (a gap a stop consonant can leave)."""
    pair = (item_key(pause[0]), item_key(pause[1]))
    for name in vocabulary:
        words = [item_key(w) for w in name.split()]
        if len(words) > 1 and pair in itertools.pairwise(words):
            return True
    return False


def _unless_rival(
    agreed: GateDecision,
    primary: Heard,
    verifier: Heard | None,
    parse: Parse,
    vocabulary: Collection[str],
) -> GateDecision:
    """``agreed`` (an ``act``), or a question when engine A itself found another item
    the verifier knows almost as likely: a beam alternative gives the same action on
    that other item. (A's best reading never does: it gave the agreed commands, or an
    item the verifier does not know.) Two engines can be wrong together between
    near-homophones ("oatmeal" for "oat milk" on a synthetic voice in noise); Whisper's
    doubt between the two is the sign, and the turn asks rather than picks.

    Also a question when an added item came just after an article and the verifier
    knows a longer item of that name (``_longer_items``: "a milk", "oat milk"), and
    when the verifier put a comma between two items where it did not pause
    (``_unpaused_commas``)."""
    rival = _rival_reading(primary, agreed.commands, parse, vocabulary)
    if rival is not None:
        details = {**agreed.details, "rival_reading": rival}
        return replace(
            agreed, decision="confirm", reason="rival_item", agreed=False, details=details
        )
    readings = (primary.text, verifier.text if verifier is not None else "")
    longer = _longer_items(agreed.commands, readings, vocabulary)
    if longer:
        details = {**agreed.details, "longer_items": longer}
        return replace(
            agreed, decision="confirm", reason="article_item", agreed=False, details=details
        )
    unpaused = _unpaused_commas(verifier)
    if unpaused:
        details = {**agreed.details, "unpaused": unpaused}
        return replace(
            agreed, decision="confirm", reason="unpaused_list", agreed=False, details=details
        )
    return agreed


def _unpaused_commas(verifier: Heard | None) -> list[tuple[str, str]]:
    """The words on either side of each comma of the verifier's reading where it did
    not pause (``Heard.brief_pauses``) and an item's name may go on: the grammar puts a
    comma between two items it knows ("cheese, pizza") wherever it finds them side by
    side, and Whisper, biased by the household's list, writes one too. Said "add
    cheese pizza and soda", both engines read three items in 6 of 8 voices, the
    verifier with a pause of 30 ms there (70 ms on Piper's deeper voice); lists said
    quickly paused 80 ms or more at 129 of 137 commas. Not before an amount or an
    article, where no name goes on ("milk, a dozen eggs")."""
    if verifier is None or "," not in verifier.text:
        return []
    words = verifier.text.lower().replace(",", " ,").split()
    return [
        (words[i - 1], words[i + 1])
        for i, word in enumerate(words)
        if word == ","
        and 0 < i < len(words) - 1
        and (words[i - 1], words[i + 1]) not in verifier.brief_pauses
        and not (
            words[i + 1] in _ARTICLES
            or item_key(words[i + 1]) in _parser_words().links
            or _amount_word(words[i + 1])
        )
    ]


_ARTICLES = frozenset({"a", "an", "the"})
_ARTICLE_LIKE = re.compile(r"^(?:[aeiou]|th)", re.I)
"""How a first word starts that an article may have been heard for: "oat" in "oat
milk" came out as "a" (Whisper) and "the" (the verifier) on a synthetic voice."""


def _longer_items(
    acted: Sequence[Command], readings: Sequence[str], vocabulary: Collection[str]
) -> list[str]:
    """The known items whose name is an added item's name after one more word, when a
    reading has an article just before the item: "a milk" or "the milk", and the
    verifier knows "oat milk". A first word that starts like an article ("oat",
    "almond", "ice", "thai") can be heard as one by both engines, and then they agree
    on the shorter item. An article before a food said as it is is rare ("add milk");
    one before a longer name the household buys is where a word went missing."""
    longer: list[str] = []
    for command in acted:
        item = getattr(command, "item", None)
        if command.action != "shopping.add" or not isinstance(item, str):
            continue
        if not any(_follows_an_article(text, item) for text in readings):
            continue
        key = item_key(item)
        for name in sorted(vocabulary):
            first, _, rest = name.partition(" ")
            if rest == key and _ARTICLE_LIKE.match(first):
                longer.append(name)
    return longer


ARTICLE_MARGIN = 13.0
"""How much likelier (nats) Whisper's model must find its own reading than the same
with a longer item put in ("add iced coffee ..." for "add coffee ..."), for an article
only the verifier heard before the item to be taken for no word of it
(``article_readings``, ``VoiceTurn._article_weighed``). Measured on 8 pairs (coffee
and iced or instant coffee, butter and almond butter, cheese and American cheese, milk
and oat or almond milk, juice and orange or apple juice) in three requests ("add X to
the shopping list", "put X on the list", "we need X"), said by the benchmark's 8
voices, clean and in its reverberant room (768 readings): said short, the longer
reading scored 8.7 to 28.5 below, 346 of 384 at 13 or more; said long, the short one
scored at most 11.0 above (flite's "oat milk" in the room; "oat" is all six above 3).
In noise the two overlap (said "oat milk", up to 16.5 above in babble at 10 dB), so
the turn weighs only in a quiet room."""


def article_readings(decision: GateDecision, text: str) -> list[str] | None:
    """Engine A's reading ``text`` with each longer item of an ``article_item``
    question put in for its item, the longer name's first word before the item's
    ("add coffee to the shopping list." -> "add iced coffee to the shopping list."),
    for Whisper's model to weigh against ``text``. None for another decision, or when
    ``text`` has an article before such an item (both engines may have heard one for
    "oat") or does not say the item itself."""
    if decision.decision != "confirm" or decision.reason != "article_item":
        return None
    found = list(_WORD.finditer(text))
    readings: list[str] = []
    for name in decision.details.get("longer_items", ()):
        first, _, rest = name.partition(" ")
        at = next(_places([m.group() for m in found], rest), None)
        if at is None or _follows_an_article(text, rest):
            return None
        start = found[at].start()
        readings.append(f"{text[:start]}{first} {text[start:]}")
    return readings or None


def _places(words: Sequence[str], item: str) -> Iterator[int]:
    """Where ``item``'s words begin among ``words``, each compared by ``item_key``."""
    name = [item_key(w) for w in _WORD.findall(item.lower())]
    keys = [item_key(w.lower()) for w in words]
    return (i for i in range(len(keys) - len(name) + 1) if keys[i : i + len(name)] == name)


def _follows_an_article(text: str, item: str) -> bool:
    """True if ``item``'s words come just after "a", "an" or "the" in ``text``, one
    that does not follow a unit ("two liters a milk" is "of" misheard)."""
    words = _WORD.findall(text.lower())
    return any(
        at > 0 and words[at - 1] in _ARTICLES and (at == 1 or words[at - 2] not in UNIT_BY_ALIAS)
        for at in _places(words, item)
    )


def _rival_reading(
    primary: Heard, acted: Sequence[Command], parse: Parse, vocabulary: Collection[str]
) -> str | None:
    if not vocabulary:
        return None
    for text in primary.alternatives:
        commands = commands_of(parse(text))
        if len(commands) == len(acted) and any(
            _other_known_item(x, y, vocabulary) for x, y in zip(commands, acted, strict=True)
        ):
            return text
    return None


def _other_known_item(reading: Command, acted: Command, vocabulary: Collection[str]) -> bool:
    """``reading`` is ``acted``'s action on another item, one in ``vocabulary``."""
    if reading.action != acted.action:
        return False
    mine, theirs = getattr(reading, "item", None), getattr(acted, "item", None)
    if not isinstance(mine, str) or not isinstance(theirs, str):
        return False
    return item_key(mine) != item_key(theirs) and item_key(mine) in vocabulary


def tells_a_time(found: Sequence[Command], proposed: Sequence[Command]) -> bool:
    """True if a command of ``found`` has the action of one of ``proposed`` and a time
    of day where that one has none ("tonight at six" against "tonight"). Whisper
    tiny leaves out the end of a sentence at times, and the verifier's grammar keeps
    it from making up a time it heard nothing of: a time the verifier heard and
    Whisper did not is a sign that Whisper left words out."""
    for mine in found:
        for theirs in proposed:
            if mine.action != theirs.action:
                continue
            for name, value in mine.model_dump(exclude_none=True).items():
                other = getattr(theirs, name, None)
                if isinstance(value, dt.datetime) and not isinstance(other, dt.datetime):
                    return True
    return False


def item_from_the_beam(
    decision: GateDecision,
    primary: Heard,
    parse: Parse,
    vocabulary: Collection[str],
    sounds: Sounds | None = None,
) -> bool:
    """True if ``decision`` acts on a reading of Whisper's beam that names a known item
    where its best reading named one the verifier does not know, all else the same
    (``known_item_for_unknown``): Piper said "add ghee", Whisper wrote "add D" with
    "add tea" in its beam, and the verifier, which cannot hear ghee, heard "add tea".
    The beam and the verifier then agree on the nearest item they both know; the same
    holds for "add tea" written "add D". Only a larger model can tell them apart.

    The same when the best reading heard a word where the item goes and the parser
    took none for an item ("Put me on the list.", said "put ghee on the list", with
    "Put tea on the list." in the beam): the item is the beam's and the verifier's
    alone. Not when it left the item out ("add to the shopping list"): nothing was
    heard there to tell apart."""
    agreed = decision.details.get("agreed_reading")
    if decision.decision != "act" or agreed not in primary.alternatives:
        return False
    read = parse(primary.text)
    best = commands_of(read)
    if not best:
        return (
            getattr(read, "reason", None) == MISSING_ITEM
            and len(decision.commands) == 1
            and decision.commands[0].action == getattr(read, "intent", None)
        )
    return known_item_for_unknown(best, decision.commands, vocabulary, sounds)


def item_from_the_look(
    decision: GateDecision,
    primary: Heard,
    parse: Parse,
    vocabulary: Collection[str],
    sounds: Sounds | None = None,
) -> bool:
    """True if ``decision`` acts on the reading Whisper weighed for the verifier's words
    (``VoiceTurn._whisper_look``) with a known item for one of its best reading's that
    the verifier does not know, all else the same (``known_item_for_unknown``): flite
    said "add ghee", Whisper wrote "Add meat in the shopping list.", the verifier, which
    cannot hear ghee, "add tea", and Whisper found "Add tea ..." about as likely. Not
    when Whisper's item holds every word of the verifier's, give or take an ending
    (``holds_other_items``: "eggs is" in "mark eggs is done"): Whisper heard that item,
    and the look mended the words around it."""
    best = commands_of(parse(primary.text)) if primary.text else ()
    return known_item_for_unknown(
        best, decision.commands, vocabulary, sounds
    ) and not holds_other_items(best, decision.commands)


def known_item_for_unknown(
    best: Sequence[Command],
    acted: Sequence[Command],
    vocabulary: Collection[str],
    sounds: Sounds | None = None,
) -> bool:
    """True if ``acted`` is ``best`` (Whisper's best reading) with a known item (in
    ``vocabulary``) for at least one item the verifier does not know, all else the
    same. The gate got there through the verifier, which hears only the items it
    knows: the beam's reading it agreed with (``item_from_the_beam``), or the reading
    Whisper found about as likely as its own (``VoiceTurn._whisper_look``: "add tea"
    for "add meat", said "add ghee"). An item spelled otherwise for the very same
    sound ("two pairs" for "two pears", with ``sounds``) is no other item."""
    if not best or len(best) != len(acted):
        return False
    swapped = False
    for mine, theirs in zip(best, acted, strict=True):
        x, y = getattr(mine, "item", None), getattr(theirs, "item", None)
        if not isinstance(x, str) or not isinstance(y, str):
            return False
        if command_key(mine) == command_key(theirs):
            continue
        if not _same_but_item(mine, theirs) or item_key(x) in vocabulary:
            return False
        spelled = respelled(x, (theirs,), sounds) if sounds is not None else None
        swapped = swapped or spelled is None or item_key(spelled) != item_key(y)
    return swapped


def names_known_items(commands: Sequence[Command], vocabulary: Collection[str]) -> bool:
    """True if ``commands`` name items and every one is in ``vocabulary`` (the
    ``item_key`` of each item the verifier can hear)."""
    items = [getattr(c, "item", None) for c in commands]
    return bool(items) and all(
        isinstance(item, str) and item_key(item) in vocabulary for item in items
    )


def _weak_commands(
    primary: Heard, a: Any, verifier: Heard | None, parse: Parse, doubt: str = WEAK
) -> tuple[Command, ...] | None:
    """The state-changing commands of a "weak" verifier transcript (unsure, not far
    off; or rejected for another ``doubt``), when they may confirm engine A at all:
    None for any other transcript, or when A heard nothing usable or refused."""
    if verifier is None or verifier.rejected != doubt or not verifier.text.strip():
        return None
    if not primary.usable or said_no(a):
        return None
    weak_cmds = commands_of(parse(verifier.text))
    if not weak_cmds or any(c.action in READ_ONLY_ACTIONS for c in weak_cmds):
        return None
    return weak_cmds


def _weak_agreeing(
    primary: Heard,
    a_cmds: Sequence[Command],
    weak_cmds: tuple[Command, ...] | None,
    parse: Parse,
    *,
    repaired: tuple[tuple[Command, ...], str] | None,
    pauses: Sequence[tuple[str, str]],
) -> tuple[tuple[Command, ...], str] | None:
    """``weak_cmds`` (``_weak_commands``) with the reading they agree with, when they
    are exactly engine A's best reading, that reading with a misheard "add" or "put"
    put back (``repaired``), or with its small words mended (``mended_words``: "we're
    out on coffee", "two liters on milk", the commas where the verifier paused). Never
    one of A's other beam readings, nor a verb A did not hear at all."""
    if weak_cmds is None:
        return None
    if a_cmds and same_commands(a_cmds, weak_cmds):
        return tuple(a_cmds), primary.text
    if not a_cmds and repaired is not None and same_commands(repaired[0], weak_cmds):
        return weak_cmds, repaired[1]
    mended = mended_words(primary.text, pauses)
    if mended == primary.text.strip():
        return None
    found = _first_giving([mended, *repaired_readings(mended)], weak_cmds, parse, start=1)
    return None if found is None else (weak_cmds, found[1])


def _unsure_agreeing(
    primary: Heard,
    a: Any,
    a_cmds: Sequence[Command],
    verifier: Heard | None,
    parse: Parse,
) -> tuple[Command, ...] | None:
    """Engine A's state-changing commands when a "low_confidence" verifier transcript
    from a quiet room (``Heard.quiet``) gives exactly them, from A's best reading
    itself: never its beam, its mended words or a repaired verb, and never in noise.

    Measured (turn probe, quiet, espeak-ng's and flite's voices and a deepened Piper:
    242 turns of commands, phrasings, near misses and chatter): where both engines gave
    the same change, the verifier was unsure in 22 turns, 2 of them below the weak
    cut-offs ("take the bread off the shopping list", average -25.5 and worst word
    -66.0; "remind me to call mom tomorrow at five p.m.", -42.8 and -53.5), and all 22
    were what was said. Chatter and near misses forced into the grammar scored in the
    same range (average -21 to -50, worst word -12 to -69) and never gave Whisper's
    change: it is the equality with Whisper's own reading, not the score, that keeps
    them out. In a quiet room a low score is mostly the voice (espeak-ng's). A room
    that echoes without noise counts as quiet too: ``bench voice``'s reverberant room
    (264 turns, 224 of them commands) acted wrongly on none with this rule."""
    if verifier is None or not verifier.quiet or not a_cmds:
        return None
    theirs = _weak_commands(primary, a, verifier, parse, doubt=LOW_CONFIDENCE)
    return tuple(a_cmds) if theirs is not None and same_commands(a_cmds, theirs) else None


def _weak_read(
    primary: Heard, verifier: Heard | None, a: Any, parse: Parse, sounds: Sounds | None
) -> tuple[Command, ...] | None:
    """The read-only request a "weak" verifier heard, when engine A heard it one word
    otherwise ("well on my agenda tomorrow"): nothing changes, and the words are
    close enough to be the same request. None for anything else."""
    if verifier is None or verifier.rejected != WEAK or not primary.usable:
        return None
    if getattr(a, "intent", None) is not None or said_no(a):
        return None
    commands = commands_of(parse(verifier.text))
    if not commands or not all(c.action in READ_ONLY_ACTIONS for c in commands):
        return None
    return commands if _one_word_apart(primary.text, verifier.text, sounds) else None


def _weak_mended(
    primary: Heard,
    weak_cmds: tuple[Command, ...] | None,
    parse: Parse,
    pauses: Sequence[tuple[str, str]],
) -> tuple[tuple[Command, ...], str] | None:
    """``weak_cmds`` with the mended reading of engine A that gives exactly them ("two
    liters on milk" for "two liters of milk"): what to ask about instead of not
    understanding at all."""
    if weak_cmds is None:
        return None
    found = _first_giving(mended_readings(primary.text, pauses), weak_cmds, parse, start=1)
    return None if found is None else (weak_cmds, found[1])


def _repaired_commands(
    primary: Heard, a: Any, parse: Parse, verb_heard: str | None = None
) -> tuple[tuple[Command, ...], str] | None:
    """The state-changing commands of engine A's best reading with a misheard leading
    "add" or "put" repaired (``repaired_readings``), and that reading; None if there
    are none or A's reading was refused. Never acted on alone: only with a verifier's
    same commands, or proposed in a question."""
    if not primary.usable or said_no(a):
        return None
    for reading in repaired_readings(primary.text, verb_heard=verb_heard):
        commands = commands_of(parse(reading))
        if commands and not any(c.action in READ_ONLY_ACTIONS for c in commands):
            return commands, reading
    return None


def _weak_asked(
    primary: Heard,
    a: Any,
    verifier: Heard | None,
    parse: Parse,
    *,
    weak_cmds: tuple[Command, ...] | None,
    pauses: Sequence[tuple[str, str]],
) -> tuple[tuple[Command, ...], str, str] | None:
    """What to ask about when nothing agreed with an unsure verifier, with the reading
    and the detail it goes in: ``_weak_mended``'s, or Whisper's reading with the verb
    the verifier started with (``verb_asked``: "and three cans of tuna")."""
    mended = _weak_mended(primary, weak_cmds, parse, pauses)
    if mended is not None:
        return *mended, "mended_reading"
    verb = verb_asked(primary, a, verifier, parse)
    return None if verb is None else (*verb, "repaired_reading")


def verb_asked(
    primary: Heard, a: Any, verifier: Heard | None, parse: Parse
) -> tuple[tuple[Command, ...], str] | None:
    """Engine A's best reading with its misheard leading verb put back as the verb the
    verifier's reading starts with, where to named or not ("and three cans of tuna",
    the verifier "add three tuna and stock too"), with its commands: what a question
    proposes when nothing agreed. Never acted on: "and jam" may be chatter the
    verifier's grammar forced into "add ham"."""
    heard = _WORD.findall(verifier.text.lower()) if verifier is not None else []
    if not heard or heard[0] not in _MISHEARD:
        return None
    return _repaired_commands(primary, a, parse, verb_heard=heard[0])


_MISHEARD = {
    "add": frozenset({"and", "at", "had", "head", "ad", "an", "add-", "egg"}),
    "put": frozenset({"but", "bud", "putt", "both", "hot", "hook", "hoe"}),
}
"""What Whisper tiny hears a leading "add" or "put" as, on some voices ("and cheese to
the shopping list", "but two cans of beans on the list", "egg carrots and potatoes to
the list", "hook coffee on the shopping list"); never read as the verb unless
the verifier independently heard that verb and the very same item."""


_HEARD_AS = {"add": _MISHEARD["add"], "hey": frozenset({"they", "hay"})}
"""What Whisper tiny hears the verifier's "add" and the greeting before it as."""

_TARGETS = frozenset({"list", "groceries", "calendar", "agenda", "lista"})


def repaired_readings(text: str, *, verb_heard: str | None = None) -> list[str]:
    """Engine A's text with a misheard leading "add" or "put" put back, if it had one
    and also named where to ("... to the shopping list"): "And jam." stays chatter.
    ``verb_heard``: the verb the verifier's reading starts with; Whisper's misheard one
    is that verb then, where to or not ("and three cans of tuna")."""
    words = text.strip().split(maxsplit=1)
    if len(words) < 2:
        return []
    first = words[0].lower().strip(",.")
    verb = next((verb for verb, heard in _MISHEARD.items() if first in heard), None)
    if verb is None:
        return []
    if verb != verb_heard and not _TARGETS & {w.strip(",.!?").lower() for w in words[1].split()}:
        return []
    second = words[1].split()[0].lower().strip(",.")
    if second in _MISHEARD:
        # "and add cookies": the verb was heard; "and" is no misheard one in front of it
        # (said "add oat cookies", Whisper's "add" stood for "oat")
        return []
    if second in _parser_words().joins:
        # "egg and bread to the shopping list": an item of a list ("add milk, eggs and
        # bread" in flite's voice among talkers), no verb
        return []
    return [f"{verb} {words[1]}"]


_WHERE_OUT = re.compile(r"^where(?= (?:all )?out (?:of|on|in|at|off)\b)", re.I)
_OUT_ON = re.compile(
    r"^((?:we're|we are|were|we|i'm|i am)(?: all| almost| nearly)? out) (?:on|in|at|off|and)\b",
    re.I,
)
# "we've run out of" written without its "'ve" ("we run out of dish soap")
_RUN_OUT = re.compile(r"^(we|i) run(?= out of\b)", re.I)
_CHECK_OFF = {"jack": "check", "chuck": "check", "chick": "check", "gross": "cross"}
_OFF = re.compile(rf"^({'|'.join(_CHECK_OFF)})(?= off\b)", re.I)
_UNITS = sorted((u for u in UNIT_BY_ALIAS if len(u) > 2), key=len, reverse=True)
_UNIT_ON = re.compile(rf"\b({'|'.join(_UNITS)}) (?:on|in)\b", re.I)
_FREE = re.compile(r"\b(add|and|put|buy|get|need|at) free(?= \w)", re.I)
_REMINDED = re.compile(r"^reminded(?= me\b)", re.I)
# "buy" written as its homophones at the start of a request ("by flowers for friday"),
# where neither starts one
_BY = re.compile(r"^(?:by|bye)(?= \w)", re.I)
# "kilo" heard as "kill" or "keel" before "of" ("add a kill of rice"), after a count
_KILL = re.compile(r"\b(a|one|\d+|two|three|four|five|half a) (?:kill|keel)(s?) of\b", re.I)
# "and" heard as "in" between two items, after a pause more often than not ("add milk
# in eggs", "bread butter in cheese"): never before an article, a possessive or a count
# ("pigs in a blanket", "remind me in ten minutes").
_IN_FOR_AND = re.compile(
    r"(?<=[a-z]) in (?!(?:a|an|the|my|our|your|this|that|one|two|three|four|five|six|"
    r"seven|eight|nine|ten|half|\d)\b)(?=[a-z])",
    re.I,
)
_TARGET_AFTER = re.compile(r"\b(to|on|onto)\b.*\b(list|calendar|agenda)\b", re.I)


def respelled(text: str, commands: Sequence[Command], sounds: Sounds) -> str | None:
    """``text`` with each of its words that an item of ``commands`` spells otherwise
    for the very same sound (``sounds``: a word's phones) spelled as the item does:
    "add two pairs" with the verifier's "pears" gives "add two pears". Whisper writes
    the likelier word of a pair it cannot hear apart ("flower" for "flour"); the
    verifier writes the item its grammar knows. Only item words: "two" is never "to".
    None when no word changes."""
    theirs: dict[str, list[str]] = {}
    items = (i for c in commands if isinstance(i := getattr(c, "item", None), str))
    for word in {w.lower() for item in items for w in item.split()}:
        phones = sounds(word)
        if phones:
            theirs.setdefault(phones, []).append(word)
    changed = False
    words = text.split()
    for index, word in enumerate(words):
        bare = word.strip(",.!?;:")
        phones = sounds(bare.lower()) if bare else None
        same = theirs.get(phones, []) if phones else []
        if len(same) == 1 and same[0] != bare.lower():
            words[index] = word.replace(bare, same[0])
            changed = True
    return " ".join(words) if changed else None


def listed(text: str, pauses: Sequence[tuple[str, str]]) -> str:
    """``text`` with a comma between each pair of ``pauses`` it has once, side by side
    and without one: "milk eggs and bread" with ("milk", "eggs") is "milk, eggs and
    bread". Whisper tiny writes a quick list without its commas, and without them the
    parser cannot tell "milk eggs" from one item."""
    words = text.split()
    keys = [w.strip(",.!?;:").lower() for w in words]
    for before, after in pauses:
        at = [
            i
            for i in range(len(words) - 1)
            if (keys[i], keys[i + 1]) == (before, after) and words[i][-1:].isalnum()
        ]
        if len(at) == 1:
            words[at[0]] += ","
    return " ".join(words)


def mended_words(text: str, pauses: Sequence[tuple[str, str]] = ()) -> str:
    """``text`` with the small words Whisper tiny mishears put right, its item words
    left as they are: "of" heard as "on", "in" or "and" ("we're out in coffee", "two
    liters on milk", "we're almost out and shampoo"), "we run out of" (for "we've run
    out of"), "where out of" and "jack off the milk" (for "we're out of", "check off the
    milk"), "free" for "three" after a verb or "at" ("add free apples", "at free 30"),
    "reminded me" (for "remind me"), "by" for a leading "buy" ("by flowers for
    friday"), "kill" for "kilo" ("a kill of rice"), "in" for "and" between two items
    ("add milk in eggs"), and the commas of a list where the verifier heard its pauses
    (``listed``)."""
    mended = listed(text.strip(), pauses)
    mended = _WHERE_OUT.sub("we're", mended)
    mended = _FREE.sub(r"\1 three", mended)
    mended = _REMINDED.sub("remind", mended)
    mended = _BY.sub("buy", mended)
    mended = _RUN_OUT.sub(r"\1've run", mended)
    mended = _KILL.sub(r"\1 kilo\2 of", mended)
    mended = _OFF.sub(lambda m: _CHECK_OFF[m.group(1).lower()], mended)
    for pattern in (_OUT_ON, _UNIT_ON):
        mended = pattern.sub(r"\1 of", mended)
    return _IN_FOR_AND.sub(" and ", mended)


_COUNTS = (
    r"a|an|one|another|half|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"\d+(?:[.,]\d+)?"
)
_BARE_UNITS = [u for u in _UNITS if UNIT_BY_ALIAS[u] != "dozen"]
_UNIT_NO_OF = re.compile(
    rf"\b((?:{_COUNTS}) (?:{'|'.join(_BARE_UNITS)})) (?!of\b|more\b|and\b)(?=\w)", re.I
)


def with_of(text: str) -> str:
    """``text`` with the "of" Whisper tiny drops after a counted unit put back: "a kilo
    rice" is "a kilo of rice" (the parser reads both the same, the verifier's grammar
    only the second). Never after "dozen", which takes none."""
    return _UNIT_NO_OF.sub(r"\1 of ", text)


def with_courtesy(text: str, other: str, lang: str) -> str:
    """``text`` with the words that change nothing which ``other`` ends with and it
    does not: the lexicon's trailing fillers ("thanks", "cheers", "too", "we're out";
    "obrigado", "valeu") or a last "please" ("por favor"), a filler said anywhere.
    Whisper can leave one out ("Put two cans of beans on the list." for "..., thanks",
    which the verifier heard), and a reading without it leaves speech out. ``text``
    itself when ``other`` ends with none, or ``text`` with the same."""
    from appliance.intents.lexicon import load_lexicon
    from appliance.intents.text import fold

    fillers = load_lexicon(lang).buying_fillers
    tail = _filler_tail(fold(other), fillers)
    if not tail or _filler_tail(fold(text), fillers) == tail:
        return text
    return f"{text.strip().rstrip('.!?,')}, {tail}"


def _filler_tail(folded: str, fillers: FillerRules) -> str:
    """The filler ``folded`` ends with (its words), or ""."""
    text = folded.rstrip(" .!?,")
    found = fillers.trailing.search(text) if fillers.trailing is not None else None
    if found is None and fillers.anywhere is not None:
        found = next((m for m in fillers.anywhere.finditer(text) if m.end() == len(text)), None)
    return " ".join(_WORD.findall(found.group(0))) if found is not None else ""


def mended_readings(text: str, pauses: Sequence[tuple[str, str]] = ()) -> list[str]:
    """``repaired_readings``, and what else Whisper tiny gets wrong in a way only the
    verifier's very same commands can settle: a leading verb it did not hear at all
    ("banana on the shopping list", after a clipped "put"), and its small words
    (``mended_words``). These readings count only with the verifier's very same
    commands (agreeing; with an unsure verifier, only the small words: a missing verb
    is asked about), never on engine A's word: "works on my shopping list" (for
    "what's on ...") would become "add works"."""
    stripped = text.strip()
    readings = _with_verb(stripped)
    mended = mended_words(stripped, pauses)
    if mended != stripped:
        readings += [mended, *_with_verb(mended)]
    return readings


_MAX_SPLICES = 4
"""``spliced_readings`` takes a word span from at most this many places of the other
reading (each subset of them is one reading: 15 at most)."""


# Words of the date and unit tables that are also everyday words ("can you", "set a
# reminder", "we're out of", "de"): a splice may put them in or take them out.
_NOT_AMOUNTS = frozenset(
    {"a", "an", "after", "the", "this", "day", "can", "m", "p", "e", "de", "depois",
     "essa", "esta", "nessa", "nesta", "set", "out", "ago", "may"}
)  # fmt: skip


@functools.lru_cache(maxsize=4)
def amount_and_time_words(lang: str) -> frozenset[str]:
    """Words that say an amount, a unit, a day or a time in ``lang``: numbers spelled
    out, units, weekdays, months, "tomorrow", "tonight", "noon", "p.m."
    (``_slot_key`` forms; any word with a digit is one too). ``spliced_readings`` never
    puts one in or takes one out: Whisper's model finds "add one juice" about as likely
    as "add lime juice", which was said."""
    from appliance.intents.lexicon import load_lexicon
    from appliance.intents.numbers import number_words

    dates = load_lexicon(lang).dates
    tables = (
        dates.relative_days, dates.relative_periods, dates.weekdays, dates.months,
        dates.periods, dates.meridiem, dates.clock_words, dates.minute_words,
    )  # fmt: skip
    phrases = [*number_words(lang), *UNIT_BY_ALIAS, *(p for table in tables for p in table)]
    words = {_slot_key(word) for text in phrases for word in str(text).split()}
    return frozenset(words - _NOT_AMOUNTS - {""})


def _slot_key(word: str) -> str:
    """``word`` as the lexicon writes it: lower case, no accents, no dots ("p.m.": "pm")."""
    folded = unicodedata.normalize("NFKD", word.lower())
    return re.sub(r"[^\w'-]", "", "".join(ch for ch in folded if not unicodedata.combining(ch)))


def _says_an_amount(words: Sequence[str], amounts: Collection[str]) -> bool:
    return any(any(ch.isdigit() for ch in w) or _slot_key(w) in amounts for w in words)


_POSSESSIVES = frozenset({"our", "my", "your", "his", "her", "their", "nosso", "nossa",
                          "nossos", "nossas", "meu", "minha", "meus", "minhas"})  # fmt: skip


def _adds_a_possessive(text: str, other: str) -> bool:
    """True if ``other`` has a possessive that ``text`` has not, before a word that
    names no list ("add our cookies" against "Added cookies"; "to my list" is no such
    possessive)."""
    words, others = _WORD.findall(text.lower()), _WORD.findall(other.lower())
    return any(
        word in _POSSESSIVES
        and following not in _READ_TARGETS
        and others.count(word) > words.count(word)
        for word, following in itertools.pairwise(others)
    )


def leaves_out_words(text: str, other: str) -> bool:
    """True if ``other`` leaves out a word of ``text``, case and punctuation aside: a
    word it drops, or words it puts fewer in place of ("and add" as "add")."""
    words, others = _WORD.findall(text.lower()), _WORD.findall(other.lower())
    matcher = difflib.SequenceMatcher(a=words, b=others, autojunk=False)
    return any(
        op == "delete" or (op == "replace" and i2 - i1 > j2 - j1)
        for op, i1, i2, j1, j2 in matcher.get_opcodes()
    )


def _word_keys(words: Sequence[str]) -> list[str]:
    """Words compared case and punctuation aside: a list's commas are the verifier's
    heard pauses' to put in (``listed``), never a splice's ("rice milk" is one item)."""
    return [w.lower().strip(",.!?;:") for w in words]


def shares_item_words(found: Sequence[Command], other: Sequence[Command]) -> bool:
    """True if an item of ``found`` and a different item of ``other`` have a word in
    common ("lime juice" and "juice", "rice milk" and "milk"): one engine heard a longer
    item than the other, which the verifier, for one it cannot hear, does."""
    items = [
        [item_key(i) for c in commands if isinstance(i := getattr(c, "item", None), str)]
        for commands in (found, other)
    ]
    return any(a != b and set(a.split()) & set(b.split()) for a in items[0] for b in items[1])


def holds_other_items(found: Sequence[Command], other: Sequence[Command]) -> bool:
    """True if an item of ``found`` says every word of a different, shorter item of
    ``other``, give or take an ending ("turkey bacon" and "bacon", "iced tea" and
    "ice"): a verifier that cannot hear the longer item hears the part it knows, and a
    reading of Whisper's that leaves the rest out would agree with it."""

    def said(word: str, words: Sequence[str]) -> bool:
        return any(
            w == word or (min(len(w), len(word)) >= 3 and abs(len(w) - len(word)) <= 2
                          and (w.startswith(word) or word.startswith(w)))
            for w in words
        )  # fmt: skip

    items = [
        [item_key(i) for c in commands if isinstance(i := getattr(c, "item", None), str)]
        for commands in (found, other)
    ]
    return any(
        len(a.split()) > len(b.split()) and all(said(w, a.split()) for w in b.split())
        for a in items[0]
        for b in items[1]
    )


def spliced_readings(text: str, other: str, amounts: Collection[str] = frozenset()) -> list[str]:
    """``text`` with words of ``other`` put in where the two differ, fewest places first,
    up to ``_MAX_SPLICES`` of them ("add a dozen acres ..." and "add a dozen eggs ..."
    give "add a dozen eggs ..."). Only replacements and additions: a word of ``text``
    that ``other`` leaves out stays, so a reading never drops what ``text`` heard
    ("tonight at eight" is never "tonight", "don't add" never "add"). Nor does a place
    where either side says an amount, a unit, a day or a time (a word with a digit, or
    one of ``amounts``: ``amount_and_time_words``) change: "add lime juice" is never
    "add one juice"."""
    words, others = text.split(), other.split()
    matcher = difflib.SequenceMatcher(a=_word_keys(words), b=_word_keys(others), autojunk=False)
    places = [
        op
        for op in matcher.get_opcodes()
        if op[0] in ("replace", "insert")
        and not _says_an_amount([*words[op[1] : op[2]], *others[op[3] : op[4]]], amounts)
    ]
    if len(places) > _MAX_SPLICES or any(op[0] == "delete" for op in matcher.get_opcodes()):
        return []
    readings: list[str] = []
    for count in range(1, len(places) + 1):
        for chosen in itertools.combinations(places, count):
            spliced = list(words)
            for _, i1, i2, j1, j2 in reversed(chosen):  # from the end: indices stay right
                spliced[i1:i2] = others[j1:j2]
            reading = " ".join(spliced)
            if reading not in readings:
                readings.append(reading)
    return readings


def _with_misheard_add(text: str, theirs: str) -> list[str]:
    """The verifier's words (``theirs``) when ``text`` is word for word the same but
    for an "add" Whisper misheard ("and milk", "head one bag of rice", "shopping list
    at eggs": a short command, said quickly, that Whisper tiny reads as a fragment) or
    the greeting before it ("they add milk to my groceries"). Never "put", which names
    where to, and never an item's word: "And jam." is no "add jam to the shopping list"."""
    mine, heard = _WORD.findall(text.lower()), _WORD.findall(theirs.lower())
    if len(mine) != len(heard) or mine == heard or "add" not in heard:
        return []
    for said, verified in zip(mine, heard, strict=True):
        if said != verified and said not in _HEARD_AS.get(verified, ()):
            return []
    return [" ".join(heard)]


def _with_verb(text: str) -> list[str]:
    """``text`` with a misheard leading verb repaired, or with a missing one added."""
    readings = repaired_readings(text)
    if not readings and _TARGET_AFTER.search(text):
        readings += [f"add {text}", f"put {text}"]
    return readings


def not_understood(decision: GateDecision, primary: Heard, lang: str) -> GateDecision:
    """A ``chat`` decision on words said to a list or the agenda ("and a kilo on rice to
    the shopping list": a request misheard past mending, its second look included) as
    a rejection, ``not_understood``: its reply says so and that nothing changed, where
    chat's would say the node only helps with the list and the agenda. A question
    memory may answer stays chat ("what did I buy from the list last week?")."""
    from appliance.intents.lexicon import load_lexicon
    from appliance.intents.text import fold
    from appliance.memory.answers import is_memory_question

    if decision.decision != "chat" or not primary.usable:
        return decision
    words = set(_WORD.findall(fold(primary.text)))
    if not words & load_lexicon(lang).container_words or is_memory_question(primary.text, lang):
        return decision
    return replace(decision, decision="reject", reason="not_understood")


def unspeakable(decision: GateDecision, lang: str) -> GateDecision:
    """A question (``confirm``) whose item or title has a slur or an obscenity in it
    (the lexicon's ``unspeakable``) as a rejection, ``not_understood``: Whisper can
    make one of other words ("a dozen eggs" in flite's voice in a reverberant room),
    and the node never says one back, nor keeps it on a list on a "yes"."""
    from appliance.intents.lexicon import load_lexicon
    from appliance.intents.text import fold

    if decision.decision != "confirm":
        return decision
    blocked = load_lexicon(lang).unspeakable
    named = (
        value
        for command in decision.commands
        for key in ("item", "title", "subject")
        if isinstance(value := getattr(command, key, None), str)
    )
    if not any(set(_WORD.findall(fold(name))) & blocked for name in named):
        return decision
    details = {**decision.details, "unspeakable": True}
    return replace(
        decision, decision="reject", commands=(), reason="not_understood", details=details
    )


def _nothing(
    primary: Heard, verifier: Heard | None, a: Any, b: Any, details: dict[str, Any]
) -> GateDecision:
    reasons: set[str] = {str(getattr(r, "reason", "")) for r in (a, b) if r is not None}
    refused = reasons & REFUSALS
    if refused:
        intent = getattr(a, "intent", None) or getattr(b, "intent", None)
        return GateDecision("reject", (), intent, sorted(refused)[0], False, details)
    why_not = str(getattr(a, "reason", ""))
    if primary.usable and why_not in EXPLAINED and getattr(a, "intent", None):
        return GateDecision("reject", (), a.intent, why_not, False, details)
    if primary.usable:
        return GateDecision("chat", (), None, getattr(a, "reason", None), False, details)
    if verifier is not None and verifier.usable:
        return GateDecision("none", (), None, "verifier_only", False, details)
    why = primary.rejected or (verifier.rejected if verifier else None) or "no_speech"
    return GateDecision("none", (), None, why, False, details)
