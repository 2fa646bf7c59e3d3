"""Home Assistant device discovery: payload shape, topics, templates, item fitting."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from appliance.ha.discovery import (
    ADD_ITEM_MAX_LENGTH,
    MAX_STATE_ITEMS_BYTES,
    ORIGIN_NAME,
    RECEIPT_EVENT_MAX_ITEMS,
    RECEIPT_TRIGGER_TYPE,
    DeviceInfo,
    encode_payload,
    fit_items,
    node_discovery,
    removal_payload,
    shopping_state_payload,
    trigger_component_id,
)
from appliance.protocol.commands import ACTIONS, parse_command
from appliance.protocol.receipts import STATUSES, Receipt, ReceiptEvent, ReceiptItem, Source
from appliance.protocol.topics import HA_DISCOVERY_PREFIX, Topics

DEVICE = DeviceInfo(
    device_id="appliance_kitchen",
    name="Appliance",
    sw_version="1.2.3",
    support_url="https://example.org/appliance",
)
TOPICS = Topics(prefix="home1")

# What Home Assistant accepts at the root of a device discovery payload
# (schemas.py DEVICE_DISCOVERY_SCHEMA: availability options + these; extra keys fail).
ROOT_KEYS = {
    "device",
    "origin",
    "components",
    "availability",
    "availability_mode",
    "availability_template",
    "availability_topic",
    "payload_available",
    "payload_not_available",
    "state_topic",
    "command_topic",
    "qos",
    "encoding",
    "message_expiry_interval",
}
ENTITY_PLATFORMS = {"sensor", "text", "button", "event", "notify"}
HA_MAX_STATE_LENGTH = 255


def _discovery() -> tuple[str, dict[str, Any]]:
    return node_discovery(DEVICE, TOPICS)


def _components() -> dict[str, dict[str, Any]]:
    components: dict[str, dict[str, Any]] = _discovery()[1]["components"]
    return components


def _entities() -> dict[str, dict[str, Any]]:
    return {k: c for k, c in _components().items() if c["platform"] in ENTITY_PLATFORMS}


def _by_platform(platform: str) -> list[dict[str, Any]]:
    return [c for c in _components().values() if c["platform"] == platform]


def _one(component_id: str) -> dict[str, Any]:
    return _components()[component_id]


def _triggers() -> list[dict[str, Any]]:
    return _by_platform("device_automation")


# --- shape ---------------------------------------------------------------------------


def test_topic_is_the_device_discovery_topic() -> None:
    topic, _ = _discovery()
    assert topic == f"{HA_DISCOVERY_PREFIX}/device/appliance_kitchen/config"
    assert topic == TOPICS.discovery(DEVICE.device_id)


def test_root_has_only_keys_home_assistant_accepts() -> None:
    _, payload = _discovery()
    assert set(payload) <= ROOT_KEYS
    assert {"device", "origin", "components"} <= set(payload)


def test_device_and_origin() -> None:
    _, payload = _discovery()
    assert payload["device"] == {
        "identifiers": ["appliance_kitchen"],
        "name": "Appliance",
        "manufacturer": "appliance",
        "model": "Appliance main node",
        "sw_version": "1.2.3",
    }
    assert payload["origin"] == {
        "name": ORIGIN_NAME,
        "sw_version": "1.2.3",
        "support_url": "https://example.org/appliance",
    }


def test_origin_without_support_url_omits_it() -> None:
    device = DeviceInfo(device_id="a", name="A", sw_version="0")
    _, payload = node_discovery(device, TOPICS)
    assert payload["origin"] == {"name": ORIGIN_NAME, "sw_version": "0"}


def test_expected_components() -> None:
    platforms = sorted(c["platform"] for c in _components().values())
    assert platforms.count("sensor") == 2
    assert platforms.count("text") == 1
    assert platforms.count("button") == 1
    assert platforms.count("event") == 1
    assert platforms.count("notify") == 1
    assert platforms.count("device_automation") == len(ACTIONS) == 16
    assert len(platforms) == 6 + len(ACTIONS)


def test_component_ids_are_safe() -> None:
    for component_id in _components():
        assert re.fullmatch(r"[a-zA-Z0-9_-]+", component_id), component_id


def test_every_component_config_has_an_option_besides_platform() -> None:
    # A component with only ``platform`` is Home Assistant's "remove this component".
    for component in _components().values():
        assert len(component) > 1


def test_unique_ids_present_unique_and_prefixed() -> None:
    entities = _entities()
    unique_ids = [c["unique_id"] for c in entities.values()]
    assert len(unique_ids) == len(set(unique_ids)) == 6
    for component_id, component in entities.items():
        assert component["unique_id"] == f"appliance_kitchen_{component_id}"


def test_unique_ids_stable_across_calls_and_versions() -> None:
    newer = DeviceInfo(device_id=DEVICE.device_id, name="Renamed", sw_version="9.9.9")
    _, first = node_discovery(DEVICE, TOPICS)
    _, again = node_discovery(DEVICE, TOPICS)
    _, upgraded = node_discovery(newer, Topics(prefix="other"))
    assert first == again

    def ids(payload: dict[str, Any]) -> dict[str, str | None]:
        return {k: c.get("unique_id") for k, c in payload["components"].items()}

    assert ids(first) == ids(upgraded)


def test_unique_ids_differ_between_devices() -> None:
    other = DeviceInfo(device_id="appliance_garage", name="Garage", sw_version="1")
    mine = {c["unique_id"] for c in _entities().values()}
    _, theirs_payload = node_discovery(other, TOPICS)
    theirs = {c.get("unique_id") for c in theirs_payload["components"].values()}
    assert not mine & theirs


def test_default_entity_ids() -> None:
    expected = {
        "sensor.appliance_kitchen_shopping_list",
        "text.appliance_kitchen_add_to_shopping_list",
        "button.appliance_kitchen_clear_completed_items",
        "sensor.appliance_kitchen_agenda",
        "event.appliance_kitchen_receipts",
        "notify.appliance_kitchen_announce",
    }
    found = {c["default_entity_id"] for c in _entities().values()}
    assert found == expected
    for component in _entities().values():
        assert component["default_entity_id"].startswith(component["platform"] + ".")
        assert "object_id" not in component  # deprecated by default_entity_id


def test_default_entity_id_is_a_valid_entity_id_for_any_device_id() -> None:
    device = DeviceInfo(device_id="Kitchen-Node", name="Kitchen", sw_version="1")
    _, payload = node_discovery(device, TOPICS)
    for component in payload["components"].values():
        if component["platform"] in ENTITY_PLATFORMS:
            assert re.fullmatch(r"[a-z_]+\.[a-z0-9_]+", component["default_entity_id"])


def test_entities_have_names() -> None:
    names = {c["name"] for c in _entities().values()}
    assert names == {
        "Shopping list",
        "Add to shopping list",
        "Clear completed items",
        "Agenda",
        "Receipts",
        "Announce",
    }


def test_shared_availability_online_offline() -> None:
    _, payload = _discovery()
    assert payload["availability"] == [
        {"topic": "home1/status", "payload_available": "online", "payload_not_available": "offline"}
    ]
    assert payload["availability"][0]["topic"] == TOPICS.availability
    for component in _components().values():
        # Inherited from the root; an override here would hide the shared one.
        assert not {"availability", "availability_topic"} & set(component)


def test_qos_one() -> None:
    _, payload = _discovery()
    assert payload["qos"] == 1


def test_topics_match_topics_class() -> None:
    assert _one("shopping_list")["state_topic"] == TOPICS.shopping_state
    assert _one("shopping_list")["json_attributes_topic"] == TOPICS.shopping_state
    assert _one("add_to_shopping_list")["command_topic"] == TOPICS.ha_add_item
    assert _one("clear_completed_items")["command_topic"] == TOPICS.ha_clear_completed
    assert _one("agenda")["state_topic"] == TOPICS.agenda_state
    assert _one("agenda")["json_attributes_topic"] == TOPICS.agenda_state
    assert _one("receipts")["state_topic"] == TOPICS.receipts
    assert _one("announce")["command_topic"] == TOPICS.ha_announce
    for trigger in _triggers():
        assert trigger["topic"] == TOPICS.receipts


def test_every_topic_is_under_the_prefix_and_has_no_wildcards() -> None:
    def topics_in(node: Any) -> list[str]:
        if isinstance(node, dict):
            found = [v for k, v in node.items() if k.endswith("topic") and isinstance(v, str)]
            return found + [t for v in node.values() for t in topics_in(v)]
        if isinstance(node, list):
            return [t for v in node for t in topics_in(v)]
        return []

    found = topics_in(_discovery()[1])
    assert len(found) > 10
    for topic in found:
        assert topic.startswith("home1/")
        assert "+" not in topic
        assert "#" not in topic


def test_payload_is_json_and_compact() -> None:
    _, payload = _discovery()
    encoded = encode_payload(payload)
    assert json.loads(encoded) == payload
    assert len(encoded) < 8_000


def test_text_entity() -> None:
    text = _one("add_to_shopping_list")
    assert text["min"] == 1
    assert text["max"] == ADD_ITEM_MAX_LENGTH == 120
    assert text["min"] < text["max"] <= HA_MAX_STATE_LENGTH
    assert text["mode"] == "text"
    assert "state_topic" not in text


def test_event_entity_types_are_the_statuses() -> None:
    event = _one("receipts")
    assert event["event_types"] == list(STATUSES)
    assert "value_template" in event


def test_shopping_sensor_unit() -> None:
    assert _one("shopping_list")["unit_of_measurement"] == "items"


def test_one_device_trigger_per_action() -> None:
    triggers = {c["payload"]: c for c in _triggers()}
    assert sorted(triggers) == sorted(ACTIONS)
    subtypes = [t["subtype"] for t in triggers.values()]
    assert len(set(subtypes)) == len(ACTIONS)
    for action, trigger in triggers.items():
        assert trigger["automation_type"] == "trigger"
        assert trigger["type"] == RECEIPT_TRIGGER_TYPE
        assert trigger["subtype"] == action.replace(".", "_")
        assert _components()[trigger_component_id(action)] is not None
        assert "unique_id" not in trigger


def test_device_id_validation() -> None:
    for bad in ("", "kitchen node", "a/b", "a+b", "ä"):
        with pytest.raises(ValueError, match="device_id"):
            DeviceInfo(device_id=bad, name="x", sw_version="1")
    with pytest.raises(ValueError, match="name"):
        DeviceInfo(device_id="ok", name=" ", sw_version="1")


def test_removal_payload_is_empty() -> None:
    assert removal_payload() == b""


# --- templates, rendered with Jinja2 as Home Assistant does ----------------------------


def _jinja_env() -> Any:
    """A sandboxed Jinja2 environment like Home Assistant's, strict about undefined names."""
    jinja2 = pytest.importorskip(
        "jinja2", reason="jinja2 is not installed: Home Assistant templates not rendered"
    )
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(undefined=jinja2.StrictUndefined)
    # Home Assistant's ``to_json`` filter: orjson, compact, non-ASCII kept.
    env.filters["to_json"] = lambda v: json.dumps(v, ensure_ascii=False, separators=(",", ":"))
    return env


