"""Home Assistant device discovery of a satellite, published by the node."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from appliance.ha.discovery import DeviceInfo, encode_payload, node_discovery
from appliance.ha.satellites import (
    LAST_RECEIPT_ATTRIBUTES_TEMPLATE,
    LAST_RECEIPT_VALUE_TEMPLATE,
    LAST_TRANSCRIPT_ATTRIBUTES_TEMPLATE,
    LAST_TRANSCRIPT_VALUE_TEMPLATE,
    SATELLITE_MODEL,
    satellite_device_id,
    satellite_discovery,
)
from appliance.protocol.topics import Topics
from appliance.protocol.voice import SatelliteInfo, SatelliteState, SiteTopics
from tests.unit.test_ha_discovery import ROOT_KEYS, _render

NODE = DeviceInfo(device_id="appliance", name="Appliance", sw_version="1.2.3")
TOPICS = Topics(prefix="home1")
INFO = SatelliteInfo(
    site="living-room",
    name="Living room",
    area="Living Room",
    wake_words=("hey_jarvis",),
    lang="en",
    sw_version="0.4.0",
)
SITE = SiteTopics("home1", "living-room")
PLATFORMS = {
    "mute": "switch",
    "volume": "number",
    "listening": "binary_sensor",
    "stop": "button",
    "last_transcript": "sensor",
    "last_receipt": "sensor",
    "announce": "notify",
}


def _payload(info: SatelliteInfo = INFO) -> dict[str, Any]:
    return satellite_discovery(NODE, info, TOPICS)[1]


def _one(component_id: str) -> dict[str, Any]:
    component: dict[str, Any] = _payload()["components"][component_id]
    return component


def test_topic_is_a_device_discovery_topic_of_its_own() -> None:
    topic, _ = satellite_discovery(NODE, INFO, TOPICS)
    assert topic == "homeassistant/device/appliance_satellite_living-room/config"
    assert topic != node_discovery(NODE, TOPICS)[0]
    assert satellite_device_id("appliance", "living-room") == "appliance_satellite_living-room"


def test_root_has_only_keys_home_assistant_accepts() -> None:
    payload = _payload()
    assert set(payload) <= ROOT_KEYS
    assert {"device", "origin", "components"} <= set(payload)
    assert payload["qos"] == 1


def test_device_hangs_off_the_node() -> None:
    assert _payload()["device"] == {
        "identifiers": ["appliance_satellite_living-room"],
        "name": "Living room",
        "manufacturer": "appliance",
        "model": SATELLITE_MODEL,
        "sw_version": "0.4.0",
        "suggested_area": "Living Room",
        "via_device": "appliance",
    }
    assert (
        _payload()["device"]["via_device"]
        in node_discovery(NODE, TOPICS)[1]["device"]["identifiers"]
    )
    assert _payload()["origin"] == {"name": "appliance", "sw_version": "1.2.3"}


def test_device_without_optional_info() -> None:
    bare = SatelliteInfo(site="kitchen", name=" ")
    device = _payload(bare)["device"]
    assert device["name"] == "kitchen"  # a blank name falls back to the site
    assert "sw_version" not in device
    assert "suggested_area" not in device


def test_every_component_is_there_on_its_platform() -> None:
    components = _payload()["components"]
    assert {k: c["platform"] for k, c in components.items()} == PLATFORMS
    for component in components.values():
        assert len(component) > 2  # more than platform: a config, not a removal


def test_available_only_while_the_satellite_and_the_node_are_online() -> None:
    payload = _payload()
    assert payload["availability"] == [
        {
            "topic": "home1/satellite/living-room/status",
            "payload_available": "online",
            "payload_not_available": "offline",
        },
        {
            "topic": "home1/status",
            "payload_available": "online",
            "payload_not_available": "offline",
        },
    ]
    assert payload["availability_mode"] == "all"
    for component in payload["components"].values():
        assert not {"availability", "availability_topic", "availability_mode"} & set(component)


def test_controls_publish_on_the_satellites_set_topics() -> None:
    mute, volume, stop = _one("mute"), _one("volume"), _one("stop")
    assert mute["command_topic"] == SITE.set("mute") == "home1/satellite/living-room/set/mute"
    assert (mute["payload_on"], mute["payload_off"]) == ("ON", "OFF")
    assert volume["command_topic"] == SITE.set("volume")
    assert (volume["min"], volume["max"], volume["step"]) == (0, 100, 1)
    assert stop["command_topic"] == SITE.set("stop")
    for component in (mute, volume, _one("listening")):
        assert component["state_topic"] == SITE.state


def test_sensors_read_the_nodes_diagnostics_of_that_site() -> None:
    for key in ("last_transcript", "last_receipt"):
        sensor = _one(key)
        assert sensor["state_topic"] == "home1/diagnostics/voice/living-room"
        assert sensor["json_attributes_topic"] == TOPICS.voice_turn("living-room")


def test_announce_goes_to_that_satellite_only() -> None:
    assert _one("announce")["command_topic"] == "home1/ha/announce/living-room"
    assert _one("announce")["command_topic"] == TOPICS.ha_announce_site("living-room")
    node_announce = node_discovery(NODE, TOPICS)[1]["components"]["announce"]
    assert node_announce["command_topic"] != _one("announce")["command_topic"]


def test_unique_and_entity_ids() -> None:
    components = _payload()["components"]
    unique_ids = {c["unique_id"] for c in components.values()}
    assert len(unique_ids) == len(components)
    assert all(u.startswith("appliance_satellite_living-room_") for u in unique_ids)
    node_ids = {c.get("unique_id") for c in node_discovery(NODE, TOPICS)[1]["components"].values()}
    other = satellite_discovery(NODE, SatelliteInfo(site="kitchen", name="K"), TOPICS)[1]
    assert not unique_ids & node_ids
    assert not unique_ids & {c["unique_id"] for c in other["components"].values()}
    assert _one("mute")["default_entity_id"] == "switch.appliance_living_room_mute"
    for component in components.values():
        assert re.fullmatch(r"[a-z_]+\.[a-z0-9_]+", component["default_entity_id"])


def test_every_topic_is_under_the_prefix_without_wildcards() -> None:
    def topics_in(node: Any) -> list[str]:
        if isinstance(node, dict):
            found = [v for k, v in node.items() if k.endswith("topic") and isinstance(v, str)]
            return found + [t for v in node.values() for t in topics_in(v)]
        if isinstance(node, list):
            return [t for v in node for t in topics_in(v)]
        return []

    found = topics_in(_payload())
    assert len(found) >= 12
    assert all(t.startswith("home1/") and "+" not in t and "#" not in t for t in found)
    assert len(encode_payload(_payload())) < 8_000


# --- templates, rendered with Jinja2 as Home Assistant does ----------------------------


@pytest.mark.parametrize("muted", [True, False])
def test_state_templates(muted: bool) -> None:
    state = SatelliteState(muted=muted, volume=35, listening=not muted).to_payload()
    assert _render(_one("mute")["value_template"], state) == ("ON" if muted else "OFF")
    assert _render(_one("volume")["value_template"], state) == "35"
    assert _render(_one("listening")["value_template"], state) == ("OFF" if muted else "ON")


def _report(**changes: Any) -> str:
    """A diagnostics report as ``VoiceSessions._report`` publishes it."""
    report: dict[str, Any] = {
        "session_id": "abc",
        "site": "living-room",
        "decision": "act",
        "reason": "agreed",
        "request_id": "voice-abc",
        "transcripts": {"whisper": "add milk to the list", "verifier": "add milk to the list"},
        "speech": "Added milk.",
        "receipt": {
            "request_id": "voice-abc",
            "action": "shopping.add",
            "status": "success",
            "reason": None,
        },
        "reply": "Added milk.",
        "answer": None,
        "asked_again": None,
        "corrected": None,
        "milestones_ms": {"wake_claim": 0.0},
    }
    report.update(changes)
    return json.dumps(report)


def test_last_transcript() -> None:
    assert _render(LAST_TRANSCRIPT_VALUE_TEMPLATE, _report()) == "add milk to the list"
    attributes = json.loads(_render(LAST_TRANSCRIPT_ATTRIBUTES_TEMPLATE, _report()))
    assert attributes == {
        "verifier": "add milk to the list",
        "whisper_second": None,
        "verifier_second_look": None,
        "decision": "act",
        "session_id": "abc",
    }
    # nothing heard: unknown; too long for a state: cut at 255 characters
    silent = _report(transcripts={"whisper": "", "verifier": ""}, decision="none")
    assert _render(LAST_TRANSCRIPT_VALUE_TEMPLATE, silent) == "None"
    long = _report(transcripts={"whisper": "milk " * 100, "verifier": ""})
    assert _render(LAST_TRANSCRIPT_VALUE_TEMPLATE, long) == ("milk " * 100)[:255]


def test_last_receipt() -> None:
    assert _render(LAST_RECEIPT_VALUE_TEMPLATE, _report()) == "success"
    attributes = json.loads(_render(LAST_RECEIPT_ATTRIBUTES_TEMPLATE, _report()))
    assert attributes == {
        "action": "shopping.add",
        "request_id": "voice-abc",
        "reason": None,
        "reply": "Added milk.",
        "decision": "act",
        "answer": None,
        "asked_again": None,
        "corrected": None,
    }
    asked = _report(
        receipt={
            "request_id": "voice-abc",
            "action": "shopping.add",
            "status": "needs_confirmation",
            "reason": "verifier_disagrees",
        },
        answer="no",
        asked_again="unsure_yes",
    )
    assert _render(LAST_RECEIPT_VALUE_TEMPLATE, asked) == "needs_confirmation"
    attributes = json.loads(_render(LAST_RECEIPT_ATTRIBUTES_TEMPLATE, asked))
    assert (attributes["answer"], attributes["asked_again"]) == ("no", "unsure_yes")
    corrected = json.loads(_render(LAST_RECEIPT_ATTRIBUTES_TEMPLATE, _report(corrected="voice-x")))
    assert corrected["corrected"] == "voice-x"  # "Did you want ...?" "No, oat milk."
    assert _render(LAST_RECEIPT_VALUE_TEMPLATE, _report(receipt=None)) == "None"
