"""``MemoryStore``: every memory read and write, each in one transaction, per user.

Each operation opens one transaction, resolves the user's id (as the node's login
role), then switches to the NOLOGIN role ``appliance_memory`` with ``appliance.user``
set (``repository.enter_scope``): from there on row-level security shows that user's
rows only, whatever the query says. Without a user nothing runs at all
(``MemoryUserRequiredError``).

Writes go through the commit gate (``gate``): the text is embedded first (on the
embedder's thread, before any connection is taken), then one transaction locks the
user, looks at the nearest memories of the same kind and inserts, reinforces or
supersedes. A failure anywhere rolls the whole write back.

For the next steps: recall embeds its query with ``store.embeddings.query(text)``,
calls ``search_vector`` / ``search_terms`` and then ``reinforce`` on what it used;
the writing rules call ``write`` (or ``add``) and read the ``WriteResult``; MQTT
commands map ``MemoryInputError.reason`` and rejected results to receipts.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import math
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import TypeVar

import numpy as np

from appliance.actions.service import DEFAULT_HOUSEHOLD
from appliance.memory import gate
from appliance.memory import repository as repo
from appliance.memory.embedder import Embeddings, Thresholds, Vector
from appliance.memory.errors import (
    MemoryIndexMismatchError,
    MemoryInputError,
    MemoryUserRequiredError,
)
from appliance.memory.gate import Neighbour
from appliance.memory.model import (
    Edit,
    Hit,
    IndexState,
    Kind,
    MaintainReport,
    Memory,
    MemoryDraft,
    MemorySource,
    Outcome,
    PreparedWrite,
    Profile,
    ReindexReport,
    RejectReason,
    TermHit,
    WriteResult,
)
from appliance.memory.polarity import polarity
from appliance.memory.profile import build_profile
from appliance.memory.settings import MemorySettings
from appliance.store.db import Conn, Database

_LOGGER = logging.getLogger(__name__)
T = TypeVar("T")

NEIGHBOURS = 8
"""Nearest memories the gate looks at."""
PROFILE_CANDIDATES = 200
MAX_LIMIT = 1000
_TERM = re.compile(r"[^\W_]+")
_MAX_TERMS = 32


def require_user(user: str | None) -> str:
    """The user's name, or ``MemoryUserRequiredError`` when there is none."""
    if user is None or not user.strip():
        raise MemoryUserRequiredError
    return user.strip()


