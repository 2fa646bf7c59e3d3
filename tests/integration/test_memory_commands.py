"""Memory commands over MQTT (and stated preferences in text commands) are actions
with receipts: idempotent by request id, per user, through the commit gate."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator

import psycopg
import pytest

from appliance.memory.upkeep import NightlyUpkeep, next_run
from appliance.node import Node
from appliance.settings import Settings
from tests.support.client import HaClient, ha_client
from tests.support.mosquitto import Mosquitto

pytestmark = [pytest.mark.integration]


async def _memory_on(node: Node) -> None:
    async with asyncio.timeout(60):
        while node.conversation is None:
            await asyncio.sleep(0.05)


@pytest.fixture
async def ha(node: Node, mosquitto: Mosquitto) -> AsyncIterator[HaClient]:
    await _memory_on(node)
    async with ha_client(mosquitto) as client:
        yield client


def _rows(db_url: str, sql: str, *params: object) -> list[tuple[object, ...]]:
    with psycopg.connect(db_url) as conn:
        return conn.execute(sql, params).fetchall()  # type: ignore[arg-type]


async def test_add_is_idempotent_by_request_id(ha: HaClient, db_url: str) -> None:
    payload = {"text": "The spare key is under the blue pot.", "kind": "fact", "importance": 7}
    first = await ha.command("memory.add", payload, request_id="mem-1")
    assert first["status"] == "success", first
    assert first["details"]["memory_outcome"] == "inserted"
    memory_id = first["details"]["memory_id"]
    again = await ha.command("memory.add", payload, request_id="mem-1")
    assert again["duplicate"] is True
    assert again["receipt_id"] == first["receipt_id"]
    rows = _rows(db_url, "SELECT id, kind, text, importance, source, source_ref FROM memories")
    assert rows == [(memory_id, "fact", payload["text"], 7, "manual", "mem-1")]


async def test_the_gate_reinforces_a_duplicate_and_supersedes_a_contradiction(
    ha: HaClient, db_url: str
) -> None:
    liked = await ha.command("memory.add", {"text": "I like black coffee.", "kind": "preference"})
    same = await ha.command("memory.add", {"text": "I like black coffee", "kind": "preference"})
    assert same["status"] == "no_change"
    assert same["reason"] == "already_known"
    assert same["details"]["memory_id"] == liked["details"]["memory_id"]
    changed = await ha.command(
        "memory.add", {"text": "I don't like black coffee.", "kind": "preference"}
    )
    assert changed["status"] == "success"
    assert changed["details"]["memory_outcome"] == "superseded"
    assert changed["details"]["superseded"] == [liked["details"]["memory_id"]]
    active = _rows(db_url, "SELECT text FROM memories WHERE superseded_at IS NULL")
    assert active == [("I don't like black coffee.",)]


async def test_edit_and_delete(ha: HaClient, db_url: str) -> None:
    added = await ha.command("memory.add", {"text": "Our dentist is Dr. Alves in Pinheiros."})
    old = added["details"]["memory_id"]
    important = await ha.command("memory.edit", {"id": old, "importance": 9})
    assert important["status"] == "success"
    assert _rows(db_url, "SELECT importance FROM memories WHERE id = %s", old) == [(9,)]
    edited = await ha.command("memory.edit", {"id": old, "text": "Our dentist is Dr. Lima now."})
    assert edited["status"] == "success", edited
    new = edited["details"]["memory_id"]
    assert new != old
    rows = _rows(db_url, "SELECT id, text, importance, superseded_by FROM memories ORDER BY id")
    assert rows == [
        (old, "Our dentist is Dr. Alves in Pinheiros.", 9, new),
        (new, "Our dentist is Dr. Lima now.", 9, None),
    ]
    # the superseded one is history: it cannot be edited any more
    stale = await ha.command("memory.edit", {"id": old, "importance": 3})
    assert (stale["status"], stale["reason"]) == ("not_found", "no_such_memory")
    gone = await ha.command("memory.delete", {"id": new})
    assert gone["status"] == "success"
    twice = await ha.command("memory.delete", {"id": new})
    assert twice["status"] == "not_found"
    assert _rows(db_url, "SELECT id FROM memories") == [(old,)]


async def test_another_users_memory_cannot_be_edited_or_deleted(ha: HaClient, db_url: str) -> None:
    alice = await ha.command("memory.add", {"text": "I keep my passport in the desk.",
                                            "user": "alice"})  # fmt: skip
    memory_id = alice["details"]["memory_id"]
    for action, extra in (("memory.delete", {}), ("memory.edit", {"text": "Nothing here."})):
        tried = await ha.command(action, {"id": memory_id, "user": "bob", **extra})
        assert (tried["status"], tried["reason"]) == ("not_found", "no_such_memory")
    rows = _rows(db_url, "SELECT text, superseded_at FROM memories")
    assert rows == [("I keep my passport in the desk.", None)]


@pytest.mark.parametrize(
    ("action", "payload", "reason"),
    [
        ("memory.add", {"text": ""}, "invalid_payload"),
        ("memory.add", {"text": "x" * 501}, "invalid_payload"),
        ("memory.add", {"text": "Likes tea.", "kind": "episode"}, "invalid_payload"),
        ("memory.add", {"text": "ok"}, "memory_rejected: too_short"),
        ("memory.edit", {"id": 0, "text": "Something else."}, "invalid_payload"),
        ("memory.delete", {"id": "seven"}, "invalid_payload"),
    ],
)
async def test_bad_memory_commands_are_rejected_and_write_nothing(
    ha: HaClient, db_url: str, action: str, payload: dict[str, object], reason: str
) -> None:
    receipt = await ha.command(action, payload)
    assert receipt["status"] == "rejected"
    assert receipt["reason"].startswith(reason), receipt["reason"]
    assert _rows(db_url, "SELECT count(*) FROM memories") == [(0,)]


async def test_a_stated_preference_in_a_text_command_is_remembered(
    ha: HaClient, db_url: str
) -> None:
    heard = await ha.command("text", {"text": "I'm allergic to peanuts"})
    assert heard["action"] == "memory.add"
    assert heard["status"] == "success"
    assert heard["items"] == [{"name": "peanuts", "quantity": None, "unit": None,
                               "completed": False}]  # fmt: skip
    rows = _rows(db_url, "SELECT kind, text, importance FROM memories")
    assert rows == [("preference", "I'm allergic to peanuts.", 9)]
    # and nothing went on the shopping list
    assert (await ha.command("shopping.list", {}))["items"] == []


async def test_without_memory_commands_are_rejected_and_nothing_is_written(
    node_settings: Settings, mosquitto: Mosquitto, db_url: str
) -> None:
    # An embedder that cannot load: the node runs, memory stays off.
    memory = node_settings.memory.model_copy(update={"embedder": "gguf", "gguf_path": None})
    node = Node(node_settings.model_copy(update={"memory": memory}))
    stop = asyncio.Event()
    task = asyncio.create_task(node.run(stop))
    try:
        async with asyncio.timeout(60):
            await node.ready.wait()
        async with ha_client(mosquitto) as ha:
            refused = await ha.command("memory.add", {"text": "The spare key is in the shed."})
            listed = await ha.command("shopping.add", {"item": "milk"})
    finally:
        stop.set()
        async with asyncio.timeout(30):
            await task
    assert refused["status"] == "rejected"
    assert refused["reason"].startswith("memory_unavailable")
    assert listed["status"] == "success"
    assert _rows(db_url, "SELECT count(*) FROM memories") == [(0,)]


async def test_the_nightly_upkeep_runs_once_across_nodes(node: Node, db_url: str) -> None:
    await _memory_on(node)
    assert node.conversation is not None
    store = node.conversation.recall.store
    diary = node.conversation.diary
    upkeeps = [
        NightlyUpkeep(node.service._db, store, diary, at=dt.time(3, 30), timezone=dt.UTC)  # type: ignore[union-attr]
        for _ in range(2)
    ]
    ran = await asyncio.gather(*(u.run_once() for u in upkeeps))
    assert sorted(ran) == [False, True]
    assert not await upkeeps[0].run_once()  # within the gap: another night's job
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("UPDATE upkeep_runs SET started_at = now() - interval '2 days'")
    assert await upkeeps[1].overdue()
    assert await upkeeps[1].run_once()


def test_the_next_run_is_tonight_or_tomorrow() -> None:
    tz = dt.timezone(dt.timedelta(hours=-3))
    at = dt.time(3, 30)
    evening = dt.datetime(2026, 11, 30, 22, 0, tzinfo=tz)
    assert next_run(evening, at) == dt.datetime(2026, 12, 1, 3, 30, tzinfo=tz)
    early = dt.datetime(2026, 11, 30, 1, 0, tzinfo=tz)
    assert next_run(early, at) == dt.datetime(2026, 11, 30, 3, 30, tzinfo=tz)


async def test_a_database_failure_mid_write_leaves_nothing_half_done(
    ha: HaClient, db_url: str
) -> None:
    liked = await ha.command("memory.add", {"text": "I like green tea.", "kind": "preference"})
    # The contradiction inserts, then must supersede: that UPDATE is refused.
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("REVOKE UPDATE ON memories FROM appliance_memory")
    failed = await ha.command(
        "memory.add", {"text": "I don't like green tea.", "kind": "preference"}
    )
    assert failed["status"] == "rejected"
    assert failed["reason"].startswith("database_error")
    rows = _rows(db_url, "SELECT id, text, superseded_at FROM memories")
    assert rows == [(liked["details"]["memory_id"], "I like green tea.", None)]
    # and the list still works
    assert (await ha.command("shopping.add", {"item": "tea"}))["status"] == "success"


async def test_the_profile_is_rebuilt_after_the_memories_change(node: Node, ha: HaClient) -> None:
    assert node.conversation is not None
    store = node.conversation.recall.store
    assert await store.profile("household") is None
    await ha.command("memory.add", {"text": "I am allergic to peanuts.", "importance": 9})
    await ha.command("memory.add", {"text": "I like green tea.", "kind": "preference"})
    async with asyncio.timeout(15):
        while (profile := await store.profile("household")) is None:
            await asyncio.sleep(0.2)
    assert "I am allergic to peanuts." in profile.text
    assert "I like green tea." in profile.text
