"""The broker's TLS listener (a throwaway CA made with openssl): the node and a
satellite connect with the CA; a client that does not trust it is refused, and no
listener lets an anonymous client in."""

from __future__ import annotations

import asyncio
import gc
import logging
import ssl
import wave
from collections.abc import Iterator
from pathlib import Path

import aiomqtt
import pytest

from appliance.bus.mqtt import Bus, BusConfig
from appliance.errors import BusError
from appliance.node import Node
from appliance.settings import Settings
from satellites.audio import WavInput, WavOutput
from satellites.client import Satellite
from satellites.settings import SatelliteSettings
from tests.support.client import ha_client
from tests.support.mosquitto import USERS, Mosquitto, make_ca

pytestmark = pytest.mark.integration


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[Mosquitto]:
    """The test broker, with its TLS listener as well (overrides conftest's)."""
    broker = Mosquitto(tmp_path / "mosquitto", tls=True)
    broker.start()
    yield broker
    broker.stop(kill=True)


@pytest.fixture
def node_settings(node_settings: Settings, mosquitto: Mosquitto) -> Settings:
    """The conftest node, pointed at the TLS listener with the broker's CA."""
    mqtt = node_settings.mqtt.model_copy(
        update={"url": mosquitto.tls_url, "ca_file": mosquitto.ca_file}
    )
    return node_settings.model_copy(update={"mqtt": mqtt})


def bus_config(broker: Mosquitto, ca_file: Path | None, name: str) -> BusConfig:
    assert broker.tls_port is not None
    return BusConfig(
        host="localhost",
        port=broker.tls_port,
        client_id=name,
        availability_topic="appliance/status",
        subscriptions=[],
        username="appliance",
        password=USERS["appliance"],
        tls=True,
        ca_file=str(ca_file) if ca_file else None,
        reconnect_max_seconds=0.5,
    )


async def test_node_serves_commands_over_tls(node: Node, mosquitto: Mosquitto) -> None:
    assert node.bus is not None
    assert node.bus.config.tls and node.bus.config.port == mosquitto.tls_port
    async with ha_client(mosquitto, tls=True) as ha:
        receipt = await ha.command("shopping.add", {"item": "milk", "quantity": 2}, "tls-1")
        assert receipt["status"] == "success"
        assert [i["name"] for i in receipt["items"]] == ["milk"]
        await ha.wait_for(lambda: ha.retained.get("appliance/status") == b"online")
    # Home Assistant on the plain listener sees the same node.
    async with ha_client(mosquitto) as plain:
        receipt = await plain.command("shopping.add", {"item": "bread"}, "plain-1")
        assert receipt["status"] == "success"


# paho-mqtt (2.2) leaves the TLS socket of a failed handshake for the collector to close.
PAHO_SOCKET_LEAK = "ignore:unclosed <ssl.SSLSocket:ResourceWarning"


@pytest.mark.filterwarnings(PAHO_SOCKET_LEAK)
@pytest.mark.parametrize("trust", ["system", "other_ca"])
async def test_a_client_that_does_not_trust_the_ca_is_refused(
    mosquitto: Mosquitto, tmp_path: Path, caplog: pytest.LogCaptureFixture, trust: str
) -> None:
    ca_file = make_ca(tmp_path / "other", "Some Other CA")[0] if trust == "other_ca" else None
    # A plain client: the handshake fails, and says why.
    context = ssl.create_default_context(cafile=str(ca_file) if ca_file else None)
    with pytest.raises(aiomqtt.MqttError, match="certificate verify failed"):
        async with (
            asyncio.timeout(10),
            aiomqtt.Client(
                "localhost",
                mosquitto.tls_port or 0,
                username="homeassistant",
                password=USERS["homeassistant"],
                tls_context=context,
            ),
        ):
            pass
    # The node's client keeps retrying, with a log line that names the cause.
    bus = Bus(bus_config(mosquitto, ca_file, f"untrusting-{trust}"), lambda _t, _p: None)
    stop = asyncio.Event()
    with caplog.at_level(logging.WARNING, logger="appliance.bus.mqtt"):
        run = asyncio.create_task(bus.run(stop), name="bus")
        async with asyncio.timeout(10):
            while "TLS certificate not trusted" not in caplog.text:
                await asyncio.sleep(0.05)
        assert "CERTIFICATE_VERIFY_FAILED" in caplog.text
        assert "mqtt.ca_file" in caplog.text
        assert not bus.connected.is_set() and bus.connections == 0
        with pytest.raises(BusError, match="not connected"):
            await bus.publish("appliance/status", "online")
        stop.set()
        async with asyncio.timeout(10):
            await run
    assert USERS["appliance"] not in caplog.text
    gc.collect()  # the leaked sockets, while their warning is ignored


@pytest.mark.parametrize("content", [None, b"not a certificate\n"])
async def test_an_unusable_ca_file_is_a_bus_error(
    mosquitto: Mosquitto, tmp_path: Path, content: bytes | None
) -> None:
    ca_file = tmp_path / "ca.crt"
    if content is not None:
        ca_file.write_bytes(content)
    bus = Bus(bus_config(mosquitto, ca_file, "bad-ca-file"), lambda _t, _p: None)
    with pytest.raises(BusError, match="cannot load the MQTT CA certificate"):
        async with asyncio.timeout(10):
            await bus.run(asyncio.Event())


async def test_no_listener_lets_an_anonymous_client_in(mosquitto: Mosquitto) -> None:
    assert mosquitto.ca_file is not None and mosquitto.tls_port is not None
    trusted = ssl.create_default_context(cafile=mosquitto.ca_file)
    attempts: list[tuple[int, ssl.SSLContext | None, str | None]] = [
        (mosquitto.port, None, None),  # plain, anonymous
        (mosquitto.tls_port, trusted, None),  # TLS, anonymous
        (mosquitto.tls_port, trusted, "wrong-password"),
    ]
    for port, context, password in attempts:
        with pytest.raises(aiomqtt.MqttError, match="Not authorized"):
            async with (
                asyncio.timeout(10),
                aiomqtt.Client(
                    "localhost",
                    port,
                    username="homeassistant" if password else None,
                    password=password,
                    tls_context=context,
                ),
            ):
                pass


def silence_wav(path: Path, seconds: float) -> Path:
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(16_000)
        wav.writeframes(bytes(int(seconds * 16_000) * 2))
    return path


async def test_satellite_connects_over_tls(mosquitto: Mosquitto, tmp_path: Path) -> None:
    status = "appliance/satellite/kitchen/status"
    sat = Satellite(
        SatelliteSettings(
            site="kitchen",
            mqtt={
                "url": mosquitto.tls_url,
                "password": USERS["kitchen"],
                "ca_file": mosquitto.ca_file,
            },
            audio={"chimes": False},
        ),
        WavInput(silence_wav(tmp_path / "quiet.wav", 1.0), tail_s=60),
        WavOutput(tmp_path / "out.wav"),
    )
    assert sat.bus.config.tls
    async with ha_client(mosquitto, user="appliance", tls=True) as monitor:
        await monitor.client.subscribe(status, qos=1)

        def last_status() -> bytes | None:
            found = [p for t, p in monitor.messages if t == status]
            return found[-1] if found else None

        stop = asyncio.Event()
        run = asyncio.create_task(sat.run(stop), name="satellite")
        try:
            await monitor.wait_for(lambda: last_status() == b"online", timeout=20)
        finally:
            stop.set()
            async with asyncio.timeout(20):
                await run
        await monitor.wait_for(lambda: last_status() == b"offline", timeout=10)
