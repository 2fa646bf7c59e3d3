"""Before matching: is there anything to parse, and is it negated?

"don't add milk", "I didn't buy eggs", "never mind", "não coloca ovos na lista"
must never become an action, so any negation word refuses the whole request
(except listed phrases such as "don't forget to").
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

from appliance.intents.lexicon import Lexicon, load_lexicon
from appliance.intents.text import (
    FillerRules,
    Utterance,
    blank_punctuation,
    fold,
    phrase_alternation,
)

Why = Literal["bought", "done"] | None
"""Why an item is bought or taken off, said last: left out of such a request only."""

EMPTY = "empty"
NEGATED = "negated"

_COMMA_AFTER_COMMA = re.compile(r"(?<=,)(\s*),|^(\s*),")
_SPACE_BEFORE_COMMA = re.compile(r"(?<=\w)(\s+),")
_WORDS = re.compile(r"[\w']+")


def _blank(found: re.Match[str]) -> str:
    return " " * (found.end() - found.start())


def _read_exempt(lexicon: Lexicon, found: re.Match[str]) -> str:
    """An exempt phrase as the parser reads it ("don't forget to": "remember to"), padded
    to its length; nothing for one without a reading (``Negation.exempt_reads``)."""
    reading = lexicon.negation.exempt_reads.get(" ".join(found.group(0).split()), "")
    return reading.ljust(found.end() - found.start())


@functools.lru_cache(maxsize=1024)
def _folded(text: str) -> tuple[str, str]:
    """``text`` in NFC, and folded with its punctuation blanked (one character for one)."""
    original = unicodedata.normalize("NFC", text)
    return original, blank_punctuation(fold(original))


def exempt_phrases(text: str, lexicon: Lexicon) -> frozenset[str]:
    """The phrases exempt from the negation check said in ``text``, folded."""
    if lexicon.negation.exempt is None:
        return frozenset()
    folded = _folded(text)[1]
    return frozenset(" ".join(m.group(0).split()) for m in lexicon.negation.exempt.finditer(folded))


def is_negated(folded: str, lexicon: Lexicon) -> bool:
    """True if the folded text contains a negation word or phrase (but an opener said
    first: "actually make that three apples", ``Negation.openers``)."""
    if _calls_off(folded, 0, lexicon):
        return True
    return any(_negation_word(token, lexicon) for token in folded.split())


def _calls_off(folded: str, start: int, lexicon: Lexicon) -> bool:
    """True if a negation phrase is said from ``start`` on, past an opener said there
    ("make that three" opens an edit; "add two apples, make that three" corrects)."""
    phrases = lexicon.negation.phrases
    opening = start + _opener_end(folded[start:], lexicon)
    return phrases is not None and phrases.search(folded, opening) is not None


def _opener_end(folded: str, lexicon: Lexicon) -> int:
    """Where the opener ``folded`` starts with ends, fillers before it aside ("oh,
    actually make that"); 0 if it starts with none."""
    openers = lexicon.negation.openers
    if openers is None:
        return 0
    spaced = folded.replace(",", " ")
    found = openers.match(spaced) or openers.match(lexicon.fillers.blank(spaced))
    return found.end() if found else 0


def _negation_word(token: str, lexicon: Lexicon) -> bool:
    """True if a folded word (a comma after it aside) is a negation: "not", "don't"."""
    word, negation = token.strip(","), lexicon.negation
    return word in negation.words or any(word.endswith(s) for s in negation.suffixes)


_DO_NOT = re.compile(r"(?<![\w'])(?:do|does|did)\s+(?=not(?![\w']))")


def _after_negation(folded: str, lexicon: Lexicon) -> int:
    """Where the words of a folded text start after the negation words it starts with
    ("don't | make it three"); 0 if it starts with none."""
    at = 0
    for token in re.finditer(r"\S+", folded):
        if not _negation_word(token.group(0), lexicon):
            break
        at = token.end()
    return at


def without_negation(text: str, lexicon: Lexicon) -> str | None:
    """``text`` (folded) without its negation words ("don't add milk to the list": "add
    milk to the list"; "do not" goes whole); None when it has none, or says a phrase
    exempt from the negation check ("don't forget to"), which is no negation to leave
    out; None too when it says a negation phrase ("never mind", "I mean"), which calls
    off or corrects what was said around it rather than saying its opposite (an opener
    said first is none: "don't make it three" is "make it three")."""
    folded = _folded(text)[1]
    negation = lexicon.negation
    if negation.exempt is not None and negation.exempt.search(folded):
        return None
    folded = _DO_NOT.sub("", folded)
    if _calls_off(folded, _after_negation(folded, lexicon), lexicon):
        return None
    kept = [token for token in folded.split() if not _negation_word(token, lexicon)]
    return " ".join(kept) if len(kept) < len(folded.split()) else None


def prepare(
    text: str,
    lexicon: Lexicon,
    *,
    negated: bool = False,
    read_exempt: bool = False,
    why: Why = None,
) -> Utterance | str:
    """The utterance to match, or the reason there is none (``"empty"``/``"negated"``).

    ``negated``: the utterance of a request the negation gate refused, to match against
    the few sentences that say a negation themselves ("we don't need bread anymore");
    "empty" for one it lets through. The phrases exempt from the negation check ("don't
    forget to") are left out, or with ``read_exempt`` read as the lexicon says.
    ``why``: why an item is bought ("..., we're out": ``Lexicon.buying_fillers``) or
    taken off ("..., we have plenty": ``Lexicon.done_fillers``), said last, is left out
    too."""
    original, folded = _folded(text)
    if not any(c.isalnum() for c in folded):
        return EMPTY
    if lexicon.negation.exempt is not None:
        exempt = functools.partial(_read_exempt, lexicon) if read_exempt else _blank
        folded = lexicon.negation.exempt.sub(exempt, folded)
    if is_negated(folded, lexicon) != negated:
        return EMPTY if negated else NEGATED
    fillers = _fillers(lexicon, why)
    folded = _lone_commas(fillers.blank(folded))
    if not any(c.isalnum() for c in folded):
        return EMPTY
    return Utterance(original=original, folded=folded)


@dataclass(frozen=True)
class Correction:
    """A request corrected as it is said: the words ``before`` the correction, the
    correction's own (``after``), both as written, and the ``markers`` between them,
    folded ("no wait")."""

    before: str
    after: str
    markers: frozenset[str]


def correction(text: str, lexicon: Lexicon) -> Correction | None:
    """The last correction ``text`` says after words of a request ("add milk, no wait,
    oat milk"): a run of the lexicon's correction markers with words on both sides.
    None when there is none."""
    pattern = lexicon.corrections.markers
    if pattern is None:
        return None
    original, folded = _folded(text)
    for run in reversed(list(pattern.finditer(folded))):
        before, after = original[: run.start()], original[run.end() :]
        if any(c.isalnum() for c in folded[: run.start()]) and any(c.isalnum() for c in after):
            markers = frozenset(_WORDS.findall(run.group(0)))
            return Correction(before.strip(" ,"), after.strip(" ,.!?"), markers)
    return None


def said_why(text: str, lexicon: Lexicon) -> frozenset[Why]:
    """Why ``text`` ends by saying an item is bought ("bought": "..., we're almost
    out") or taken off ("done": "..., we have plenty"), fillers after it aside: words
    that only such a request leaves out (``prepare``'s ``why``)."""
    said = lexicon.fillers.blank(_folded(text)[1])
    endings = _why_endings(lexicon.language)
    return frozenset(why for why, ending in endings.items() if ending.search(said))


@functools.cache
def _why_endings(lang: str) -> dict[Why, re.Pattern[str]]:
    """Per ``Why``, its phrases (the lexicon's ``fillers.reasons``, ``done_reasons``)
    at the very end of a text."""
    fillers = load_lexicon(lang).raw["fillers"]
    keys: dict[Why, str] = {"bought": "reasons", "done": "done_reasons"}
    return {
        why: re.compile(rf"(?<![\w'])(?:{phrase_alternation(fillers[key])})[\s,]*$")
        for why, key in keys.items()
    }


def _fillers(lexicon: Lexicon, why: Why) -> FillerRules:
    if why == "bought":
        return lexicon.buying_fillers
    return lexicon.done_fillers if why == "done" else lexicon.fillers


def _lone_commas(folded: str) -> str:
    """``folded`` without the commas a blanked filler left on their own ("add, uh,
    milk" is "add,   , milk"; "uh, add milk" starts with one), and with a comma
    after blanks moved onto the word before them ("anota aí, arroz" is "anota   ,
    arroz"): one character for one, so that no template misses the words for it."""
    folded = _COMMA_AFTER_COMMA.sub(lambda m: " " * (m.end() - m.start()), folded)
    return _SPACE_BEFORE_COMMA.sub(lambda m: "," + m.group(1), folded)
