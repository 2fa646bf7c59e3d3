"""Several nodes on one mosquitto and one PostgreSQL: commands are split between them
through a shared subscription, each runs once and gets one receipt; a node killed
outright leaves the others serving (and saying so); a voice session runs on one node."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import psycopg
import pytest

import appliance.node
from appliance.node import Node
from appliance.settings import Settings
from appliance.voice.turn import Engines
from tests.support import speech
from tests.support.client import HaClient, ha_client
from tests.support.mosquitto import Mosquitto
from tests.support.node import NODE_READY
from tests.support.satellite import satellite

pytestmark = [pytest.mark.integration]

GROUP = "appliance"


def _member(settings: Settings, name: str, *, voice: bool = False) -> Settings:
    return settings.model_copy(
        update={
            "node_id": f"{settings.node_id}-{name}",
            "data_dir": settings.data_dir.with_name(f"node-{name}"),
            "mqtt": settings.mqtt.model_copy(update={"shared_group": GROUP}),
            "homeassistant": settings.homeassistant.model_copy(
                update={"device_id": settings.node_id}
            ),
            "voice": settings.voice.model_copy(update={"enabled": voice}),
        }
    )


@contextlib.asynccontextmanager
async def running(*settings: Settings) -> AsyncIterator[list[Node]]:
    nodes = [Node(s) for s in settings]
    stop = asyncio.Event()
    tasks = [asyncio.create_task(n.run(stop), name=n.settings.node_id) for n in nodes]
    try:
        async with asyncio.timeout(60):
            for node in nodes:
                await node.ready.wait()
        yield nodes
    finally:
        stop.set()
        async with asyncio.timeout(30):
            await asyncio.gather(*tasks)


def _count(db_url: str, sql: str) -> int:
    with psycopg.connect(db_url) as conn:
        row = conn.execute(sql).fetchone()  # type: ignore[arg-type]
    assert row is not None
    return int(row[0])


async def test_commands_are_split_and_each_runs_once(
    node_settings: Settings, mosquitto: Mosquitto, db_url: str
) -> None:
    members = (_member(node_settings, "a"), _member(node_settings, "b"))
    async with running(*members) as nodes, ha_client(mosquitto) as ha:
        await ha.client.subscribe("appliance/receipts", qos=1)
        sent = [ha.command("shopping.add", {"item": f"item {i}"}, timeout=30) for i in range(60)]
        answers = await asyncio.gather(*sent)
        # the same request again, to whichever node: the first receipt, no new row
        again = await ha.command(
            "shopping.add", {"item": "item 0"}, request_id=answers[0]["request_id"]
        )
        await asyncio.sleep(1.0)
        stream = collections.Counter(r["request_id"] for r in ha.stream if not r.get("duplicate"))
    assert all(a["status"] == "success" for a in answers)
    assert again["duplicate"] is True
    assert _count(db_url, "SELECT count(*) FROM shopping_items") == 60
    # each receipt reached the receipts topic once (outbox rows locked while published)
    assert {rid: n for rid, n in stream.items() if n != 1} == {}
    assert len(stream) == 60
    handled = [n.commands_handled for n in nodes]
    assert sum(handled) == 61
    assert min(handled) > 0, handled  # both took a share


def _spawn(settings: Settings, log: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("APPLIANCE_")}
    assert settings.db.url is not None and settings.mqtt.password is not None
    env.update(
        APPLIANCE_DATA_DIR=str(settings.data_dir),
        APPLIANCE_NODE_ID=settings.node_id,
        APPLIANCE_DB__URL=settings.db.url.get_secret_value(),
        APPLIANCE_MQTT__URL=str(settings.mqtt.url),
        APPLIANCE_MQTT__USERNAME="appliance",
        APPLIANCE_MQTT__PASSWORD=settings.mqtt.password.get_secret_value(),
        APPLIANCE_MQTT__KEEPALIVE="5",
        APPLIANCE_MQTT__SHARED_GROUP=GROUP,
        APPLIANCE_VOICE__ENABLED="false",
    )
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "appliance", "run"], env=env, stdout=out,
            stderr=subprocess.STDOUT,
        )  # fmt: skip


@pytest.fixture
def spawned() -> Iterator[list[subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def _statuses(ha: HaClient) -> list[bytes]:
    return [p for t, p in ha.messages if t == "appliance/status"]


async def test_a_killed_node_leaves_the_others_serving(
    node_settings: Settings,
    mosquitto: Mosquitto,
    db_url: str,
    tmp_path: Path,
    spawned: list[subprocess.Popen[bytes]],
) -> None:
    log = tmp_path / "killed.log"
    proc = _spawn(_member(node_settings, "killed"), log)
    spawned.append(proc)
    async with asyncio.timeout(90):
        while not NODE_READY.search(log.read_bytes()):
            assert proc.poll() is None, log.read_text(errors="replace")[-3000:]
            await asyncio.sleep(0.1)
    async with (
        running(_member(node_settings, "survivor")) as (survivor,),
        ha_client(mosquitto) as ha,
    ):
        await ha.client.subscribe("appliance/status", qos=1)
        before = await asyncio.gather(
            *(ha.command("shopping.add", {"item": f"before {i}"}) for i in range(20))
        )
        proc.kill()  # no goodbye: the broker publishes its last will
        await ha.wait_for(lambda: b"offline" in _statuses(ha), 30)
        # the survivor says it still serves
        await ha.wait_for(lambda: _statuses(ha)[-1] == b"online", 10)
        later = [ha.command("shopping.add", {"item": f"after {i}"}, timeout=30) for i in range(20)]
        after = await asyncio.gather(*later)
    assert all(r["status"] == "success" for r in before + after)
    assert _count(db_url, "SELECT count(*) FROM shopping_items") == 40
    assert survivor.commands_handled >= 20


async def test_a_voice_session_runs_on_one_node(
    node_settings: Settings,
    mosquitto: Mosquitto,
    db_url: str,
    voice_engines: Engines,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(appliance.node, "load_voice_engines", lambda _settings: voice_engines)
    members = (_member(node_settings, "a", voice=True), _member(node_settings, "b", voice=True))
    async with running(*members) as nodes:
        async with asyncio.timeout(60):
            while not all(n.voice is not None and n.voice.is_ready for n in nodes):
                await asyncio.sleep(0.05)
        audio = speech.pad(speech.piper("add three apples to my shopping list"), 300, 1500)
        async with ha_client(mosquitto) as ha, satellite(mosquitto) as sat:
            await ha.client.subscribe("appliance/receipts", qos=1)
            session_id = await sat.claim()
            await sat.wait("accept")
            await sat.stream(session_id, audio)
            await sat.wait("end", timeout=60)
            await asyncio.sleep(1.0)
    accepts = [c for c in sat.controls if c.type == "accept"]
    assert [c.session_id for c in accepts] == [session_id]
    assert not [c for c in sat.controls if c.type in ("reject", "stand_down")]
    owners = [n for n in nodes if any(r.receipts or r.speech for r in n.voice.results)]  # type: ignore[union-attr]
    assert len(owners) == 1
    with psycopg.connect(db_url) as conn:
        rows = conn.execute("SELECT session_id, node_id FROM voice_sessions").fetchall()
    assert rows == [(session_id, owners[0].settings.node_id)]
    # one turn, so at most one change and one receipt for it
    turn_receipts = [r for r in ha.stream if r["source"]["kind"] == "voice"]
    assert len(turn_receipts) == 1, json.dumps(turn_receipts)