def _render(template: str, payload: bytes | str) -> str:
    """Render an MQTT value template the way Home Assistant does: ``value``, ``value_json``."""
    value = payload.decode() if isinstance(payload, bytes) else payload
    rendered: str = (
        _jinja_env().from_string(template).render(value=value, value_json=json.loads(value))
    )
    return rendered


def _receipt(action: str | None, status: str = "success", **extra: Any) -> Receipt:
    return Receipt(
        request_id="req-1",
        action=action,
        status=status,  # type: ignore[arg-type]
        source=Source(kind="ha", user="household"),
        **extra,
    )


def _shopping_state() -> dict[str, Any]:
    items: list[dict[str, Any]] = [
        {"name": "milk", "quantity": 2.0, "unit": "l", "completed": False},
        {"name": "bread", "quantity": None, "unit": None, "completed": True},
        {"name": "crème fraîche", "quantity": 1.0, "unit": None, "completed": False},
    ]
    return shopping_state_payload(items, "2025-01-02T10:00:00+00:00")


def _agenda_state(next_event: dict[str, Any] | None) -> dict[str, Any]:
    today = [] if next_event is None else [next_event]
    return {"next": next_event, "today": today, "upcoming": today, "updated_at": "x"}


DENTIST: dict[str, Any] = {
    "title": "Dentist",
    "start": "2025-01-02T15:00:00+01:00",
    "end": "2025-01-02T15:30:00+01:00",
    "location": "Main street 1",
    "all_day": False,
}


