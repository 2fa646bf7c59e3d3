"""Home Assistant MQTT device discovery for the main node.

A pure module: it builds payloads and never touches the network. The node publishes
:func:`node_discovery` once, retained, on ``homeassistant/device/<device_id>/config``
(and again whenever Home Assistant sends ``online`` on ``homeassistant/status``); it
publishes :func:`removal_payload`, retained, on the same topic to remove the device.

Each satellite gets a device of its own, published by the node too: see
:mod:`appliance.ha.satellites`.

Schema (Home Assistant MQTT integration, "Device discovery payload"): the root holds
the shared options ``device``, ``origin`` (both required), ``availability`` and ``qos``;
``components`` maps a component id to one platform config, each with ``platform`` and,
for entities, a ``unique_id``. Home Assistant rejects unknown keys at the root, so the
root carries nothing else. Component ids and unique ids are part of Home Assistant's
registry: never rename them.

Entities (component id -> platform):

- ``shopping_list`` sensor: open item count; ``items`` and ``truncated`` attributes.
- ``add_to_shopping_list`` text: the value set is published raw on ``ha_add_item``.
- ``clear_completed_items`` button: publishes on ``ha_clear_completed``.
- ``agenda`` sensor: title of the next event (unknown when there is none).
- ``receipts`` event: one event per receipt, ``event_type`` = receipt status.
- ``announce`` notify: the message is published raw on ``ha_announce``.
- ``receipt_<domain>_<action>`` device triggers, one per action, firing on that
  action's receipts.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Final

from appliance.protocol.commands import ACTIONS
from appliance.protocol.receipts import STATUSES
from appliance.protocol.topics import OFFLINE, ONLINE, Topics

__all__ = [
    "ADD_ITEM_MAX_LENGTH",
    "AGENDA_ATTRIBUTES_TEMPLATE",
    "AGENDA_VALUE_TEMPLATE",
    "MAX_STATE_ITEMS_BYTES",
    "ORIGIN_NAME",
    "RECEIPT_ACTION_TEMPLATE",
    "RECEIPT_EVENT_MAX_EVENTS",
    "RECEIPT_EVENT_MAX_ITEMS",
    "RECEIPT_EVENT_TEMPLATE",
    "RECEIPT_TRIGGER_TYPE",
    "SHOPPING_ATTRIBUTES_TEMPLATE",
    "SHOPPING_VALUE_TEMPLATE",
    "DeviceInfo",
    "encode_payload",
    "fit_items",
    "node_discovery",
    "origin_info",
    "removal_payload",
    "shopping_state_payload",
    "trigger_component_id",
    "trigger_subtype",
]

ORIGIN_NAME: Final = "appliance"

MAX_STATE_ITEMS_BYTES: Final = 12_000
"""Budget for the JSON of the ``items`` list on the shopping state topic.

