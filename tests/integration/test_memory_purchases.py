"""Items checked off the list become purchase memories, after (and apart from) the
list change: a memory failure never blocks or undoes it."""

from __future__ import annotations

import asyncio
import datetime as dt

import psycopg
import pytest

from appliance.memory.purchases import purchase_text
from appliance.node import Node
from tests.support.client import ha_client
from tests.support.mosquitto import Mosquitto

pytestmark = [pytest.mark.integration]


def test_purchase_text_in_both_languages() -> None:
    day = dt.date(2026, 11, 30)
    assert purchase_text(["oat milk"], day, "en") == "Bought oat milk on Monday 30 November 2026."
    assert purchase_text(["eggs", "jam", "bread"], day, "en").startswith(
        "Bought eggs, jam and bread on"
    )
    assert purchase_text(["ovos", "pão"], day, "pt") == "Comprei ovos e pão em 30/11/2026."


async def _memory_on(node: Node) -> None:
    async with asyncio.timeout(60):
        while node.purchases is None:
            await asyncio.sleep(0.05)


async def test_checking_items_off_keeps_a_purchase_memory(node: Node, mosquitto: Mosquitto) -> None:
    await _memory_on(node)
    assert node.purchases is not None
    async with ha_client(mosquitto) as ha:
        await ha.command("shopping.add", {"item": "oat milk"})
        await ha.command("shopping.add", {"item": "eggs"})
        done = await ha.command("shopping.complete", {"item": "oat milk"})
        assert done["status"] == "success"
        again = await ha.command("shopping.complete", {"item": "oat milk"})
        assert again["status"] != "success"  # nothing new checked off: no new memory
    async with asyncio.timeout(20):
        while node.purchases.written < 1:
            await asyncio.sleep(0.05)
    await asyncio.sleep(0.3)
    memories = await node.purchases._store.list_memories("household", kind="purchase")
    assert [m.text for m in memories] == [
        purchase_text(["oat milk"], dt.datetime.now(node.settings.tz).date(), "en")
    ]
    assert memories[0].source_ref == done["receipt_id"]
    assert node.purchases.written == 1


async def test_an_amount_bought_is_the_memory_of_it(node: Node, mosquitto: Mosquitto) -> None:
    """ "I bought two apples" of six: the memory is of two apples, and four stay listed."""
    await _memory_on(node)
    assert node.purchases is not None
    async with ha_client(mosquitto) as ha:
        await ha.command("shopping.add", {"item": "apples", "quantity": 6})
        some = await ha.command("shopping.complete", {"item": "apples", "quantity": 2})
        assert (some["status"], some["details"]["reduced"]) == ("success", True)
        assert [(i["name"], i["quantity"], i["completed"]) for i in some["items"]] == [
            ("apples", 4, False)
        ]
    async with asyncio.timeout(20):
        while node.purchases.written < 1:
            await asyncio.sleep(0.05)
    memories = await node.purchases._store.list_memories("household", kind="purchase")
    assert [m.text for m in memories] == [
        purchase_text(["2 apples"], dt.datetime.now(node.settings.tz).date(), "en")
    ]


async def test_a_memory_failure_leaves_the_list_change_intact(
    node: Node, mosquitto: Mosquitto, db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    await _memory_on(node)
    assert node.purchases is not None
    # A real fault in the memory's own transaction: its table refuses the write.
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("REVOKE INSERT ON memories FROM appliance_memory")
    async with ha_client(mosquitto) as ha:
        await ha.command("shopping.add", {"item": "bread"})
        done = await ha.command("shopping.complete", {"item": "bread"})
        assert done["status"] == "success"
        async with asyncio.timeout(20):
            while "purchase memory for receipt" not in caplog.text:
                await asyncio.sleep(0.05)
        listed = await ha.command("shopping.list", {"include_completed": True})
    assert [(i["name"], i["completed"]) for i in listed["items"]] == [("bread", True)]
    assert "the list change stands" in caplog.text
    assert node.purchases.written == 0
