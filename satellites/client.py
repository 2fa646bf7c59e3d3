"""The satellite: hears its wake word, streams the turn to the node, plays the answer.

Threads: one reads the microphone (and runs the wake word and noise suppression on
it, so the event loop never waits on audio), one plays sound. The event loop owns
the MQTT connection (``appliance.bus.mqtt.Bus``: reconnection with backoff, and
``offline`` as the last will on ``<prefix>/satellite/<site>/status``) and the turn.

A turn: wake word -> claim (the audio from the wake on is kept in a bounded queue)
-> ``accept`` -> stream until the node's ``speak`` (or ``stop``/``end``, or the local
end of speech) -> play the speech -> ``played`` -> ``end``, or ``listen`` to stream
an answer in the same session. Wake detection is off while a turn runs or sound
plays, and the microphone sends silence while a chime plays.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Literal

from pydantic import ValidationError

from appliance import __version__
from appliance.audio.pcm import rms_dbfs
from appliance.bus.mqtt import Bus, BusConfig
from appliance.errors import BusError
from appliance.protocol.voice import (
    SET_MUTE,
    SET_STOP,
    SET_VOLUME,
    AudioEnd,
    Control,
    PlayEnd,
    SatelliteEvent,
    SatelliteInfo,
    SatelliteState,
    SiteTopics,
    WakeClaim,
    new_session_id,
    parse_topic,
)
from satellites.audio import AudioInput, AudioOutput, chime, read_wav, scale
from satellites.errors import AudioError
from satellites.processing import Cleaner, StreamEnd
from satellites.settings import SatelliteSettings
from satellites.wake import Detection, WakeDetector

_LOGGER = logging.getLogger(__name__)

Outcome = Literal["ended", "stood_down", "rejected", "no_answer", "stopped", "lost", "timeout"]
_Mode = Literal["wake", "stream", "idle"]
TALKING_DBFS = -40.0
"""The audio that woke the satellite is this loud: the command has begun already
(said in one breath with the wake word), so no wake chime masks it."""
PLAY_QUEUE_CHUNKS = 4_096
"""Speech chunks held for playback (4 KB each: minutes of speech); beyond, dropped."""


@dataclass
class TurnRecord:
    """What happened in one turn, as this satellite saw it."""

    session_id: str
    wake: Detection
    outcome: Outcome | None = None
    reason: str | None = None
    spoken: list[str] = field(default_factory=list)
    audio_sent: int = 0
    audio_played: int = 0
    end_reason: str | None = None
    milestones: dict[str, float] = field(default_factory=dict)


@dataclass
class _Speech:
    session_id: str
    control: Control
    chunks: asyncio.Queue[bytes | None] = field(
        default_factory=lambda: asyncio.Queue(PLAY_QUEUE_CHUNKS)
    )
    task: asyncio.Task[None] | None = None
    stopped: bool = False


class Satellite:
    """One room's microphone and speaker, speaking the node's voice protocol."""

    def __init__(
        self,
        settings: SatelliteSettings,
        audio_in: AudioInput,
        audio_out: AudioOutput,
        *,
        once: bool = False,
        detector: WakeDetector | None = None,
    ) -> None:
        self.settings = settings
        self.topics = SiteTopics(settings.mqtt.prefix, settings.site)
        self._input = audio_in
        self._output = audio_out
        self._once = once
        self._detector = detector or WakeDetector(settings.wake)
        audio = settings.audio
        self._cleaner = (
            Cleaner(audio.noise_suppression, audio.auto_gain_dbfs)
            if audio.noise_suppression or audio.auto_gain_dbfs
            else None
        )
        self._chimes = {
            "wake": read_wav(audio.wake_chime) if audio.wake_chime else chime("wake"),
            "done": read_wav(audio.done_chime) if audio.done_chime else chime("done"),
        }
        host, port, tls = BusConfig.parse_url(settings.mqtt.url)
        base = self.topics.base
        self.bus = Bus(
            BusConfig(
                host=host,
                port=port,
                client_id=f"satellite-{settings.site}",
                availability_topic=self.topics.status,
                subscriptions=[
                    (self.topics.control, 1),
                    (f"{base}/play/+", 0),
                    (f"{base}/play/+/end", 1),
                    (self.topics.set_filter, 1),
                ],
                username=settings.mqtt.username or settings.site,
                password=(
                    settings.mqtt.password.get_secret_value() if settings.mqtt.password else None
                ),
                tls=tls,
                ca_file=str(settings.mqtt.ca_file) if settings.mqtt.ca_file else None,
                keepalive=settings.mqtt.keepalive,
                clean_session=True,  # stale controls from a past connection mean nothing
                reconnect_max_seconds=settings.mqtt.reconnect_max_seconds,
            ),
            self._on_message,
        )
        self.bus.on_connect(self._on_connect)
        # shared with the microphone thread (plain attributes: one writer each)
        self._mode: _Mode = "wake"
        self._mic_silent_until = 0.0
        self._talking_at_wake = False
        self._reset_wake = threading.Event()
        self._stop_capture = threading.Event()
        # event loop state
        self.muted = False
        self.volume = audio.volume
        self.listening = False
        self.playing = False
        self.turns: list[TurnRecord] = []
        self._turn: TurnRecord | None = None
        self._wakes: asyncio.Queue[Detection] = asyncio.Queue()
        self._audio: asyncio.Queue[bytes] = asyncio.Queue(settings.stream.queue_chunks)
        self._overflow = False
        self._inbox: asyncio.Queue[tuple[str, object]] = asyncio.Queue()
        self._speech: dict[str, _Speech] = {}
        self._jobs: asyncio.Queue[Callable[[], Awaitable[None]]] = asyncio.Queue()
        self._loop: asyncio.AbstractEventLoop | None = None
        self.input_ended = asyncio.Event()
        self._mic = ThreadPoolExecutor(1, thread_name_prefix="satellite-mic")
        self._speaker = ThreadPoolExecutor(1, thread_name_prefix="satellite-speaker")

    # --- running ----------------------------------------------------------------
    async def run(self, stop: asyncio.Event) -> list[TurnRecord]:
        """Listen until ``stop`` (or, with ``once``, until one turn is over or the input
        ends); the turns heard."""
        self._loop = asyncio.get_running_loop()
        bus_stop = asyncio.Event()
        capture = self._loop.run_in_executor(self._mic, self._capture)
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(self.bus.run(bus_stop), name="mqtt")
                group.create_task(self._do_jobs(bus_stop), name="jobs")
                group.create_task(self._watch_connection(bus_stop), name="connection")
                await self._serve(stop)
                await self._publish_state()
                bus_stop.set()
        finally:
            self._stop_capture.set()
            self._input.close()
            await asyncio.wait_for(asyncio.shield(capture), timeout=5)
            self._output.abort()
            self._mic.shutdown(wait=False)
            self._speaker.shutdown(wait=True)
        return self.turns

    async def _serve(self, stop: asyncio.Event) -> None:
        stopper = asyncio.create_task(stop.wait(), name="stop")
        ended = asyncio.create_task(self.input_ended.wait(), name="input-ended")
        try:
            while True:
                woke = asyncio.create_task(self._wakes.get(), name="wake")
                done, _ = await asyncio.wait(
                    {woke, stopper, ended}, return_when=asyncio.FIRST_COMPLETED
                )
                if woke not in done:
                    woke.cancel()
                    return
                turn = asyncio.create_task(self._run_turn(woke.result()), name="turn")
                done, _ = await asyncio.wait({turn, stopper}, return_when=asyncio.FIRST_COMPLETED)
                if turn not in done:  # shutting down mid-turn: tell the node, stop the sound
                    self._inbox.put_nowait(("local_stop", "shutdown"))
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(asyncio.shield(turn), timeout=2)
                    turn.cancel()
                    await asyncio.gather(turn, return_exceptions=True)
                    return
                if self._once:
                    return
        finally:
            stopper.cancel()
            ended.cancel()

    # --- the microphone thread ------------------------------------------------------
    def _capture(self) -> None:
        loop = self._loop
        assert loop is not None  # noqa: S101 - set by run() before the thread starts
        # The audio just before the wake fired: openWakeWord fires a few frames after
        # the phrase, and someone who says "hey jarvis add eggs" in one breath has
        # already started the command by then.
        recent: deque[bytes] = deque(maxlen=max(1, self.settings.wake.preroll_ms // 64))
        try:
            while not self._stop_capture.is_set():
                chunk = self._input.read()
                if chunk is None:
                    break
                if self._cleaner is not None:
                    chunk = self._cleaner.process(chunk)
                mode = self._mode
                if mode == "wake":
                    self._listen_for_wake(chunk, recent, loop)
                elif mode == "stream":
                    if time.monotonic() < self._mic_silent_until:
                        chunk = bytes(len(chunk))
                    loop.call_soon_threadsafe(self._captured, chunk)
        except AudioError as err:
            _LOGGER.error("microphone stopped: %s", err)
        finally:
            loop.call_soon_threadsafe(self.input_ended.set)

    def _listen_for_wake(
        self, chunk: bytes, recent: deque[bytes], loop: asyncio.AbstractEventLoop
    ) -> None:
        if self._reset_wake.is_set():
            self._reset_wake.clear()
            self._detector.reset()
            recent.clear()
        if self.muted or self.playing:
            recent.clear()
            return
        detection = self._detector.process(chunk)
        recent.append(chunk)
        if detection is None:
            return
        self._mode = "stream"  # from now on, the audio belongs to the turn
        self._talking_at_wake = rms_dbfs(chunk) > TALKING_DBFS
        if self.settings.wake.preroll_ms:
            for before in recent:
                loop.call_soon_threadsafe(self._captured, before)
        recent.clear()
        loop.call_soon_threadsafe(self._woke, detection)

    def _woke(self, detection: Detection) -> None:
        if not self.bus.connected.is_set():
            _LOGGER.warning("wake word %s heard, but the broker is unreachable", detection.name)
            self._end_stream()
            self._reset_wake.set()
            self._mode = "wake"
            return
        _LOGGER.info("wake word %s (%.2f)", detection.name, detection.score)
        self._wakes.put_nowait(detection)

    def _captured(self, chunk: bytes) -> None:
        try:
            self._audio.put_nowait(chunk)
        except asyncio.QueueFull:
            self._overflow = True

    # --- a turn -------------------------------------------------------------------
    async def _run_turn(self, detection: Detection) -> None:
        record = TurnRecord(session_id=new_session_id(), wake=detection)
        record.milestones["wake"] = time.monotonic()
        self._turn = record
        self.turns.append(record)
        chimes: list[asyncio.Task[None]] = []
        try:
            async with asyncio.timeout(self.settings.stream.turn_timeout_s):
                if not self._talking_at_wake:  # a chime now would only mask their words
                    chimes.append(asyncio.create_task(self._chime("wake"), name="wake-chime"))
                claim = WakeClaim(
                    session_id=record.session_id,
                    wake_word=detection.name,
                    score=detection.score,
                    lang=self.settings.lang,
                )
                await self.bus.publish(self.topics.wake, claim.to_payload(), qos=1)
                answer = await self._claim_answer(record.session_id)
                if answer is None:
                    record.outcome = "no_answer"
                elif answer.type != "accept":
                    record.outcome = "stood_down" if answer.type == "stand_down" else "rejected"
                    record.reason = answer.reason
                else:
                    record.milestones["accepted"] = time.monotonic()
                    record.outcome, record.reason = await self._converse(record, chimes)
        except TimeoutError:
            record.outcome = "timeout"
        except BusError as err:
            _LOGGER.warning("turn %s dropped: %s", record.session_id, err)
            record.outcome, record.reason = "lost", str(err)
        finally:
            self._end_stream()
            self._stop_playback()
            await asyncio.gather(*chimes, return_exceptions=True)
            self._turn = None
            self._inbox = asyncio.Queue()
            self._reset_wake.set()
            self._mode = "wake"
            self._jobs.put_nowait(self._publish_state)
            _LOGGER.info(
                "turn %s: %s%s",
                record.session_id,
                record.outcome,
                f" ({record.reason})" if record.reason else "",
            )

    async def _claim_answer(self, session_id: str) -> Control | None:
        try:
            async with asyncio.timeout(self.settings.stream.accept_timeout_s):
                while True:
                    kind, message = await self._inbox.get()
                    if kind == "lost":
                        raise BusError(str(message))
                    if (
                        kind == "control"
                        and isinstance(message, Control)
                        and message.type in {"accept", "reject", "stand_down"}
                    ):
                        return message
        except TimeoutError:
            return None

    async def _converse(
        self, record: TurnRecord, chimes: list[asyncio.Task[None]]
    ) -> tuple[Outcome, str | None]:
        sid = record.session_id
        streamer: asyncio.Task[None] | None = asyncio.create_task(
            self._stream(record), name="stream"
        )
        try:
            while True:
                try:
                    async with asyncio.timeout(self.settings.stream.node_silence_s):
                        kind, message = await self._inbox.get()
                except TimeoutError:
                    _LOGGER.warning("turn %s: the node went silent; ending it", sid)
                    return "lost", "the node stopped answering"
                if kind == "lost":
                    return "lost", str(message)
                if kind == "local_stop":
                    await self._say_stop(sid)
                    return "stopped", str(message)
                if not isinstance(message, Control):
                    continue
                if message.type == "speak":
                    await self._cancel(streamer)
                    streamer = None
                    record.spoken.append(message.text or "")
                elif message.type == "listen":
                    await self._cancel(streamer)
                    self._mode = "stream"
                    chimes.append(asyncio.create_task(self._chime("wake"), name="listen-chime"))
                    streamer = asyncio.create_task(self._stream(record), name="stream")
                elif message.type == "end":
                    await self._cancel(streamer)
                    await self._speaking_done(sid)
                    chimes.append(asyncio.create_task(self._chime("done"), name="done-chime"))
                    return "ended", message.reason
                elif message.type == "stop":
                    await self._cancel(streamer)
                    return "stopped", message.reason
        finally:
            await self._cancel(streamer)

    async def _stream(self, record: TurnRecord) -> None:
        """Send the turn's audio until the local end of speech (or cancelled)."""
        stream = self.settings.stream
        ender = StreamEnd(
            trailing_silence_ms=stream.trailing_silence_ms,
            no_speech_timeout_s=stream.no_speech_timeout_s,
            max_stream_s=stream.max_stream_s,
            use_vad=stream.local_vad,
        )
        topic = self.topics.audio(record.session_id)
        self._set_listening(True)
        try:
            while True:
                chunk = await self._audio.get()
                await self.bus.publish(topic, chunk, qos=0)
                record.audio_sent += 1
                reason = "error" if self._overflow else ender.feed(chunk)
                if reason is not None:
                    if reason == "error":
                        _LOGGER.warning("audio queue full (broker too slow): ending the stream")
                    record.end_reason = reason
                    end = AudioEnd(session_id=record.session_id, reason=reason)
                    await self.bus.publish(
                        self.topics.audio_end(record.session_id), end.to_payload(), qos=1
                    )
                    return
        finally:
            self._end_stream()

    def _end_stream(self) -> None:
        self._mode = "idle"
        self._overflow = False
        while not self._audio.empty():
            self._audio.get_nowait()
        self._set_listening(False)

    async def _cancel(self, task: asyncio.Task[None] | None) -> None:
        if task is None:
            return
        task.cancel()
        results = await asyncio.gather(task, return_exceptions=True)
        if isinstance(results[0], BusError):
            raise results[0]

    async def _speaking_done(self, session_id: str) -> None:
        speech = self._speech.get(session_id)
        if speech is not None and speech.task is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(speech.task), timeout=1)

    async def _say_stop(self, session_id: str) -> None:
        self._stop_playback()
        event = SatelliteEvent(type="stop", session_id=session_id)
        with contextlib.suppress(BusError):
            await self.bus.publish(self.topics.event, event.to_payload(), qos=1)

    # --- speech from the node -------------------------------------------------------
    def _start_speech(self, control: Control) -> None:
        speech = _Speech(control.session_id, control)
        self._speech[control.session_id] = speech
        speech.task = asyncio.create_task(self._play(speech), name=f"play-{control.session_id}")

    async def _play(self, speech: _Speech) -> None:
        control = speech.control
        loop = asyncio.get_running_loop()
        self.playing = True
        self._jobs.put_nowait(self._publish_state)
        played = 0
        try:
            await loop.run_in_executor(
                self._speaker,
                self._output.start,
                control.rate or 22_050,
                control.width or 2,
                control.channels or 1,
            )
            while (chunk := await speech.chunks.get()) is not None:
                await loop.run_in_executor(
                    self._speaker, self._output.write, scale(chunk, self.volume)
                )
                played += 1
            await loop.run_in_executor(self._speaker, self._output.finish)
        except AudioError as err:
            _LOGGER.error("speech not played: %s", err)
        finally:
            self.playing = False
            self._speech.pop(speech.session_id, None)
            self._jobs.put_nowait(self._publish_state)
        if speech.stopped:
            return
        if self._turn is not None and self._turn.session_id == speech.session_id:
            self._turn.audio_played += played
            self._turn.milestones["played"] = time.monotonic()
        event = SatelliteEvent(type="played", session_id=speech.session_id)
        try:
            await self.bus.publish(self.topics.event, event.to_payload(), qos=1)
        except BusError as err:
            _LOGGER.warning("'played' not sent: %s", err)

    def _stop_playback(self) -> None:
        if not self._speech:
            return
        self._output.abort()
        for speech in self._speech.values():
            speech.stopped = True
            with contextlib.suppress(asyncio.QueueFull):
                speech.chunks.put_nowait(None)

    async def _chime(self, kind: str) -> None:
        if not self.settings.audio.chimes:
            return
        pcm = self._chimes[kind]
        if self._input.hears_output:
            self._mic_silent_until = time.monotonic() + len(pcm) / 32_000 + 0.05
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(self._speaker, self._output.start, 16_000, 2, 1)
            await loop.run_in_executor(self._speaker, self._output.write, scale(pcm, self.volume))
            await loop.run_in_executor(self._speaker, self._output.finish)
        except AudioError as err:
            _LOGGER.warning("chime not played: %s", err)

    # --- MQTT ---------------------------------------------------------------------
    def _on_message(self, topic: str, payload: bytes) -> None:
        parsed = parse_topic(self.settings.mqtt.prefix, topic)
        if parsed is None or parsed[0] != self.settings.site:
            return
        _, kind, name = parsed
        try:
            if kind == "control":
                self._on_control(Control.from_payload(payload))
            elif kind == "play" and name is not None:
                speech = self._speech.get(name)
                if speech is not None:
                    speech.chunks.put_nowait(payload)
            elif kind == "play_end" and name is not None:
                end = PlayEnd.from_payload(payload)
                speech = self._speech.get(end.session_id)
                if speech is not None:
                    speech.chunks.put_nowait(None)
            elif kind == "set" and name is not None:
                self._on_set(name, payload.decode("utf-8", "replace").strip())
        except ValidationError as err:
            _LOGGER.warning("malformed %s message: %s", kind, err.errors()[0]["msg"])
        except asyncio.QueueFull:
            _LOGGER.warning("speech queue full: a chunk was dropped")

    def _on_control(self, control: Control) -> None:
        turn = self._turn
        ours = turn is not None and control.session_id == turn.session_id
        if control.type == "speak":
            if ours or (turn is None and control.session_id not in self._speech):
                self._start_speech(control)  # an announcement when no turn runs
            else:
                _LOGGER.info("speech for session %s ignored: busy", control.session_id)
                return
        if ours:
            self._inbox.put_nowait(("control", control))
        elif control.type == "stop" and control.session_id in self._speech:
            self._stop_playback()

    def _on_set(self, name: str, value: str) -> None:
        if name == SET_MUTE:
            if value.upper() not in {"ON", "OFF"}:
                _LOGGER.warning("set/mute wants ON or OFF, not %r", value[:32])
                return
            muted = value.upper() == "ON"
            if muted != self.muted:
                self.muted = muted
                if muted and self._turn is not None:
                    self._inbox.put_nowait(("local_stop", "muted"))
                event = SatelliteEvent(type="muted" if muted else "unmuted")
                self._jobs.put_nowait(lambda: self._publish(self.topics.event, event))
            self._jobs.put_nowait(self._publish_state)
        elif name == SET_VOLUME:
            try:
                volume = round(float(value))
            except ValueError:
                _LOGGER.warning("set/volume wants a number 0-100, not %r", value[:32])
                return
            self.volume = max(0, min(100, volume))
            self._jobs.put_nowait(self._publish_state)
        elif name == SET_STOP:
            if self._turn is not None:
                self._inbox.put_nowait(("local_stop", "stopped"))
            else:
                self._stop_playback()
        else:
            _LOGGER.warning("unknown setting %r", name[:32])

    async def _on_connect(self) -> None:
        info = SatelliteInfo(
            site=self.settings.site,
            name=self.settings.display_name,
            area=self.settings.area,
            wake_words=self._detector.names,
            lang=self.settings.lang,
            sw_version=__version__,
        )
        await self.bus.publish(self.topics.info, info.to_payload(), qos=1, retain=True)
        await self._publish_state()

    async def _publish_state(self) -> None:
        state = SatelliteState(
            muted=self.muted, volume=self.volume, listening=self.listening, playing=self.playing
        )
        with contextlib.suppress(BusError):
            await self.bus.publish(self.topics.state, state.to_payload(), qos=1, retain=True)

    async def _publish(self, topic: str, message: SatelliteEvent) -> None:
        try:
            await self.bus.publish(topic, message.to_payload(), qos=1)
        except BusError as err:
            _LOGGER.warning("%s not sent: %s", message.type, err)

    def _set_listening(self, listening: bool) -> None:
        if listening != self.listening:
            self.listening = listening
            self._jobs.put_nowait(self._publish_state)

    async def _do_jobs(self, stop: asyncio.Event) -> None:
        """Publishing asked for by synchronous callbacks, in order."""
        while not stop.is_set():
            try:
                job = await asyncio.wait_for(self._jobs.get(), timeout=0.5)
            except TimeoutError:
                continue
            await job()

    async def _watch_connection(self, stop: asyncio.Event) -> None:
        """A turn whose broker went away is dropped (the node times it out)."""
        was_connected = False
        while not stop.is_set():
            connected = self.bus.connected.is_set()
            if was_connected and not connected and self._turn is not None:
                self._inbox.put_nowait(("lost", "the broker connection was lost"))
                self._stop_playback()
            was_connected = connected
            await asyncio.sleep(0.2)