Home Assistant does not record state attributes larger than 16 KiB; this leaves room for
the rest of the attributes.
"""

ADD_ITEM_MAX_LENGTH: Final = 120
"""Same bound as ``ItemName`` in :mod:`appliance.protocol.commands`."""

RECEIPT_TRIGGER_TYPE: Final = "receipt"
"""Device trigger ``type``; the ``subtype`` is the action, e.g. ``shopping_add``."""

RECEIPT_EVENT_MAX_ITEMS: Final = 50
RECEIPT_EVENT_MAX_EVENTS: Final = 20
"""Caps on the lists copied into the Receipts event attributes (16 KiB budget)."""

_DEVICE_ID = re.compile(r"[a-zA-Z0-9_-]+")

# --- component ids (stable; part of Home Assistant's discovery ids) ------------------
SHOPPING_LIST: Final = "shopping_list"
ADD_ITEM: Final = "add_to_shopping_list"
CLEAR_COMPLETED: Final = "clear_completed_items"
AGENDA: Final = "agenda"
RECEIPTS: Final = "receipts"
ANNOUNCE: Final = "announce"

# --- templates (Home Assistant Jinja; ``to_json`` is a Home Assistant filter) ---------
# Keys are read with ``[...]``/``.get``: ``value_json.items`` would be ``dict.items``.
SHOPPING_VALUE_TEMPLATE: Final = "{{ value_json['open'] }}"
SHOPPING_ATTRIBUTES_TEMPLATE: Final = (
    "{{ {'items': value_json['items'], 'truncated': value_json['truncated']} | to_json }}"
)
# ``None`` is Home Assistant's "no value" payload: the sensor becomes ``unknown``.
AGENDA_VALUE_TEMPLATE: Final = (
    "{{ value_json['next']['title'] if value_json.get('next') else 'None' }}"
)
AGENDA_ATTRIBUTES_TEMPLATE: Final = (
    "{% set n = value_json.get('next') or {} %}"
    "{{ {'next_start': n.get('start'), 'next_end': n.get('end'),"
    " 'next_location': n.get('location'), 'next_all_day': n.get('all_day'),"
    " 'today': value_json.get('today') or []} | to_json }}"
)
RECEIPT_EVENT_TEMPLATE: Final = (
    "{{ {'event_type': value_json['status'],"
    " 'action': value_json.get('action'),"
    " 'request_id': value_json.get('request_id'),"
    " 'receipt_id': value_json.get('receipt_id'),"
    " 'reason': value_json.get('reason'),"
    f" 'items': (value_json.get('items') or [])[:{RECEIPT_EVENT_MAX_ITEMS}],"
    f" 'events': (value_json.get('events') or [])[:{RECEIPT_EVENT_MAX_EVENTS}],"
    " 'source': value_json.get('source'),"
    " 'duplicate': value_json.get('duplicate', false),"
    " 'created_at': value_json.get('created_at')} | to_json }}"
)
RECEIPT_ACTION_TEMPLATE: Final = "{{ value_json.get('action') }}"


@dataclass(frozen=True)
class DeviceInfo:
    """The node as a Home Assistant device."""

    device_id: str
    """Discovery object id, device identifier and unique-id prefix: ``[a-zA-Z0-9_-]+``."""
    name: str
    sw_version: str
    model: str = "Appliance main node"
    manufacturer: str = "appliance"
    support_url: str | None = None

    def __post_init__(self) -> None:
        if not _DEVICE_ID.fullmatch(self.device_id):
            msg = f"device_id must match [a-zA-Z0-9_-]+, got {self.device_id!r}"
            raise ValueError(msg)
        if not self.name.strip():
            msg = "device name must not be empty"
            raise ValueError(msg)


def trigger_subtype(action: str) -> str:
    """Device trigger subtype of an action: ``shopping.add`` -> ``shopping_add``."""
    return action.replace(".", "_")


def trigger_component_id(action: str) -> str:
    """Component id of an action's device trigger: ``receipt_shopping_add``."""
    return f"{RECEIPT_TRIGGER_TYPE}_{trigger_subtype(action)}"


def node_discovery(device: DeviceInfo, topics: Topics) -> tuple[str, dict[str, Any]]:
    """(topic, payload) of the node's device discovery config."""
    components: dict[str, dict[str, Any]] = {
        SHOPPING_LIST: _shopping_list(device, topics),
        ADD_ITEM: _add_item(device, topics),
        CLEAR_COMPLETED: _clear_completed(device, topics),
        AGENDA: _agenda(device, topics),
        RECEIPTS: _receipts(device, topics),
        ANNOUNCE: _announce(device, topics),
    }
    for action in ACTIONS:
        components[trigger_component_id(action)] = _receipt_trigger(action, topics)

    payload: dict[str, Any] = {
        "device": _device(device),
        "origin": origin_info(device),
        "availability": [
            {
                "topic": topics.availability,
                "payload_available": ONLINE,
                "payload_not_available": OFFLINE,
            }
        ],
        # Commands are published and receipts/state received at QoS 1.
        "qos": 1,
        "components": components,
    }
    return topics.discovery(device.device_id), payload


def removal_payload() -> bytes:
    """Publish this, retained, on the discovery topic to remove the device.

    An empty payload removes every component of the device discovery and clears the
    retained config; Home Assistant then removes the device if nothing else refers to it.
    """
    return b""