def test_shopping_state_renders_open_count_and_attributes() -> None:
    sensor = _one("shopping_list")
    state = json.dumps(_shopping_state())
    assert _render(sensor["value_template"], state) == "2"
    attributes = json.loads(_render(sensor["json_attributes_template"], state))
    assert attributes == {"items": _shopping_state()["items"], "truncated": False}
    assert attributes["items"][0]["name"] == "milk"  # not dict.items


def test_agenda_renders_next_title_and_attributes() -> None:
    sensor = _one("agenda")
    state = json.dumps(_agenda_state(DENTIST))
    assert _render(sensor["value_template"], state) == "Dentist"
    attributes = json.loads(_render(sensor["json_attributes_template"], state))
    assert attributes == {
        "next_start": DENTIST["start"],
        "next_end": DENTIST["end"],
        "next_location": "Main street 1",
        "next_all_day": False,
        "today": [DENTIST],
    }


def test_agenda_without_next_event_is_unknown() -> None:
    sensor = _one("agenda")
    state = json.dumps(_agenda_state(None))
    # "None" is the payload Home Assistant's MQTT sensor turns into ``unknown``.
    assert _render(sensor["value_template"], state) == "None"
    attributes = json.loads(_render(sensor["json_attributes_template"], state))
    assert attributes == {
        "next_start": None,
        "next_end": None,
        "next_location": None,
        "next_all_day": None,
        "today": [],
    }


