"""The node driven over a real mosquitto exactly as Home Assistant would drive it."""

from __future__ import annotations

import asyncio
import json

import aiomqtt
import pytest

from appliance.node import Node
from appliance.protocol.voice import SatelliteInfo, SatelliteState
from tests.support.client import HaClient, ha_client
from tests.support.mosquitto import USERS, Mosquitto
from tests.support.satellite import satellite

pytestmark = pytest.mark.integration


async def test_command_gets_receipt_on_both_topics_and_state_updates(
    node: Node, mosquitto: Mosquitto
) -> None:
    async with ha_client(mosquitto) as ha:
        await ha.client.subscribe("appliance/receipts", qos=1)
        receipt = await ha.command(
            "shopping.add", {"item": "milk", "quantity": 2, "unit": "l", "user": "ana"}, "r-1"
        )
        assert receipt["status"] == "success"
        assert receipt["action"] == "shopping.add"
        assert receipt["request_id"] == "r-1"
        assert receipt["items"] == [
            {"name": "milk", "quantity": 2.0, "unit": "l", "completed": False}
        ]
        assert receipt["source"] == {"kind": "mqtt", "site": None, "user": "ana"}
        for key in ("receipt_id", "reason", "events", "created_at"):
            assert key in receipt
        await ha.wait_for(lambda: any(r["request_id"] == "r-1" for r in ha.stream))

        def state_has_milk() -> bool:
            raw = ha.retained.get("appliance/state/shopping")
            return raw is not None and json.loads(raw)["open"] == 1

        await ha.wait_for(state_has_milk)
        state = json.loads(ha.retained["appliance/state/shopping"])
        assert state["items"][0]["name"] == "milk" and state["truncated"] is False


async def test_state_is_retained_for_a_late_subscriber(node: Node, mosquitto: Mosquitto) -> None:
    async with ha_client(mosquitto) as ha:
        await ha.command("shopping.add", {"item": "bread"})
        await ha.wait_for(lambda: b"bread" in ha.retained.get("appliance/state/shopping", b""))
    async with ha_client(mosquitto) as late:
        await late.wait_for(lambda: "appliance/state/shopping" in late.retained)
        assert b"bread" in late.retained["appliance/state/shopping"]
        await late.wait_for(lambda: "appliance/state/agenda" in late.retained)
        agenda = json.loads(late.retained["appliance/state/agenda"])
        assert agenda["next"] is None and agenda["today"] == []


@pytest.mark.parametrize(
    ("action", "payload", "reason"),
    [
        ("shopping.add", b"{not json", "invalid_json"),
        ("shopping.add", b"[1, 2]", "invalid_payload"),
        ("shopping.add", b'{"request_id": "x1", "item": ""}', "invalid_payload"),
        (
            "shopping.add",
            b'{"request_id": "x2", "item": "milk", "quantity": -1}',
            "invalid_payload",
        ),
        (
            "shopping.add",
            b'{"request_id": "x3", "item": "milk", "colour": "red"}',
            "invalid_payload",
        ),
        ("shopping.explode", b'{"request_id": "x4"}', "unknown_action"),
        (
            "agenda.add",
            b'{"request_id": "x5", "title": "x", "start": "tomorrow-ish"}',
            "invalid_payload",
        ),
        ("shopping.add", b'{"request_id": "bad/id", "item": "milk"}', "invalid_request_id"),
    ],
)
async def test_malformed_commands_are_rejected_with_a_reason(
    node: Node, mosquitto: Mosquitto, action: str, payload: bytes, reason: str
) -> None:
    async with ha_client(mosquitto) as ha:
        await ha.client.subscribe("appliance/receipts", qos=1)
        domain, _, name = action.partition(".")
        await ha.client.publish(f"appliance/cmd/{domain}/{name}", payload, qos=1)
        await ha.wait_for(lambda: len(ha.stream) >= 1)
        receipt = ha.stream[0]
        assert receipt["status"] == "rejected"
        assert receipt["reason"].startswith(reason), receipt["reason"]
        # The node is still serving, and nothing was changed.
        listing = await ha.command("shopping.list", {})
        assert listing["status"] == "success" and listing["items"] == []


async def test_oversized_payload_is_rejected_unread(node: Node, mosquitto: Mosquitto) -> None:
    async with ha_client(mosquitto) as ha:
        await ha.client.subscribe("appliance/receipts", qos=1)
        big = json.dumps({"request_id": "big", "item": "x" * 40_000}).encode()
        await ha.client.publish("appliance/cmd/shopping/add", big, qos=1)
        await ha.wait_for(lambda: len(ha.stream) >= 1)
        assert ha.stream[0]["reason"].startswith("payload_too_large")
        assert ha.stream[0]["request_id"] != "big"  # never parsed


