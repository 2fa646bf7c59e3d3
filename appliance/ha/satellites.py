"""Home Assistant MQTT device discovery for the satellites, published by the node.

A satellite's MQTT login may only use its own topics, so the node publishes each
satellite's device config, retained, on
``homeassistant/device/<node_id>_satellite_<site>/config``, built from the satellite's
retained ``info``. The device hangs off the node's device (``via_device``) and is
available while both the satellite's ``status`` and the node's availability topic say
``online`` (``availability_mode: all``). Same schema rules as
:mod:`appliance.ha.discovery`; component ids and unique ids are part of Home Assistant's
registry: never rename them.

Entities (component id -> platform):

- ``mute`` switch: ``set/mute`` ``ON``/``OFF``; state from ``state`` ``muted``.
- ``volume`` number (0-100 %, step 1): ``set/volume``; state from ``state`` ``volume``.
- ``listening`` binary sensor: ``state`` ``listening``.
- ``stop`` button: ``set/stop``.
- ``last_transcript`` sensor: what Whisper heard in the satellite's last voice turn
  (the node's ``diagnostics/voice/<site>`` report); the verifier's in the attributes.
- ``last_receipt`` sensor: the status of the last turn's receipt; action, reason and
  the spoken reply in the attributes.
- ``announce`` notify: the message is published raw on ``ha/announce/<site>``.
"""

from __future__ import annotations

from typing import Any, Final

from appliance.ha.discovery import DeviceInfo, origin_info
from appliance.protocol.topics import OFFLINE, ONLINE, Topics
from appliance.protocol.voice import SET_MUTE, SET_STOP, SET_VOLUME, SatelliteInfo, SiteTopics

__all__ = [
    "LAST_RECEIPT_ATTRIBUTES_TEMPLATE",
    "LAST_RECEIPT_VALUE_TEMPLATE",
    "LAST_TRANSCRIPT_ATTRIBUTES_TEMPLATE",
    "LAST_TRANSCRIPT_VALUE_TEMPLATE",
    "LISTENING_VALUE_TEMPLATE",
    "MUTE_VALUE_TEMPLATE",
    "SATELLITE_MODEL",
    "VOLUME_VALUE_TEMPLATE",
    "satellite_device_id",
    "satellite_discovery",
]

SATELLITE_MODEL: Final = "Appliance satellite"
HA_MAX_STATE_LENGTH: Final = 255

# --- component ids (stable; part of Home Assistant's discovery ids) ------------------
MUTE: Final = "mute"
VOLUME: Final = "volume"
LISTENING: Final = "listening"
STOP: Final = "stop"
LAST_TRANSCRIPT: Final = "last_transcript"
LAST_RECEIPT: Final = "last_receipt"
ANNOUNCE: Final = "announce"

# --- templates (Home Assistant Jinja); "None" makes a sensor ``unknown`` ---------------
MUTE_VALUE_TEMPLATE: Final = "{{ 'ON' if value_json['muted'] else 'OFF' }}"
VOLUME_VALUE_TEMPLATE: Final = "{{ value_json['volume'] }}"
LISTENING_VALUE_TEMPLATE: Final = "{{ 'ON' if value_json['listening'] else 'OFF' }}"
LAST_TRANSCRIPT_VALUE_TEMPLATE: Final = (
    "{% set t = (value_json.get('transcripts') or {}).get('whisper') or '' %}"
    f"{{{{ t[:{HA_MAX_STATE_LENGTH}] if t else 'None' }}}}"
)
LAST_TRANSCRIPT_ATTRIBUTES_TEMPLATE: Final = (
    "{% set t = value_json.get('transcripts') or {} %}"
    "{{ {'verifier': t.get('verifier'), 'whisper_second': t.get('whisper_second'),"
    " 'verifier_second_look': t.get('verifier_second_look'),"
    " 'decision': value_json.get('decision'), 'session_id': value_json.get('session_id')}"
    " | to_json }}"
)
LAST_RECEIPT_VALUE_TEMPLATE: Final = (
    "{{ value_json['receipt']['status'] if value_json.get('receipt') else 'None' }}"
)
LAST_RECEIPT_ATTRIBUTES_TEMPLATE: Final = (
    "{% set r = value_json.get('receipt') or {} %}"
    "{{ {'action': r.get('action'), 'request_id': r.get('request_id'),"
    " 'reason': r.get('reason'), 'reply': value_json.get('reply'),"
    " 'decision': value_json.get('decision'), 'answer': value_json.get('answer'),"
    " 'asked_again': value_json.get('asked_again'),"
    " 'corrected': value_json.get('corrected')}"
    " | to_json }}"
)


