"""Announcements: text from Home Assistant, spoken by the node at the satellites.

``<prefix>/ha/announce`` goes to every satellite that is online,
``<prefix>/ha/announce/<site>`` to that one only. Each delivery is a session of its own
(a fresh session id), in the satellite protocol's speech-back order: ``speak`` control,
PCM on ``play/<sid>``, play end, the satellite's ``played`` (awaited for the length of
the speech plus ``voice.playback_timeout_s``), then ``end``. A satellite in the middle
of a voice turn (or of another announcement) gets it once that is over, if that happens
within ``voice.announce_wait_s``. When the node cannot speak (voice disabled, models
loading or failed to load) it publishes the text on ``<prefix>/announce`` instead, for
satellites that can show it.

Every announcement runs as a task this class owns: the command worker only submits it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator

from appliance.bus.commands import Announcement
from appliance.bus.mqtt import Bus
from appliance.errors import BusError
from appliance.protocol.topics import Topics
from appliance.protocol.voice import SAMPLE_WIDTH, Control, SatelliteEvent, new_session_id
from appliance.tts.errors import TtsError
from appliance.voice.registry import SatelliteRegistry
from appliance.voice.sessions import VoiceSessions
from appliance.voice.settings import VoiceSettings
from appliance.voice.turn import Engines, in_thread

_LOGGER = logging.getLogger(__name__)


class Announcer:
    def __init__(
        self,
        *,
        topics: Topics,
        bus: Bus,
        sessions: VoiceSessions | None,
        satellites: SatelliteRegistry,
        settings: VoiceSettings,
        default_language: str,
    ) -> None:
        self._topics = topics
        self._bus = bus
        self._sessions = sessions
        self._satellites = satellites
        self._settings = settings
        self._default_language = default_language
        self._locks: dict[str, asyncio.Lock] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def submit(self, announcement: Announcement) -> None:
        """Start delivering ``announcement``; returns at once."""
        name = f"announce-{announcement.site or 'all'}"
        task = asyncio.create_task(self._announce(announcement), name=name)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    async def close(self) -> None:
        """Stop every announcement under way (the satellites are told ``stop``)."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # --- one announcement -----------------------------------------------------------
    async def _announce(self, announcement: Announcement) -> None:
        site, sessions = announcement.site, self._sessions
        where = site or "every satellite"
        if site is not None and self._satellites.get(site) is None:
            _LOGGER.warning("announcement for unknown satellite %r dropped", site)
            return
        if sessions is None or sessions.engines is None:
            why = "voice disabled" if sessions is None else sessions.not_ready_reason
            _LOGGER.warning(
                "announcement for %s not spoken (%s); published on %s",
                where,
                why,
                self._topics.announcements,
            )
            await self._republish(announcement)
            return
        online = self._satellites.online_sites()
        targets = [s for s in online if s == site] if site is not None else online
        if not targets:
            why = "it is offline" if site is not None else "no satellite is online"
            _LOGGER.warning("announcement for %s dropped: %s", where, why)
            return
        engines = sessions.engines
        async with asyncio.TaskGroup() as group:
            for target in targets:
                group.create_task(
                    self._deliver(sessions, engines, target, announcement.text),
                    name=f"announce-{target}",
                )

    async def _deliver(
        self, sessions: VoiceSessions, engines: Engines, site: str, text: str
    ) -> None:
        """Speak at ``site`` once nothing else is said there."""
        lock = self._locks.setdefault(site, asyncio.Lock())
        acquired = False
        try:
            try:
                async with asyncio.timeout(self._settings.announce_wait_s):
                    await lock.acquire()
                    acquired = True
                    await sessions.wait_idle(site)
            except TimeoutError:
                _LOGGER.warning(
                    "announcement at %s dropped: the satellite stayed busy for %.0f s",
                    site,
                    self._settings.announce_wait_s,
                )
                return
            await self._speak(sessions, engines, site, text)
        finally:
            if acquired:
                lock.release()

    async def _speak(self, sessions: VoiceSessions, engines: Engines, site: str, text: str) -> None:
        sid = new_session_id()
        lang = self._language(site)
        events = sessions.watch(sid)
        loop = asyncio.get_running_loop()
        sent = 0
        started = False

        async def counted(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
            nonlocal sent
            async for pcm in chunks:
                sent += len(pcm)
                yield pcm

        try:
            rate = engines.speaker.sample_rate_for(lang)
            sentences = await loop.run_in_executor(
                engines.executor, engines.speaker.synthesize, text, lang
            )
            started = True
            sink = sessions.sink_for(site, sid)
            await sink(text, rate, counted(in_thread(sentences, engines.executor)))
            seconds = sent / (rate * SAMPLE_WIDTH)
            outcome = "not confirmed"
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(seconds + self._settings.playback_timeout_s):
                    outcome = await _until_played(events)
            _LOGGER.info(
                "announcement %s at %s: %d characters, %.1f s of speech, %s",
                sid,
                site,
                len(text),
                seconds,
                outcome,
            )
        except TtsError as err:
            _LOGGER.error("announcement %s at %s not spoken: %s", sid, site, err)
        except asyncio.CancelledError:
            if started:
                stop = Control(type="stop", session_id=sid, reason="stopped")
                await sessions.control(site, stop)
                started = False
            raise
        finally:
            sessions.unwatch(sid)
            if started:
                await sessions.control(site, Control(type="end", session_id=sid))

    def _language(self, site: str) -> str:
        """The node's setting for the site, else the satellite's own, else the default."""
        configured = self._settings.site_languages.get(site)
        if configured:
            return configured
        known = self._satellites.get(site)
        if known is not None and known.info is not None and known.info.lang:
            return known.info.lang
        return self._default_language

    async def _republish(self, announcement: Announcement) -> None:
        payload = json.dumps({"text": announcement.text, "site": announcement.site})
        try:
            await self._bus.publish(self._topics.announcements, payload, qos=1)
        except BusError as err:
            _LOGGER.warning("announcement not published: %s", err)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and (err := task.exception()) is not None:
            _LOGGER.error("announcement task %s failed", task.get_name(), exc_info=err)


async def _until_played(events: asyncio.Queue[SatelliteEvent]) -> str:
    """``played``, or ``stop`` when the user stopped it."""
    while (event := await events.get()).type not in ("played", "stop"):
        pass
    return event.type
