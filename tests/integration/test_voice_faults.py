"""Voice turns under faults: a satellite that drops off mid-stream, a stream that never
ends, garbage audio, a flood of wake claims and a broker restart mid-turn.

Each test checks what the user hears (the controls and speech the satellite gets),
what the receipts say, and that no action ran twice or was lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import random
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import aiomqtt
import psycopg
import pytest

from appliance.audio.vad import VadSettings
from appliance.node import Node
from appliance.protocol.topics import OFFLINE, ONLINE
from appliance.protocol.voice import CHUNK_BYTES, CHUNK_MS, AudioEnd, Control, SiteTopics
from tests.support import speech
from tests.support.client import HaClient, ha_client
from tests.support.mosquitto import USERS, Mosquitto
from tests.support.satellite import Satellite, satellite

pytestmark = [pytest.mark.integration, pytest.mark.slow]

COMMAND = "add three apples to my shopping list"
MAX_UTTERANCE_S = VadSettings().max_utterance_ms / 1000  # the session's engines use defaults


# ---------------------------------------------------------------------------------------
# helpers


@dataclass
class _Watcher:
    """A second connection as the satellite's user that sees its controls, with the
    time each arrived (the satellite itself may be gone)."""

    controls: list[tuple[float, Control]] = field(default_factory=list)

    def of(self, session_id: str, kind: str) -> list[float]:
        return [t for t, c in self.controls if c.session_id == session_id and c.type == kind]


@contextlib.asynccontextmanager
async def _watch_controls(broker: Mosquitto, site: str) -> AsyncIterator[_Watcher]:
    watcher = _Watcher()
    topic = SiteTopics("appliance", site).control
    async with aiomqtt.Client(
        "127.0.0.1", broker.port, username=site, password=USERS[site]
    ) as client:
        await client.subscribe(topic, qos=1)

        async def listen() -> None:
            loop = asyncio.get_running_loop()
            async for message in client.messages:
                payload = bytes(message.payload)
                watcher.controls.append((loop.time(), Control.from_payload(payload)))

        task = asyncio.create_task(listen(), name=f"watch-{site}")
        try:
            yield watcher
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


def _forget_lost_connection(client: aiomqtt.Client) -> None:
    """Retrieve aiomqtt's "unexpected disconnection" that nobody awaits after a
    connection was cut under it (else asyncio logs it at garbage collection)."""
    lost: asyncio.Future[None] = client._disconnected
    if lost.done() and not lost.cancelled():
        lost.exception()


async def _end_stream(sat: Satellite, session_id: str) -> None:
    end = AudioEnd(session_id=session_id, reason="vad")
    await sat.client.publish(sat.topics.audio_end(session_id), end.to_payload(), qos=1)


async def _stream_paced(sat: Satellite, session_id: str, pcm: bytes) -> None:
    """Stream ``pcm`` in real time by the clock (``Satellite.stream`` drifts behind it
    on a busy machine), so audio time and wall time agree."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    for n, offset in enumerate(range(0, len(pcm), CHUNK_BYTES)):
        chunk = pcm[offset : offset + CHUNK_BYTES]
        await sat.client.publish(sat.topics.audio(session_id), chunk, qos=0)
        await asyncio.sleep(max(0.0, start + (n + 1) * CHUNK_MS / 1000 - loop.time()))


async def _receipts(ha: HaClient) -> None:
    await ha.client.subscribe("appliance/receipts", qos=1)
    await ha.client.subscribe("appliance/diagnostics/voice/+", qos=1)


def _voice_receipts(ha: HaClient) -> list[dict[str, Any]]:
    return [r for r in ha.stream if r["source"]["kind"] == "voice"]


def _report(ha: HaClient, site: str, session_id: str) -> dict[str, Any] | None:
    topic = f"appliance/diagnostics/voice/{site}"
    reports = [json.loads(p) for t, p in ha.messages if t == topic]
    return next((r for r in reports if r["session_id"] == session_id), None)


async def _items(ha: HaClient) -> list[dict[str, Any]]:
    listing = await ha.command("shopping.list", {})
    assert listing["status"] == "success", listing
    items: list[dict[str, Any]] = listing["items"]
    return items


