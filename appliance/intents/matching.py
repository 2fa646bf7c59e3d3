"""Template matching with hassil: every parse of an utterance, best first."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hassil import Intents, RecognizeResult, recognize_all

from appliance.intents.text import Utterance


@dataclass(frozen=True)
class Slot:
    """A wildcard slot: its span in the utterance and the original text."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Candidate:
    """One way the utterance matches a template."""

    intent: str
    slots: Mapping[str, Slot]
    values: Mapping[str, Any]
    metadata: Mapping[str, Any]
    template: str | None
    rank: tuple[int, int, int, int, int, str] = field(compare=False)


def _cuts_word(text: str, start: int, end: int) -> bool:
    """True if ``text[start:end]`` begins or ends in the middle of a word."""
    before = start > 0 and text[start - 1].isalnum() and text[start].isalnum()
    after = end < len(text) and text[end].isalnum() and text[end - 1].isalnum()
    return before or after


def _candidate(utterance: Utterance, result: RecognizeResult) -> Candidate | None:
    slots: dict[str, Slot] = {}
    values: dict[str, Any] = {}
    wildcard_chars = 0
    for entity in result.entities_list:
        if entity.is_wildcard:
            if entity.text_span is None:
                return None
            start, end = entity.text_span
            if _cuts_word(utterance.folded, start, end):
                return None  # hassil may end a wildcard inside a word ("tar|de")
            text = utterance.original[start:end].strip(" ,")
            if not text:
                return None
            slots[entity.name] = Slot(start, end, text)
            wildcard_chars += len(text)
        else:
            values[entity.name] = entity.value
    metadata: Mapping[str, Any] = result.intent_metadata or {}
    sentence = result.intent_sentence
    return Candidate(
        intent=result.intent.name,
        slots=slots,
        values=values,
        metadata=metadata,
        template=sentence.text if sentence is not None else None,
        # Least text in wildcards first (the template explained the most words),
        # then fewer wildcards, then the template's priority, then more literal text,
        # then more words in the date slot ("remind me at ten to five to call mom": "at
        # ten to five", not "at ten" with "five to call mom").
        rank=(
            wildcard_chars,
            len(slots),
            -int(metadata.get("priority", 0)),
            -result.text_chunks_matched,
            -len(slots["when"].text) if "when" in slots else 0,
            result.intent.name,
        ),
    )


def match(intents: Intents, utterance: Utterance) -> list[Candidate]:
    """All distinct parses of ``utterance``, best first."""
    found = [
        candidate
        for result in recognize_all(utterance.folded, intents, skip_words=[])
        if (candidate := _candidate(utterance, result)) is not None
    ]
    found.sort(key=lambda c: c.rank)
    seen: set[tuple[str, ...]] = set()
    candidates: list[Candidate] = []
    for candidate in found:
        key = (
            candidate.intent,
            repr(sorted((k, v.text) for k, v in candidate.slots.items())),
            repr(sorted(candidate.values.items())),
            repr(sorted(candidate.metadata.items())),
        )
        if key not in seen:
            seen.add(key)
            candidates.append(candidate)
    return candidates