@pytest.mark.parametrize("status", STATUSES)
def test_receipt_event_renders_event_type_and_attributes(status: str) -> None:
    event = _one("receipts")
    receipt = _receipt(
        "shopping.add",
        status,
        reason="because",
        items=[ReceiptItem(name="milk", quantity=2, unit="l")],
    )
    data = json.loads(_render(event["value_template"], receipt.to_payload()))
    # What the MQTT event entity does with the rendered payload:
    event_type = data.pop("event_type")
    assert event_type in event["event_types"]
    assert event_type == status
    assert data["action"] == "shopping.add"
    assert data["request_id"] == "req-1"
    assert data["receipt_id"] == receipt.receipt_id
    assert data["reason"] == "because"
    assert data["items"] == [{"name": "milk", "quantity": 2.0, "unit": "l", "completed": False}]
    assert data["events"] == []
    assert data["source"] == {"kind": "ha", "site": None, "user": "household"}
    assert data["duplicate"] is False
    assert data["created_at"] == receipt.created_at


def test_receipt_event_without_action_and_with_events() -> None:
    event = _one("receipts")
    receipt = _receipt(None, "not_found", events=[ReceiptEvent(**DENTIST)])
    data = json.loads(_render(event["value_template"], receipt.to_payload()))
    assert data["event_type"] == "not_found"
    assert data["action"] is None
    assert data["events"] == [DENTIST]


