"""Before matching: is there anything to parse, and is it negated?

"don't add milk", "I didn't buy eggs", "never mind", "não coloca ovos na lista"
must never become an action, so any negation word refuses the whole request
(except listed phrases such as "don't forget to").
"""

from __future__ import annotations

import re
import unicodedata

from appliance.intents.lexicon import Lexicon
from appliance.intents.text import Utterance, blank_punctuation, fold

EMPTY = "empty"
NEGATED = "negated"


def _blank(found: re.Match[str]) -> str:
    return " " * (found.end() - found.start())


def is_negated(folded: str, lexicon: Lexicon) -> bool:
    """True if the folded text contains a negation word or phrase."""
    negation = lexicon.negation
    if negation.phrases is not None and negation.phrases.search(folded):
        return True
    for token in folded.split():
        word = token.strip(",")
        if word in negation.words or any(word.endswith(s) for s in negation.suffixes):
            return True
    return False


def prepare(text: str, lexicon: Lexicon, *, negated: bool = False) -> Utterance | str:
    """The utterance to match, or the reason there is none (``"empty"``/``"negated"``).

    ``negated``: the utterance of a request the negation gate refused, to match against
    the few sentences that say a negation themselves ("we don't need bread anymore");
    "empty" for one it lets through."""
    original = unicodedata.normalize("NFC", text)
    folded = blank_punctuation(fold(original))
    if not any(c.isalnum() for c in folded):
        return EMPTY
    if lexicon.negation.exempt is not None:
        folded = lexicon.negation.exempt.sub(_blank, folded)
    if is_negated(folded, lexicon) != negated:
        return EMPTY if negated else NEGATED
    folded = lexicon.fillers.blank(folded)
    if not any(c.isalnum() for c in folded):
        return EMPTY
    return Utterance(original=original, folded=folded)
