"""Text folding and tokenising that keep character offsets.

Every step here maps one character to one character, so a span found in the
folded text is the same span in the original text. That is how a slot keeps the
user's own words ("Café", "Ana") while matching runs on plain lower-case ASCII-ish
text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "`": "'", "\u00b4": "'"})

# Characters kept by ``blank_punctuation``; every other non-word character
# becomes a space, and the context rules below blank some of these too.
_KEEP = frozenset("'-:.,/&@")
_DOT_MERIDIEM = re.compile(r"(?<![\w.])([ap])\.\s?m\.?(?!\w)")
_CONTEXT_RULES = (
    # "." ":" "/" only between digits ("1.5", "10:30", "5/12").
    re.compile(r"(?<!\d)[.:/]|[.:/](?!\d)"),
    # "-" and "'" only inside a word ("to-do", "what's", "o'clock").
    re.compile(r"(?<![^\W_])[-']|[-'](?![^\W_])"),
)
_SPACE_RUN = re.compile(r"\s+")
# The end of a sentence with another after it ("Add milk. Add eggs.", "Can you add
# milk? And eggs?"), which Whisper writes where a speaker paused: a comma, as said.
# Not after a title's abbreviation ("Dr. Silva").
_SENTENCE_BREAK = re.compile(
    r"(?<![\w.])(?!(?:dr|dra|mr|mrs|ms|st|sr|sra|srta|jr|prof|profa)[.])"
    r"(\w+)([.!?;]+)(?=\s+\w)"
)


def fold_char(char: str) -> str:
    """Lower-case one character and drop its accents, keeping it one character."""
    lowered = char.lower()
    if len(lowered) != 1:
        lowered = char
    decomposed = unicodedata.normalize("NFD", lowered)
    base = decomposed[0]
    if len(decomposed) > 1 and all(unicodedata.combining(c) for c in decomposed[1:]):
        return base
    return lowered


@lru_cache(maxsize=4096)
def fold(text: str) -> str:
    """Lower-case ``text`` and strip accents, one output character per input one."""
    return "".join(fold_char(c) for c in text.translate(_APOSTROPHES))


def _blank(match: re.Match[str]) -> str:
    return " " * (match.end() - match.start())


def blank_punctuation(folded: str) -> str:
    """Replace punctuation by spaces, keeping numbers, contractions and commas; the
    end of a sentence that another follows is a comma."""
    text = _DOT_MERIDIEM.sub(lambda m: m.group(1) + "m" + " " * (len(m.group(0)) - 2), folded)
    text = _SENTENCE_BREAK.sub(lambda m: m.group(1) + "," + " " * (len(m.group(2)) - 1), text)
    text = "".join(c if (c.isalnum() or c.isspace() or c in _KEEP) else " " for c in text)
    for rule in _CONTEXT_RULES:
        text = rule.sub(_blank, text)
    return text


def phrase_alternation(phrases: Iterable[str], between: str = r"\s+") -> str:
    """A regex alternation of folded phrases, longest first, spaces flexible (any run
    matching ``between``)."""
    folded = sorted(
        {_SPACE_RUN.sub(" ", fold(p).strip()) for p in phrases if p.strip()}, key=len, reverse=True
    )
    return "|".join(re.escape(p).replace(r"\ ", between) for p in folded)


@dataclass(frozen=True)
class FillerRules:
    """Compiled filler removal for one language."""

    anywhere: re.Pattern[str] | None
    leading: re.Pattern[str] | None
    trailing: re.Pattern[str] | None
    kept: re.Pattern[str] | None = None

    @classmethod
    def build(
        cls,
        anywhere: Iterable[str],
        leading: Iterable[str],
        trailing: Iterable[str],
        kept: Iterable[str] = (),
    ) -> FillerRules:
        """Compile the three filler lists, and the phrases never blanked although a
        filler is part of them (``kept``: "45 minutes from now")."""

        def compile_(
            template: str, words: Iterable[str], between: str = r"\s+"
        ) -> re.Pattern[str] | None:
            alternation = phrase_alternation(words, between)
            return re.compile(template.format(alternation)) if alternation else None

        return cls(
            anywhere=compile_(r"(?<![\w'])(?:{})(?![\w'])", anywhere),
            # a comma may be written inside one: "oh, and ...", "ok, so ..."
            leading=compile_(r"^[\s,]*(?:{})(?![\w'])", leading, r"[\s,]+"),
            trailing=compile_(r"(?<![\w'])(?:{})[\s,]*$", trailing),
            kept=compile_(r"(?<![\w'])(?:{})(?![\w'])", kept),
        )

    def blank(self, text: str) -> str:
        """Blank out filler words, leaving offsets unchanged."""
        kept = [m.span() for m in self.kept.finditer(text)] if self.kept is not None else []

        def blank_unless_kept(match: re.Match[str]) -> str:
            if any(start < match.end() and match.start() < end for start, end in kept):
                return match.group(0)
            return _blank(match)

        if self.anywhere is not None:
            text = self.anywhere.sub(blank_unless_kept, text)
        for pattern in (self.leading, self.trailing):
            if pattern is None:
                continue
            while True:
                changed = pattern.sub(blank_unless_kept, text, count=1)
                if changed == text:
                    break
                text = changed
        return text


@dataclass(frozen=True)
class Utterance:
    """One input: the original text and its folded, same-length matching form."""

    original: str
    folded: str

    def words(self, start: int = 0, end: int | None = None) -> list[Word]:
        """Tokenise ``original[start:end]``."""
        return tokenize(self.original, self.folded, start, len(self.folded) if end is None else end)


_WORD = re.compile(
    r"\d{4}-\d{2}-\d{2}"  # ISO date
    r"|\d+(?:[.,:/]\d+)*"  # numbers, times, dates
    r"|[^\W\d_]+(?:['-][^\W\d_]+)*"  # words, "to-do", "what's"
    r"|[,&@]"
)


@dataclass(frozen=True)
class Word:
    """A token: its original text, folded key and offsets into the utterance."""

    text: str
    key: str
    start: int
    end: int


def tokenize(original: str, folded: str, start: int, end: int) -> list[Word]:
    """Split ``folded[start:end]`` into words that point back at ``original``."""
    return [
        Word(text=original[m.start() : m.end()], key=m.group(0), start=m.start(), end=m.end())
        for m in _WORD.finditer(folded, start, end)
    ]


def words_of(text: str) -> list[Word]:
    """Tokenise a standalone text."""
    folded = fold(text)
    return tokenize(text, folded, 0, len(folded))


_QUOTES_AND_BRACKETS = re.compile(r"[\"\u201c\u201d()\[\]{}]")


def span_text(original: str, words: list[Word]) -> str:
    """The original text covered by ``words`` (from the first to the last, and a "%"
    right after it), without quotes and brackets, which a slot may cut in half
    ('"organic" milk', "milk (2%)")."""
    if not words:
        return ""
    end = words[-1].end
    end += original.startswith("%", end)  # "milk (2%)": the sign is part of the name
    span = _QUOTES_AND_BRACKETS.sub(" ", original[words[0].start : end])
    return " ".join(span.split()).strip(" ,")
