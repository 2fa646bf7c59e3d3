"""The grammar-constrained verifier (engine B) and how one is chosen.

A verifier hears the utterance while it is spoken: ``start()``, then ``accept()`` for
each 16 kHz 16-bit mono PCM chunk (returns at once: a worker thread decodes), then
``finish()``, which returns a ``Transcript`` within ``max_final_ms`` whatever the
audio was (on time-out: ``rejected="timeout"``). Its text is constrained to the
command grammar (``appliance.asr.grammar``); ``rejected`` is set when the engine
doubts it ("low_confidence", "out_of_grammar", "no_speech").

``create_verifier`` picks Vosk when a Vosk model is configured and installed for the
language, else PocketSphinx (English, and Portuguese spelled in its English phones),
else nothing (a language without a verifier may then only act after a confirmation).
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from appliance.asr.base import REJECT_TIMEOUT, AsrError, Transcript
from appliance.asr.grammar import Grammar
from appliance.audio import AudioError, denoise
from appliance.audio.denoise import Denoiser, noise_floor_dbfs, noise_spread_db

Expect = Literal["command", "answer", "time"]
"""What an utterance is expected to be: a command (a yes or no among them), a yes/no
answer only (a confirmation), or a time of day (the answer to "what time?"). Each has
its own grammar (``Grammar.rules``: "utterance", ``ANSWER_RULE``, ``TIME_RULE``)."""
EXPECTS: tuple[Expect, ...] = ("command", "answer", "time")
"""Every ``Expect``, in the order an engine keeps their searches."""

_LOGGER = logging.getLogger(__name__)
_T = TypeVar("_T")

REJECT_OUT_OF_GRAMMAR = "out_of_grammar"
"""The audio does not fit the grammar (the decoder found no complete sentence, or
Vosk heard only unknown words)."""

SAMPLE_RATE = 16_000
PIECE_BYTES = 1_600 * 2  # decode in 100 ms pieces so an abort is seen quickly
_FLOOR_BYTES = 5_120 * 2  # the first 320 ms tell the noise floor
_DENOISED: frozenset[Expect] = frozenset({"command", "time"})
"""What the verifier hears through RNNoise in any noise; a yes or no only in steady
noise (``_STEADY_SPREAD_DB``). Said 40 times in 4 voices (Piper, Piper deepened, flite
slt, espeak-ng) under babble (six talkers, 20 dB under the voice), the node's combined
answer was right 29 times through RNNoise (8 times a "no" for a yes), 36 times raw
(once). In white noise at 20 dB, 36 either way said alone, but after a command heard
through RNNoise a raw answer was heard worse (the cepstral means the command left
fit the denoised audio). A time ("seven thirty") stays denoised: in white noise the
verifier heard 11 of 15 through RNNoise, 8 raw (in babble 1 and 4, too few to
trust)."""
_STEADY_SPREAD_DB = 2.0
"""Noise whose level varies less than this (``noise_spread_db``) is steady: a hiss, a
hum, a fan. Over 320 ms, white noise measured 0.8-0.9 dB, babble 2.6-7.9 dB."""


class VerifierSettings(BaseModel):
    """Settings of the grammar-constrained verifier (engine B)."""

    model_config = ConfigDict(extra="forbid")

    vosk_model_en: Path | None = Field(
        default=None,
        description="Directory of an English Vosk model (e.g. models/vosk-en, fetched by "
        "'models fetch'). Unset or missing: PocketSphinx verifies English.",
    )
    vosk_model_pt: Path | None = Field(
        default=None,
        description="Directory of a Portuguese Vosk model (e.g. models/vosk-pt). Unset or "
        "missing: PocketSphinx verifies Portuguese with its English acoustic model.",
    )
    max_final_ms: int = Field(
        default=400,
        ge=10,
        le=10_000,
        description="Longest wait in finish() for the result after the last chunk, or, "
        "when Whisper was transcribing the same utterance, after Whisper was done (the "
        "verifier then has the CPU to itself); past it the transcript is rejected as "
        "'timeout'.",
    )
    patient_final_ms: int = Field(
        default=2_500,
        ge=0,
        le=10_000,
        description="While Whisper is still transcribing the same utterance, finish() "
        "waits for the result up to this long after the last chunk, and no longer than "
        "max_final_ms after Whisper is done: the turn waits for Whisper anyway, and a "
        "verifier that fell behind while the two shared the CPU catches up once Whisper "
        "is done.",
    )
    max_utterance_s: float = Field(
        default=15.0,
        gt=0,
        description="Audio beyond this length is not decoded (the result is rejected).",
    )
    reject_avg_score: float = Field(
        default=-24.0,
        description="PocketSphinx: lowest mean per-frame acoustic score difference (log "
        "base 1.0001, scaled) between the grammar's best path and a free phone loop over "
        "the words' frames; below it the transcript is 'low_confidence'. Chosen on "
        "synthesized commands vs chatter.",
    )
    reject_word_score: float = Field(
        default=-50.0,
        description="PocketSphinx: the same difference for the worst single word.",
    )
    weak_avg_score: float = Field(
        default=-42.0,
        description="PocketSphinx: between this and reject_avg_score (and weak_word_score "
        "and reject_word_score) a transcript is 'weak', not 'low_confidence': it may still "
        "confirm Whisper's identical best reading. Unusual voices (espeak-ng) score there; "
        "most chatter forced into the grammar scores lower, and what scores there is not "
        "what Whisper heard.",
    )
    weak_word_score: float = Field(
        default=-62.0, description="PocketSphinx: the 'weak' floor for the worst single word."
    )
    vosk_min_word_confidence: float = Field(
        default=0.6,
        ge=0,
        le=1,
        description="Vosk: lowest per-word confidence accepted (not tuned for en/pt yet).",
    )
    denoise: bool = Field(
        default=True,
        description="Suppress noise (RNNoise) in the commands the verifier hears when "
        "there is noise to remove (denoise_floor_dbfs), and a yes or no only in steady "
        "noise (a hiss, a fan: not people talking); Whisper hears the raw audio. Without "
        "RNNoise installed, a warning and raw audio.",
    )
    denoise_floor_dbfs: float = Field(
        default=-60.0,
        le=0.0,
        description="RNNoise only for an utterance whose noise floor (the quietest fifth "
        "of the 10 ms frames in its first 320 ms, the audio before the speech) is at or "
        "above this level: a quiet room is heard as it is (RNNoise cost synthetic voices "
        "in silence a tenth of their commands).",
    )
    pocketsphinx_max_hmm_per_frame: int = Field(
        default=10_000,
        ge=500,
        description="PocketSphinx: cap on active HMMs per frame (bounds decode time on noise).",
    )
    pocketsphinx_warps: tuple[float, ...] = Field(
        default=(1.0, 0.8),
        min_length=1,
        max_length=4,
        description="PocketSphinx: frequency warp factors (vocal tract length "
        "normalisation); the audio is decoded once per factor and the best-scoring "
        "reading kept. 0.8 hears deeper voices (on a Piper voice made deeper, 25 of 72 "
        "commands right with 1.0 alone, 55 with 1.0 and 0.8; 0.7 instead of 0.8 did not "
        "do better over the whole voice benchmark); each factor costs as much CPU as "
        "the first and ~165 MB of memory.",
    )

    hurry_behind_ms: int = Field(
        default=500,
        ge=0,
        le=10_000,
        description="A verifier this far behind the speech when Whisper is done with the "
        "utterance, or twice as far at end of speech (a busy CPU), hurries: PocketSphinx "
        "goes on at its first warp factor alone, so that its reading comes in time to "
        "count (on a quiet machine it was at most 647 ms behind at end of speech). 0: "
        "never.",
    )

    @field_validator("pocketsphinx_warps")
    @classmethod
    def _check_warps(cls, warps: tuple[float, ...]) -> tuple[float, ...]:
        if len(set(warps)) != len(warps) or not all(0.5 <= w <= 1.5 for w in warps):
            raise ValueError("warp factors must be distinct, each between 0.5 and 1.5")
        return warps


class Verifier(Protocol):
    """What the gate needs from a verifier engine."""

    engine: str

    @property
    def lang(self) -> str:
        """The language of the grammar."""
        ...

    def set_grammar(self, grammar: Grammar) -> None:
        """Use ``grammar`` from the next utterance on."""
        ...

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Wait until queued work (e.g. a grammar swap) is done."""
        ...

    def start(self, *, expect: Expect = "command") -> None:
        """Begin an utterance of what ``expect`` says: a command (or a yes/no), a yes/no
        answer only, or a time of day (the answer to "what time?")."""
        ...

    def accept(self, pcm: bytes) -> None:
        """Queue a chunk of 16 kHz 16-bit mono PCM; never blocks."""
        ...

    def finish(self, wait_while: Callable[[], bool] | None = None) -> Transcript:
        """The transcript of the utterance, within ``max_final_ms`` (or, while
        ``wait_while()`` holds, within ``patient_final_ms``)."""
        ...

    def cancel(self) -> None:
        """Drop the current utterance."""
        ...

    def close(self) -> None:
        """Stop the worker; the verifier cannot be used afterwards."""
        ...