async def _say_command_until_it_acts(ha: HaClient, sat: Satellite) -> dict[str, Any]:
    """Say COMMAND (a few Piper renditions: one the engines do not both hear clearly is
    asked back and changes nothing); the one success receipt."""
    for length_scale in (1.0, 0.95, 1.05):
        said = speech.piper(COMMAND, length_scale=length_scale)
        sat.controls.clear()
        seen = len(ha.stream)
        session_id = await sat.claim()
        accept = await sat.wait_any(("accept", "reject", "stand_down"), timeout=10)
        assert (accept.type, accept.session_id) == ("accept", session_id), accept
        await sat.stream(session_id, speech.pad(said, 300, 1500))
        await sat.wait("speak", timeout=30)
        await ha.wait_for(lambda: len(ha.stream) > seen, timeout=30)  # noqa: B023
        receipt = ha.stream[seen]
        await sat.wait_any(("end", "stop"), timeout=30)
        if receipt["status"] == "success":
            break
        assert receipt["status"] == "needs_confirmation", receipt
        assert await _items(ha) == []
    await asyncio.sleep(0.5)
    adds = [r for r in ha.stream if r["status"] == "success"]
    assert len(adds) == 1, adds
    assert adds[0]["action"] == "shopping.add"
    assert adds[0]["request_id"] == f"voice-{session_id}"
    return adds[0]


def _assert_apples_once(items: list[dict[str, Any]]) -> None:
    assert [(i["name"], float(i["quantity"])) for i in items] == [("apples", 3.0)], items


# ---------------------------------------------------------------------------------------
# 1. the satellite drops off mid-stream


