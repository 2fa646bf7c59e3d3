"""Faults: broker restarts, database outages and malformed input lose nothing."""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import Callable

import aiomqtt
import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from appliance.node import Node
from appliance.store.embedded import EmbeddedPostgres
from tests.support.client import ha_client
from tests.support.mosquitto import Mosquitto

pytestmark = [pytest.mark.integration, pytest.mark.slow]


async def _send_until_answered(
    broker: Mosquitto, commands: dict[str, dict[str, object]], deadline: float
) -> dict[str, dict[str, object]]:
    """Send every command and resend (same request id) those without a receipt, as a
    careful client does after a lost connection, until all are answered."""
    answered: dict[str, dict[str, object]] = {}
    loop = asyncio.get_running_loop()
    while len(answered) < len(commands) and loop.time() < deadline:
        pending = [rid for rid in commands if rid not in answered]
        try:
            async with ha_client(broker) as ha:
                for rid in pending:
                    body = json.dumps({"request_id": rid, **commands[rid]}).encode()
                    await ha.client.publish("appliance/cmd/shopping/add", body, qos=1)
                with contextlib.suppress(TimeoutError):
                    await ha.wait_for(_all_in(pending, ha.receipts), 15)
                answered.update({r: ha.receipts[r] for r in pending if r in ha.receipts})
        except aiomqtt.MqttError:
            await asyncio.sleep(0.5)
    return answered


def _all_in(ids: list[str], received: dict[str, dict[str, object]]) -> Callable[[], bool]:
    return lambda: all(r in received for r in ids)


async def _db_rows(url: str, sql: str) -> list[tuple[object, ...]]:
    async with await psycopg.AsyncConnection.connect(url) as conn:
        cur = await conn.execute(sql)  # type: ignore[arg-type]
        return await cur.fetchall()


async def test_broker_restart_during_a_burst_loses_nothing_and_doubles_nothing(
    node: Node, mosquitto: Mosquitto, db_url: str
) -> None:
    commands = {f"burst-{i:04d}": {"item": f"item {i:04d}", "quantity": 1} for i in range(1000)}

    async def restart_broker() -> None:
        await asyncio.sleep(0.4)
        await asyncio.to_thread(mosquitto.stop)
        await asyncio.sleep(1.0)
        await asyncio.to_thread(mosquitto.start)

    restarter = asyncio.create_task(restart_broker())
    deadline = asyncio.get_running_loop().time() + 150
    answered = await _send_until_answered(mosquitto, commands, deadline)
    await restarter
    assert len(answered) == 1000
    assert {r["status"] for r in answered.values()} == {"success"}
    # Exactly once in the database: every item once, with quantity 1 (not merged twice).
    rows = await _db_rows(db_url, "SELECT name, quantity FROM shopping_items ORDER BY name")
    assert len(rows) == 1000
    assert {float(q) for _, q in rows} == {1.0}  # type: ignore[arg-type]
    receipts = await _db_rows(db_url, "SELECT count(*) FROM receipts WHERE status = 'success'")
    assert receipts[0][0] == 1000
    # Every stored receipt reached the broker; the outbox drains to empty.
    async with asyncio.timeout(30):
        while (await _db_rows(db_url, "SELECT count(*) FROM outbox"))[0][0]:
            await asyncio.sleep(0.2)


async def test_database_outage_rejects_with_reason_and_recovers(
    node: Node, mosquitto: Mosquitto, db_url: str, pg_server: EmbeddedPostgres
) -> None:
    async with ha_client(mosquitto) as ha:
        before = await ha.command("shopping.add", {"item": "before"})
        assert before["status"] == "success"
        await asyncio.to_thread(pg_server.stop, "fast")
        try:
            during = [
                await ha.command("shopping.add", {"item": f"during {i}"}, timeout=30)
                for i in range(5)
            ]
        finally:
            await asyncio.to_thread(pg_server.start)
        for receipt in during:
            assert receipt["status"] == "rejected"
            assert receipt["reason"].startswith("database_unavailable")
        # The node recovers by itself once the database is back.
        async with asyncio.timeout(30):
            while True:
                after = await ha.command("shopping.add", {"item": f"after {uuid.uuid4().hex[:4]}"})
                if after["status"] == "success":
                    break
                await asyncio.sleep(0.5)
        # A retry of a rejected request, with its request id, now runs once.
        retry = await ha.command("shopping.add", {"item": "during 0"}, during[0]["request_id"])
        assert retry["status"] == "success" and not retry["duplicate"]
    rows = await _db_rows(db_url, "SELECT name FROM shopping_items ORDER BY name")
    names = [r[0] for r in rows]
    assert "before" in names and "during 0" in names
    assert not any(n.startswith("during ") and n != "during 0" for n in names)  # type: ignore[union-attr]


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=5)
    ),
    max_leaves=12,
)
_fields = st.fixed_dictionaries(
    {},
    optional={
        "item": _json_values,
        "quantity": _json_values,
        "unit": _json_values,
        "title": _json_values,
        "start": _json_values,
        "range": _json_values,
        "user": _json_values,
        "request_id": _json_values,
        "text": _json_values,
    },
)
_payloads = st.one_of(
    st.binary(max_size=300),
    _json_values.map(lambda v: json.dumps(v).encode()),
    _fields.map(lambda v: json.dumps(v).encode()),
)
_topics = st.sampled_from(
    [
        "appliance/cmd/shopping/add",
        "appliance/cmd/shopping/remove",
        "appliance/cmd/shopping/list",
        "appliance/cmd/agenda/add",
        "appliance/cmd/agenda/list",
        "appliance/cmd/agenda/move",
        "appliance/cmd/text",
        "appliance/cmd/nothing/here",
        "appliance/cmd/shopping",
    ]
)


@settings(
    max_examples=150,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(topic=_topics, payload=_payloads)
async def test_fuzzed_commands_are_each_answered_and_never_crash_the_node(
    node: Node, mosquitto: Mosquitto, topic: str, payload: bytes
) -> None:
    async with ha_client(mosquitto) as ha:
        await ha.client.subscribe("appliance/receipts", qos=1)
        await ha.client.publish(topic, payload, qos=1)
        await ha.wait_for(lambda: len(ha.stream) >= 1, timeout=10)
        assert ha.stream[0]["status"] in {"success", "no_change", "not_found", "rejected"}
        if ha.stream[0]["status"] == "rejected":
            assert ha.stream[0]["reason"]
    assert node.ready.is_set()
