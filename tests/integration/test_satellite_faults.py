"""The satellite against a scripted node on a real broker: every turn outcome, the
protocol's edges and the faults a room client meets (no node, broker gone, stop)."""

from __future__ import annotations

import asyncio
import contextlib
import wave
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import aiomqtt
import pytest

from appliance.protocol.voice import (
    AudioEnd,
    Control,
    PlayEnd,
    SatelliteEvent,
    SiteTopics,
    WakeClaim,
)
from satellites.audio import WavInput, WavOutput, read_wav
from satellites.client import Satellite
from satellites.settings import SatelliteSettings
from tests.support import speech
from tests.support.mosquitto import USERS, Mosquitto

pytestmark = [pytest.mark.integration]

SITE = "kitchen"
TOPICS = SiteTopics("appliance", SITE)


@dataclass
class ScriptedNode:
    """Plays the node's side of the protocol by hand."""

    client: aiomqtt.Client
    claims: list[WakeClaim] = field(default_factory=list)
    audio: dict[str, bytearray] = field(default_factory=dict)
    ends: list[AudioEnd] = field(default_factory=list)
    events: list[SatelliteEvent] = field(default_factory=list)
    audio_after_listen: int = 0
    listening_again: bool = False
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def listen(self) -> None:
        async for message in self.client.messages:
            topic, payload = message.topic.value, bytes(message.payload)  # type: ignore[arg-type]
            if topic == TOPICS.wake:
                self.claims.append(WakeClaim.from_payload(payload))
            elif topic == TOPICS.event:
                self.events.append(SatelliteEvent.from_payload(payload))
            elif "/audio/" in topic and topic.endswith("/end"):
                self.ends.append(AudioEnd.from_payload(payload))
            elif "/audio/" in topic:
                self.audio.setdefault(topic.rsplit("/", 1)[1], bytearray()).extend(payload)
                if self.listening_again:
                    self.audio_after_listen += len(payload)
            self.arrived.set()

    async def wait_for(self, predicate: object, timeout: float = 15) -> None:
        assert callable(predicate)
        async with asyncio.timeout(timeout):
            while not predicate():
                self.arrived.clear()
                await self.arrived.wait()

    async def claimed(self) -> str:
        """The session id of the first wake claim, once it came."""
        await self.wait_for(lambda: self.claims)
        return self.claims[0].session_id

    async def accepted(self) -> str:
        """Accept the first wake claim; its session id."""
        sid = await self.claimed()
        await self.control(Control(type="accept", session_id=sid))
        return sid

    async def control(self, control: Control | bytes) -> None:
        payload = control if isinstance(control, bytes) else control.to_payload()
        await self.client.publish(TOPICS.control, payload, qos=1)

    async def speak(self, sid: str, pcm: bytes, *, rate: int = 16_000, end: bool = True) -> None:
        await self.control(Control(type="speak", session_id=sid, rate=rate, width=2, channels=1))
        count = 0
        for i in range(0, len(pcm), 4096):
            await self.client.publish(TOPICS.play(sid), pcm[i : i + 4096], qos=0)
            count += 1
        if end:
            await self.client.publish(
                TOPICS.play_end(sid), PlayEnd(session_id=sid, chunks=count).to_payload(), qos=1
            )


@contextlib.asynccontextmanager
async def scripted_node(broker: Mosquitto) -> AsyncIterator[ScriptedNode]:
    async with aiomqtt.Client(
        "127.0.0.1", broker.port, username="appliance", password=USERS["appliance"]
    ) as client:
        node = ScriptedNode(client)
        await client.subscribe(f"{TOPICS.base}/#", qos=1)
        task = asyncio.create_task(node.listen())
        try:
            yield node
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


def command_wav(path: Path, tail_ms: int = 2500) -> Path:
    pcm = speech.concat(
        speech.silence(500),
        speech.piper("Hey Jarvis."),
        speech.silence(600),
        speech.piper("add milk to the shopping list"),
        speech.silence(tail_ms),
    )
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(16_000)
        wav.writeframes(pcm)
    return path