def test_receipt_event_caps_items() -> None:
    event = _one("receipts")
    many = [ReceiptItem(name=f"item {n}") for n in range(RECEIPT_EVENT_MAX_ITEMS + 30)]
    receipt = _receipt("shopping.list", items=many)
    rendered = _render(event["value_template"], receipt.to_payload())
    data = json.loads(rendered)
    assert len(data["items"]) == RECEIPT_EVENT_MAX_ITEMS
    assert len(rendered.encode()) < 16_384


@pytest.mark.parametrize("action", ACTIONS)
def test_device_trigger_fires_only_for_its_action(action: str) -> None:
    triggers = _triggers()
    payload = _receipt(action).to_payload()
    # The MQTT trigger fires when the rendered value template equals ``payload``.
    firing = [t for t in triggers if _render(t["value_template"], payload) == t["payload"]]
    assert [t["subtype"] for t in firing] == [action.replace(".", "_")]


def test_device_trigger_ignores_receipts_without_action() -> None:
    payload = _receipt(None, "rejected").to_payload()
    for trigger in _triggers():
        assert _render(trigger["value_template"], payload) != trigger["payload"]


# --- fit_items -----------------------------------------------------------------------


def _item(name: str, *, completed: bool = False) -> dict[str, Any]:
    return {"name": name, "quantity": 1.0, "unit": "pcs", "completed": completed}


def _json_size(items: list[dict[str, Any]]) -> int:
    return len(json.dumps(items, ensure_ascii=False, separators=(",", ":")).encode())


def test_fit_items_small_list_is_kept_open_first() -> None:
    items = [_item("a", completed=True), _item("b"), _item("c", completed=True), _item("d")]
    kept, truncated = fit_items(items)
    assert not truncated
    assert [i["name"] for i in kept] == ["b", "d", "a", "c"]


def test_fit_items_empty() -> None:
    assert fit_items([]) == ([], False)


def test_fit_items_truncates_under_the_limit() -> None:
    items = [_item(f"item number {n}", completed=n % 3 == 0) for n in range(1_000)]
    assert _json_size(items) > MAX_STATE_ITEMS_BYTES
    kept, truncated = fit_items(items)
    assert truncated
    assert 0 < len(kept) < len(items)
    assert _json_size(kept) <= MAX_STATE_ITEMS_BYTES
    # Nothing more would have fit.
    ordered = [i for i in items if not i["completed"]] + [i for i in items if i["completed"]]
    assert _json_size([*kept, ordered[len(kept)]]) > MAX_STATE_ITEMS_BYTES


def test_fit_items_keeps_open_items_before_completed() -> None:
    completed = [_item(f"done {n}", completed=True) for n in range(400)]
    open_items = [_item(f"todo {n}") for n in range(100)]
    kept, truncated = fit_items(completed + open_items)
    assert truncated
    assert kept[:100] == open_items
    assert all(i["completed"] for i in kept[100:])


def test_fit_items_counts_utf8_bytes() -> None:
    # 4 bytes per character in UTF-8: counting characters would overshoot the budget.
    items = [_item("🥛" * 100) for _ in range(50)]
    kept, truncated = fit_items(items)
    assert truncated
    assert _json_size(kept) <= MAX_STATE_ITEMS_BYTES


def test_fit_items_single_oversized_item() -> None:
    kept, truncated = fit_items([_item("x" * (MAX_STATE_ITEMS_BYTES + 1))])
    assert kept == []
    assert truncated


def test_fit_items_exact_limit_fits() -> None:
    overhead = _json_size([_item("")])
    exact = _item("x" * (MAX_STATE_ITEMS_BYTES - overhead))
    assert _json_size([exact]) == MAX_STATE_ITEMS_BYTES
    assert fit_items([exact]) == ([exact], False)


