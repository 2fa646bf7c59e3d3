"""What a memory is, what a write asks for, and what a write did."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NamedTuple

from appliance.memory.errors import MemoryInputError


class Kind(StrEnum):
    PREFERENCE = "preference"
    PURCHASE = "purchase"
    FACT = "fact"
    EPISODE = "episode"

    @classmethod
    def parse(cls, value: str | Kind) -> Kind:
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            names = ", ".join(k.value for k in cls)
            raise MemoryInputError(
                "unknown_kind", f"unknown memory kind {value!r}: one of {names}"
            ) from None


class MemorySource(StrEnum):
    """Where a memory came from."""

    VOICE = "voice"
    RECEIPT = "receipt"
    MANUAL = "manual"

    @classmethod
    def parse(cls, value: str | MemorySource) -> MemorySource:
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            names = ", ".join(s.value for s in cls)
            raise MemoryInputError(
                "unknown_source", f"unknown memory source {value!r}: one of {names}"
            ) from None


IMPORTANCE_MIN, IMPORTANCE_MAX = 1, 10


@dataclass(frozen=True)
class MemoryDraft:
    """A memory to write, as the caller gave it (the gate checks it)."""

    text: str
    kind: Kind
    importance: int = 5
    source: MemorySource = MemorySource.MANUAL
    source_ref: str | None = None
    """What it came from: a request id, a receipt id."""

    @classmethod
    def of(
        cls,
        text: str,
        *,
        kind: str | Kind,
        importance: int = 5,
        source: str | MemorySource = MemorySource.MANUAL,
        source_ref: str | None = None,
    ) -> MemoryDraft:
        """A draft from loose values (a CLI, a payload); unknown names are input errors."""
        if isinstance(importance, bool) or not isinstance(importance, int):
            raise MemoryInputError(
                "bad_importance", f"importance must be a whole number, not {importance!r}"
            )
        return cls(text, Kind.parse(kind), importance, MemorySource.parse(source), source_ref)


@dataclass(frozen=True)
class Edit:
    """What an edit did: nothing (``found`` False, or nothing to change), a new
    importance, and/or a new text written through the gate (``result``)."""

    found: bool
    old: Memory | None = None
    result: WriteResult | None = None
    importance: int | None = None

    @property
    def changed(self) -> bool:
        return (self.result is not None and self.result.written) or (
            self.result is None and self.importance is not None
        )


class PreparedWrite(NamedTuple):
    """A checked draft and its embeddings (the text's and its neutral form's)."""

    draft: MemoryDraft
    embedding: Any
    neutral: Any


@dataclass(frozen=True)
class Memory:
    id: int
    kind: Kind
    text: str
    source: MemorySource
    source_ref: str | None
    importance: int
    strength: float
    reinforcements: int
    created_at: dt.datetime
    last_accessed_at: dt.datetime | None
    last_reinforced_at: dt.datetime | None
    superseded_at: dt.datetime | None
    superseded_by: int | None
    embedding_model: str
    embedding_dim: int

    @property
    def active(self) -> bool:
        """Not superseded: recalled, counted in the profile."""
        return self.superseded_at is None

    def to_payload(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind.value,
            "text": self.text,
            "source": self.source.value,
            "source_ref": self.source_ref,
            "importance": self.importance,
            "strength": round(self.strength, 6),
            "reinforcements": self.reinforcements,
            "created_at": self.created_at.isoformat(),
            "last_accessed_at": _iso(self.last_accessed_at),
            "last_reinforced_at": _iso(self.last_reinforced_at),
            "superseded_at": _iso(self.superseded_at),
            "superseded_by": self.superseded_by,
            "embedding_model": self.embedding_model,
            "embedding_dim": self.embedding_dim,
        }


def _iso(value: dt.datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


@dataclass(frozen=True)
class Hit:
    """A memory found by vector search; ``distance`` is the cosine distance (0 = same)."""

    memory: Memory
    distance: float


@dataclass(frozen=True)
class TermHit:
    """A memory found by its words; larger ``rank`` is a better match."""

    memory: Memory
    rank: float


class Outcome(StrEnum):
    INSERTED = "inserted"
    REINFORCED = "reinforced"
    SUPERSEDED = "superseded"
    """Inserted, and it replaces older memories it contradicts (kept as history)."""
    REJECTED = "rejected"


class RejectReason(StrEnum):
    TOO_SHORT = "too_short"
    NO_WORDS = "no_words"
    DAILY_CAP = "daily_cap"


@dataclass(frozen=True)
class WriteResult:
    """What one write did. Nothing else changed."""

    outcome: Outcome
    memory_id: int | None = None
    """The memory inserted, or the one reinforced; None when rejected."""
    superseded: tuple[int, ...] = ()
    """Older memories this one contradicts: kept, no longer recalled."""
    reason: RejectReason | None = None
    detail: str | None = None
    """The reason in words (rejected)."""
    similarity: float | None = None
    """Similarity to the memory reinforced or superseded."""

    @property
    def written(self) -> bool:
        return self.outcome is not Outcome.REJECTED

    def describe(self) -> str:
        if self.outcome is Outcome.REJECTED:
            return f"rejected: {self.reason} ({self.detail})" if self.detail else "rejected"
        sim = f" (similarity {self.similarity:.3f})" if self.similarity is not None else ""
        if self.outcome is Outcome.REINFORCED:
            extra = (
                f"; superseded {', '.join(f'#{i}' for i in self.superseded)}"
                if self.superseded
                else ""
            )
            return f"reinforced #{self.memory_id}{sim}{extra}"
        if self.outcome is Outcome.SUPERSEDED:
            olds = ", ".join(f"#{i}" for i in self.superseded)
            return f"inserted #{self.memory_id}, superseded {olds}{sim}"
        return f"inserted #{self.memory_id}"

    def to_payload(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome.value,
            "memory_id": self.memory_id,
            "superseded": list(self.superseded),
            "reason": self.reason.value if self.reason else None,
            "detail": self.detail,
            "similarity": round(self.similarity, 4) if self.similarity is not None else None,
        }


@dataclass(frozen=True)
class Profile:
    """A user's consolidated profile: the strongest active memories, bounded in size."""

    user: str
    text: str
    memory_ids: tuple[int, ...]
    built_at: dt.datetime


@dataclass(frozen=True)
class IndexState:
    """The model the stored embeddings come from, and a reindex in progress."""

    model: str
    dimension: int
    next_model: str | None = None
    next_dimension: int | None = None


@dataclass(frozen=True)
class MaintainReport:
    users: int
    decayed: int
    profiles: int


@dataclass(frozen=True)
class ReindexReport:
    model: str
    dimension: int
    embedded: int
    """Memories embedded by this run (an interrupted run's work is not redone)."""
    swapped: bool
    """False: the index already used this model; nothing changed."""
    previous: str | None = None
    seconds: float = field(default=0.0, compare=False)