def _check_limit(limit: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise MemoryInputError("bad_limit", f"limit must be 1 to {MAX_LIMIT}, not {limit!r}")
    return limit


def terms_query(terms: str | Sequence[str]) -> str | None:
    """A tsquery matching any of the words in ``terms`` ("cafe:* | leite:*"), or None.

    Built from letters and digits only, so nothing a user says is tsquery syntax.
    Words of four letters or more match as prefixes ("ovo" finds "ovos" only
    exactly, "coffee" finds "coffees"); single letters are dropped.
    """
    text = terms if isinstance(terms, str) else " ".join(terms)
    seen: dict[str, None] = {}
    for word in _TERM.findall(text.lower()):
        if len(word) >= 2:
            seen.setdefault(word, None)
    if not seen:
        return None
    words = list(seen)[:_MAX_TERMS]
    return " | ".join(f"{w}:*" if len(w) >= 4 else w for w in words)


class MemoryStore:
    """Per-user memories in PostgreSQL, isolated by row-level security."""

    def __init__(
        self,
        db: Database,
        embeddings: Embeddings,
        settings: MemorySettings,
        *,
        household: str = DEFAULT_HOUSEHOLD,
    ) -> None:
        self._db = db
        self.embeddings = embeddings
        self.settings = settings
        self._users = repo.UserIds(household)
        defaults = embeddings.thresholds
        self.thresholds = Thresholds(
            duplicate=settings.duplicate_similarity or defaults.duplicate,
            conflict=settings.conflict_similarity or defaults.conflict,
        )
        decay = settings.decay
        half_lives = {
            Kind.PREFERENCE: decay.preference,
            Kind.PURCHASE: decay.purchase,
            Kind.FACT: decay.fact,
            Kind.EPISODE: decay.episode,
        }
        self.decay_rates: dict[Kind, float] = {
            kind: math.log(2) / days for kind, days in half_lives.items()
        }
        """lambda per kind, per day."""

    # --- scope ---------------------------------------------------------------------
    @asynccontextmanager
    async def _scoped(
        self, user: str | None, *, index: bool = False
    ) -> AsyncIterator[tuple[Conn, int | None]]:
        """A transaction bound to ``user``; id None: an unknown user, who sees nothing.

        ``index``: hold the index's row (shared) and check it is this embedder's.
        """
        name = require_user(user)
        async with self._db.transaction() as conn:
            if index:
                self._check_index(await repo.index_state(conn, lock="share"))
            user_id = await self._users.find(conn, name)
            await repo.enter_scope(conn, user_id)
            yield conn, user_id

    @asynccontextmanager
    async def _writing(
        self, user: str | None, *, index: bool = False
    ) -> AsyncIterator[tuple[Conn, int]]:
        """``_scoped`` for a write: the user is created if new."""
        name = require_user(user)
        async with self._db.transaction() as conn:
            if index:
                self._check_index(await repo.index_state(conn, lock="share"))
            user_id = await self._users.ensure(conn, name)
            await repo.enter_scope(conn, user_id)
            yield conn, user_id

    @asynccontextmanager
    async def scope(self, user: str | None) -> AsyncIterator[Conn]:
        """One transaction in which only ``user``'s memories exist, for queries of
        one's own (recall, tests). No user: ``MemoryUserRequiredError``."""
        async with self._scoped(user) as (conn, _user_id):
            yield conn

    def _check_index(self, state: IndexState) -> None:
        if state.model != self.embeddings.name or state.dimension != self.embeddings.dimension:
            msg = (
                f"stored memories are embedded with {state.model} ({state.dimension}-d), "
                f"this node embeds with {self.embeddings.name} "
                f"({self.embeddings.dimension}-d): run `appliance memory reindex`"
            )
            raise MemoryIndexMismatchError(msg)

    @property
    def db(self) -> Database:
        return self._db

    async def index_state(self) -> IndexState:
        async with self._db.transaction() as conn:
            return await repo.index_state(conn)

    # --- writing -------------------------------------------------------------------
    async def add(
        self,
        user: str | None,
        text: str,
        *,
        kind: str | Kind,
        importance: int = 5,
        source: str | MemorySource = MemorySource.MANUAL,
        source_ref: str | None = None,
        now: dt.datetime | None = None,
    ) -> WriteResult:
        """``write`` from loose values (CLI arguments, a payload)."""
        draft = MemoryDraft.of(
            text, kind=kind, importance=importance, source=source, source_ref=source_ref
        )
        return await self.write(user, draft, now=now)

    async def write(
        self, user: str | None, draft: MemoryDraft, *, now: dt.datetime | None = None
    ) -> WriteResult:
        """Write one memory through the commit gate, in one transaction.

        Raises ``MemoryInputError`` for the caller's mistakes, ``EmbeddingError`` /
        ``MemoryIndexMismatchError`` / ``StoreError`` for faults; nothing is written
        then. Returns what happened otherwise (a rejection included).
        """
        name = require_user(user)
        prepared = await self.prepare(draft)
        if isinstance(prepared, WriteResult):
            return prepared
        async with self._db.transaction() as conn:
            user_id = await self._users.ensure(conn, name)
            return await self.write_in(conn, user_id, prepared, now=now)

    async def prepare(self, draft: MemoryDraft) -> PreparedWrite | WriteResult:
        """The checks and embeddings of a write, before any transaction: a prepared
        write, or the gate's rejection. Raises as ``write`` does."""
        draft = gate.check_input(draft, self.settings)
        refused = gate.substance(draft.text, self.settings)
        if refused is not None:
            return WriteResult(Outcome.REJECTED, reason=refused[0], detail=refused[1])
        neutral_text = polarity(draft.text).neutral
        texts = [draft.text] if neutral_text == draft.text else [draft.text, neutral_text]
        vectors = await self.embeddings.passages(texts)
        return PreparedWrite(draft, vectors[0], vectors[-1])

    async def write_in(
        self,
        conn: Conn,
        user_id: int,
        prepared: PreparedWrite,
        *,
        now: dt.datetime | None = None,
        replaces: int | None = None,
    ) -> WriteResult:
        """A prepared write inside the caller's transaction (``conn``, as the node's
        login role; left so when this returns). ``replaces``: a memory of the user's
        that the new one supersedes whatever the gate decides (an edit)."""
        self._check_index(await repo.index_state(conn, lock="share"))
        return await self._in_scope(
            conn, user_id, lambda: self._gated(conn, user_id, prepared, now, replaces)
        )

    @staticmethod
    async def _in_scope(conn: Conn, user_id: int, work: Callable[[], Awaitable[T]]) -> T:
        """``work`` as the memory role bound to ``user_id``, back to the login role after
        (on an error the transaction is rolled back anyway: nothing to leave)."""
        await repo.enter_scope(conn, user_id)
        result = await work()
        await repo.leave_scope(conn)
        return result

    async def _gated(
        self,
        conn: Conn,
        user_id: int,
        prepared: PreparedWrite,
        now: dt.datetime | None,
        replaces: int | None,
    ) -> WriteResult:
        draft, embedding, neutral = prepared
        await repo.lock_user(conn, user_id)
        near = await repo.neighbours(
            conn, user_id, draft.kind, embedding=embedding, neutral=neutral, limit=NEIGHBOURS
        )
        if replaces is not None:
            near = [n for n in near if n.id != replaces]
        candidates = gate.contradiction_candidates(draft.text, near, self.thresholds)
        statement = await self._statement_similarity(draft.text, neutral, candidates)
        decision = gate.decide(draft.text, near, self.thresholds, statement)
        superseded = [*decision.supersede, *([replaces] if replaces is not None else [])]
        if decision.reinforce is not None:
            await repo.reinforce(
                conn, user_id, [decision.reinforce], rates=self.decay_rates,
                boost=self.settings.reinforce_boost, max_strength=self.settings.max_strength,
                accessed=False, importance=draft.importance, now=now,
            )  # fmt: skip
            if superseded:
                await repo.supersede(conn, user_id, superseded, decision.reinforce, now)
            return WriteResult(
                Outcome.REINFORCED,
                decision.reinforce,
                tuple(superseded),
                similarity=decision.similarity,
            )
        recent = await repo.count_recent(conn, user_id, now)
        if recent >= self.settings.daily_cap:
            return WriteResult(
                Outcome.REJECTED,
                reason=RejectReason.DAILY_CAP,
                detail=f"{recent} memories added in the last 24 hours "
                f"(at most {self.settings.daily_cap})",
            )
        new_id = await repo.insert(
            conn, user_id, draft, embedding=embedding, model=self.embeddings.name, now=now
        )
        if superseded:
            await repo.supersede(conn, user_id, superseded, new_id, now)
            return WriteResult(
                Outcome.SUPERSEDED, new_id, tuple(superseded), similarity=decision.similarity
            )
        return WriteResult(Outcome.INSERTED, new_id)

    async def edit(
        self,
        user: str | None,
        memory_id: int,
        *,
        text: str | None = None,
        importance: int | None = None,
        now: dt.datetime | None = None,
    ) -> Edit:
        """Change one of the user's active memories, in one transaction (see ``edit_in``)."""
        name = require_user(user)
        prepared = None
        if text is not None:
            checked = await self.prepare(MemoryDraft(text, Kind.FACT, importance or 5))
            if isinstance(checked, WriteResult):  # refused by the gate: nothing changes
                return Edit(found=True, result=checked)
            prepared = checked
        async with self._db.transaction() as conn:
            user_id = await self._users.find(conn, name)
            if user_id is None:
                return Edit(found=False)
            return await self.edit_in(conn, user_id, memory_id, prepared, importance, now=now)

    async def edit_in(
        self,
        conn: Conn,
        user_id: int,
        memory_id: int,
        prepared: PreparedWrite | None,
        importance: int | None,
        *,
        now: dt.datetime | None = None,
    ) -> Edit:
        """New text (written through the gate, keeping the old memory's kind; the old
        one is superseded, kept as history) and/or a new importance, inside the
        caller's transaction. A superseded or another user's memory is not found."""
        old = await self.get_in(conn, user_id, memory_id)
        if old is None or not old.active:
            return Edit(found=False)
        if prepared is None:
            if importance is None or importance == old.importance:
                return Edit(found=True, old=old)
            await self.set_importance_in(conn, user_id, old.id, importance)
            return Edit(found=True, old=old, importance=importance)
        draft = dataclasses.replace(
            prepared.draft, kind=old.kind, importance=importance or old.importance
        )
        result = await self.write_in(
            conn, user_id, prepared._replace(draft=draft), now=now, replaces=old.id
        )
        return Edit(found=True, old=old, result=result, importance=draft.importance)

    async def get_in(self, conn: Conn, user_id: int, memory_id: int) -> Memory | None:
        """One of the user's memories, inside the caller's transaction."""
        return await self._in_scope(conn, user_id, lambda: repo.get(conn, user_id, memory_id))

    async def delete_in(self, conn: Conn, user_id: int, memory_id: int) -> bool:
        return await self._in_scope(conn, user_id, lambda: repo.delete(conn, user_id, memory_id))

    async def set_importance_in(
        self, conn: Conn, user_id: int, memory_id: int, importance: int
    ) -> bool:
        """New importance for an active memory; False when there is none."""
        return await self._in_scope(
            conn, user_id, lambda: repo.set_importance(conn, user_id, memory_id, importance)
        )

    async def _statement_similarity(
        self, text: str, neutral: Vector, candidates: Sequence[Neighbour]
    ) -> dict[int, float]:
        found, to_embed = gate.statement_similarities(text, candidates)
        if to_embed:
            vectors = await self.embeddings.passages(list(to_embed.values()))
            for memory_id, vector in zip(to_embed, vectors, strict=True):
                found[memory_id] = float(np.dot(vector, neutral))
        return found

    async def reinforce(
        self, user: str | None, ids: Sequence[int], *, now: dt.datetime | None = None
    ) -> list[int]:
        """Strengthen memories a retrieval returned (decay to now, then add the boost,
        capped at ``max_strength``; last accessed and reinforced: now). Returns the ids
        that were reinforced: the user's active memories among ``ids``."""
        if not ids:
            return []
        async with self._scoped(user) as (conn, user_id):
            if user_id is None:
                return []
            return await repo.reinforce(
                conn, user_id, ids, rates=self.decay_rates, boost=self.settings.reinforce_boost,
                max_strength=self.settings.max_strength, accessed=True, importance=None,
                now=now,
            )  # fmt: skip

    async def delete(self, user: str | None, memory_id: int) -> bool:
        """Delete one of the user's memories for good; False if there is none."""
        async with self._scoped(user) as (conn, user_id):
            if user_id is None:
                return False
            return await repo.delete(conn, user_id, memory_id)

    # --- reading -------------------------------------------------------------------
    async def get(self, user: str | None, memory_id: int) -> Memory | None:
        async with self._scoped(user) as (conn, user_id):
            return None if user_id is None else await repo.get(conn, user_id, memory_id)

    async def list_memories(
        self,
        user: str | None,
        *,
        kind: str | Kind | None = None,
        include_superseded: bool = False,
        limit: int = 100,
    ) -> list[Memory]:
        """Newest first."""
        wanted = Kind.parse(kind) if kind is not None else None
        _check_limit(limit)
        async with self._scoped(user) as (conn, user_id):
            if user_id is None:
                return []
            return await repo.list_memories(
                conn, user_id, kind=wanted, include_superseded=include_superseded, limit=limit
            )

    async def search_vector(
        self, user: str | None, query_embedding: Vector, max_distance: float, limit: int
    ) -> list[Hit]:
        """The user's active memories nearest ``query_embedding`` (HNSW, cosine), at a
        cosine distance of at most ``max_distance``, nearest first. Does not reinforce."""
        _check_limit(limit)
        if not 0.0 <= max_distance <= 2.0:
            raise MemoryInputError("bad_distance", "max_distance must be 0 to 2")
        vector = np.asarray(query_embedding, dtype=np.float32)
        if vector.shape != (self.embeddings.dimension,):
            msg = f"a query vector of shape {vector.shape}, the index holds "
            raise MemoryInputError("bad_vector", msg + f"{self.embeddings.dimension} dimensions")
        async with self._scoped(user, index=True) as (conn, user_id):
            if user_id is None:
                return []
            await repo.search_options(conn)
            rows = await repo.search_vector(conn, user_id, vector, max_distance, limit)
        return [Hit(memory, distance) for memory, distance in rows]

    async def search_terms(
        self, user: str | None, terms: str | Sequence[str], limit: int
    ) -> list[TermHit]:
        """The user's active memories that hold any of the words of ``terms`` (full text,
        'simple' configuration: no stemming, accents and case ignored), best first."""
        _check_limit(limit)
        query = terms_query(terms)
        async with self._scoped(user) as (conn, user_id):
            if user_id is None or query is None:
                return []
            rows = await repo.search_terms(conn, user_id, query, limit)
        return [TermHit(memory, rank) for memory, rank in rows]

    # --- upkeep --------------------------------------------------------------------
    async def rebuild_profile(self, user: str | None, *, now: dt.datetime | None = None) -> Profile:
        name = require_user(user)
        async with self._writing(name) as (conn, user_id):
            return await self._rebuild_profile(conn, name, user_id, now)

    async def _rebuild_profile(
        self, conn: Conn, name: str, user_id: int, now: dt.datetime | None
    ) -> Profile:
        candidates = await repo.profile_candidates(conn, user_id, PROFILE_CANDIDATES)
        built = build_profile(candidates, self.settings.profile_max_chars)
        when = await repo.save_profile(conn, user_id, built.text, built.memory_ids, now)
        return Profile(name, built.text, built.memory_ids, when)

    async def profile(self, user: str | None) -> Profile | None:
        """The profile as last built (``rebuild_profile``, ``maintain``)."""
        name = require_user(user)
        async with self._scoped(name) as (conn, user_id):
            found = None if user_id is None else await repo.get_profile(conn, user_id)
        if found is None:
            return None
        return Profile(name, found[0], tuple(found[1]), found[2])

    async def maintain(self, *, now: dt.datetime | None = None) -> MaintainReport:
        """Decay every memory of every user to ``now`` and rebuild their profiles:
        one transaction per user."""
        async with self._db.transaction() as conn:
            users = await repo.all_users(conn)
        decayed = 0
        for user_id, name in users:
            async with self._db.transaction() as conn:
                await repo.enter_scope(conn, user_id)
                decayed += await repo.decay(conn, user_id, self.decay_rates, now)
                await self._rebuild_profile(conn, name, user_id, now)
        _LOGGER.info("memory upkeep: %d memories of %d users decayed", decayed, len(users))
        return MaintainReport(users=len(users), decayed=decayed, profiles=len(users))

    async def reindex(
        self,
        *,
        batch_size: int | None = None,
        force: bool = False,
        progress: Callable[[int], None] | None = None,
    ) -> ReindexReport:
        """Re-embed every memory with this store's embedder (see ``reindex``)."""
        from appliance.memory.reindex import reindex

        return await reindex(
            self._db,
            self.embeddings,
            batch_size=batch_size or self.settings.reindex_batch,
            force=force,
            progress=progress,
        )