@settings(database=None, max_examples=60, deadline=None)
@given(
    st.lists(
        st.builds(
            lambda name, completed: {"name": name, "completed": completed},
            st.text(min_size=1, max_size=400),
            st.booleans(),
        ),
        max_size=120,
    )
)
def test_fit_items_properties(items: list[dict[str, Any]]) -> None:
    kept, truncated = fit_items(items)
    ordered = [i for i in items if not i["completed"]] + [i for i in items if i["completed"]]
    assert kept == ordered[: len(kept)]
    assert _json_size(kept) <= MAX_STATE_ITEMS_BYTES
    assert truncated == (len(kept) < len(items))
    if truncated:
        assert _json_size(ordered[: len(kept) + 1]) > MAX_STATE_ITEMS_BYTES


def test_shopping_state_counts_every_open_item() -> None:
    items = [_item(f"todo {n:04d} " + "x" * 60) for n in range(500)]
    state = shopping_state_payload(items, "2025-01-02T10:00:00+00:00")
    assert state["open"] == 500
    assert state["truncated"] is True
    assert len(state["items"]) < 500
    assert set(state) == {"open", "items", "truncated", "updated_at"}


# --- the Home Assistant examples stay in step with the discovery -----------------------

EXAMPLES = Path(__file__).resolve().parents[2] / "config" / "homeassistant"


def _example_files() -> list[Path]:
    files = sorted(EXAMPLES.glob("*.yaml"))
    assert files, f"no examples in {EXAMPLES}"
    return files


def _strings(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [s for v in node.values() for s in _strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return [node] if isinstance(node, str) else []


@pytest.mark.parametrize("path", _example_files(), ids=lambda p: p.name)
def test_examples_use_only_discovered_entities_and_node_topics(path: Path) -> None:
    yaml = pytest.importorskip("yaml", reason="PyYAML is not installed")
    automations = yaml.safe_load(path.read_text())
    assert isinstance(automations, list)
    assert automations
    ids = [a["id"] for a in automations]
    assert len(ids) == len(set(ids))

    default = DeviceInfo(device_id="appliance", name="Appliance", sw_version="1")
    _, payload = node_discovery(default, Topics())
    entity_ids = {
        c["default_entity_id"] for c in payload["components"].values() if "default_entity_id" in c
    }
    node_topics = {Topics().receipts, Topics().command("shopping.add")}
    text = "\n".join(_strings(automations))
    used = set(re.findall(r"\b(?:sensor|text|button|event|notify)\.appliance_\w+", text))
    assert used
    assert used <= entity_ids
    for automation in automations:
        for step in [*automation.get("triggers", []), *automation.get("actions", [])]:
            topic = step.get("topic") or step.get("data", {}).get("topic")
            if topic is not None:
                assert topic in node_topics


@pytest.mark.parametrize("path", _example_files(), ids=lambda p: p.name)
def test_example_templates_compile(path: Path) -> None:
    yaml = pytest.importorskip("yaml", reason="PyYAML is not installed")
    env = _jinja_env()
    templates = [s for s in _strings(yaml.safe_load(path.read_text())) if "{{" in s or "{%" in s]
    assert templates
    for template in templates:
        env.parse(template)


def test_example_command_payload_renders_a_valid_command() -> None:
    yaml = pytest.importorskip("yaml", reason="PyYAML is not installed")
    automations = yaml.safe_load((EXAMPLES / "automations.yaml").read_text())
    publishes = [
        step["data"]
        for automation in automations
        for step in automation["actions"]
        if step.get("action") == "mqtt.publish"
    ]
    assert publishes
    for data in publishes:
        rendered = _render_with_context(data["payload"], context_id="01JABCDEF")
        command = json.loads(rendered)
        assert command["request_id"] == "01JABCDEF"
        assert data["qos"] == 1
        action = "shopping.add"
        assert data["topic"] == Topics().command(action)
        fields = {k: v for k, v in command.items() if k not in {"request_id", "user"}}
        assert parse_command({"action": action, **fields}).action_name == action


def _render_with_context(template: str, context_id: str) -> str:
    rendered: str = _jinja_env().from_string(template).render(context={"id": context_id})
    return rendered
