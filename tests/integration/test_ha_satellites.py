"""Satellites as Home Assistant devices, published by the node; announcements the node
cannot speak (voice off). A real mosquitto with the shipped ACL, a real node."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from appliance.node import Node
from appliance.protocol.voice import SatelliteInfo
from appliance.settings import Settings
from tests.support.client import HaClient, ha_client
from tests.support.mosquitto import Mosquitto
from tests.support.satellite import satellite

pytestmark = pytest.mark.integration

KITCHEN = SatelliteInfo(site="kitchen", name="Kitchen", area="Kitchen", sw_version="0.1.0")


def _config_topic(node: Node, site: str) -> str:
    return f"homeassistant/device/{node.settings.node_id}_satellite_{site}/config"


def _configs(ha: HaClient, topic: str) -> list[bytes]:
    return [p for t, p in ha.messages if t == topic]


async def test_a_satellite_that_says_what_it_is_becomes_a_device(
    node: Node, mosquitto: Mosquitto
) -> None:
    topic = _config_topic(node, "kitchen")
    async with ha_client(mosquitto) as ha, satellite(mosquitto, "kitchen", info=KITCHEN) as sat:
        await ha.wait_for(lambda: topic in ha.retained)
        config = json.loads(ha.retained[topic])
        assert config["device"]["name"] == "Kitchen"
        assert config["device"]["via_device"] == node.settings.node_id
        assert config["device"]["suggested_area"] == "Kitchen"
        platforms = {c["platform"] for c in config["components"].values()}
        assert platforms == {"switch", "number", "binary_sensor", "button", "sensor", "notify"}
        assert config["components"]["mute"]["command_topic"] == sat.topics.set("mute")
        assert [a["topic"] for a in config["availability"]] == [
            sat.topics.status,
            "appliance/status",
        ]
        # a new name is published again
        renamed = KITCHEN.model_copy(update={"name": "Cozinha"})
        await sat.announce_self(renamed)
        await ha.wait_for(lambda: json.loads(ha.retained[topic])["device"]["name"] == "Cozinha")
        # so is everything when Home Assistant comes back
        count = len(_configs(ha, topic))
        await ha.client.publish("homeassistant/status", b"online", qos=1)
        await ha.wait_for(lambda: len(_configs(ha, topic)) > count)
        assert json.loads(_configs(ha, topic)[-1])["device"]["name"] == "Cozinha"
        # a satellite that clears its info is removed
        await sat.client.publish(sat.topics.info, b"", qos=1, retain=True)
        await ha.wait_for(lambda: _configs(ha, topic)[-1] == b"")
    # nothing retained is left for Home Assistant to find after a restart
    async with ha_client(mosquitto) as fresh:
        await fresh.wait_for(lambda: f"homeassistant/device/{node.settings.node_id}/config"
                             in fresh.retained)  # fmt: skip
        await asyncio.sleep(0.3)
        assert topic not in fresh.retained


async def test_a_satellite_is_published_when_the_node_starts_after_it(
    node_settings: Settings, mosquitto: Mosquitto
) -> None:
    # The satellite's info is retained: a node started later finds it.
    async with (
        satellite(mosquitto, "kitchen", info=KITCHEN),
        ha_client(mosquitto) as ha,
        _running(node_settings) as node,
    ):
        topic = _config_topic(node, "kitchen")
        await ha.wait_for(lambda: topic in ha.retained)
        assert json.loads(ha.retained[topic])["device"]["name"] == "Kitchen"


async def test_no_satellite_device_without_discovery(
    node_settings: Settings, mosquitto: Mosquitto
) -> None:
    settings = node_settings.model_copy(
        update={
            "homeassistant": node_settings.homeassistant.model_copy(update={"discovery": False})
        }
    )
    async with (
        satellite(mosquitto, "kitchen", info=KITCHEN),
        ha_client(mosquitto) as ha,
        _running(settings) as node,
    ):
        await ha.client.subscribe("appliance/announce", qos=1)
        # an announcement for the kitchen shows the node knows the satellite by now
        await ha.client.publish("appliance/ha/announce/kitchen", b"Hello", qos=1)
        await ha.wait_for(lambda: _announced(ha) != [])
        assert not [t for t in ha.retained if t.startswith("homeassistant/device/")]
        assert _config_topic(node, "kitchen") not in ha.retained


async def test_without_voice_announcements_are_published_for_satellites_to_show(
    node: Node, mosquitto: Mosquitto, caplog: pytest.LogCaptureFixture
) -> None:
    async with (
        satellite(mosquitto, "kitchen", info=KITCHEN) as sat,
        ha_client(mosquitto) as ha,
    ):
        await ha.client.subscribe("appliance/announce", qos=1)
        await ha.wait_for(lambda: _config_topic(node, "kitchen") in ha.retained)
        with caplog.at_level(logging.WARNING):
            await ha.client.publish("appliance/ha/announce/nowhere", b"Lost", qos=1)
            await ha.client.publish("appliance/ha/announce/kitchen", b"Dinner is ready", qos=1)
            await ha.client.publish("appliance/ha/announce", b"Bedtime", qos=1)
            await ha.wait_for(lambda: len(_announced(ha)) == 2)
            await asyncio.sleep(0.3)
        assert _announced(ha) == [
            {"text": "Dinner is ready", "site": "kitchen"},
            {"text": "Bedtime", "site": None},
        ]
        assert "unknown satellite 'nowhere'" in caplog.text
        assert "voice disabled" in caplog.text
        assert sat.controls == []  # nothing spoken


def _announced(ha: HaClient) -> list[dict[str, Any]]:
    return [json.loads(p) for t, p in ha.messages if t == "appliance/announce"]


@contextlib.asynccontextmanager
async def _running(settings: Settings) -> AsyncIterator[Node]:
    """A node running for the duration of an ``async with`` (started after the test's
    satellites, unlike the ``node`` fixture)."""
    node = Node(settings)
    stop = asyncio.Event()
    task = asyncio.create_task(node.run(stop), name="node")
    try:
        async with asyncio.timeout(60):
            await node.ready.wait()
        yield node
    finally:
        stop.set()
        async with asyncio.timeout(30):
            await task