def satellite_device_id(node_id: str, site: str) -> str:
    """Discovery object id and device identifier of a satellite: ``<node>_satellite_<site>``."""
    return f"{node_id}_satellite_{site}"


def satellite_discovery(
    node: DeviceInfo, info: SatelliteInfo, topics: Topics
) -> tuple[str, dict[str, Any]]:
    """(topic, payload) of one satellite's device discovery config."""
    site = SiteTopics(topics.prefix, info.site)
    device_id = satellite_device_id(node.device_id, info.site)
    slug = f"{_slug(node.device_id)}_{_slug(info.site)}"

    def entity(platform: str, key: str, name: str, icon: str) -> dict[str, Any]:
        return {
            "platform": platform,
            "unique_id": f"{device_id}_{key}",
            "default_entity_id": f"{platform}.{slug}_{key}",
            "name": name,
            "icon": icon,
        }

    diagnostics = topics.voice_turn(info.site)
    components: dict[str, dict[str, Any]] = {
        MUTE: {
            **entity("switch", MUTE, "Mute", "mdi:microphone-off"),
            "command_topic": site.set(SET_MUTE),
            "payload_on": "ON",
            "payload_off": "OFF",
            "state_topic": site.state,
            "value_template": MUTE_VALUE_TEMPLATE,
        },
        VOLUME: {
            **entity("number", VOLUME, "Volume", "mdi:volume-high"),
            "command_topic": site.set(SET_VOLUME),
            "state_topic": site.state,
            "value_template": VOLUME_VALUE_TEMPLATE,
            "min": 0,
            "max": 100,
            "step": 1,
            "mode": "slider",
            "unit_of_measurement": "%",
        },
        LISTENING: {
            **entity("binary_sensor", LISTENING, "Listening", "mdi:ear-hearing"),
            "state_topic": site.state,
            "value_template": LISTENING_VALUE_TEMPLATE,
            "payload_on": "ON",
            "payload_off": "OFF",
        },
        STOP: {
            **entity("button", STOP, "Stop", "mdi:stop"),
            "command_topic": site.set(SET_STOP),
            "payload_press": "PRESS",
        },
        LAST_TRANSCRIPT: {
            **entity("sensor", LAST_TRANSCRIPT, "Last transcript", "mdi:message-text"),
            "state_topic": diagnostics,
            "value_template": LAST_TRANSCRIPT_VALUE_TEMPLATE,
            "json_attributes_topic": diagnostics,
            "json_attributes_template": LAST_TRANSCRIPT_ATTRIBUTES_TEMPLATE,
        },
        LAST_RECEIPT: {
            **entity("sensor", LAST_RECEIPT, "Last receipt", "mdi:receipt-text"),
            "state_topic": diagnostics,
            "value_template": LAST_RECEIPT_VALUE_TEMPLATE,
            "json_attributes_topic": diagnostics,
            "json_attributes_template": LAST_RECEIPT_ATTRIBUTES_TEMPLATE,
        },
        ANNOUNCE: {
            **entity("notify", ANNOUNCE, "Announce", "mdi:bullhorn"),
            "command_topic": topics.ha_announce_site(info.site),
        },
    }
    payload: dict[str, Any] = {
        "device": _device(node, info, device_id),
        "origin": origin_info(node),
        "availability": [
            {"topic": site.status, "payload_available": ONLINE, "payload_not_available": OFFLINE},
            {
                "topic": topics.availability,
                "payload_available": ONLINE,
                "payload_not_available": OFFLINE,
            },
        ],
        "availability_mode": "all",
        "qos": 1,
        "components": components,
    }
    return topics.discovery(device_id), payload


def _device(node: DeviceInfo, info: SatelliteInfo, device_id: str) -> dict[str, Any]:
    device: dict[str, Any] = {
        "identifiers": [device_id],
        "name": info.name.strip() or info.site,
        "manufacturer": node.manufacturer,
        "model": SATELLITE_MODEL,
        "via_device": node.device_id,
    }
    if info.sw_version:
        device["sw_version"] = info.sw_version
    if info.area:
        device["suggested_area"] = info.area
    return device


def _slug(name: str) -> str:
    return name.lower().replace("-", "_")