def encode_payload(payload: dict[str, Any]) -> bytes:
    """Compact UTF-8 JSON, as published (the broker keeps it retained)."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()


def fit_items(items: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], bool]:
    """Keep the items whose JSON list fits in :data:`MAX_STATE_ITEMS_BYTES`.

    Open items come first, then completed ones, each group in its given order; the
    result is the longest prefix of that order that fits. Returns ``(kept, truncated)``.
    """
    ordered = [i for i in items if not i.get("completed")]
    ordered += [i for i in items if i.get("completed")]
    kept: list[dict[str, Any]] = []
    size = len(b"[]")
    for item in ordered:
        extra = len(encode_payload(item)) + (1 if kept else 0)  # "," between items
        if size + extra > MAX_STATE_ITEMS_BYTES:
            break
        kept.append(item)
        size += extra
    return kept, len(kept) < len(items)


def shopping_state_payload(items: list[dict[str, Any]], updated_at: str) -> dict[str, Any]:
    """The retained JSON for ``topics.shopping_state``.

    ``open`` counts every open item, also those cut from ``items`` by :func:`fit_items`.
    """
    kept, truncated = fit_items(items)
    return {
        "open": sum(1 for i in items if not i.get("completed")),
        "items": kept,
        "truncated": truncated,
        "updated_at": updated_at,
    }


# --- parts -------------------------------------------------------------------------


def _device(device: DeviceInfo) -> dict[str, Any]:
    return {
        "identifiers": [device.device_id],
        "name": device.name,
        "manufacturer": device.manufacturer,
        "model": device.model,
        "sw_version": device.sw_version,
    }


def origin_info(device: DeviceInfo) -> dict[str, Any]:
    """Who publishes the discovery config (the node, also for its satellites)."""
    origin: dict[str, Any] = {"name": ORIGIN_NAME, "sw_version": device.sw_version}
    if device.support_url:
        origin["support_url"] = device.support_url
    return origin


def _entity(device: DeviceInfo, platform: str, key: str, name: str, icon: str) -> dict[str, Any]:
    """Options every entity component has."""
    slug = device.device_id.lower().replace("-", "_")
    return {
        "platform": platform,
        "unique_id": f"{device.device_id}_{key}",
        "default_entity_id": f"{platform}.{slug}_{key}",
        "name": name,
        "icon": icon,
    }


def _shopping_list(device: DeviceInfo, topics: Topics) -> dict[str, Any]:
    return {
        **_entity(device, "sensor", SHOPPING_LIST, "Shopping list", "mdi:cart"),
        "state_topic": topics.shopping_state,
        "value_template": SHOPPING_VALUE_TEMPLATE,
        "unit_of_measurement": "items",
        "json_attributes_topic": topics.shopping_state,
        "json_attributes_template": SHOPPING_ATTRIBUTES_TEMPLATE,
    }


def _add_item(device: DeviceInfo, topics: Topics) -> dict[str, Any]:
    # No state_topic: it is optional, and the text entity then shows the last value set.
    return {
        **_entity(device, "text", ADD_ITEM, "Add to shopping list", "mdi:cart-plus"),
        "command_topic": topics.ha_add_item,
        "min": 1,
        "max": ADD_ITEM_MAX_LENGTH,
        "mode": "text",
    }


def _clear_completed(device: DeviceInfo, topics: Topics) -> dict[str, Any]:
    return {
        **_entity(device, "button", CLEAR_COMPLETED, "Clear completed items", "mdi:cart-remove"),
        "command_topic": topics.ha_clear_completed,
    }


def _agenda(device: DeviceInfo, topics: Topics) -> dict[str, Any]:
    return {
        **_entity(device, "sensor", AGENDA, "Agenda", "mdi:calendar"),
        "state_topic": topics.agenda_state,
        "value_template": AGENDA_VALUE_TEMPLATE,
        "json_attributes_topic": topics.agenda_state,
        "json_attributes_template": AGENDA_ATTRIBUTES_TEMPLATE,
    }


def _receipts(device: DeviceInfo, topics: Topics) -> dict[str, Any]:
    return {
        **_entity(device, "event", RECEIPTS, "Receipts", "mdi:receipt-text"),
        "state_topic": topics.receipts,
        "event_types": list(STATUSES),
        "value_template": RECEIPT_EVENT_TEMPLATE,
    }


def _announce(device: DeviceInfo, topics: Topics) -> dict[str, Any]:
    return {
        **_entity(device, "notify", ANNOUNCE, "Announce", "mdi:bullhorn"),
        "command_topic": topics.ha_announce,
    }


def _receipt_trigger(action: str, topics: Topics) -> dict[str, Any]:
    # The value template renders the receipt's action; the trigger fires when it equals
    # ``payload``. Device triggers are not entities: no unique_id, no availability.
    return {
        "platform": "device_automation",
        "automation_type": "trigger",
        "topic": topics.receipts,
        "type": RECEIPT_TRIGGER_TYPE,
        "subtype": trigger_subtype(action),
        "value_template": RECEIPT_ACTION_TEMPLATE,
        "payload": action,
    }
