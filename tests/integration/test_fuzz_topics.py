"""Fuzz every topic the running node subscribes to, over a real mosquitto.

Hypothesis draws messages (random bytes, oversized payloads, JSON of every wrong
shape, valid commands with one field spoiled) for the command topics, Home
Assistant's entity topics, ``homeassistant/status`` and a satellite's topics. The
examples run in a thread; each is published on the test's event loop, where the
node runs. After each one the node must still be running and a command whose
``request_id`` can be read must get a receipt with a status of the API; at the end a
plain ``shopping.add`` must still succeed, every receipt on the stream must be one
of the API's, and no part of the node may have logged an error.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import aiomqtt
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from appliance.bus.commands import REQUEST_ID
from appliance.node import Node
from appliance.protocol.commands import ACTIONS
from appliance.protocol.topics import HA_STATUS_TOPIC, Topics
from appliance.protocol.voice import SiteTopics
from tests.support.client import ha_client
from tests.support.mosquitto import USERS, Mosquitto

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TOPICS = Topics()
MAX_PAYLOAD = 16_384  # the default mqtt.max_payload_bytes, which the node fixture keeps
STATUSES = {"success", "no_change", "not_found", "rejected"}
EXAMPLE_TIMEOUT = 5.0

VALID: dict[str, dict[str, Any]] = {
    "shopping.add": {"item": "milk", "quantity": 2, "unit": "l"},
    "shopping.remove": {"item": "milk"},
    "shopping.complete": {"item": "milk"},
    "shopping.uncomplete": {"item": "milk"},
    "shopping.set_quantity": {"item": "milk", "quantity": 3},
    "shopping.list": {"include_completed": True},
    "shopping.clear_completed": {},
    "agenda.add": {
        "title": "Dentist",
        "start": "2026-12-01T15:00:00-03:00",
        "duration_minutes": 30,
        "location": "Centro",
    },
    "agenda.list": {"range": "day", "day": "2026-12-01"},
    "agenda.next": {},
    "agenda.remove": {"title": "Dentist", "day": "2026-12-01"},
    "agenda.move": {"title": "Dentist", "new_start": "2026-12-02T15:00:00-03:00"},
    "memory.add": {"text": "I prefer oat milk", "kind": "preference", "importance": 5},
    "memory.edit": {"id": 1, "text": "I prefer soy milk", "importance": 3},
    "memory.delete": {"id": 1},
    "text": {"text": "add two liters of milk to the shopping list", "lang": "en"},
}
SATELLITE_INFO = {"site": "kitchen", "name": "Kitchen", "area": "Kitchen", "wake_words": ["ok"]}

TRICKY_STRINGS = [
    "", " ", "\x00", "milk\x00", "\ud800", "a\udfffb", "\u202emilk", "💥" * 40, "x" * 5000,
    "null", "NaN", "Infinity", "2026-02-30", "0001-01-01T00:00:00-14:00",
    "9999-12-31T23:59:59+14:00", "2026-12-01T25:00:00Z", "2026-12-01", "today", "day",
    "'; DROP TABLE items; --", "%s%s%n", "../../etc/passwd", "appliance/#", "ção", "ü" * 121,
]  # fmt: skip
TRICKY_NUMBERS = [
    0, -1, 1, 10_001, 2**31, 2**63, -(2**63) - 1, 10**40, 1e308, -1e308, 1e-320,
    math.nan, math.inf, -math.inf, 0.1,
]  # fmt: skip

json_leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=40)
    | st.sampled_from(TRICKY_STRINGS)
    | st.sampled_from(TRICKY_NUMBERS)
)
json_values = st.recursive(
    json_leaves,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.text(max_size=12) | st.sampled_from(TRICKY_STRINGS), children, max_size=4
        )
    ),
    max_leaves=12,
)


@dataclass(frozen=True)
class Message:
    kind: str  # "cmd", "ha", "ha_status", "satellite"
    topic: str
    payload: bytes
    request_id: str | None = None  # a readable request id: its receipt is awaited
    retain: bool = False


def dumps(value: Any, ascii_only: bool) -> bytes:
    """JSON with NaN/Infinity literals; lone surrogates as escapes, or as raw (invalid
    UTF-8) bytes."""
    return json.dumps(value, allow_nan=True, ensure_ascii=ascii_only).encode(
        "utf-8", "surrogatepass"
    )


@st.composite
def mutated(draw: st.DrawFn, action: str, request_id: str) -> tuple[dict[str, Any], str | None]:
    """A valid command of ``action`` with one field replaced, removed or added."""
    data: dict[str, Any] = {"request_id": request_id, **VALID[action]}
    if draw(st.booleans()):
        data["user"], data["site"] = "ana", "kitchen"
    key = draw(st.sampled_from([*data, "user", "site", "colour", "action"]))
    how = draw(st.sampled_from(["replace", "replace", "remove"]))
    if how == "remove":
        data.pop(key, None)
    else:
        data[key] = draw(json_values)
    rid = data.get("request_id")
    return data, rid if isinstance(rid, str) and REQUEST_ID.match(rid) else None


@st.composite
def command_messages(draw: st.DrawFn, request_id: str) -> Message:
    name = draw(st.sampled_from([*ACTIONS, "text", "shopping.fly", "a/b/c", ""]))
    topic = f"{TOPICS.prefix}/cmd/" + name.replace(".", "/")  # cmd/text for "text"
    shape = draw(
        st.sampled_from(["bytes", "oversized", "deep", "json", "mutated", "mutated", "mutated"])
    )
    if shape == "bytes":
        return Message("cmd", topic, draw(st.binary(max_size=300)))
    if shape == "deep":  # deeper than json.loads can recurse, within the size limit
        opener = draw(st.sampled_from([b"[", b'{"item": ', b'{"request_id": "x", "a": [']))
        return Message("cmd", topic, opener * (MAX_PAYLOAD // len(opener)))
    if shape == "oversized":
        filler = "x" * (MAX_PAYLOAD + draw(st.integers(1, 2048)))
        return Message("cmd", topic, dumps({"request_id": request_id, "item": filler}, True))
    if shape == "json":
        return Message("cmd", topic, dumps(draw(json_values), draw(st.booleans())))
    data, rid = draw(mutated(name if name in VALID else "shopping.add", request_id))
    payload = dumps(data, draw(st.booleans()))
    try:
        payload.decode("utf-8")
    except UnicodeDecodeError:
        rid = None  # invalid UTF-8: the request id cannot be read
    if len(payload) > MAX_PAYLOAD:
        rid = None
    return Message("cmd", topic, payload, rid)


@st.composite
def ha_messages(draw: st.DrawFn) -> Message:
    site = draw(st.sampled_from(["kitchen", "nowhere", "x" * 65, "ünï", "a b"]))
    topic = draw(
        st.sampled_from(
            [
                TOPICS.ha_add_item,
                TOPICS.ha_clear_completed,
                TOPICS.ha_announce,
                TOPICS.ha_announce_site(site),
                f"{TOPICS.prefix}/ha/",
                f"{TOPICS.prefix}/ha/shopping/add/more",
            ]
        )
    )
    payload = draw(
        st.binary(max_size=300)
        | st.text(max_size=200).map(str.encode)
        | st.sampled_from(TRICKY_STRINGS).map(lambda s: s.encode("utf-8", "surrogatepass"))
        | st.integers(1, 3 * MAX_PAYLOAD).map(lambda n: b"a" * n)
    )
    return Message("ha", topic, payload)


@st.composite
def satellite_messages(draw: st.DrawFn) -> Message:
    """Messages on a satellite's topics (as that satellite); with voice off the node
    hears only ``status`` and ``info``."""
    site = SiteTopics(TOPICS.prefix, "kitchen")
    session = draw(st.sampled_from(["s1", "a" * 65, "-"]))
    topic = draw(
        st.sampled_from(
            [
                site.status, site.status, site.info, site.info, site.state, site.wake,
                site.event, site.audio(session), site.audio_end(session),
            ]
        )
    )  # fmt: skip
    info = {**SATELLITE_INFO}
    key = draw(st.sampled_from([*info, "lang", "sw_version", "extra"]))
    info[key] = draw(json_values)
    payload = draw(
        st.sampled_from([b"online", b"offline", b"", b" online\n", b"ONLINE"])
        | st.binary(max_size=300)
        | st.just(info).map(lambda d: dumps(d, False))
        | json_values.map(lambda v: dumps(v, True))
    )
    return Message("satellite", topic, payload, retain=draw(st.booleans()))


LAST_INSTANT = "9999-12-31T23:59:59-14:00"
EDGES: list[tuple[str, dict[str, Any]]] = [
    ("agenda.add", {"title": "a", "start": "0001-01-01T00:00:00+14:00"}),
    ("agenda.add", {"title": "a", "start": "0001-01-01T00:00:00-14:00"}),
    ("agenda.add", {"title": "a", "start": "9999-12-31T23:59:59-14:00"}),
    ("agenda.add", {"title": "a", "start": "9999-12-31T12:00:00+14:00", "duration_minutes": 20160}),
    ("agenda.add", {"title": "a", "start": "9999-12-31"}),
    ("agenda.add", {"title": "a", "start": "0001-01-01"}),
    ("agenda.add", {"title": "a", "start": "2026-12-01T10:00:00Z", "end": LAST_INSTANT}),
    ("agenda.move", {"title": "a", "new_start": "9999-12-31"}),
    ("agenda.move", {"title": "a", "new_start": "0001-01-01T00:00:00+14:00"}),
    ("agenda.move", {"title": "a", "day": "9999-12-31", "new_start": "2026-12-01"}),
    ("agenda.remove", {"title": "a", "day": "9999-12-31"}),
    ("agenda.remove", {"title": "a", "day": "0001-01-01"}),
    ("agenda.list", {"range": "day", "day": "9999-12-31"}),
    ("agenda.list", {"range": "day", "day": "0001-01-01"}),
    ("agenda.list", {"range": "week"}),
    ("agenda.next", {}),
    ("shopping.add", {"item": "rice", "quantity": 1e-320}),
    ("shopping.add", {"item": "rice", "quantity": 10_000}),
    ("shopping.add", {"item": "rice", "quantity": 10_000}),
    ("shopping.add", {"item": "ü" * 120, "quantity": 9999.999999999, "unit": "dozen"}),
    ("shopping.complete", {"item": "ü" * 120}),
    ("shopping.list", {"include_completed": True}),
    ("memory.edit", {"id": 2**63, "text": "x"}),
    ("memory.edit", {"id": 2**31, "importance": 10}),
    ("memory.delete", {"id": 2**64}),
    ("memory.add", {"text": "x" * 500, "importance": 10}),
    ("text", {"text": "add 99999999999999999999999 kg of rice to the shopping list"}),
    ("text", {"text": "add -5 liters of milk to the shopping list"}),
    ("text", {"text": "what's on the agenda on 9999-12-31", "lang": "pt"}),
    ("text", {"text": "remind me on december 31 9999 to do x"}),
    ("text", {"text": "add " + "milk and " * 1000 + "eggs"}),
    ("text", {"text": "milk " * 3000, "lang": "pt"}),
]  # fmt: skip


def edge_messages() -> list[Message]:
    """Hand-picked edges: the ends of the calendar, of numbers and of text."""
    result = []
    for n, (action, fields) in enumerate(EDGES):
        rid = f"edge-{n}"
        topic = TOPICS.text_command if action == "text" else TOPICS.command(action)
        payload = json.dumps({"request_id": rid, **fields}).encode()
        assert len(payload) <= MAX_PAYLOAD
        result.append(Message("cmd", topic, payload, rid))
    return result


def messages(request_id: str) -> st.SearchStrategy[Message]:
    ha_status = st.binary(max_size=40) | st.sampled_from([b"online", b"offline", b""])
    return st.one_of(
        command_messages(request_id),
        command_messages(request_id),
        command_messages(request_id),
        ha_messages(),
        satellite_messages(),
        ha_status.map(lambda p: Message("ha_status", HA_STATUS_TOPIC, p)),
    )


def node_task() -> asyncio.Task[Any]:
    tasks = [t for t in asyncio.all_tasks() if t.get_name() == "node"]
    assert len(tasks) == 1, "the node fixture's task is gone"
    return tasks[0]


@contextlib.asynccontextmanager
async def raw_client(broker: Mosquitto, user: str) -> AsyncIterator[aiomqtt.Client]:
    async with aiomqtt.Client(
        "127.0.0.1",
        broker.port,
        username=user,
        password=USERS[user],
        max_queued_outgoing_messages=0,
        socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
    ) as client:
        yield client


def errors_logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        f"{r.name}: {r.getMessage()}"
        for r in caplog.records
        if r.exc_info
        or "Traceback" in r.getMessage()
        or (r.levelno >= logging.ERROR and r.name.startswith(("appliance", "asyncio")))
    ]


async def test_fuzzed_messages_never_stop_the_node(
    node: Node, mosquitto: Mosquitto, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    task = node_task()
    async with asyncio.timeout(60):  # memory commands too, not only "memory_unavailable"
        while node.service is None or node.service.memory is None:
            await asyncio.sleep(0.05)
    loop = asyncio.get_running_loop()
    sent: list[Message] = []
    counter = iter(range(1_000_000))

    async with (
        ha_client(mosquitto) as ha,
        raw_client(mosquitto, "kitchen") as satellite,
    ):
        await ha.client.subscribe(TOPICS.receipts, qos=1)

        async def run(message: Message) -> None:
            client = satellite if message.kind == "satellite" else ha.client
            if message.request_id is not None:
                ha.receipts.pop(message.request_id, None)
            await client.publish(message.topic, message.payload, qos=1, retain=message.retain)
            sent.append(message)
            if message.request_id is not None:
                rid = message.request_id
                await ha.wait_for(lambda: rid in ha.receipts or task.done(), EXAMPLE_TIMEOUT)
            assert not task.done(), f"the node stopped after {message}"
            if message.request_id is not None:
                check_receipt(ha.receipts[message.request_id], message)

        def on_loop(message: Message) -> None:
            future = asyncio.run_coroutine_threadsafe(run(message), loop)
            future.result(EXAMPLE_TIMEOUT + 5)

        @settings(
            max_examples=150,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(data=st.data())
        def fuzz(data: st.DataObject) -> None:
            message = data.draw(messages(f"fz-{next(counter)}"))
            on_loop(message)

        for edge in edge_messages():
            await run(edge)
        await asyncio.to_thread(fuzz)
        assert len(sent) >= len(EDGES) + 150

        # Still serving: a plain command succeeds, after every fuzzed one was handled.
        receipt = await ha.command("shopping.add", {"item": "bread"}, "after-fuzz")
        assert receipt["status"] == "success", receipt
        expected = sum(
            1
            for m in sent
            if m.kind == "cmd" or m.topic in (TOPICS.ha_add_item, TOPICS.ha_clear_completed)
        )
        await ha.wait_for(lambda: len(ha.stream) > expected, 20)
        for streamed in ha.stream:
            check_receipt(streamed, None)
    assert not task.done()
    assert errors_logged(caplog) == []


def check_receipt(receipt: dict[str, Any], message: Message | None) -> None:
    where = f"{receipt} for {message}"
    assert receipt["status"] in STATUSES, where
    reason = receipt["reason"]
    assert reason is None or isinstance(reason, str), where
    # a fault surfaced as a reason is no answer to the user's mistake
    assert not (reason or "").startswith(("database_error", "request_in_progress")), where
    assert receipt["action"] is None or receipt["action"] in ACTIONS, where
