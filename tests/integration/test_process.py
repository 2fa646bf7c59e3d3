"""The ``appliance`` process as a user runs it: embedded defaults, signals, last will."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import aiomqtt
import pytest

from tests.support.mosquitto import USERS, Mosquitto, free_port
from tests.support.node import NODE_READY

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("APPLIANCE_")}
    env.update(extra)
    return env


@pytest.fixture
def spawned() -> Iterator[list[subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


async def _wait_ready(proc: subprocess.Popen[bytes], log: Path, timeout: float = 90) -> None:
    async with asyncio.timeout(timeout):
        while not NODE_READY.search(log.read_bytes()):
            if proc.poll() is not None:
                raise AssertionError(f"node exited: {log.read_text(errors='replace')[-3000:]}")
            await asyncio.sleep(0.1)


async def test_embedded_defaults_start_serve_and_stop_cleanly(
    tmp_path: Path, spawned: list[subprocess.Popen[bytes]]
) -> None:
    data = tmp_path / "data"
    port = free_port()
    log = tmp_path / "node.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "appliance", "--data-dir", str(data), "run"],
            env=_env(APPLIANCE_MQTT__EMBEDDED_PORT=str(port)),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    spawned.append(proc)
    await _wait_ready(proc, log)
    async with aiomqtt.Client("127.0.0.1", port) as client:
        await client.subscribe("appliance/receipts/#", qos=1)
        await client.publish(
            "appliance/cmd/shopping/add",
            json.dumps({"request_id": "smoke-1", "item": "milk", "quantity": 1}),
            qos=1,
        )
        async with asyncio.timeout(20):
            async for message in client.messages:
                if message.topic.value == "appliance/receipts/smoke-1":
                    receipt = json.loads(message.payload)  # type: ignore[arg-type]
                    break
    assert receipt["status"] == "success"
    proc.send_signal(signal.SIGTERM)
    assert await asyncio.to_thread(proc.wait, 60) == 0
    # Its own PostgreSQL stopped with it; the data stays for the next start.
    assert not (data / "postgres" / "postmaster.pid").exists()
    assert (data / "postgres" / "PG_VERSION").exists()
    assert (data / "logs" / "appliance.log").exists()


async def test_killed_node_is_reported_offline_by_its_last_will(
    tmp_path: Path, mosquitto: Mosquitto, db_url: str, spawned: list[subprocess.Popen[bytes]]
) -> None:
    log = tmp_path / "node.log"
    env = _env(
        APPLIANCE_DATA_DIR=str(tmp_path / "node"),
        APPLIANCE_DB__URL=db_url,
        APPLIANCE_MQTT__URL=mosquitto.url,
        APPLIANCE_MQTT__USERNAME="appliance",
        APPLIANCE_MQTT__PASSWORD=USERS["appliance"],
        APPLIANCE_MQTT__KEEPALIVE="5",
    )
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "appliance", "run"], env=env, stdout=out,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    spawned.append(proc)
    await _wait_ready(proc, log)
    async with aiomqtt.Client(
        "127.0.0.1", mosquitto.port, username="homeassistant", password=USERS["homeassistant"]
    ) as client:
        await client.subscribe("appliance/status", qos=1)
        statuses: list[bytes] = []
        async with asyncio.timeout(10):
            async for message in client.messages:
                statuses.append(bytes(message.payload))  # type: ignore[arg-type]
                break
        assert statuses == [b"online"]
        proc.kill()
        async with asyncio.timeout(20):
            async for message in client.messages:
                statuses.append(bytes(message.payload))  # type: ignore[arg-type]
                break
        assert statuses == [b"online", b"offline"]
    # The password never reaches the log.
    assert USERS["appliance"] not in log.read_text(errors="replace")