@dataclass
class Result:
    """What an engine made of one utterance."""

    text: str
    confidence: float | None = None
    rejected: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Utterance:
    number: int
    expect: Expect
    hurry: bool = False  # set by finish() (caller side)
    abort: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    result: Result | None = None
    compute_s: float = 0.0
    audio_bytes: int = 0
    sent_bytes: int = 0  # handed to accept() (caller side)
    decoded_bytes: int = 0  # through the engine (worker side)
    truncated: bool = False
    held: bytearray | None = None  # audio until the noise floor is known
    denoiser: Denoiser | None = None  # kept, closed, after the end
    noise_floor_dbfs: float | None = None
    talkers: bool = False  # unsteady noise before the speech (``_settle_noise``)


_STOP = object()


class StreamingVerifier(ABC):
    """Runs an engine on a worker thread; bounded ``finish()``.

    Subclasses implement the ``_engine_*`` methods, which only the worker calls.
    PocketSphinx and Vosk hold the GIL while decoding, so audio is decoded in 100 ms
    pieces to keep other Python threads responsive.
    """

    engine: ClassVar[str] = ""

    def __init__(self, lang: str, settings: VerifierSettings) -> None:
        self._lang = lang
        self._settings = settings
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._utterance: _Utterance | None = None
        self._numbers = itertools.count(1)
        self._closed = False
        self._warned_denoise = False
        self._hurry = False
        """Whether the utterance being decoded is to be finished at some cost
        (``hurry_behind_ms``), as of the piece the engine is being fed (worker side)."""
        self._ended: int | None = None
        """The number of the last utterance decoded to its end, while the engine still
        holds what it heard of it (worker side)."""
        self._ended_talkers = False
        """Whether people talked behind the speaker of that utterance (worker side)."""
        self._thread = threading.Thread(
            target=self._run, name=f"verifier-{self.engine}-{lang}", daemon=True
        )
        self._thread.start()

    @property
    def lang(self) -> str:
        """The language of the grammar."""
        return self._lang

    # -- caller side --------------------------------------------------------------

    def set_grammar(self, grammar: Grammar) -> None:
        """Use ``grammar`` from the next utterance on (swapped on the worker).

        Loading a new grammar keeps the worker busy (PocketSphinx: about a second):
        swap between utterances, e.g. when the list changes, and ``wait_idle()``.
        """
        if grammar.lang != self._lang:
            raise AsrError(f"grammar is {grammar.lang!r}, verifier is {self._lang!r}")
        self._jobs.put(("grammar", grammar))

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Wait until the worker has done everything queued so far; False on time-out."""
        done = threading.Event()
        self._jobs.put(("barrier", done))
        return done.wait(timeout)

    def start(self, *, expect: Expect = "command") -> None:
        """Begin an utterance; a previous unfinished one is dropped."""
        self._check_open()
        utterance = _Utterance(next(self._numbers), expect)
        with self._lock:
            previous, self._utterance = self._utterance, utterance
        if previous is not None:
            previous.abort.set()
        self._jobs.put(("start", utterance))

    def accept(self, pcm: bytes) -> None:
        """Queue ``pcm`` (16 kHz, 16-bit little-endian mono) for decoding."""
        with self._lock:
            utterance = self._utterance
        if utterance is None:
            raise AsrError("accept() before start()")
        if len(pcm) % 2:
            raise AsrError("PCM chunks must hold whole 16-bit samples")
        utterance.sent_bytes += len(pcm)
        self._jobs.put(("audio", utterance, bytes(pcm)))

    def finish(self, wait_while: Callable[[], bool] | None = None) -> Transcript:
        """The transcript, at most ``max_final_ms`` after this call or, given
        ``wait_while`` (the other engine is still at work while it holds), after it
        stops holding, and then no later than ``patient_final_ms`` after this call.
        A verifier more than ``hurry_behind_ms`` behind when ``wait_while`` stops
        holding, or twice as far now, hurries (PocketSphinx: its first warp factor
        alone)."""
        asked = time.perf_counter()
        with self._lock:
            utterance, self._utterance = self._utterance, None
        if utterance is None:
            raise AsrError("finish() before start()")
        behind_at_end_ms = self._behind_ms_of(utterance)
        self._jobs.put(("end", utterance))
        # The two engines share the CPU: the verifier's own time (max_final_ms) starts
        # when the other one is done, all of it ends at patient_final_ms, and a
        # verifier far behind then, or very far behind now, hurries.
        own = self._settings.max_final_ms / 1000
        deadline = asked + own
        patience = deadline
        if wait_while is not None:
            patience = asked + max(self._settings.patient_final_ms / 1000, own)
        hurry_ms = self._settings.hurry_behind_ms
        if wait_while is not None and hurry_ms and behind_at_end_ms > 2 * hurry_ms:
            # it cannot catch up beside Whisper (a busy CPU)
            self._start_hurrying(utterance, behind_at_end_ms, "at end of speech")
        in_time = False
        while not in_time:
            now = time.perf_counter()
            if wait_while is not None:
                if wait_while():
                    deadline = now + own
                elif hurry_ms and not utterance.hurry:
                    behind_ms = self._behind_ms_of(utterance)
                    if behind_ms > hurry_ms:
                        self._start_hurrying(utterance, behind_ms, "when the other engine was done")
            left = min(deadline, patience) - now
            if left <= 0:
                break
            in_time = utterance.done.wait(min(0.02, left))
        waited_ms = (time.perf_counter() - asked) * 1000
        if not in_time or utterance.result is None:
            utterance.abort.set()
            behind_ms = self._behind_ms_of(utterance)
            _LOGGER.warning(
                "%s verifier: no result %.0f ms after end of speech (%.0f ms of audio not "
                "yet decoded; %.0f ms at end of speech)",
                self.engine,
                waited_ms,
                behind_ms,
                behind_at_end_ms,
            )
            return Transcript(
                text="",
                engine=self.engine,
                elapsed_ms=utterance.compute_s * 1000,
                rejected=REJECT_TIMEOUT,
                details={
                    "finish_ms": waited_ms,
                    "audio_ms": _audio_ms(utterance),
                    "behind_ms": behind_ms,
                    "behind_at_end_ms": behind_at_end_ms,
                    "hurried": utterance.hurry,
                },
            )
        result = utterance.result
        details: Mapping[str, Any] = {
            **result.details,
            "finish_ms": waited_ms,
            "audio_ms": _audio_ms(utterance),
            "behind_at_end_ms": behind_at_end_ms,
            "hurried": utterance.hurry,
            "expect": utterance.expect,
            "utterance": utterance.number,
            "noise_floor_dbfs": utterance.noise_floor_dbfs,
            "denoised": utterance.denoiser is not None,
            "talkers": utterance.talkers,
            # Below the level that calls for noise suppression: a quiet room.
            "quiet": utterance.noise_floor_dbfs is not None
            and utterance.noise_floor_dbfs < self._settings.denoise_floor_dbfs,
        }
        _LOGGER.debug(
            "%s verifier: %r rejected=%s in %.0f ms (%.0f ms behind at end of speech)",
            self.engine,
            result.text,
            result.rejected,
            waited_ms,
            behind_at_end_ms,
        )
        return Transcript(
            text=result.text,
            engine=self.engine,
            elapsed_ms=utterance.compute_s * 1000,
            confidence=result.confidence,
            rejected=result.rejected,
            details=details,
        )

    def cancel(self) -> None:
        """Drop the current utterance, if any."""
        with self._lock:
            utterance, self._utterance = self._utterance, None
        if utterance is not None:
            utterance.abort.set()
            self._jobs.put(("end", utterance))

    def reconsider(
        self,
        text: str | Sequence[str],
        utterance: int,
        items: Sequence[str] = (),
        timeout: float = 2.0,
    ) -> Transcript | None:
        """The verifier's transcript of its utterance number ``utterance`` (its
        ``Transcript.details["utterance"]``), had its search found ``text`` there:
        another engine's reading, when it is a sentence of the verifier's grammar
        (``Grammar.sentence_of``; the transcript is in the grammar's words). Given
        several readings of the same meaning, each that is such a sentence is weighed
        ("a kilo of rice" for Whisper's "a kilo rice"; "..., thanks" as the verifier
        heard it after Whisper's words), and the one that fits best is taken.

        ``text`` is weighed against the same audio with the verifier's own acoustic
        model, and it is the transcript only when the verifier is as sure of it as
        of a reading of its own, and it fits the audio better than the reading the
        verifier found; None otherwise, when another utterance came since, or when
        the engine cannot weigh a given reading (Vosk). ``items``: the item names
        ``text`` says, each of which must be the one the verifier hears there among
        all it knows."""
        found: list[Result | None] = []
        readings = [text] if isinstance(text, str) else list(text)

        def run() -> None:
            if self._ended == utterance:
                found.append(self._engine_reconsider(readings, items))

        started = time.perf_counter()
        try:
            self._call_on_worker(run, timeout)
        except AsrError as err:
            _LOGGER.warning("%s verifier: no second look: %s", self.engine, err)
            return None
        result = found[0] if found else None
        if result is None:
            return None
        return Transcript(
            text=result.text,
            engine=self.engine,
            elapsed_ms=(time.perf_counter() - started) * 1000,
            confidence=result.confidence,
            rejected=result.rejected,
            details={**result.details, "utterance": utterance, "reconsidered": True},
        )

    def close(self) -> None:
        """Stop the worker thread (waits for the current piece of audio)."""
        if self._closed:
            return
        self.cancel()
        self._closed = True
        self._jobs.put(_STOP)
        self._thread.join(timeout=5)

    def _call_on_worker(self, call: Callable[[], None], timeout: float = 60.0) -> None:
        """Run ``call`` on the worker thread and raise what it raised. The engine's
        big allocations belong there: glibc reuses freed memory within a thread's
        arena, so a grammar swap on the worker reuses what the grammar it replaces
        held only if that one was loaded on the worker too."""
        done = threading.Event()
        failures: list[Exception] = []

        def run() -> None:
            try:
                call()
            except Exception as err:  # noqa: BLE001 - handed to the caller
                failures.append(err)
            finally:
                done.set()

        self._jobs.put(("call", run))
        if not done.wait(timeout):
            raise AsrError(f"{self.engine} verifier: worker busy for {timeout:.0f} s")
        if failures:
            raise failures[0]

    def _start_hurrying(self, utterance: _Utterance, behind_ms: float, when: str) -> None:
        """Tell the engine to finish ``utterance`` at some cost (``hurry_behind_ms``)."""
        utterance.hurry = True
        _LOGGER.info(
            "%s verifier: %.0f ms of audio not yet decoded %s; hurrying",
            self.engine,
            behind_ms,
            when,
        )

    def _behind_ms_of(self, utterance: _Utterance) -> float:
        """How much of the audio handed to the utterance the engine has not decoded
        yet (audio past ``max_utterance_s`` is never decoded)."""
        limit = int(self._settings.max_utterance_s * SAMPLE_RATE) * 2
        return _ms(max(0, min(utterance.sent_bytes, limit) - utterance.decoded_bytes))

    def _check_open(self) -> None:
        if self._closed:
            raise AsrError(f"{self.engine} verifier is closed")

    # -- worker side --------------------------------------------------------------

    def _run(self) -> None:
        self._warm_up_denoiser()
        current: _Utterance | None = None
        while True:
            job = self._jobs.get()
            if job is _STOP:
                break
            try:
                current = self._handle(job, current)
            except Exception:  # the worker must survive a broken utterance
                _LOGGER.exception("%s verifier: decoding failed", self.engine)
                if current is not None:
                    current.result = Result("", rejected="engine_error")
                    current.done.set()
                    self._discard_quietly()
                current = None
        if current is not None:
            self._discard_quietly()
        self._engine_close()

    def _handle(self, job: tuple[Any, ...], current: _Utterance | None) -> _Utterance | None:
        kind: str = job[0]
        payload: Any = job[1]
        if kind == "grammar":
            self._ended = None  # its readings are weighed in the grammar it was heard with
            self._engine_set_grammar(payload)
            return current
        if kind == "barrier":
            payload.set()
            return current
        if kind == "call":
            payload()
            return current
        if kind == "start":
            self._ended = None
            if current is not None:
                self._engine_discard()
                _close_denoiser(current)
            started = time.perf_counter()
            begun: _Utterance = payload
            self._engine_begin(begun.expect)
            begun.held = bytearray() if self._settings.denoise else None
            begun.compute_s += time.perf_counter() - started
            return begun
        utterance: _Utterance = payload
        if utterance is not current:
            return current  # an utterance dropped before it began
        if kind == "audio":
            self._feed(utterance, job[2])
            return current
        # kind == "end"
        if utterance.abort.is_set():
            self._engine_discard()
        else:
            self._end(utterance)
        _close_denoiser(utterance)
        utterance.done.set()
        return None

    def _end(self, utterance: _Utterance) -> None:
        started = time.perf_counter()
        if utterance.held is not None:  # shorter than the noise floor's window
            self._settle_noise(utterance)
        if utterance.denoiser is not None and not utterance.truncated:
            self._decode(utterance, utterance.denoiser.flush())
        result = self._engine_end()
        utterance.compute_s += time.perf_counter() - started
        if utterance.truncated:
            result.rejected = result.rejected or "too_long"
        utterance.result = result
        if utterance.expect == "command" and not utterance.truncated:
            self._ended = utterance.number
            self._ended_talkers = utterance.talkers

    def _warm_up_denoiser(self) -> None:
        if self._settings.denoise:
            self._without_rnnoise(denoise.warm_up)

    def _new_denoiser(self) -> Denoiser | None:
        return self._without_rnnoise(Denoiser)

    def _without_rnnoise(self, use: Callable[[], _T]) -> _T | None:
        """``use()``, or None (and a warning, once) when RNNoise cannot be had."""
        try:
            return use()
        except (AudioError, OSError) as err:
            if not self._warned_denoise:
                self._warned_denoise = True
                _LOGGER.warning("%s verifier hears raw audio: %s", self.engine, err)
            return None

    def _feed(self, utterance: _Utterance, pcm: bytes) -> None:
        if utterance.abort.is_set():  # dropped: what is still queued is not worth a look
            return
        limit = int(self._settings.max_utterance_s * SAMPLE_RATE) * 2
        room = limit - utterance.audio_bytes
        if room <= 0:
            utterance.truncated = True
            return
        pcm = pcm[:room]
        utterance.audio_bytes += len(pcm)
        if utterance.held is not None:
            utterance.held += pcm
            if len(utterance.held) >= _FLOOR_BYTES:
                self._settle_noise(utterance)
            return
        self._hear(utterance, pcm)

    def _settle_noise(self, utterance: _Utterance) -> None:
        """Measure the noise floor of the audio held so far, choose raw or denoised
        audio for the whole utterance, and decode what was held."""
        held, utterance.held = bytes(utterance.held or b""), None
        floor = noise_floor_dbfs(held)
        utterance.noise_floor_dbfs = round(floor, 1)
        noisy = floor >= self._settings.denoise_floor_dbfs
        steady = noise_spread_db(held) < _STEADY_SPREAD_DB
        utterance.talkers = noisy and not steady
        if noisy and (utterance.expect in _DENOISED or steady):
            utterance.denoiser = self._new_denoiser()
        self._hear(utterance, held)

    def _hear(self, utterance: _Utterance, pcm: bytes) -> None:
        if utterance.denoiser is not None:
            started = time.perf_counter()
            pcm = utterance.denoiser.process(pcm)
            utterance.compute_s += time.perf_counter() - started
        self._decode(utterance, pcm)

    def _decode(self, utterance: _Utterance, pcm: bytes) -> None:
        for offset in range(0, len(pcm), PIECE_BYTES):
            if utterance.abort.is_set():
                return
            started = time.perf_counter()
            self._hurry = utterance.hurry
            piece = pcm[offset : offset + PIECE_BYTES]
            self._engine_feed(piece)
            utterance.compute_s += time.perf_counter() - started
            utterance.decoded_bytes += len(piece)

    def _discard_quietly(self) -> None:
        try:
            self._engine_discard()
        except Exception:
            _LOGGER.exception("%s verifier: reset failed", self.engine)

    @abstractmethod
    def _engine_set_grammar(self, grammar: Grammar) -> None: ...

    @abstractmethod
    def _engine_begin(self, expect: Expect) -> None: ...

    @abstractmethod
    def _engine_feed(self, pcm: bytes) -> None: ...

    @abstractmethod
    def _engine_end(self) -> Result: ...

    @abstractmethod
    def _engine_discard(self) -> None: ...

    def _engine_close(self) -> None:  # noqa: B027 - optional hook
        """Free engine resources (worker thread)."""

    def _engine_reconsider(self, readings: Sequence[str], items: Sequence[str]) -> Result | None:
        """The first of ``readings`` its grammar says, as the transcript of the last
        utterance (``reconsider``), or None (worker thread). Engines that cannot weigh
        a given reading keep this one."""
        del readings, items
        return None


def _close_denoiser(utterance: _Utterance) -> None:
    if utterance.denoiser is not None:
        utterance.denoiser.close()


def _ms(pcm_bytes: int) -> float:
    return pcm_bytes / 2 / SAMPLE_RATE * 1000


def _audio_ms(utterance: _Utterance) -> float:
    return _ms(utterance.audio_bytes)


def vosk_model_path(lang: str, settings: VerifierSettings) -> Path | None:
    """The configured Vosk model directory of ``lang`` if it is installed."""
    configured = {"en": settings.vosk_model_en, "pt": settings.vosk_model_pt}.get(lang)
    if configured is None:
        return None
    if not (configured / "am").is_dir() and not (configured / "final.mdl").exists():
        _LOGGER.warning("Vosk model for %s not found at %s", lang, configured)
        return None
    return configured


def create_verifier(
    lang: str, settings: VerifierSettings, grammar: Grammar
) -> StreamingVerifier | None:
    """A verifier for ``lang``: Vosk if its model is installed, else PocketSphinx with
    its bundled English acoustic model (Portuguese words spelled in its phones:
    ``appliance.asr.pt_phones``), else None (no verifier for this language)."""
    if grammar.lang != lang:
        raise AsrError(f"grammar is {grammar.lang!r}, asked for {lang!r}")
    model = vosk_model_path(lang, settings)
    if model is not None:
        from appliance.asr.vosk_engine import VoskVerifier

        _LOGGER.info("verifier %s: Vosk (%s)", lang, model)
        return VoskVerifier(model, grammar, settings)
    if lang in ("en", "pt"):
        from appliance.asr.pocketsphinx_engine import PocketSphinxVerifier

        _LOGGER.info("verifier %s: PocketSphinx", lang)
        return PocketSphinxVerifier(grammar, settings)
    _LOGGER.warning(
        "no verifier for %s: no Vosk model installed; commands will need a confirmation", lang
    )
    return None
