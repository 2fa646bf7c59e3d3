"""A Home Assistant-like MQTT client for tests: sends commands, collects receipts."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import ssl
import uuid
from collections.abc import AsyncIterator
from typing import Any

import aiomqtt

from tests.support.mosquitto import USERS, Mosquitto


class HaClient:
    def __init__(self, client: aiomqtt.Client, prefix: str = "appliance") -> None:
        self.client = client
        self.prefix = prefix
        self.receipts: dict[str, dict[str, Any]] = {}
        self.stream: list[dict[str, Any]] = []
        self.retained: dict[str, bytes] = {}
        self.messages: list[tuple[str, bytes]] = []
        self._arrived = asyncio.Event()

    async def listen(self) -> None:
        async for message in self.client.messages:
            topic = message.topic.value
            payload = (
                bytes(message.payload)
                if isinstance(message.payload, bytes | bytearray)
                else str(message.payload).encode()
            )
            self.messages.append((topic, payload))
            if (
                message.retain
                or topic.startswith(f"{self.prefix}/state/")
                or topic.startswith("homeassistant/")
                or topic == f"{self.prefix}/status"
            ):
                self.retained[topic] = payload
            if topic == f"{self.prefix}/receipts":
                self.stream.append(json.loads(payload))
            elif topic.startswith(f"{self.prefix}/receipts/"):
                body = json.loads(payload)
                self.receipts[topic.rsplit("/", 1)[1]] = body
            self._arrived.set()

    async def wait_for(self, predicate: Any, timeout: float = 10.0) -> None:
        async with asyncio.timeout(timeout):
            while not predicate():
                self._arrived.clear()
                await self._arrived.wait()

    async def command(
        self,
        action: str,
        payload: dict[str, Any] | bytes,
        request_id: str | None = None,
        timeout: float = 10.0,
    ) -> dict[str, Any]:
        rid = request_id or str(uuid.uuid4())
        if isinstance(payload, dict):
            body: bytes = json.dumps({"request_id": rid, **payload}).encode()
        else:
            body = payload
        self.receipts.pop(rid, None)
        domain, _, name = action.partition(".")
        topic = f"{self.prefix}/cmd/{domain}/{name}" if name else f"{self.prefix}/cmd/{domain}"
        await self.client.publish(topic, body, qos=1)
        await self.wait_for(lambda: rid in self.receipts, timeout)
        return self.receipts[rid]


@contextlib.asynccontextmanager
async def ha_client(
    broker: Mosquitto,
    user: str = "homeassistant",
    *,
    client_id: str | None = None,
    clean_session: bool = True,
    tls: bool = False,
) -> AsyncIterator[HaClient]:
    """Connected as ``user``; with ``tls``, to the broker's TLS listener, trusting its CA."""
    tls_context = None
    if tls:
        assert broker.tls_port is not None, "the broker has no TLS listener"
        tls_context = ssl.create_default_context(cafile=broker.ca_file)
    async with aiomqtt.Client(
        "localhost" if tls else "127.0.0.1",
        broker.tls_port if tls and broker.tls_port else broker.port,
        username=user,
        password=USERS[user],
        tls_context=tls_context,
        identifier=client_id,
        clean_session=clean_session,
        max_queued_outgoing_messages=0,
        socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
    ) as client:
        ha = HaClient(client)
        await client.subscribe("appliance/receipts/#", qos=1)
        await client.subscribe("appliance/state/#", qos=1)
        await client.subscribe("appliance/status", qos=1)
        await client.subscribe("homeassistant/#", qos=1)
        task = asyncio.create_task(ha.listen(), name="ha-listen")
        try:
            yield ha
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
