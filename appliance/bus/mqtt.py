"""One MQTT connection for the node: reconnection with backoff, last will, publishing.

``Bus.run`` owns the connection. Incoming messages go to a synchronous callback
that must not block (it queues work); ``publish`` waits for the broker's
acknowledgement at QoS 1 and raises ``BusError`` when there is no connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import socket
import ssl
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

import aiomqtt

from appliance.errors import BusError
from appliance.protocol.topics import OFFLINE, ONLINE

_LOGGER = logging.getLogger(__name__)

MessageCallback = Callable[[str, bytes], None]
ConnectCallback = Callable[[], Awaitable[None]]

_TLS_FAILURE = "CERTIFICATE_VERIFY_FAILED"
"""In the message aiomqtt makes of an ``ssl.SSLCertVerificationError`` (no cause kept)."""


@dataclass(frozen=True)
class BusConfig:
    host: str
    port: int
    client_id: str
    availability_topic: str
    subscriptions: Sequence[tuple[str, int]]
    username: str | None = None
    password: str | None = None
    tls: bool = False
    ca_file: str | None = None
    keepalive: int = 30
    clean_session: bool = False
    reconnect_max_seconds: float = 30.0

    @staticmethod
    def parse_url(url: str) -> tuple[str, int, bool]:
        parts = urlsplit(url)
        tls = parts.scheme in {"mqtts", "ssl"}
        return parts.hostname or "localhost", parts.port or (8883 if tls else 1883), tls


class Bus:
    """The node's MQTT client."""

    def __init__(self, config: BusConfig, on_message: MessageCallback) -> None:
        self.config = config
        self._on_message = on_message
        self._on_connect: list[ConnectCallback] = []
        self._client: aiomqtt.Client | None = None
        self.connected = asyncio.Event()
        self.connections = 0

    def on_connect(self, callback: ConnectCallback) -> None:
        """Run ``callback`` after every (re)connection, once subscriptions are in place."""
        self._on_connect.append(callback)

    def _client_for(self) -> aiomqtt.Client:
        cfg = self.config
        tls_context = None
        if cfg.tls:
            try:
                tls_context = ssl.create_default_context(cafile=cfg.ca_file)
            except OSError as err:  # ssl.SSLError too: not a certificate
                msg = f"cannot load the MQTT CA certificate {cfg.ca_file}: {err}"
                raise BusError(msg) from err
        client = aiomqtt.Client(
            cfg.host,
            cfg.port,
            identifier=cfg.client_id,
            username=cfg.username,
            password=cfg.password,
            clean_session=cfg.clean_session,
            keepalive=cfg.keepalive,
            will=aiomqtt.Will(cfg.availability_topic, OFFLINE, qos=1, retain=True),
            tls_context=tls_context,
            max_inflight_messages=1000,
            # Without it, Nagle's algorithm holds a second publish until the broker's
            # delayed ACK of the first: 40 ms on every receipt.
            socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
            max_queued_outgoing_messages=0,
            timeout=10,
        )
        # The outbox publishes a batch concurrently; aiomqtt warns above 10 pending.
        client.pending_calls_threshold = 1_000
        return client

    async def run(self, stop: asyncio.Event) -> None:
        """Stay connected until ``stop`` is set; back off between failed attempts."""
        delay = 0.5
        while not stop.is_set():
            try:
                async with self._client_for() as client:
                    self._client = client
                    for topic, qos in self.config.subscriptions:
                        await client.subscribe(topic, qos=qos)
                    await client.publish(self.config.availability_topic, ONLINE, qos=1,
                                         retain=True)  # fmt: skip
                    self.connections += 1
                    self.connected.set()
                    _LOGGER.info("connected to MQTT broker %s:%d", self.config.host,
                                 self.config.port)  # fmt: skip
                    delay = 0.5
                    await self._serve(client, stop)
                    await client.publish(self.config.availability_topic, OFFLINE, qos=1,
                                         retain=True)  # fmt: skip
            except aiomqtt.MqttError as err:
                self.connected.clear()
                self._client = None
                if stop.is_set():
                    break
                wait = min(delay, self.config.reconnect_max_seconds) * (0.75 + random.random() / 2)  # noqa: S311 - jitter
                if self.config.tls and _TLS_FAILURE in str(err):
                    _LOGGER.warning(
                        "MQTT broker %s:%d: TLS certificate not trusted (%s); is mqtt.ca_file "
                        "the CA that signed the broker's certificate? retrying in %.1f s",
                        self.config.host,
                        self.config.port,
                        err,
                        wait,
                    )
                else:
                    _LOGGER.warning("MQTT connection lost (%s); retrying in %.1f s", err, wait)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), wait)
                delay = min(delay * 2, self.config.reconnect_max_seconds)
            finally:
                self.connected.clear()
                self._client = None

    async def _serve(self, client: aiomqtt.Client, stop: asyncio.Event) -> None:
        reader = asyncio.create_task(self._read(client), name="mqtt-read")
        stopper = asyncio.create_task(stop.wait(), name="mqtt-stop")
        hooks = asyncio.create_task(self._after_connect(), name="mqtt-after-connect")
        try:
            await asyncio.wait({reader, stopper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (reader, stopper, hooks):
                task.cancel()
            await asyncio.gather(reader, stopper, hooks, return_exceptions=True)
        if not reader.cancelled() and (error := reader.exception()) is not None:
            raise error

    async def _read(self, client: aiomqtt.Client) -> None:
        async for message in client.messages:
            payload = message.payload
            if not isinstance(payload, bytes | bytearray):
                payload = str(payload).encode() if payload is not None else b""
            self._on_message(message.topic.value, bytes(payload))

    async def _after_connect(self) -> None:
        for callback in self._on_connect:
            try:
                await callback()
            except BusError as err:
                _LOGGER.warning("after-connect step %s failed: %s", callback, err)

    async def publish(
        self, topic: str, payload: bytes | str, *, qos: int = 1, retain: bool = False
    ) -> None:
        client = self._client
        if client is None:
            msg = "not connected to the MQTT broker"
            raise BusError(msg)
        try:
            await client.publish(topic, payload, qos=qos, retain=retain)
        except aiomqtt.MqttError as err:
            msg = f"publish to {topic} failed: {err}"
            raise BusError(msg) from err