def make_satellite(broker: Mosquitto, wav: Path, out: Path, **stream: object) -> Satellite:
    return Satellite(
        SatelliteSettings(
            site=SITE,
            mqtt={"url": broker.url, "password": USERS[SITE], "reconnect_max_seconds": 0.5},
            audio={"chimes": False},
            stream={"accept_timeout_s": 1.5, **stream},
        ),
        WavInput(wav, tail_s=6),
        WavOutput(out),
        once=True,
    )


async def test_a_turn_streams_after_the_wake_ends_by_itself_and_plays_the_answer(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    out = tmp_path / "out.wav"
    sat = make_satellite(mosquitto, command_wav(tmp_path / "in.wav"), out)
    async with scripted_node(mosquitto) as node:
        run = asyncio.create_task(sat.run(asyncio.Event()))
        await node.wait_for(lambda: node.claims)
        claim = node.claims[0]
        assert claim.wake_word == "hey_jarvis"
        assert claim.score >= 0.5
        await node.control(b"{not json")  # malformed: logged, ignored
        await node.control(Control(type="accept", session_id=claim.session_id))
        # no word from the node: the satellite's own end of speech closes the stream
        await node.wait_for(lambda: node.ends, timeout=20)
        assert node.ends[0].reason == "vad"
        streamed = bytes(node.audio[claim.session_id])
        seconds = len(streamed) / 32_000
        # the command (~1.7 s) and the trailing silence, not the wake word's 2 s before it
        assert 1.5 < seconds < 5.0, seconds
        reply = speech.piper("Milk is on the list.")
        await node.speak(claim.session_id, reply)
        await node.wait_for(lambda: any(e.type == "played" for e in node.events))
        await node.control(Control(type="end", session_id=claim.session_id))
        async with asyncio.timeout(20):
            turns = await run
    assert [t.outcome for t in turns] == ["ended"]
    written = read_wav(out)
    assert abs(len(written) - len(reply)) <= 4  # all of it, nothing else (chimes off)


async def test_nobody_answering_the_claim_drops_the_turn(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    sat = make_satellite(mosquitto, command_wav(tmp_path / "in.wav"), tmp_path / "out.wav")
    async with asyncio.timeout(30):
        turns = await sat.run(asyncio.Event())
    assert [t.outcome for t in turns] == ["no_answer"]
    assert turns[0].audio_sent == 0  # nothing went on the wire without an accept


async def test_a_rejected_claim_sends_no_audio(mosquitto: Mosquitto, tmp_path: Path) -> None:
    sat = make_satellite(mosquitto, command_wav(tmp_path / "in.wav"), tmp_path / "out.wav")
    async with scripted_node(mosquitto) as node:
        run = asyncio.create_task(sat.run(asyncio.Event()))
        sid = await node.claimed()
        await node.control(Control(type="stand_down", session_id=sid, reason="answered by hall"))
        async with asyncio.timeout(30):
            turns = await run
        assert node.audio == {}
    assert (turns[0].outcome, turns[0].reason) == ("stood_down", "answered by hall")


async def test_stop_from_home_assistant_cuts_the_answer_and_tells_the_node(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    out = tmp_path / "out.wav"
    sat = make_satellite(mosquitto, command_wav(tmp_path / "in.wav"), out)
    async with scripted_node(mosquitto) as node:
        run = asyncio.create_task(sat.run(asyncio.Event()))
        sid = await node.accepted()
        await node.wait_for(lambda: node.audio.get(sid))
        await node.speak(sid, speech.piper("Here is a long answer."), end=False)
        await asyncio.sleep(0.3)
        await node.client.publish(TOPICS.set("stop"), b"", qos=1)
        await node.wait_for(lambda: any(e.type == "stop" for e in node.events))
        async with asyncio.timeout(20):
            turns = await run
    assert turns[0].outcome == "stopped"
    assert not any(e.type == "played" for e in node.events)
    written = read_wav(out)
    assert written == b""  # the cut answer was not played


async def test_listen_opens_the_microphone_again_in_the_same_session(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    # No speech for 2.5 s ends a stream: long enough for the command after the wake
    # (said 0.6 s after it) on a busy machine, short enough for the silence after.
    sat = make_satellite(
        mosquitto, command_wav(tmp_path / "in.wav"), tmp_path / "out.wav", no_speech_timeout_s=2.5
    )
    async with scripted_node(mosquitto) as node:
        run = asyncio.create_task(sat.run(asyncio.Event()))
        sid = await node.accepted()
        await node.wait_for(lambda: node.ends, timeout=20)
        await node.speak(sid, speech.piper("Did you want milk?"))
        await node.wait_for(lambda: any(e.type == "played" for e in node.events))
        node.listening_again = True
        await node.control(Control(type="listen", session_id=sid))
        # silence only: the satellite ends this stream after its no-speech timeout
        await node.wait_for(lambda: len(node.ends) == 2, timeout=15)
        assert node.ends[0].reason == "vad"
        assert node.ends[1].reason == "timeout"
        assert node.audio_after_listen >= 32_000 * 2.5 * 0.9
        await node.control(Control(type="end", session_id=sid))
        async with asyncio.timeout(20):
            turns = await run
    assert turns[0].outcome == "ended"


async def test_losing_the_broker_mid_turn_drops_the_turn_and_reconnects(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    sat = make_satellite(
        mosquitto, command_wav(tmp_path / "in.wav", tail_ms=8000), tmp_path / "out.wav"
    )
    stop = asyncio.Event()
    sat._once = False  # keep running after the turn, to see it come back
    async with scripted_node(mosquitto) as node:
        run = asyncio.create_task(sat.run(stop))
        sid = await node.accepted()
        await node.wait_for(lambda: node.audio.get(sid))
    mosquitto.stop(kill=True)
    async with asyncio.timeout(10):
        while not sat.turns or sat.turns[0].outcome is None:
            await asyncio.sleep(0.05)
    assert sat.turns[0].outcome == "lost"
    assert sat.playing is False
    mosquitto.start()
    async with asyncio.timeout(15):
        await sat.bus.connected.wait()
    stop.set()
    async with asyncio.timeout(20):
        await run


async def test_a_node_gone_silent_mid_turn_ends_it_within_seconds(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    # The node that accepted the turn dies (no will on the satellite's topics): only
    # its silence tells, node_silence_s after its last word, even mid-stream.
    sat = make_satellite(
        mosquitto, command_wav(tmp_path / "in.wav"), tmp_path / "out.wav", node_silence_s=2.0
    )
    async with scripted_node(mosquitto) as node:
        run = asyncio.create_task(sat.run(asyncio.Event()))
        await node.accepted()
        accepted = asyncio.get_running_loop().time()
        async with asyncio.timeout(10):
            turns = await run
        waited = asyncio.get_running_loop().time() - accepted
    assert (turns[0].outcome, turns[0].reason) == ("lost", "the node stopped answering")
    assert 2.0 <= waited < 2.0 + 1.5, waited


async def test_the_nodes_heartbeat_keeps_a_long_turn_alive(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    sat = make_satellite(
        mosquitto, command_wav(tmp_path / "in.wav"), tmp_path / "out.wav", node_silence_s=1.5
    )
    async with scripted_node(mosquitto) as node:
        run = asyncio.create_task(sat.run(asyncio.Event()))
        sid = await node.accepted()

        async def beat() -> None:
            while True:
                await node.control(Control(type="working", session_id=sid))
                await asyncio.sleep(0.5)

        beating = asyncio.create_task(beat())
        await node.wait_for(lambda: node.ends, timeout=20)
        await asyncio.sleep(4)  # "thinking", well past node_silence_s
        assert not run.done()
        beating.cancel()
        await node.control(Control(type="end", session_id=sid))
        async with asyncio.timeout(20):
            turns = await run
    assert turns[0].outcome == "ended"
