"""The commit gate: what a write may do before anything is written.

1. Input: the text is cleaned (control characters, runs of spaces); empty or longer
   than ``max_chars`` is the caller's mistake (``MemoryInputError``), as are an
   importance outside 1-10, an unknown kind or source (``MemoryDraft.of``).
2. Substance: shorter than ``min_chars``, or no word at all: rejected.
3. Redundancy: an active memory of the same kind and polarity at or above the
   duplicate similarity, with the same numbers in it, is reinforced instead.
4. Conflict: an active memory of the same kind and the opposite polarity, at or above
   the conflict similarity, that says the same once both negations are taken out
   (its *statement* similarity at or above the duplicate similarity): the new memory
   supersedes it. The old one stays, as history, and is no longer recalled.
5. The daily cap: checked by the store only when something would be inserted.

Numbers guard both 3 and 4: "the gate code is 4521" and "... 4522" embed at 0.98,
but are not the same memory.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from appliance.memory.embedder import Thresholds
from appliance.memory.errors import MemoryInputError
from appliance.memory.model import IMPORTANCE_MAX, IMPORTANCE_MIN, MemoryDraft, RejectReason
from appliance.memory.polarity import polarity
from appliance.memory.settings import MemorySettings

_NUMBER = re.compile(r"\d(?:[\d.,]*\d)?")
_WORD = re.compile(r"[^\W\d_]{2,}")


def clean_text(text: str) -> str:
    """Control characters as spaces, runs of white space as one, ends trimmed."""
    if not isinstance(text, str):
        raise MemoryInputError("bad_text", f"a memory's text must be a string, not {text!r}")
    spaced = "".join(" " if unicodedata.category(ch) == "Cc" else ch for ch in text)
    return " ".join(spaced.split())


def check_input(draft: MemoryDraft, settings: MemorySettings) -> MemoryDraft:
    """The draft with its text cleaned; a ``MemoryInputError`` if it cannot be stored."""
    text = clean_text(draft.text)
    if not text:
        raise MemoryInputError("empty", "a memory needs some text")
    if len(text) > settings.max_chars:
        raise MemoryInputError(
            "too_long",
            f"a memory holds at most {settings.max_chars} characters, this one {len(text)}",
        )
    if not IMPORTANCE_MIN <= draft.importance <= IMPORTANCE_MAX:
        raise MemoryInputError(
            "bad_importance",
            f"importance must be {IMPORTANCE_MIN} to {IMPORTANCE_MAX}, not {draft.importance}",
        )
    if draft.source_ref is not None and len(draft.source_ref) > 200:
        raise MemoryInputError("bad_source_ref", "source_ref holds at most 200 characters")
    return MemoryDraft(text, draft.kind, draft.importance, draft.source, draft.source_ref)


def substance(text: str, settings: MemorySettings) -> tuple[RejectReason, str] | None:
    """Why a (clean) text is not worth keeping, or None."""
    if len(text) < settings.min_chars:
        return RejectReason.TOO_SHORT, f"fewer than {settings.min_chars} characters"
    if not _WORD.search(text):
        return RejectReason.NO_WORDS, "no words in it"
    return None


def numbers(text: str) -> frozenset[str]:
    """The numbers a text mentions, separators dropped ("10,000" and "10000" agree)."""
    return frozenset(re.sub(r"[.,]", "", n) for n in _NUMBER.findall(text))


def words(text: str) -> tuple[str, ...]:
    return tuple(w.lower() for w in re.findall(r"[^\W_]+", text))


@dataclass(frozen=True)
class Neighbour:
    """An active memory of the same kind near the new text."""

    id: int
    text: str
    similarity: float
    """Cosine similarity of its vector to the new text's."""
    neutral_similarity: float
    """Cosine similarity of its vector to the new text's neutral form (negation out)."""


@dataclass(frozen=True)
class Decision:
    reinforce: int | None
    """The memory to reinforce instead of inserting; None: insert."""
    supersede: tuple[int, ...]
    similarity: float | None


def contradiction_candidates(
    text: str, neighbours: Sequence[Neighbour], thresholds: Thresholds
) -> list[Neighbour]:
    """Neighbours of opposite polarity close enough to be checked as contradictions."""
    mine = polarity(text)
    found = []
    for near in neighbours:
        if near.similarity < thresholds.conflict or numbers(near.text) != numbers(text):
            continue
        if polarity(near.text).negative != mine.negative:
            found.append(near)
    return found


def lexically_same_statement(text: str, other: str) -> bool:
    """True when the two neutral forms have the same words (no model needed)."""
    return words(polarity(text).neutral) == words(polarity(other).neutral)


def statement_similarities(
    text: str, candidates: Sequence[Neighbour]
) -> tuple[dict[int, float], dict[int, str]]:
    """How alike each contradiction candidate is to ``text`` with both negations out,
    as far as it is known without a model: ``(known, to_embed)``.

    Same words once neutral: 1.0. A positive candidate's stored vector is its neutral
    one: its ``neutral_similarity``. A negative one's neutral text is returned in
    ``to_embed`` (id -> text): its vector's dot product with the new text's neutral
    vector is the answer.
    """
    known: dict[int, float] = {}
    to_embed: dict[int, str] = {}
    for near in candidates:
        if lexically_same_statement(text, near.text):
            known[near.id] = 1.0
            continue
        theirs = polarity(near.text).neutral
        if theirs == near.text:
            known[near.id] = near.neutral_similarity
        else:
            to_embed[near.id] = theirs
    return known, to_embed


def decide(
    text: str,
    neighbours: Sequence[Neighbour],
    thresholds: Thresholds,
    statement_similarity: Mapping[int, float],
) -> Decision:
    """Reinforce, supersede, or plainly insert.

    ``statement_similarity`` gives, for each contradiction candidate, how alike the
    two texts are with their negations taken out (1.0 when their words agree).
    """
    superseded = [
        near
        for near in neighbours
        if statement_similarity.get(near.id, 0.0) >= thresholds.duplicate
    ]
    negative = polarity(text).negative
    duplicates = [
        near
        for near in neighbours
        if near.id not in statement_similarity
        and near.similarity >= thresholds.duplicate
        and polarity(near.text).negative == negative
        and numbers(near.text) == numbers(text)
    ]
    ids = tuple(sorted(n.id for n in superseded))
    if duplicates:
        best = max(duplicates, key=lambda n: n.similarity)
        return Decision(best.id, ids, best.similarity)
    similarity = max((n.similarity for n in superseded), default=None)
    return Decision(None, ids, similarity)
