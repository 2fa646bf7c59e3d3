"""The node's logs never hold a secret nor what a user said: one whole run of the
``appliance`` process (its stdout, stderr and log files) is scanned for planted
passwords and sentences after commands, bad payloads, a refused client and a broker
restart. Transcript logging is off (the default)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import aiomqtt
import pytest

from tests.support.client import ha_client
from tests.support.mosquitto import USERS, Mosquitto
from tests.support.node import NODE_READY

pytestmark = [pytest.mark.integration, pytest.mark.slow]

DB_PASSWORD = "Dbpl4ntedXq7zzvPass"
WRONG_PASSWORD = "Wr0ngPl4ntedBrokerPass"
ODD_ITEM = "quokkaberries"
UNDERSTOOD = f"add seven {ODD_ITEM} to the shopping list"
NOT_UNDERSTOOD = "tell aunt philomena that the zebra quilt hides the spare key"
MALFORMED_SENTENCE = "my bank pin is under the marmalade jar"
ANNOUNCEMENT = "the plumber called about the leaking cistern in flat nine"
CONNECTED = re.compile(rb"connected to MQTT broker ")


def with_password(dsn: str, password: str) -> str:
    parts = urlsplit(dsn)
    user, _, host = parts.netloc.rpartition("@")
    return parts._replace(netloc=f"{user}:{password}@{host}").geturl()


@pytest.fixture
def node_process(
    tmp_path: Path, mosquitto: Mosquitto, db_url: str
) -> Iterator[tuple[subprocess.Popen[bytes], Path, str]]:
    """The node as a user runs it; its stdout and stderr go to one file."""
    dsn = with_password(db_url, DB_PASSWORD)
    env = {k: v for k, v in os.environ.items() if not k.startswith("APPLIANCE_")}
    env.update(
        APPLIANCE_DATA_DIR=str(tmp_path / "node"),
        APPLIANCE_DB__URL=dsn,
        APPLIANCE_MQTT__URL=mosquitto.url,
        APPLIANCE_MQTT__USERNAME="appliance",
        APPLIANCE_MQTT__PASSWORD=USERS["appliance"],
        APPLIANCE_MQTT__RECONNECT_MAX_SECONDS="1",
        APPLIANCE_LOG_LEVEL="DEBUG",
        APPLIANCE_LOG_TRANSCRIPTS="false",
        APPLIANCE_VOICE__ENABLED="false",  # no voice turn: the models take a while to load
    )
    output = tmp_path / "node.out"
    with output.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "appliance", "run"], env=env, stdout=out,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    yield proc, output, dsn
    if proc.poll() is None:
        proc.kill()
        proc.wait(10)


async def until_logged(
    proc: subprocess.Popen[bytes], output: Path, pattern: re.Pattern[bytes], count: int = 1
) -> None:
    async with asyncio.timeout(60):
        while len(pattern.findall(output.read_bytes())) < count:
            if proc.poll() is not None:
                raise AssertionError(f"node exited: {output.read_text(errors='replace')[-3000:]}")
            await asyncio.sleep(0.05)


async def drive(mosquitto: Mosquitto) -> None:
    """Everything a household does that could end up in a log line."""
    async with ha_client(mosquitto) as ha:
        await ha.client.subscribe("appliance/receipts", qos=1)
        added = await ha.command("shopping.add", {"item": ODD_ITEM, "user": "ana"}, "s-1")
        assert added["status"] == "success"
        understood = await ha.command("text", {"text": UNDERSTOOD}, "t-1")
        assert understood["status"] == "success"
        assert ODD_ITEM in json.dumps(understood["items"])
        refused = await ha.command("text", {"text": NOT_UNDERSTOOD}, "t-2")
        assert refused["status"] != "success"
        bad_field = await ha.command(
            "shopping.add", {"item": ODD_ITEM, "quantity": MALFORMED_SENTENCE}, "m-1"
        )
        assert bad_field["reason"].startswith("invalid_payload")
        bad_text = await ha.command("text", {"text": MALFORMED_SENTENCE, "lang": "xx"}, "m-2")
        assert bad_text["reason"].startswith("unsupported_language")
        # Not JSON at all, so no request id: the receipt goes to the stream only.
        await ha.client.publish(
            "appliance/cmd/text", f'{{"text": "{MALFORMED_SENTENCE}'.encode(), qos=1
        )
        await ha.client.publish("appliance/ha/shopping/add", ODD_ITEM.encode(), qos=1)
        await ha.client.publish("appliance/ha/announce", ANNOUNCEMENT.encode(), qos=1)

        def reasons(kind: str) -> list[str]:
            return [r["reason"] or r["status"] for r in ha.stream if r["source"]["kind"] == kind]

        await ha.wait_for(lambda: any(r.startswith("invalid_json") for r in reasons("mqtt")))
        await ha.wait_for(lambda: bool(reasons("ha")))
    with pytest.raises(aiomqtt.MqttError, match="Not authorized"):
        async with (
            asyncio.timeout(10),
            aiomqtt.Client(
                "127.0.0.1", mosquitto.port, username="homeassistant", password=WRONG_PASSWORD
            ),
        ):
            pass


async def test_a_whole_run_logs_no_secret_and_no_user_text(
    node_process: tuple[subprocess.Popen[bytes], Path, str],
    mosquitto: Mosquitto,
    tmp_path: Path,
) -> None:
    proc, output, dsn = node_process
    await until_logged(proc, output, NODE_READY)
    await drive(mosquitto)
    # The broker goes away and comes back: the node reconnects (and says so).
    mosquitto.stop()
    mosquitto.start()
    await until_logged(proc, output, CONNECTED, count=2)
    async with ha_client(mosquitto) as ha:
        again = await ha.command("text", {"text": UNDERSTOOD}, "t-3")
        assert again["status"] == "success"
    proc.send_signal(signal.SIGTERM)
    assert await asyncio.to_thread(proc.wait, 30) == 0

    log_files = sorted((tmp_path / "node" / "logs").glob("appliance.log*"))
    assert log_files
    logs = {path.name: path.read_text(errors="replace") for path in [output, *log_files]}
    everything = "\n".join(logs.values())
    # The scan saw the run: startup, the refusals, the reconnection, the shutdown.
    for expected in ("ready in", "rejected command", "MQTT connection lost", "DEBUG"):
        assert expected in everything, expected
    planted = {
        "database password": DB_PASSWORD,
        "database URL": dsn,
        "MQTT password": USERS["appliance"],
        "wrong MQTT password": WRONG_PASSWORD,
        "understood text command": UNDERSTOOD,
        "text command not understood": NOT_UNDERSTOOD,
        "malformed payload's text": MALFORMED_SENTENCE,
        "announcement": ANNOUNCEMENT,
    }
    leaks = [
        f"{what} in {name}: {line.strip()[:200]}"
        for name, text in logs.items()
        for line in text.splitlines()
        for what, secret in planted.items()
        if secret.lower() in line.lower()
    ]
    assert not leaks, "\n".join(leaks)
    broker_log = (mosquitto.workdir / "mosquitto.log").read_text(errors="replace")
    assert WRONG_PASSWORD not in broker_log and USERS["appliance"] not in broker_log


@pytest.mark.parametrize(
    ("program", "env", "expected"),
    [
        pytest.param(
            "appliance",
            {"APPLIANCE_MQTT__URL": f"mqtt://appliance:{WRONG_PASSWORD}@127.0.0.1:1883"},
            "mqtt.url must not hold credentials",
            id="mqtt-url-with-password",
        ),
        pytest.param(
            "appliance",
            {"APPLIANCE_DB__URI": f"postgresql://appliance:{DB_PASSWORD}@db.lan/appliance"},
            "db.uri: Extra inputs are not permitted",
            id="db-url-under-a-misspelt-key",
        ),
        pytest.param(
            "appliance",
            {
                "APPLIANCE_DB__URL": f"postgresql://appliance:{DB_PASSWORD}@127.0.0.1:1/app",
                "APPLIANCE_DB__CONNECT_TIMEOUT": "0.5",
                "APPLIANCE_MQTT__URL": "mqtt://127.0.0.1:1",
                "APPLIANCE_VOICE__ENABLED": "false",
                "APPLIANCE_LOG_LEVEL": "DEBUG",
            },
            "database not reachable",
            id="database-down",
        ),
        pytest.param(
            "satellites",
            {"SATELLITE_MQTT__URL": f"mqtt://kitchen:{WRONG_PASSWORD}@127.0.0.1:1883"},
            "mqtt.url must not hold credentials",
            id="satellite-mqtt-url-with-password",
        ),
    ],
)
def test_a_refused_start_does_not_repeat_the_secret(
    tmp_path: Path, program: str, env: dict[str, str], expected: str
) -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("APPLIANCE_", "SATELLITE_"))}
    args = ["--data-dir", str(tmp_path / "node"), "run"] if program == "appliance" else []
    result = subprocess.run(
        [sys.executable, "-m", program, *args],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    logs = [result.stdout, result.stderr]
    logs += [p.read_text() for p in (tmp_path / "node" / "logs").glob("appliance.log*")]
    everything = "\n".join(logs)
    assert result.returncode != 0
    assert expected in everything
    for secret in (DB_PASSWORD, WRONG_PASSWORD):
        assert secret not in everything
