"""A virtual satellite over MQTT for tests and benchmarks: claims a session after a
(pretend) wake word, streams PCM as fast as it is spoken, collects the reply.

It may also say what it is (retained ``info`` and ``status``, ``offline`` as its last
will), and it records what it receives besides controls: speech per session, play ends
and the settings Home Assistant sends (``set/<name>``). It answers ``played`` to every
play end unless told not to (``auto_played=False``; then ``played()`` does it).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import aiomqtt

from appliance.protocol.topics import OFFLINE, ONLINE
from appliance.protocol.voice import (
    CHUNK_BYTES,
    CHUNK_MS,
    Control,
    PlayEnd,
    SatelliteEvent,
    SatelliteInfo,
    SiteTopics,
    WakeClaim,
)
from tests.support.mosquitto import USERS, Mosquitto


@dataclass
class Satellite:
    """A virtual satellite: claims a session, streams audio, collects the reply."""

    client: aiomqtt.Client
    site: str
    auto_played: bool = True
    controls: list[Control] = field(default_factory=list)
    speech: bytearray = field(default_factory=bytearray)
    speech_by_session: dict[str, bytearray] = field(default_factory=dict)
    play_ends: list[PlayEnd] = field(default_factory=list)
    settings: list[tuple[str, bytes]] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def topics(self) -> SiteTopics:
        return SiteTopics("appliance", self.site)

    async def listen(self) -> None:
        set_prefix = f"{self.topics.base}/set/"
        async for message in self.client.messages:
            topic = message.topic.value
            payload = bytes(message.payload)  # type: ignore[arg-type]
            if topic == self.topics.control:
                self.controls.append(Control.from_payload(payload))
            elif topic.startswith(set_prefix):
                self.settings.append((topic[len(set_prefix) :], payload))
            elif topic.startswith(f"{self.topics.base}/play/") and not topic.endswith("/end"):
                self.speech.extend(payload)
                session_id = topic.rsplit("/", 1)[1]
                self.speech_by_session.setdefault(session_id, bytearray()).extend(payload)
            elif topic.endswith("/end") and "/play/" in topic:
                end = PlayEnd.from_payload(payload)
                self.play_ends.append(end)
                if self.auto_played:
                    await self.played(end.session_id)
            self.arrived.set()

    async def played(self, session_id: str) -> None:
        event = SatelliteEvent(type="played", session_id=session_id)
        await self.client.publish(self.topics.event, event.to_payload(), qos=1)

    async def until(self, predicate: Callable[[], bool], timeout: float = 60) -> None:
        """Until ``predicate()`` holds, checked whenever a message arrives."""
        async with asyncio.timeout(timeout):
            while not predicate():
                self.arrived.clear()
                await self.arrived.wait()

    async def wait(self, kind: str, timeout: float = 60) -> Control:
        async with asyncio.timeout(timeout):
            while True:
                for control in self.controls:
                    if control.type == kind:
                        return control
                self.arrived.clear()
                await self.arrived.wait()

    async def wait_any(self, kinds: tuple[str, ...], timeout: float = 60) -> Control:
        async with asyncio.timeout(timeout):
            while True:
                for control in self.controls:
                    if control.type in kinds:
                        return control
                self.arrived.clear()
                await self.arrived.wait()

    async def claim(self, score: float = 0.9) -> str:
        session_id = uuid.uuid4().hex
        claim = WakeClaim(session_id=session_id, wake_word="hey_jarvis", score=score)
        await self.client.publish(self.topics.wake, claim.to_payload(), qos=1)
        return session_id

    async def stream(self, session_id: str, pcm: bytes) -> None:
        for start in range(0, len(pcm), CHUNK_BYTES):
            await self.client.publish(
                self.topics.audio(session_id), pcm[start : start + CHUNK_BYTES], qos=0
            )
            await asyncio.sleep(CHUNK_MS / 1000)  # as fast as it is spoken

    async def announce_self(self, info: SatelliteInfo, *, online: bool = True) -> None:
        """Publish retained ``info`` and ``status``, as a real satellite does on connect."""
        await self.client.publish(self.topics.info, info.to_payload(), qos=1, retain=True)
        status = ONLINE if online else OFFLINE
        await self.client.publish(self.topics.status, status, qos=1, retain=True)


@contextlib.asynccontextmanager
async def satellite(
    broker: Mosquitto,
    site: str = "kitchen",
    *,
    info: SatelliteInfo | None = None,
    online: bool = True,
    auto_played: bool = True,
) -> AsyncIterator[Satellite]:
    """A connected virtual satellite; with ``info`` it also publishes its retained
    ``info`` and ``status`` (``online`` unless told otherwise; ``offline`` on leaving)."""
    will = aiomqtt.Will(SiteTopics("appliance", site).status, OFFLINE, qos=1, retain=True)
    async with aiomqtt.Client(
        "127.0.0.1", broker.port, username=site, password=USERS[site], will=will
    ) as client:
        sat = Satellite(client, site, auto_played=auto_played)
        await client.subscribe(f"{sat.topics.base}/control", qos=1)
        await client.subscribe(f"{sat.topics.base}/play/#", qos=1)
        await client.subscribe(f"{sat.topics.base}/set/+", qos=1)
        task = asyncio.create_task(sat.listen())
        try:
            if info is not None:
                await sat.announce_self(info, online=online)
            yield sat
        finally:
            if info is not None:
                await client.publish(sat.topics.status, OFFLINE, qos=1, retain=True)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
