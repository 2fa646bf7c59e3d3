"""Who may act for whom: a person's own MQTT user acts for that person only, through
topics the broker's ACL gives to that user alone."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import aiomqtt
import psycopg
import pytest

from appliance.node import Node
from appliance.settings import Settings
from tests.support.client import ha_client
from tests.support.mosquitto import USERS, Mosquitto

pytestmark = [pytest.mark.integration]


async def _memory_on(node: Node) -> None:
    async with asyncio.timeout(60):
        while node.conversation is None:
            await asyncio.sleep(0.05)


async def _as(
    mosquitto: Mosquitto, user: str, topic: str, payload: dict[str, Any], wait: float = 10.0
) -> dict[str, Any] | None:
    """Publish as ``user``; the receipt on that user's own receipt topic, or None."""
    rid = payload.setdefault("request_id", str(uuid.uuid4()))
    async with aiomqtt.Client(
        "127.0.0.1", mosquitto.port, username=user, password=USERS[user]
    ) as client:
        await client.subscribe(f"appliance/u/{user}/receipts/#", qos=1)
        await client.publish(topic, json.dumps(payload), qos=1)
        try:
            async with asyncio.timeout(wait):
                async for message in client.messages:
                    if message.topic.value.endswith(f"/{rid}"):
                        return json.loads(message.payload)  # type: ignore[arg-type, no-any-return]
        except TimeoutError:
            return None
    return None


async def test_a_person_acts_for_themselves_only(
    node: Node, mosquitto: Mosquitto, db_url: str
) -> None:
    await _memory_on(node)
    own = await _as(
        mosquitto, "alice", "appliance/u/alice/cmd/memory/add",
        {"text": "I keep my bike in the shed.", "kind": "fact"},
    )  # fmt: skip
    assert own is not None
    assert own["status"] == "success"
    assert own["source"]["user"] == "alice"
    added = await _as(mosquitto, "alice", "appliance/u/alice/cmd/shopping/add", {"item": "tea"})
    assert added is not None and added["status"] == "success"
    assert added["source"]["user"] == "alice"
    # naming someone else in the payload is refused, and changes nothing
    forbidden = await _as(
        mosquitto, "alice", "appliance/u/alice/cmd/memory/add",
        {"text": "Bob likes olives.", "user": "bob"},
    )  # fmt: skip
    assert forbidden is not None
    assert (forbidden["status"], forbidden["reason"]) == (
        "rejected", "forbidden_user: alice may not act for bob")  # fmt: skip
    with psycopg.connect(db_url) as conn:
        rows = conn.execute(
            "SELECT u.name, m.text FROM memories m JOIN users u ON u.id = m.user_id"
        ).fetchall()
    assert rows == [("alice", "I keep my bike in the shed.")]


async def test_the_broker_keeps_people_and_satellites_off_other_topics(
    node: Node, mosquitto: Mosquitto
) -> None:
    await _memory_on(node)
    async with ha_client(mosquitto) as ha:
        await ha.client.subscribe("appliance/receipts", qos=1)
        # another person's topic, Home Assistant's command topic, a satellite acting
        # as a person: the ACL drops them before the node sees them
        attempts = [
            ("alice", "appliance/u/bob/cmd/shopping/add"),
            ("alice", "appliance/cmd/shopping/add"),
            ("kitchen", "appliance/u/kitchen/cmd/shopping/add"),
            ("kitchen", "appliance/cmd/shopping/add"),
        ]
        for user, topic in attempts:
            assert await _as(mosquitto, user, topic, {"item": "beer"}, wait=1.0) is None
        await asyncio.sleep(1.0)
        assert ha.stream == []
        listing = await ha.command("shopping.list", {})
    assert listing["items"] == []


@pytest.fixture
def node_settings(node_settings: Settings) -> Settings:
    limits = node_settings.rate_limits.model_copy(update={"rate": 2.0, "burst": 5})
    return node_settings.model_copy(update={"rate_limits": limits})


async def test_a_sender_over_its_rate_is_refused_for_now_only(
    node: Node, mosquitto: Mosquitto, db_url: str
) -> None:
    async with ha_client(mosquitto) as ha:
        burst = await asyncio.gather(
            *(ha.command("shopping.add", {"item": f"item {i}", "user": "carol"}) for i in range(12))
        )
        refused = [r for r in burst if r["status"] == "rejected"]
        assert len(refused) >= 12 - 5 - 2  # the burst, and what refilled meanwhile
        assert all(r["reason"].startswith("rate_limited: 2 commands per second") for r in refused)
        # another sender is not held back by carol
        assert (await ha.command("shopping.add", {"item": "bread"}))["status"] == "success"
        # not recorded: the same request id, once the bucket refilled, runs
        await asyncio.sleep(1.5)
        again = await ha.command(
            "shopping.add", {"item": "late", "user": "carol"}, request_id=refused[0]["request_id"]
        )
    assert again["status"] == "success"
    assert "duplicate" not in again or again["duplicate"] is False
    with psycopg.connect(db_url) as conn:
        count = conn.execute("SELECT count(*) FROM shopping_items").fetchone()
    assert count is not None and count[0] == 12 - len(refused) + 2
