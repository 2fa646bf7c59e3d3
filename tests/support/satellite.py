"""A virtual satellite over MQTT for tests and benchmarks: claims a session after a
(pretend) wake word, streams PCM as fast as it is spoken, collects the reply."""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import aiomqtt

from appliance.protocol.voice import CHUNK_BYTES, CHUNK_MS, Control, SiteTopics, WakeClaim
from tests.support.mosquitto import USERS, Mosquitto


@dataclass
class Satellite:
    """A virtual satellite: claims a session, streams audio, collects the reply."""

    client: aiomqtt.Client
    site: str
    controls: list[Control] = field(default_factory=list)
    speech: bytearray = field(default_factory=bytearray)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def topics(self) -> SiteTopics:
        return SiteTopics("appliance", self.site)

    async def listen(self) -> None:
        async for message in self.client.messages:
            topic = message.topic.value
            payload = bytes(message.payload)  # type: ignore[arg-type]
            if topic == self.topics.control:
                self.controls.append(Control.from_payload(payload))
            elif topic.startswith(f"{self.topics.base}/play/") and not topic.endswith("/end"):
                self.speech.extend(payload)
            elif topic.endswith("/end") and "/play/" in topic:
                await self.client.publish(
                    self.topics.event,
                    json.dumps({"type": "played", "session_id": topic.split("/")[-2]}),
                    qos=1,
                )
            self.arrived.set()

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


@contextlib.asynccontextmanager
async def satellite(broker: Mosquitto, site: str = "kitchen") -> AsyncIterator[Satellite]:
    async with aiomqtt.Client(
        "127.0.0.1", broker.port, username=site, password=USERS[site]
    ) as client:
        sat = Satellite(client, site)
        await client.subscribe(f"{sat.topics.base}/control", qos=1)
        await client.subscribe(f"{sat.topics.base}/play/#", qos=1)
        task = asyncio.create_task(sat.listen())
        try:
            yield sat
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
