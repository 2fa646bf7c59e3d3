"""Faults: broker restarts, database outages and malformed input lose nothing."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable

import aiomqtt
import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from appliance.node import Node
from appliance.settings import Settings
from appliance.store.embedded import EmbeddedPostgres
from tests.support.client import ha_client
from tests.support.mosquitto import Mosquitto

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture
def node_settings(node_settings: Settings) -> Settings:
    """Bursts of a thousand commands from one sender: rate limits (tested on their
    own) are off, so what is measured here is the faults."""
    limits = node_settings.rate_limits.model_copy(update={"enabled": False})
    return node_settings.model_copy(update={"rate_limits": limits})


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


async def test_database_outage_mid_burst_rejects_with_reason_and_never_half_writes(
    node: Node, mosquitto: Mosquitto, db_url: str, pg_server: EmbeddedPostgres
) -> None:
    commands = {f"db-{i:03d}": {"item": f"thing {i:03d}", "quantity": 2} for i in range(300)}

    async def outage() -> None:
        await asyncio.to_thread(pg_server.stop, "fast")
        await asyncio.sleep(8)
        await asyncio.to_thread(pg_server.start)

    async with ha_client(mosquitto) as ha:
        for rid, body in commands.items():
            await ha.client.publish(
                "appliance/cmd/shopping/add", json.dumps({"request_id": rid, **body}), qos=1
            )
            if rid == "db-100":
                await ha.wait_for(lambda: len(ha.receipts) >= 60, timeout=30)
                down = asyncio.create_task(outage())
        try:
            # Receipts committed before the outage wait in the outbox (in the
            # database) and come out once it is back.
            await ha.wait_for(_all_in(list(commands), ha.receipts), timeout=120)
        finally:
            await down
        statuses = {rid: r["status"] for rid, r in ha.receipts.items() if rid in commands}
        rejected = sorted(rid for rid, status in statuses.items() if status == "rejected")
        assert set(statuses.values()) <= {"success", "rejected"}
        assert rejected, "the outage rejected nothing: it did not happen mid-burst"
        # A batch whose connection broke while committing may have taken effect:
        # its receipts say the outcome is unknown. All others say nothing changed.
        unknown = set()
        for rid in rejected:
            reason = ha.receipts[rid]["reason"]
            assert reason.startswith("database_unavailable"), reason
            if "outcome is unknown" in reason:
                unknown.add(rid)
            else:
                assert reason.endswith("nothing was changed")
        # No half-written command: every command is in the database with its receipt,
        # or absent with neither; the successful ones are all there, once.
        rows = await _db_rows(db_url, "SELECT name, quantity FROM shopping_items")
        stored = {r[0] for r in await _db_rows(db_url, "SELECT request_id FROM receipts")}
        assert {r[0] for r in rows} == {f"thing {rid[3:]}" for rid in stored}
        assert {float(r[1]) for r in rows} == {2.0}  # type: ignore[arg-type]
        succeeded = {rid for rid, st in statuses.items() if st == "success"}
        assert succeeded <= stored <= succeeded | unknown
        # The node recovers by itself; resending the rejected ones runs each once.
        async with asyncio.timeout(60):
            while (await ha.command("shopping.list", {}))["status"] != "success":
                await asyncio.sleep(0.5)
        for rid in rejected:
            retry = await ha.command("shopping.add", commands[rid], rid, timeout=30)
            assert retry["status"] == "success"
            assert retry["duplicate"] == (rid in stored)
    rows = await _db_rows(db_url, "SELECT count(*), sum(quantity) FROM shopping_items")
    assert rows[0][0] == 300 and float(rows[0][1]) == 600.0  # type: ignore[arg-type]


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
