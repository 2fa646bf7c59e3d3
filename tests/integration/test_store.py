"""The store: migrations under an advisory lock, outbox survival across restarts."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid
from collections.abc import Iterator

import psycopg
import pytest

from appliance.node import Node
from appliance.settings import Settings
from appliance.store.db import Database
from appliance.store.embedded import EmbeddedPostgres
from appliance.store.migrations import available
from tests.support.client import ha_client
from tests.support.mosquitto import Mosquitto

pytestmark = pytest.mark.integration


@pytest.fixture
def empty_db_url(pg_server: EmbeddedPostgres) -> Iterator[str]:
    name = f"e_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server.admin_url(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield pg_server.admin_url(name)
    with psycopg.connect(pg_server.admin_url(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


async def test_two_nodes_migrating_at_once_apply_each_migration_once(
    empty_db_url: str,
) -> None:
    settings = Settings().db
    first, second = Database(empty_db_url, settings), Database(empty_db_url, settings)
    await asyncio.gather(first.open(), second.open())
    await asyncio.gather(first.close(), second.close())
    third = Database(empty_db_url, settings)
    await third.open()  # and again: nothing to do
    async with third.transaction() as conn:
        cur = await conn.execute("SELECT version FROM schema_migrations ORDER BY version")
        versions = [row[0] for row in await cur.fetchall()]
        cur = await conn.execute("SELECT extname FROM pg_extension ORDER BY extname")
        extensions = {row[0] for row in await cur.fetchall()}
    await third.close()
    assert versions == [m.version for m in available()]
    assert {"vector", "pg_trgm"} <= extensions


async def test_receipts_written_while_no_node_ran_are_published_when_it_starts(
    node_settings: Settings, mosquitto: Mosquitto
) -> None:
    # `appliance say` writes to the database only: its receipt waits in the outbox.
    env = {
        "APPLIANCE_DB__URL": node_settings.db.url.get_secret_value(),  # type: ignore[union-attr]
        "APPLIANCE_DATA_DIR": str(node_settings.data_dir),
        "PATH": "/usr/bin:/bin",
    }
    said = subprocess.run(
        [sys.executable, "-m", "appliance", "say", "add a dozen eggs to the shopping list",
         "--request-id", "offline-1"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert said.returncode == 0, said.stderr
    async with ha_client(mosquitto) as ha:
        instance = Node(node_settings)
        stop = asyncio.Event()
        task = asyncio.create_task(instance.run(stop))
        try:
            await ha.wait_for(lambda: "offline-1" in ha.receipts, timeout=60)
        finally:
            stop.set()
            await asyncio.wait_for(task, 30)
    receipt = ha.receipts["offline-1"]
    assert receipt["status"] == "success" and receipt["source"]["kind"] == "cli"
    assert receipt["items"][0]["quantity"] == 1.0 and receipt["items"][0]["unit"] == "dozen"
