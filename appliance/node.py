"""The main node: database, broker connection, command worker, publishers.

``Node.run`` starts everything under one task group and, when ``stop`` is set, drains
the queued commands and the outbox before it disconnects. Embedded servers are
started only when no external one is configured, and stopped by whoever started them.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import functools
import gc
import logging
import random
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

from appliance import __version__, sdnotify
from appliance.actions.service import ActionService, Request
from appliance.aio import wait_any
from appliance.bus.broker import EmbeddedBroker
from appliance.bus.commands import Announcement, CommandDecoder, TextParser
from appliance.bus.mqtt import Bus, BusConfig
from appliance.bus.outbox import OutboxPublisher
from appliance.bus.state import StatePublisher
from appliance.errors import ApplianceError, BusError, StoreError
from appliance.ha.discovery import DeviceInfo
from appliance.ha.publisher import DiscoveryPublisher
from appliance.memory.conversation import Conversation
from appliance.memory.embedder import Embeddings
from appliance.memory.purchases import PurchaseMemories
from appliance.protocol.topics import HA_STATUS_TOPIC, OFFLINE, ONLINE, Topics
from appliance.protocol.voice import SiteTopics, parse_topic, satellite_filter
from appliance.settings import Settings
from appliance.store import voice as voice_store
from appliance.store.db import Database
from appliance.store.embedded import EmbeddedPostgres
from appliance.voice.announce import Announcer
from appliance.voice.registry import SatelliteRegistry
from appliance.voice.sessions import VoiceSessions
from appliance.voice.turn import Engines

_LOGGER = logging.getLogger(__name__)

QUEUE_LIMIT = 10_000
FORGET_SESSIONS_ODDS = 0.05
"""Chance that a voice-session claim also deletes the claims older than a day."""
DRAIN_SECONDS = 5.0


@dataclass
class Milestones:
    started: float
    ready: float | None = None


@contextlib.asynccontextmanager
async def open_database(settings: Settings) -> AsyncIterator[Database]:
    """The configured database, or the embedded one (started here if not running)."""
    embedded: EmbeddedPostgres | None = None
    started_here = False
    if settings.db.url is not None:
        url = settings.db.url.get_secret_value()
    else:
        embedded = EmbeddedPostgres(settings.data_dir)
        started_here = not embedded.is_running()
        url = await asyncio.to_thread(embedded.start)
    db = Database(url, settings.db)
    try:
        await db.open()
        yield db
    finally:
        await db.close()
        if embedded is not None and started_here:
            await asyncio.to_thread(embedded.stop)


def load_voice_engines(settings: Settings) -> Engines:
    from appliance.voice.engines import load_engines

    return load_engines(settings)


def load_parser(settings: Settings) -> TextParser:
    from appliance.intents import IntentParser

    parser: TextParser = IntentParser(
        timezone=settings.timezone, log_texts=settings.log_transcripts
    )
    return parser


class Node:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.topics = Topics(settings.mqtt.prefix)
        self.ready = asyncio.Event()
        self.milestones = Milestones(started=time.monotonic())
        self._queue: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue(QUEUE_LIMIT)
        self.service: ActionService | None = None
        self.bus: Bus | None = None
        self.voice: VoiceSessions | None = None
        self.satellites = SatelliteRegistry(self.topics.prefix, on_info=self._satellite_changed)
        self.discovery: DiscoveryPublisher | None = None
        self.announcer: Announcer | None = None
        self.purchases: PurchaseMemories | None = None
        self.conversation: Conversation | None = None
        self._upkeep: asyncio.Task[None] | None = None
        self._stopping = False
        self._tasks: set[asyncio.Task[None]] = set()
        self.commands_handled = 0
        """Messages this node took from the command topics (several nodes share them)."""

    # --- wiring -------------------------------------------------------------------
    def _bus_config(self, host: str, port: int, tls: bool) -> BusConfig:
        mqtt = self.settings.mqtt
        return BusConfig(
            host=host,
            port=port,
            tls=tls,
            ca_file=str(mqtt.ca_file) if mqtt.ca_file else None,
            client_id=mqtt.client_id or f"appliance-{self.settings.node_id}",
            username=mqtt.username,
            password=mqtt.password.get_secret_value() if mqtt.password else None,
            availability_topic=self.topics.availability,
            subscriptions=[
                (self._shared(self.topics.command_filter), 1),
                (self._shared(self.topics.ha_filter), 1),
                (self._shared(self.topics.user_command_filter), 1),
                (self._shared(HA_STATUS_TOPIC), 1),
                *self._satellite_subscriptions(),
                *([(self.topics.availability, 1)] if mqtt.shared_group else []),
            ],
            keepalive=mqtt.keepalive,
            reconnect_max_seconds=mqtt.reconnect_max_seconds,
            # Alone, a persistent session keeps commands sent while the node restarts.
            # In a shared group, the broker would keep routing a dead member's share of
            # the commands to its session: a clean session leaves them to the others.
            clean_session=mqtt.shared_group is not None,
        )

    def _shared(self, topic_filter: str) -> str:
        """Commands are split between the nodes of a shared group: each message goes
        to one of them. Satellite traffic is not: every node hears every claim, and
        the database decides which node runs the session."""
        group = self.settings.mqtt.shared_group
        return f"$share/{group}/{topic_filter}" if group else topic_filter

    def _satellite_subscriptions(self) -> list[tuple[str, int]]:
        """Everything satellites say with voice on; else only what they are and whether
        they are online (Home Assistant devices, announcements)."""
        if self.settings.voice.enabled:
            return [(satellite_filter(self.topics.prefix), 1)]
        every = SiteTopics(self.topics.prefix, "+")
        return [(every.status, 1), (every.info, 1)]

    def _on_message(self, topic: str, payload: bytes) -> None:
        try:
            self._route(topic, payload)
        except Exception:  # a defect must not stop the node: this message is lost, logged
            _LOGGER.exception("message on %s (%d bytes) dropped", topic, len(payload))

    def _route(self, topic: str, payload: bytes) -> None:
        if topic == self.topics.availability:
            self._availability(payload)
            return
        if self.satellites.handle(topic, payload):
            site = self._offline_site(topic, payload)
            if site is not None and self.voice is not None:
                self.voice.site_offline(site)
            return
        if self.voice is not None and self.voice.handle(topic, payload):
            return
        if topic == HA_STATUS_TOPIC:
            if payload.strip() == ONLINE.encode() and self.discovery is not None:
                self.discovery.publish_all()
            return
        try:
            self._queue.put_nowait((topic, payload))
        except asyncio.QueueFull:
            _LOGGER.error("command queue full (%d); dropped a message on %s", QUEUE_LIMIT, topic)

    async def run(self, stop: asyncio.Event) -> None:
        settings = self.settings
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        broker: EmbeddedBroker | None = None
        if settings.mqtt.url is None:
            broker = EmbeddedBroker(settings.mqtt.embedded_host, settings.mqtt.embedded_port)
            await broker.start()
            host, port, tls = settings.mqtt.embedded_host, settings.mqtt.embedded_port, False
        else:
            host, port, tls = BusConfig.parse_url(settings.mqtt.url)
        try:
            parser_task = asyncio.create_task(asyncio.to_thread(load_parser, settings))
            engines_task = (
                asyncio.create_task(asyncio.to_thread(load_voice_engines, settings))
                if settings.voice.enabled
                else None
            )
            async with open_database(settings) as db:
                parser = await parser_task
                # Everything loaded so far lives as long as the node: keep it out of the
                # collector's way, so full collections stay short under load.
                gc.collect()
                gc.freeze()
                # Commands are served at once; voice sessions once the models are loaded.
                await self._serve(
                    db,
                    parser=parser,
                    engines=engines_task,
                    host=host,
                    port=port,
                    tls=tls,
                    stop=stop,
                )
        finally:
            if broker is not None:
                await broker.stop()

    async def _serve(
        self,
        db: Database,
        *,
        parser: TextParser,
        engines: asyncio.Task[Engines] | None,
        host: str,
        port: int,
        tls: bool,
        stop: asyncio.Event,
    ) -> None:
        settings = self.settings
        bus = self.bus = Bus(self._bus_config(host, port, tls), self._on_message)
        state = StatePublisher(db, bus, settings, self.topics)
        outbox = OutboxPublisher(db, bus)

        def committed(domains: set[str]) -> None:
            outbox.wake()
            state.changed(domains)

        self.service = ActionService(db, settings, self.topics, committed)
        decoder = CommandDecoder(
            self.topics,
            default_user=settings.default_user,
            language=settings.language,
            max_payload_bytes=settings.mqtt.max_payload_bytes,
            parser=parser,
            limiter=settings.rate_limits.limiter(),
        )

        if settings.homeassistant.discovery:
            device = DeviceInfo(
                device_id=settings.homeassistant.device_id or settings.node_id,
                name=settings.homeassistant.device_name,
                sw_version=__version__,
            )
            self.discovery = DiscoveryPublisher(bus, device, self.topics, self.satellites)

        async def connected() -> None:
            if self.discovery is not None:
                self.discovery.publish_all()
            state.changed_all()
            outbox.wake()

        bus.on_connect(connected)
        if engines is not None:
            service = self.service
            assert service is not None  # noqa: S101

            async def known_items() -> list[str]:
                return await service.known_items(settings.default_user)

            self.voice = VoiceSessions(
                prefix=self.topics.prefix,
                bus=bus,
                engines=None,
                service=service,
                settings=settings.voice,
                default_user=settings.default_user,
                default_language=settings.language,
                known_items=known_items,
                log_transcripts=settings.log_transcripts,
                expect_published=outbox.expect,
                take_session=functools.partial(self._take_session, db),
                shared=settings.mqtt.shared_group is not None,
            )
        self.announcer = Announcer(
            topics=self.topics,
            bus=bus,
            sessions=self.voice,
            satellites=self.satellites,
            settings=settings.voice,
            default_language=settings.language,
        )
        bus_stop = asyncio.Event()
        async with asyncio.TaskGroup() as group:
            group.create_task(bus.run(bus_stop), name="mqtt")
            worker = group.create_task(self._work(decoder, bus, stop), name="commands")
            publisher = group.create_task(outbox.run(stop), name="outbox")
            group.create_task(state.run(stop), name="state")
            if self.discovery is not None:
                group.create_task(self.discovery.run(stop), name="discovery")
            group.create_task(self._watchdog(stop), name="watchdog")
            if engines is not None:
                group.create_task(self._voice_ready(engines), name="voice-models")
            memory = group.create_task(self._memory_ready(db, stop), name="memory")
            await self._announce_ready(bus, stop)
            await stop.wait()
            self._stopping = True
            sdnotify.notify("STOPPING=1")
            _LOGGER.info("stopping: draining commands and receipts")
            await asyncio.wait({worker, publisher}, timeout=DRAIN_SECONDS)
            if bus.connected.is_set():
                with contextlib.suppress(BusError, asyncio.TimeoutError):
                    async with asyncio.timeout(DRAIN_SECONDS):
                        while await outbox.drain_once():
                            pass
            await self._close_parts(memory)
            bus_stop.set()

    async def _memory_ready(self, db: Database, stop: asyncio.Event) -> Embeddings | None:
        """Load the embedder (off the loop), then turn memory on: memory commands,
        purchases kept as memories, questions about oneself answered in voice turns,
        the diary, and the nightly upkeep. On failure the node goes on without memory
        (memory commands are rejected as ``memory_unavailable``)."""
        from appliance.actions.memory import MemoryActions
        from appliance.memory.conversation import Conversation
        from appliance.memory.embedder import open_embeddings
        from appliance.memory.episodes import EpisodeDiary
        from appliance.memory.purchases import PurchaseMemories
        from appliance.memory.recall import Recall
        from appliance.memory.store import MemoryStore
        from appliance.memory.upkeep import NightlyUpkeep

        settings = self.settings
        try:
            embeddings = await open_embeddings(settings.memory)
        except ApplianceError as err:
            _LOGGER.error("memory off: the embedder did not load: %s", err)
            return None
        store = MemoryStore(db, embeddings, settings.memory)
        diary = EpisodeDiary(db, settings.memory)
        self.purchases = PurchaseMemories(store, language=settings.language, timezone=settings.tz)
        self.conversation = Conversation(Recall(store), diary, settings.tz)
        if self.service is not None:
            self.service.on_receipts(self.purchases)
            self.service.on_receipts(self.conversation.receipts)
            self.service.memory = MemoryActions(store)
        if self.voice is not None:
            self.voice.memory = self.conversation
        if settings.memory.upkeep_at is not None:
            at = dt.time.fromisoformat(settings.memory.upkeep_at)
            upkeep = NightlyUpkeep(db, store, diary, at=at, timezone=settings.tz)
            self._upkeep = asyncio.create_task(upkeep.run(stop), name="memory-upkeep")
        _LOGGER.info("memory on")
        return embeddings

    async def _take_session(self, db: Database, session_id: str, site: str) -> bool:
        """Claim a won voice session for this node in the database (several nodes hear
        the same satellites). Without the database the session is taken: nothing it
        asks for could commit anyway, and one node must answer."""
        try:
            async with db.transaction() as conn:
                taken = await voice_store.claim_session(
                    conn, session_id, site, self.settings.node_id
                )
                if taken and random.random() < FORGET_SESSIONS_ODDS:  # noqa: S311
                    await voice_store.forget_old_sessions(conn)
        except StoreError as err:
            _LOGGER.warning("voice session %s not claimed in the database: %s", session_id, err)
            return True
        return taken

    async def _close_parts(self, memory: asyncio.Task[Embeddings | None]) -> None:
        if self.announcer is not None:
            await self.announcer.close()
        if self.voice is not None:
            await self.voice.close()
        await self._memory_close(memory)

    async def _memory_close(self, memory: asyncio.Task[Embeddings | None]) -> None:
        if not memory.done():
            memory.cancel()
            await asyncio.gather(memory, return_exceptions=True)
            return
        if self._upkeep is not None:
            self._upkeep.cancel()
            await asyncio.gather(self._upkeep, return_exceptions=True)
        if self.service is not None:
            self.service.memory = None
        if self.conversation is not None:
            await self.conversation.close()
        if self.purchases is not None:
            await self.purchases.close()
        embeddings = memory.result()
        if embeddings is not None:
            await embeddings.aclose()

    async def _voice_ready(self, engines: asyncio.Task[Engines]) -> None:
        try:
            loaded = await engines
        except ApplianceError as err:
            _LOGGER.error("voice unavailable, satellites will be refused: %s", err)
            if self.voice is not None:
                self.voice.unavailable(str(err))
            return
        gc.freeze()
        if self.voice is not None:
            self.voice.ready(loaded)
        _LOGGER.info("voice ready")

    async def _announce_ready(self, bus: Bus, stop: asyncio.Event) -> None:
        await wait_any(bus.connected, stop)
        if stop.is_set():
            return
        self.milestones.ready = time.monotonic()
        _LOGGER.info(
            "appliance %s ready in %.2f s (MQTT %s:%d, topics under %s/)",
            __version__, self.milestones.ready - self.milestones.started,
            bus.config.host, bus.config.port, self.topics.prefix,
        )  # fmt: skip
        self.ready.set()
        sdnotify.notify("READY=1")

    # --- tasks --------------------------------------------------------------------
    async def _work(self, decoder: CommandDecoder, bus: Bus, stop: asyncio.Event) -> None:
        assert self.service is not None  # noqa: S101
        batch_max = self.settings.actions.batch_max
        while True:
            if stop.is_set() and self._queue.empty():
                return
            try:
                first = await asyncio.wait_for(self._queue.get(), timeout=0.5)
            except TimeoutError:
                continue
            messages = [first]
            while len(messages) < batch_max and not self._queue.empty():
                messages.append(self._queue.get_nowait())
            requests = []
            self.commands_handled += len(messages)
            for topic, payload in messages:
                decoded = decoder.decode(topic, payload)
                if isinstance(decoded, Announcement):
                    self._announce(decoded)
                elif decoded:
                    requests.extend(decoded)
            results = await self.service.execute_batch(requests)
            for request, result in zip(requests, results, strict=True):
                if not result.stored:
                    await self._publish_direct(bus, request, result.receipt.to_payload())

    def _offline_site(self, topic: str, payload: bytes) -> str | None:
        """The site whose satellite just said ``offline`` (its last will), if any."""
        parsed = parse_topic(self.topics.prefix, topic)
        if parsed is None or parsed[1] != "status" or payload.strip() != OFFLINE.encode():
            return None
        return parsed[0]

    def _availability(self, payload: bytes) -> None:
        """Several nodes share one availability topic: another node's last will says
        "offline" while this one serves, so say "online" again at once."""
        bus = self.bus
        if payload.strip() != OFFLINE.encode() or self._stopping or bus is None:
            return
        if bus.connected.is_set():
            _LOGGER.warning("another node went offline; this node still serves")
            task = asyncio.create_task(self._still_online(bus), name="availability")
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _still_online(self, bus: Bus) -> None:
        try:
            await bus.publish(self.topics.availability, ONLINE.encode(), qos=1, retain=True)
        except BusError as err:
            _LOGGER.warning("availability not restored: %s", err)

    async def _publish_direct(self, bus: Bus, request: Request, payload: bytes) -> None:
        assert self.service is not None  # noqa: S101
        try:
            for topic in self.service.topics_for(request):
                await bus.publish(topic, payload, qos=1)
        except BusError as err:
            _LOGGER.warning("receipt %s not published: %s", request.request_id, err)

    def _announce(self, announcement: Announcement) -> None:
        """Spoken (or republished) by the announcer's own tasks: never waited for here."""
        if self.announcer is not None:
            self.announcer.submit(announcement)

    def _satellite_changed(self, site: str) -> None:
        if self.discovery is not None:
            self.discovery.satellite_changed(site)

    async def _watchdog(self, stop: asyncio.Event) -> None:
        interval = sdnotify.watchdog_interval()
        if interval is None:
            return
        while not stop.is_set():
            sdnotify.notify("WATCHDOG=1")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), interval)