async def test_a_satellite_dropping_off_mid_stream_drops_the_turn_at_once(
    voice_node: Node, mosquitto: Mosquitto, caplog: pytest.LogCaptureFixture
) -> None:
    said = speech.piper(COMMAND)
    first_half = said[: len(said) // 4 * 2]
    loop = asyncio.get_running_loop()
    caplog.set_level(logging.WARNING, logger="appliance.voice.sessions")
    async with ha_client(mosquitto) as ha, _watch_controls(mosquitto, "kitchen") as watcher:
        await _receipts(ha)
        await ha.client.subscribe("appliance/satellite/kitchen/status", qos=1)
        dropping = satellite(mosquitto)
        sat = await dropping.__aenter__()
        try:
            await sat.client.publish(sat.topics.status, ONLINE, qos=1, retain=True)
            session_id = await sat.claim()
            accept = await sat.wait_any(("accept", "reject", "stand_down"), timeout=10)
            assert (accept.type, accept.session_id) == ("accept", session_id)
            await sat.stream(session_id, speech.silence(300) + first_half)
            # The connection dies without a DISCONNECT (power cut, Wi-Fi gone): the
            # broker publishes the satellite's last will.
            sat.client._client.socket().shutdown(socket.SHUT_RDWR)  # type: ignore[union-attr]
            dropped_at = loop.time()
        finally:
            with contextlib.suppress(aiomqtt.MqttError):
                async with asyncio.timeout(15):
                    await dropping.__aexit__(None, None, None)
            _forget_lost_connection(sat.client)
        status = "appliance/satellite/kitchen/status"
        await ha.wait_for(lambda: (status, OFFLINE.encode()) in ha.messages, timeout=5)
        # The node drops the turn promptly: it stops the session (the satellite would
        # hear "stop" if it were still there) and its heartbeat stops.
        async with asyncio.timeout(2.5):
            await voice_node.voice.wait_idle("kitchen")  # type: ignore[union-attr]
        ended_at = loop.time()
        assert ended_at - dropped_at < 2.5
        await asyncio.sleep(2 * 2.0 + 0.5)  # two heartbeats' worth
        stops = watcher.of(session_id, "stop")
        assert len(stops) == 1 and stops[0] - dropped_at < 2.5, watcher.controls
        assert not [t for t in watcher.of(session_id, "working") if t > stops[0]]
        assert not watcher.of(session_id, "end")
        assert not watcher.of(session_id, "speak")
        assert "went offline mid-turn" in caplog.text
        # Nothing half-heard acted: no receipt, the list is untouched.
        assert _voice_receipts(ha) == []
        assert await _items(ha) == []

        # The satellite comes back and claims again: accepted as usual.
        async with satellite(mosquitto) as back:
            await back.client.publish(back.topics.status, ONLINE, qos=1, retain=True)
            again = await back.claim()
            accept = await back.wait_any(("accept", "reject", "stand_down"), timeout=10)
            assert (accept.type, accept.session_id) == ("accept", again)
            await back.stream(again, speech.silence(500))
            await _end_stream(back, again)
            end = await back.wait_any(("end", "stop"), timeout=15)
            assert (end.type, end.session_id) == ("end", again)
            assert not back.speech
        assert _voice_receipts(ha) == []


# ---------------------------------------------------------------------------------------
# 2. a stream that never ends


async def test_a_stream_that_never_ends_is_cut_at_the_longest_utterance(
    voice_node: Node, mosquitto: Mosquitto
) -> None:
    talk = speech.babble((MAX_UTTERANCE_S + 10) * 1000, dbfs=-20)
    loop = asyncio.get_running_loop()
    async with ha_client(mosquitto) as ha, satellite(mosquitto) as sat:
        await _receipts(ha)
        session_id = await sat.claim()
        accept = await sat.wait_any(("accept", "reject", "stand_down"), timeout=10)
        assert (accept.type, accept.session_id) == ("accept", session_id)
        accepted_at = loop.time()
        streaming = asyncio.create_task(_stream_paced(sat, session_id, talk), name="babble")
        try:
            # the node stops listening by itself: it answers (or ends) while the
            # satellite is still talking
            first = await sat.wait_any(("speak", "end", "stop"), timeout=MAX_UTTERANCE_S + 12)
            assert not streaming.done(), "the stream ended before the node did"
        finally:
            streaming.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await streaming
        assert first.session_id == session_id
        end = await sat.wait_any(("end", "stop"), timeout=20)
        assert (end.type, end.session_id) == ("end", session_id), end
        assert loop.time() - accepted_at < MAX_UTTERANCE_S + 20
        await ha.wait_for(lambda: _report(ha, "kitchen", session_id) is not None)
        report = _report(ha, "kitchen", session_id)
        assert report is not None
        marks = report["milestones_ms"]
        # cut at the longest utterance after the speech started (frames of 32 ms)
        assert marks["end_of_speech"] - marks["speech_start"] <= MAX_UTTERANCE_S * 1000 + 500
        assert report["decision"] != "act", report
        # babble acts on nothing
        assert report["receipt"] is None or report["receipt"]["status"] != "success"
        assert not [r for r in ha.stream if r["status"] == "success"]
        assert await _items(ha) == []


# ---------------------------------------------------------------------------------------
# 3. garbage audio


async def _garbage_turn(ha: HaClient, sat: Satellite, chunks: list[bytes]) -> None:
    """A session whose audio is ``chunks``, then end of stream: the turn ends with no
    action, and the node lives on (a command from Home Assistant works, a new claim
    is taken)."""
    await _receipts(ha)
    session_id = await sat.claim()
    accept = await sat.wait_any(("accept", "reject", "stand_down"), timeout=10)
    assert (accept.type, accept.session_id) == ("accept", session_id)
    for chunk in chunks:
        await sat.client.publish(sat.topics.audio(session_id), chunk, qos=0)
    await _end_stream(sat, session_id)
    end = await sat.wait_any(("end", "stop"), timeout=20)
    assert (end.type, end.session_id) == ("end", session_id), end
    await asyncio.sleep(0.5)
    assert _voice_receipts(ha) == []
    assert await _items(ha) == []
    added = await ha.command("shopping.add", {"item": "milk", "quantity": 1})
    assert added["status"] == "success", added
    assert [i["name"] for i in await _items(ha)] == ["milk"]
    sat.controls.clear()
    again = await sat.claim()
    accept = await sat.wait_any(("accept", "reject", "stand_down"), timeout=10)
    assert (accept.type, accept.session_id) == ("accept", again)
    await _end_stream(sat, again)
    assert (await sat.wait_any(("end", "stop"), timeout=15)).type == "end"


async def test_random_bytes_and_a_huge_chunk_end_the_turn_without_acting(
    voice_node: Node, mosquitto: Mosquitto
) -> None:
    chunks = [os.urandom(CHUNK_BYTES) for _ in range(10)]
    chunks += [os.urandom(1 << 20)]  # 1 MB at once (32 s of "audio")
    async with ha_client(mosquitto) as ha, satellite(mosquitto) as sat:
        await _garbage_turn(ha, sat, chunks)


async def test_odd_length_audio_chunks_end_the_turn_without_acting(
    voice_node: Node, mosquitto: Mosquitto
) -> None:
    rng = random.Random(7)
    chunks = [rng.randbytes(n) for n in (CHUNK_BYTES, 1, 3, 2047, 0, 333, 4099, CHUNK_BYTES)]
    async with ha_client(mosquitto) as ha, satellite(mosquitto) as sat:
        await _garbage_turn(ha, sat, chunks)


# ---------------------------------------------------------------------------------------
# 4. a flood of wake claims


def _assert_one_session_at_a_time(site: str, sat: Satellite, claimed: set[str]) -> None:
    """Every control answers one of ``claimed``, each claim at most once; a session is
    accepted only when the one before it has ended; every session ends; no speech."""
    seq = [f"{c.type}:{c.session_id[:6]}" for c in sat.controls if c.type != "reject"]
    answers: dict[str, list[str]] = {}
    open_sessions: set[str] = set()
    for control in sat.controls:
        assert control.session_id in claimed, control
        if control.type in ("accept", "reject", "stand_down"):
            answers.setdefault(control.session_id, []).append(control.type)
        if control.type == "accept":
            open_sessions.add(control.session_id)
            assert len(open_sessions) == 1, f"{site}: two sessions at once: {seq}"
        elif control.type in ("end", "stop"):
            assert control.session_id in open_sessions, control
            open_sessions.discard(control.session_id)
    assert open_sessions == set(), f"{site}: a session never ended: {seq}"
    assert all(len(a) == 1 for a in answers.values()), answers  # one answer each
    reasons = {c.reason for c in sat.controls if c.type == "reject"}
    assert reasons <= {"busy"}, reasons
    assert not sat.speech


async def _end_each_accepted(sat: Satellite) -> None:
    """Whenever a session is accepted, the satellite ends its stream at once."""
    done = 0
    while True:
        await sat.until(lambda: len(sat.controls) > done, timeout=3600)  # noqa: B023
        for control in sat.controls[done:]:
            if control.type == "accept":
                await _end_stream(sat, control.session_id)
        done = len(sat.controls)


async def test_a_flood_of_wake_claims_gives_one_session_per_site_at_a_time(
    voice_node: Node, mosquitto: Mosquitto
) -> None:
    rng = random.Random(11)
    async with (
        ha_client(mosquitto) as ha,
        satellite(mosquitto, "kitchen") as kitchen,
        satellite(mosquitto, "living_room") as living,
    ):
        await _receipts(ha)
        claimed: dict[str, set[str]] = {"kitchen": set(), "living_room": set()}
        sats = {"kitchen": kitchen, "living_room": living}

        enders = [asyncio.create_task(_end_each_accepted(s), name="ender") for s in sats.values()]
        try:
            for i in range(200):
                claimed["kitchen"].add(await kitchen.claim(score=rng.uniform(0.5, 1.0)))
                if i % 10 == 0:
                    claimed["living_room"].add(await living.claim(score=rng.uniform(0.5, 1.0)))
                await asyncio.sleep(0.005)
            await asyncio.sleep(1.0)  # the last arbitration window, and its accept
            with contextlib.suppress(TimeoutError):  # the checks below say what is wrong
                async with asyncio.timeout(10):
                    for site in sats:
                        await voice_node.voice.wait_idle(site)  # type: ignore[union-attr]
            await asyncio.sleep(0.5)
        finally:
            for task in enders:
                task.cancel()
            await asyncio.gather(*enders, return_exceptions=True)

        for site, sat in sats.items():
            _assert_one_session_at_a_time(site, sat, claimed[site])
        accepted = [c for s in sats.values() for c in s.controls if c.type == "accept"]
        assert accepted, "no claim was accepted"
        assert _voice_receipts(ha) == []

        # the node lives on: a spoken command acts once
        receipt = await _say_command_until_it_acts(ha, kitchen)
        assert receipt["source"]["site"] == "kitchen"
        _assert_apples_once(await _items(ha))


async def test_claims_while_the_database_is_slow_give_one_session_per_site(
    voice_node: Node, mosquitto: Mosquitto, db_url: str
) -> None:
    # The database stalls for a second (a checkpoint, a slow SD card) while one
    # satellite keeps claiming: the node still runs one session at a time there.
    async with ha_client(mosquitto) as ha, satellite(mosquitto) as sat:
        await _receipts(ha)
        claimed: set[str] = set()
        ender = asyncio.create_task(_end_each_accepted(sat), name="ender")
        try:
            async with await psycopg.AsyncConnection.connect(db_url) as conn:
                await conn.execute("LOCK TABLE shopping_items IN ACCESS EXCLUSIVE MODE")
                for _ in range(100):
                    claimed.add(await sat.claim())
                    await asyncio.sleep(0.01)
                await conn.rollback()
            await asyncio.sleep(1.0)
            with contextlib.suppress(TimeoutError):  # the checks below say what is wrong
                async with asyncio.timeout(10):
                    await voice_node.voice.wait_idle("kitchen")  # type: ignore[union-attr]
            await asyncio.sleep(0.5)
        finally:
            ender.cancel()
            await asyncio.gather(ender, return_exceptions=True)
        assert any(c.type == "accept" for c in sat.controls)
        _assert_one_session_at_a_time("kitchen", sat, claimed)
        assert _voice_receipts(ha) == []


# ---------------------------------------------------------------------------------------
# 5. the broker restarts mid-turn


async def _db_rows(url: str, sql: str, *params: object) -> list[tuple[Any, ...]]:
    async with await psycopg.AsyncConnection.connect(url) as conn:
        cur = await conn.execute(sql, params)
        return await cur.fetchall()


async def test_a_broker_restart_mid_turn_acts_once_or_not_at_all(
    voice_node: Node, mosquitto: Mosquitto, db_url: str
) -> None:
    said = speech.pad(speech.piper(COMMAND), 300, 1500)
    received: list[dict[str, Any]] = []
    ha_id = "vf-ha-persistent"
    async with ha_client(mosquitto, client_id=ha_id, clean_session=False) as ha:
        await ha.client.subscribe("appliance/receipts", qos=1)
    first_ha = ha_client(mosquitto, client_id=ha_id, clean_session=False)
    ha = await first_ha.__aenter__()
    talking = satellite(mosquitto)
    try:
        sat = await talking.__aenter__()
        try:
            session_id = await sat.claim()
            accept = await sat.wait_any(("accept", "reject", "stand_down"), timeout=10)
            assert (accept.type, accept.session_id) == ("accept", session_id)
            await sat.stream(session_id, said)  # said in full: the node heard the end
            await asyncio.to_thread(mosquitto.stop)  # while both engines work on it
        finally:
            with contextlib.suppress(aiomqtt.MqttError):
                async with asyncio.timeout(15):
                    await talking.__aexit__(None, None, None)
            _forget_lost_connection(sat.client)
    finally:
        received.extend(ha.stream)
        with contextlib.suppress(aiomqtt.MqttError):
            async with asyncio.timeout(15):
                await first_ha.__aexit__(None, None, None)
        _forget_lost_connection(ha.client)
    await asyncio.sleep(1.0)
    await asyncio.to_thread(mosquitto.start)

    async with (
        ha_client(mosquitto, client_id=ha_id, clean_session=False) as ha,
        satellite(mosquitto) as back,
    ):
        # the turn finishes (or is dropped) with the broker back
        async with asyncio.timeout(45):
            await voice_node.voice.wait_idle("kitchen")  # type: ignore[union-attr]
        async with asyncio.timeout(15):
            while (await _db_rows(db_url, "SELECT count(*) FROM outbox"))[0][0]:
                await asyncio.sleep(0.2)
        stored = await _db_rows(
            db_url,
            "SELECT request_id, status FROM receipts WHERE request_id LIKE %s",
            f"voice-{session_id}%",
        )
        stored_ids = {rid for rid, _ in stored}
        # every stored receipt reaches Home Assistant (some after the reconnection)
        await ha.wait_for(
            lambda: stored_ids <= {r["request_id"] for r in [*received, *ha.stream]}, timeout=10
        )
        await asyncio.sleep(0.5)
        got = [*received, *ha.stream]
        successes = [rid for rid, status in stored if status == "success"]
        items = await _items(ha)
        if successes:
            assert len(successes) == 1, stored
            _assert_apples_once(items)
        else:
            assert items == [], (stored, items)
        assert {r["request_id"] for r in got} == stored_ids
        assert len([r for r in got if r["status"] == "success"]) <= 1
        # the satellite, back, is not asked to stream again for that turn
        assert not [c for c in back.controls if c.type in ("accept", "listen")]