async def test_repeated_request_id_returns_the_original_receipt(
    node: Node, mosquitto: Mosquitto
) -> None:
    async with ha_client(mosquitto) as ha:
        first = await ha.command("shopping.add", {"item": "eggs", "quantity": 12}, "dup-1")
        ha.receipts.clear()
        second = await ha.command("shopping.add", {"item": "eggs", "quantity": 12}, "dup-1")
        assert second["receipt_id"] == first["receipt_id"]
        assert second["duplicate"] is True
        listing = await ha.command("shopping.list", {})
        assert listing["items"] == [
            {"name": "eggs", "quantity": 12.0, "unit": None, "completed": False}
        ]


async def test_text_command_goes_through_the_intent_parser(
    node: Node, mosquitto: Mosquitto
) -> None:
    async with ha_client(mosquitto) as ha:
        receipt = await ha.command(
            "text", {"text": "add two liters of milk to the shopping list", "lang": "en"}
        )
        assert receipt["action"] == "shopping.add" and receipt["status"] == "success"
        assert receipt["items"][0] == {"name": "milk", "quantity": 2.0, "unit": "l",
                                       "completed": False}  # fmt: skip
        pt = await ha.command("text", {"text": "adicione três bananas à lista de compras",
                                       "lang": "pt"})  # fmt: skip
        assert pt["status"] == "success" and pt["items"][0]["quantity"] == 3.0
        chatter = await ha.command("text", {"text": "what a lovely day", "lang": "en"})
        assert chatter["status"] == "rejected"
        assert chatter["reason"].startswith("not_understood")
        negated = await ha.command("text", {"text": "don't add milk to the list"})
        assert negated["status"] == "rejected"
        # a reading the parser only guessed (no list named) is recorded as a question
        guess = await ha.command("text", {"text": "add dentist on friday"})
        assert (guess["status"], guess["action"]) == ("needs_confirmation", "agenda.add")
        assert guess["events"][0]["title"] == "dentist"
        assert guess["details"]["proposal"][0]["action"] == "agenda.add"  # what a yes runs
        assert "ask" not in guess["details"]  # a yes or a no answers it
        # a part of the day without a time: the question is what time, nothing is added
        morning = await ha.command("text", {"text": "schedule the dentist tomorrow morning"})
        assert (morning["status"], morning["action"]) == ("needs_confirmation", "agenda.add")
        assert (morning["details"]["ask"], morning["details"]["part"]) == ("time", "morning")
        assert len(morning["details"]["proposal"][0]["start"]) == 10  # the day: a date
        assert (await ha.command("agenda.list", {"range": "week"}))["events"] == []
        asked = await ha.command("text", {"text": "is milk on my list?"})
        assert (asked["action"], asked["status"], asked["details"]["item"]) == (
            "shopping.list", "success", "milk",
        )  # fmt: skip
        # no longer wanted, said with a negation: asked, the item stays
        unneeded = await ha.command("text", {"text": "we don't need bananas anymore"})
        assert (unneeded["status"], unneeded["action"]) == ("needs_confirmation", "shopping.remove")
        assert unneeded["details"]["proposal"][0]["item"] == "bananas"
        listing = await ha.command("shopping.list", {})
        assert [i["name"] for i in listing["items"]] == ["milk", "bananas"]
        # emptying the whole list: asked when typed, done when commanded
        clear = await ha.command("text", {"text": "clear the shopping list"})
        assert (clear["status"], clear["action"]) == ("needs_confirmation", "shopping.clear")
        assert len((await ha.command("shopping.list", {}))["items"]) == 2
        cleared = await ha.command("shopping.clear", {})
        assert cleared["status"] == "success" and cleared["details"]["count"] == 2
        assert (await ha.command("shopping.list", {}))["items"] == []


async def test_home_assistant_entities_act(node: Node, mosquitto: Mosquitto) -> None:
    async with ha_client(mosquitto) as ha:
        await ha.client.subscribe("appliance/receipts", qos=1)
        await ha.client.publish("appliance/ha/shopping/add", b"2 kg of rice", qos=1)
        await ha.wait_for(lambda: len(ha.stream) >= 1)
        added = ha.stream[0]
        assert added["source"]["kind"] == "ha" and added["status"] == "success"
        assert added["items"][0]["name"] == "rice"
        await ha.command("shopping.complete", {"item": "rice"})
        await ha.client.publish("appliance/ha/shopping/clear_completed", b"PRESS", qos=1)
        await ha.wait_for(lambda: any(r["action"] == "shopping.clear_completed"
                                      for r in ha.stream))  # fmt: skip
        cleared = next(r for r in ha.stream if r["action"] == "shopping.clear_completed")
        assert cleared["status"] == "success" and cleared["items"][0]["name"] == "rice"


