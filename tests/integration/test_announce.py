"""Announcements from Home Assistant, spoken by the node at the satellites: real broker,
real Piper, virtual satellites."""

from __future__ import annotations

import asyncio
import json

import pytest

from appliance.node import Node
from appliance.protocol.voice import SatelliteInfo
from appliance.voice.turn import Engines
from tests.conftest import LoadingVoiceNode
from tests.support import speech
from tests.support.client import ha_client
from tests.support.mosquitto import Mosquitto
from tests.support.satellite import Satellite, satellite

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TEXT = "The washing machine has finished. Please hang the laundry outside."


def _info(site: str) -> SatelliteInfo:
    return SatelliteInfo(site=site, name=site.replace("_", " ").title(), lang="en")


def _seconds(sat: Satellite, session_id: str, rate: int) -> float:
    return len(sat.speech_by_session.get(session_id, b"")) / (2 * rate)


def _plausible(seconds: float, text: str) -> bool:
    """Speech at 1.5 to 5 words a second (Piper speaks about 2.5)."""
    words = len(text.split())
    return words / 5 <= seconds <= words / 1.5


async def _known(node: Node, *sites: str, online: bool = True) -> None:
    """Until the node has seen these satellites' status (retained, so it comes soon)."""
    async with asyncio.timeout(10):
        while not all(
            (s := node.satellites.get(site)) is not None and s.online == online for site in sites
        ):
            await asyncio.sleep(0.02)


async def test_an_announcement_for_one_satellite_is_spoken_there_and_ended_after_played(
    voice_node: Node, mosquitto: Mosquitto, voice_engines: Engines
) -> None:
    async with (
        satellite(mosquitto, "kitchen", info=_info("kitchen"), auto_played=False) as kitchen,
        satellite(mosquitto, "living_room", info=_info("living_room")) as living_room,
        ha_client(mosquitto) as ha,
    ):
        await _known(voice_node, "kitchen", "living_room")
        await ha.client.publish("appliance/ha/announce/kitchen", TEXT.encode(), qos=1)
        speak = await kitchen.wait("speak", timeout=30)
        assert speak.text == TEXT
        rate = voice_engines.speaker.sample_rate_for("en")
        assert (speak.rate, speak.width, speak.channels) == (rate, 2, 1)
        await kitchen.until(lambda: any(e.session_id == speak.session_id
                                        for e in kitchen.play_ends))  # fmt: skip
        end = next(e for e in kitchen.play_ends if e.session_id == speak.session_id)
        assert end.chunks > 1
        seconds = _seconds(kitchen, speak.session_id, rate)
        assert _plausible(seconds, TEXT), seconds
        # the session stays open until the satellite says it has played the speech
        await asyncio.sleep(1.0)
        assert [c.type for c in kitchen.controls] == ["speak"]
        await kitchen.played(speak.session_id)
        ended = await kitchen.wait("end", timeout=10)
        assert ended.session_id == speak.session_id
        assert living_room.controls == []
        assert living_room.speech == b""
        assert not [t for t, _ in ha.messages if t == "appliance/announce"]


async def test_an_announcement_for_everyone_reaches_each_online_satellite_only(
    voice_node: Node, mosquitto: Mosquitto
) -> None:
    async with (
        satellite(mosquitto, "kitchen", info=_info("kitchen")) as kitchen,
        satellite(mosquitto, "office", info=_info("office")) as office,
        satellite(mosquitto, "living_room", info=_info("living_room"), online=False) as away,
        ha_client(mosquitto) as ha,
    ):
        await _known(voice_node, "kitchen", "office")
        await _known(voice_node, "living_room", online=False)
        await ha.client.publish("appliance/ha/announce", b"Dinner is ready.", qos=1)
        for sat in (kitchen, office):
            end = await sat.wait("end", timeout=30)
            assert [c.type for c in sat.controls] == ["speak", "end"]
            speak = sat.controls[0]
            assert speak.text == "Dinner is ready." and speak.session_id == end.session_id
            assert speak.rate is not None
            assert _plausible(_seconds(sat, speak.session_id, speak.rate), "Dinner is ready.")
        # each satellite had a session of its own
        assert kitchen.controls[0].session_id != office.controls[0].session_id
        await asyncio.sleep(0.5)
        assert away.controls == []
        assert away.speech == b""


async def test_an_announcement_waits_for_the_voice_turn_at_that_satellite(
    voice_node: Node, mosquitto: Mosquitto
) -> None:
    async with (
        satellite(mosquitto, "kitchen", info=_info("kitchen")) as kitchen,
        ha_client(mosquitto) as ha,
    ):
        await _known(voice_node, "kitchen")
        turn = await kitchen.claim()
        await kitchen.wait("accept")
        await ha.client.publish("appliance/ha/announce/kitchen", b"The door is open.", qos=1)
        # the turn hears nothing and ends by itself; the announcement comes after it
        await kitchen.stream(turn, speech.white_noise(6000, dbfs=-50))
        await kitchen.until(lambda: [c.type for c in kitchen.controls].count("end") == 2)
        # (the node's "still on it" heartbeats come and go with the turn)
        types = [(c.type, c.session_id == turn) for c in kitchen.controls if c.type != "working"]
        assert types == [("accept", True), ("end", True), ("speak", False), ("end", False)]


async def test_while_the_models_load_an_announcement_is_published_not_spoken(
    loading_voice_node: LoadingVoiceNode, mosquitto: Mosquitto
) -> None:
    node = loading_voice_node.node
    async with (
        satellite(mosquitto, "kitchen", info=_info("kitchen")) as kitchen,
        ha_client(mosquitto) as ha,
    ):
        await ha.client.subscribe("appliance/announce", qos=1)
        await _known(node, "kitchen")
        await ha.client.publish("appliance/ha/announce/kitchen", b"Hello", qos=1)
        await ha.wait_for(lambda: any(t == "appliance/announce" for t, _ in ha.messages))
        published = [json.loads(p) for t, p in ha.messages if t == "appliance/announce"]
        assert published == [{"text": "Hello", "site": "kitchen"}]
        assert kitchen.controls == []