async def test_discovery_is_retained_and_resent_when_home_assistant_restarts(
    node: Node, mosquitto: Mosquitto
) -> None:
    topic = f"homeassistant/device/{node.settings.node_id}/config"
    async with ha_client(mosquitto) as ha:
        await ha.wait_for(lambda: topic in ha.retained)
        config = json.loads(ha.retained[topic])
        assert config["device"]["identifiers"]
        assert config["origin"]["name"] == "appliance"
        platforms = {c["platform"] for c in config["components"].values()}
        assert {"sensor", "text", "button", "event", "notify", "device_automation"} <= platforms
        assert ha.retained["appliance/status"] == b"online"
        count = sum(1 for t, _ in ha.messages if t == topic)
        await ha.client.publish("homeassistant/status", b"online", qos=1)
        await ha.wait_for(lambda: sum(1 for t, _ in ha.messages if t == topic) > count)


async def test_acl_keeps_roles_apart(node: Node, mosquitto: Mosquitto) -> None:
    async with ha_client(mosquitto) as ha:
        # Home Assistant cannot forge a receipt...
        await ha.client.subscribe("appliance/receipts", qos=1)
        await ha.client.publish("appliance/receipts", b'{"forged": true}', qos=1)
        # ...and a satellite cannot send commands.
        async with aiomqtt.Client("127.0.0.1", mosquitto.port, username="kitchen",
                                  password=USERS["kitchen"]) as sat:  # fmt: skip
            await sat.publish("appliance/cmd/shopping/add", b'{"item": "beer"}', qos=1)
        await asyncio.sleep(0.5)
        listing = await ha.command("shopping.list", {})
        assert listing["items"] == []
        assert all("forged" not in r for r in ha.stream)


async def test_home_assistant_drives_satellites_but_cannot_speak_for_them(
    mosquitto: Mosquitto,
) -> None:
    info = SatelliteInfo(site="kitchen", name="Kitchen")
    async with (
        satellite(mosquitto, "kitchen", info=info) as sat,
        ha_client(mosquitto, "appliance") as node_side,
        ha_client(mosquitto) as ha,
    ):
        state = SatelliteState(muted=False, volume=70)
        await sat.client.publish(sat.topics.state, state.to_payload(), qos=1, retain=True)
        await node_side.client.subscribe("appliance/satellite/#", qos=1)
        # Home Assistant reads what the satellite is, whether it is online, its state...
        readable = (sat.topics.info, sat.topics.status, sat.topics.state)
        for topic in ("appliance/satellite/+/info", "appliance/satellite/+/status",
                      "appliance/satellite/+/state"):  # fmt: skip
            await ha.client.subscribe(topic, qos=1)
        await ha.wait_for(lambda: all(t in ha.retained for t in readable))
        assert SatelliteInfo.from_payload(ha.retained[sat.topics.info]) == info
        assert ha.retained[sat.topics.status] == b"online"
        assert SatelliteState.from_payload(ha.retained[sat.topics.state]).volume == 70
        # ...sets mute and volume, but cannot say anything in the satellite's name.
        await ha.client.publish(sat.topics.set("mute"), b"ON", qos=1)
        forged = {
            sat.topics.audio("s1"): b"\0" * 2048,
            sat.topics.audio_end("s1"): b'{"session_id": "s1"}',
            sat.topics.wake: b'{"session_id": "s1", "wake_word": "x", "score": 1}',
            sat.topics.event: b'{"type": "stop"}',
            sat.topics.status: b"offline",
            sat.topics.info: b'{"site": "kitchen", "name": "Forged"}',
        }
        for topic, payload in forged.items():
            await ha.client.publish(topic, payload, qos=1)
        await ha.client.publish(sat.topics.set("volume"), b"30", qos=1)  # the last one
        volume = sat.topics.set("volume")
        await node_side.wait_for(lambda: any(t == volume for t, _ in node_side.messages))
        await sat.until(lambda: len(sat.settings) >= 2, timeout=10)
        assert sat.settings == [("mute", b"ON"), ("volume", b"30")]
        # only what the satellite itself published (retained) got through
        seen = sorted((t, p) for t, p in node_side.messages if t in forged)
        assert seen == sorted(
            [(sat.topics.status, b"online"), (sat.topics.info, info.to_payload())]
        )


async def test_announce_is_forwarded_to_satellites(node: Node, mosquitto: Mosquitto) -> None:
    async with aiomqtt.Client("127.0.0.1", mosquitto.port, username="kitchen",
                              password=USERS["kitchen"]) as sat:  # fmt: skip
        await sat.subscribe("appliance/announce", qos=1)
        async with ha_client(mosquitto) as ha:
            await ha.client.publish("appliance/ha/announce", b"Dinner is ready", qos=1)
        async with asyncio.timeout(10):
            async for message in sat.messages:
                assert json.loads(message.payload)["text"] == "Dinner is ready"  # type: ignore[arg-type]
                break


def _names(ha: HaClient) -> list[str]:
    return [r["request_id"] for r in ha.stream]
