"""One voice turn: audio in, end of speech, two transcripts, gate, action, speech out.

The verifier consumes audio while the user speaks (in a worker thread), so its result
is ready at the end of speech. Whisper starts on the utterance as soon as the speech
pauses (``SpeechPaused``, 300 ms of silence by default): when the pause becomes the end
of speech (700 ms), its transcript is usually ready; when the speech resumes, that early
transcript is discarded and Whisper runs again on the longer utterance. Nothing here
blocks the event loop.
"""

from __future__ import annotations

import asyncio
import collections
import datetime as dt
import functools
import logging
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from appliance.actions.service import ActionService, Request, Result
from appliance.asr.grammar import pronunciation
from appliance.protocol.commands import READ_ONLY_ACTIONS, Command
from appliance.protocol.receipts import ASK, ASK_TIME, PART, Receipt, Source
from appliance.voice.gate import (
    ARTICLE_MARGIN,
    KNOWN_FOR_UNKNOWN,
    LISTED_READING,
    WEAK,
    GateDecision,
    Heard,
    Parse,
    amount_and_time_words,
    article_readings,
    commands_of,
    decide,
    item_from_the_beam,
    item_from_the_look,
    listed,
    mended_words,
    names_known_items,
    not_understood,
    repaired_readings,
    said_no,
    same_commands,
    shares_item_words,
    spliced_readings,
    tells_a_time,
    unspeakable,
    verb_asked,
    with_courtesy,
    with_of,
)

if TYPE_CHECKING:
    from appliance.asr.verifier import Expect

_LOGGER = logging.getLogger(__name__)
_BEFORE_SPEECH_BYTES = 32 * 800
"""Audio (800 ms) kept for the verifier before speech is confirmed: the pre-roll and
the time the endpointer takes to confirm an onset, with room to spare."""
_MAX_WEIGHED = 4
"""Readings of the verifier's words Whisper weighs in one turn (~30 ms each)."""
PUBLISH_WAIT_S = 10.0
"""How long a turn watches for its receipt to reach the broker (for the milestone)."""


# --- what a turn needs of the engines (implemented in appliance.asr/audio/tts/llm) ---
class TranscriptLike(Protocol):
    @property
    def text(self) -> str: ...
    @property
    def rejected(self) -> str | None: ...
    @property
    def alternatives(self) -> tuple[str, ...]: ...
    @property
    def details(self) -> Mapping[str, Any]: ...


class PrimaryEngine(Protocol):
    def transcribe(self, pcm: bytes, hints: Any, *, second: bool = False) -> TranscriptLike: ...
    def has_second_opinion(self, lang: str) -> bool: ...
    def weigh(self, pcm: bytes, readings: Sequence[str], lang: str = "en") -> list[float]: ...
    def weigh_against(
        self, pcm: bytes, own: str, readings: Sequence[str], lang: str = "en"
    ) -> tuple[str, float] | None: ...


class VerifierSession(Protocol):
    vocabulary: frozenset[str]
    """The ``item_key`` of every item its grammar holds (what it can hear)."""

    def accept(self, pcm: bytes) -> None: ...
    def finish(self, wait_while: Callable[[], bool] | None = None) -> TranscriptLike: ...
    def reconsider(
        self, text: str | Sequence[str], transcript: TranscriptLike, items: Sequence[str]
    ) -> TranscriptLike | None: ...


class Endpointer(Protocol):
    def feed(self, pcm: bytes) -> Sequence[Any]: ...
    def utterance(self) -> bytes: ...
    def paused_utterance(self) -> bytes: ...
    def finish(self) -> Sequence[Any]: ...
    @property
    def pause_ms(self) -> float | None: ...
    def hold(self, pause_ms: float) -> bool: ...


class NarrationLike(Protocol):
    @property
    def text(self) -> str: ...
    @property
    def source(self) -> str: ...


class Narrator(Protocol):
    def narrate(
        self, receipt: Receipt, lang: str, *, budget_ms: float | None = None
    ) -> NarrationLike: ...

    def answer(
        self,
        question: str,
        memories: Sequence[str],
        lang: str,
        *,
        episodes: str = "",
        failed: bool = False,
        budget_ms: float | None = None,
    ) -> NarrationLike: ...


class AnswerLike(Protocol):
    @property
    def text(self) -> str: ...


class MemoryLike(Protocol):
    """What a turn needs of the memory (``appliance.memory.conversation``)."""

    async def answer(
        self,
        *,
        user: str | None,
        site: str | None,
        question: str,
        lang: str,
        narrator: Narrator,
        executor: Executor,
        budget_ms: Callable[[], float | None] | None = None,
    ) -> AnswerLike | None: ...

    async def record(
        self,
        *,
        user: str | None,
        site: str | None,
        turn_id: str,
        question: str,
        answer: str,
        lang: str,
        asked_at: dt.datetime,
    ) -> None: ...


class ParserFor(Protocol):
    def __call__(self, lang: str, last_item: str | None = None) -> Parse:
        """A text parser for the gate in ``lang``, bound to the current time and to the
        item the conversation was last about ("make that three")."""
        ...


class Speaker(Protocol):
    def sample_rate_for(self, lang: str) -> int: ...
    def synthesize(self, text: str, lang: str) -> Iterator[bytes]: ...


class SynthesisClock:
    """How long the speaker takes to its first audio, as a running estimate: what a
    turn keeps back from its first-audio target when it gives the LLM its budget."""

    def __init__(self, initial_ms: float = 300.0, weight: float = 0.2) -> None:
        self.estimate_ms = initial_ms
        self._weight = weight

    def observe(self, ms: float) -> None:
        self.estimate_ms += self._weight * (ms - self.estimate_ms)

    async def timed(self, chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        start = time.perf_counter()
        first = True
        async for chunk in chunks:
            if first:
                self.observe((time.perf_counter() - start) * 1000)
                first = False
            yield chunk


@dataclass
class Engines:
    """The loaded models; one set per node, shared by its turns."""

    primary: PrimaryEngine
    verifier_for: Callable[[str, Sequence[str], Expect], VerifierSession | None]
    """(language, known items, what is expected: a command, a yes/no answer or a time
    of day) -> a started verifier session, or None when the language has no verifier."""
    endpointer: Callable[[], Endpointer]
    narrator: Narrator
    speaker: Speaker
    hints: Callable[[str, Sequence[str], Expect], Any]
    """(language, known items, what is expected) -> the primary engine's hints."""
    parse: ParserFor
    """(language, the item last talked about) -> text parser for the gate."""
    executor: Executor
    release_endpointer: Callable[[Any], None] | None = None
    """Hands a turn's endpointer back for reuse (its model stays loaded)."""
    prepare_verifier: Callable[[str, Sequence[str]], None] | None = None
    """(language, known items) -> ready the idle verifiers' grammar (blocking)."""
    synthesis: SynthesisClock = field(default_factory=SynthesisClock)
    """How long the speaker takes to its first audio (a running estimate)."""
    answered_time: Callable[[str, str, dt.date, str | None], dt.datetime | None] | None = None
    """(text, language, day, part of the day) -> that day at the time of day the text
    says on its own (the answer to "what time?"), or None when it says anything else."""


SpeechSink = Callable[[str, int, AsyncIterator[bytes]], Awaitable[None]]
"""(text, sample rate, PCM per sentence as it is synthesized) -> the satellite."""


@dataclass
class Milestones:
    """Milliseconds since the wake claim."""

    start: float = field(default_factory=time.perf_counter)
    marks: dict[str, float] = field(default_factory=dict)

    def mark(self, name: str) -> None:
        self.marks.setdefault(name, round((time.perf_counter() - self.start) * 1000, 1))


@dataclass
class TurnResult:
    transcripts: dict[str, str]
    decision: str
    gate: GateDecision | None
    receipts: list[Receipt]
    speech: str
    milestones_ms: dict[str, float]

    def to_json(self, file: str | None = None) -> dict[str, Any]:
        """``intent`` and ``receipt`` are the first of the turn's; a list of items
        gives one command and one receipt per item, all in ``commands``/``receipts``."""
        commands = [c.model_dump(mode="json") for c in (self.gate.commands if self.gate else ())]
        receipts = [r.to_json_obj() for r in self.receipts]
        out: dict[str, Any] = {
            "transcripts": self.transcripts,
            "decision": self.decision,
            "intent": commands[0] if commands else None,
            "receipt": receipts[0] if receipts else None,
            "speech": self.speech,
            "milestones_ms": self.milestones_ms,
            "commands": commands,
            "receipts": receipts,
        }
        if file is not None:
            out = {"file": file, **out}
        return out


class VoiceTurn:
    """Feed it audio; it ends by itself at end of speech (or call ``finish``)."""

    def __init__(
        self,
        *,
        session_id: str,
        site: str | None,
        user: str,
        lang: str,
        engines: Engines,
        service: ActionService | None,
        known_items: Sequence[str] = (),
        milestones: Milestones | None = None,
        dry_run: bool = False,
        log_transcripts: bool = False,
        expect: Expect = "command",
        expect_published: Callable[[str], asyncio.Future[None]] | None = None,
        memory: MemoryLike | None = None,
        first_audio_target_ms: float | None = None,
        last_item: str | None = None,
    ) -> None:
        """``memory``: answers questions about the speaker and keeps the diary (None:
        no memory; such questions get the "only the list and the agenda" reply).
        ``last_item``: the item the site's last turn added or changed, which "make that
        three" changes (None: such a request names no item). ``first_audio_target_ms``:
        the LLM narrates only within what is left of this much time after the end of
        speech, less the speaker's own time (None: the narrator's budget). ``expect``:
        "command" for a turn of its own; "answer" or "time" for the answer to a question
        a turn asked (a yes/no, or a time of day), which the turn only hears: the
        session reads and acts on it."""
        self.session_id = session_id
        self.site = site
        self.user = user
        self.lang = lang
        self._sounds = functools.partial(pronunciation, lang=lang)  # the gate's ``sounds``
        self.engines = engines
        self.service = service
        self.known_items = tuple(known_items)
        self.last_item = last_item
        self.milestones = milestones or Milestones()
        self.dry_run = dry_run
        self.log_transcripts = log_transcripts
        self.expect: Expect = expect
        self.answer_only = expect != "command"
        self._expect_published = expect_published
        self.memory = memory
        self.first_audio_target_ms = first_audio_target_ms
        self._asked_at = dt.datetime.now(dt.UTC)
        self._published: asyncio.Task[None] | None = None
        self._endpointer = engines.endpointer()
        self._release_endpointer = engines.release_endpointer
        self._verifier: VerifierSession | None = None
        self._verifier_job: asyncio.Future[VerifierSession | None] | None = None
        self._finished = False
        self._chunks: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._before_speech: collections.deque[bytes] = collections.deque()
        self._before_bytes = 0
        self._feeder: asyncio.Task[None] | None = None
        self.speech_ended = asyncio.Event()
        self.no_speech = False
        self._early: tuple[bytes, asyncio.Future[TranscriptLike]] | None = None
        self.early_transcripts = 0
        """Whisper runs started at a pause (the last one is used when the pause was the end)."""
        self.used_early_transcript = False
        self.held_pauses: set[float] = set()
        """Pauses (their start, ms of audio) after words that stop mid-sentence, which
        end the speech only after the longer ``hold_silence_ms``."""

    def utterance(self) -> bytes:
        """The audio the endpointer kept: pre-roll, speech, post-roll."""
        return self._endpointer.utterance()

    @property
    def has_verifier(self) -> bool:
        return self._verifier is not None

    # --- audio in -------------------------------------------------------------------
    def start(self) -> None:
        # Getting a verifier may swap its grammar (the known items changed): a second of
        # CPU, so in a worker; the audio waits in the queue meanwhile.
        loop = asyncio.get_running_loop()
        self._verifier_job = loop.run_in_executor(
            self.engines.executor,
            self.engines.verifier_for,
            self.lang,
            self.known_items,
            self.expect,
        )
        self._feeder = asyncio.create_task(
            self._feed_verifier(), name=f"verifier-{self.session_id}"
        )

    def feed(self, pcm: bytes) -> None:
        """Take a chunk (from the loop); the endpointer runs here, the verifier in a thread."""
        if self.speech_ended.is_set():
            return
        for event in self._endpointer.feed(pcm):
            kind = type(event).__name__
            if kind == "SpeechStarted":
                self.milestones.mark("speech_start")
            elif kind == "SpeechPaused":
                self._transcribe_early()
            elif kind == "SpeechEnded":
                self.milestones.mark("end_of_speech")
                self._mark_speech_stopped(event)
                self.speech_ended.set()
            elif kind == "NoSpeech":
                self.milestones.mark("no_speech")
                self.no_speech = True
                self.speech_ended.set()
        if "speech_start" in self.milestones.marks:
            while self._before_speech:
                self._chunks.put_nowait(self._before_speech.popleft())
            self._chunks.put_nowait(pcm)
        else:
            # Until speech starts the verifier gets only the last moments (the onset
            # and the pre-roll are in there): it forces whatever it hears into the
            # grammar, so clatter before a command must not reach it.
            self._before_speech.append(pcm)
            self._before_bytes += len(pcm)
            while self._before_bytes - len(self._before_speech[0]) >= _BEFORE_SPEECH_BYTES:
                self._before_bytes -= len(self._before_speech.popleft())
        if self.speech_ended.is_set():
            self._chunks.put_nowait(None)

    def end_of_stream(self) -> None:
        """The satellite stopped sending: whatever was heard is the utterance."""
        if not self.speech_ended.is_set():
            self._endpointer.finish()  # what was heard so far becomes the utterance
            self.milestones.mark("end_of_speech")
            if "speech_start" not in self.milestones.marks:
                self.no_speech = True
            self.speech_ended.set()
            self._chunks.put_nowait(None)

    def _mark_speech_stopped(self, event: Any) -> None:
        """When the voice stopped: the end of speech less the trailing silence waited."""
        stopped_ms = getattr(event, "speech_end_ms", None)
        if stopped_ms is not None:
            waited = float(event.at_ms) - float(stopped_ms)
            eos = self.milestones.marks["end_of_speech"]
            self.milestones.marks.setdefault("speech_stopped", round(eos - waited, 1))

    def _transcribe_early(self) -> None:
        """Start Whisper on the utterance so far; used if this pause is the end."""
        if self._early is not None and not self._early[1].done():
            return  # one at a time: the running one would delay a fresh start anyway
        pcm = self._endpointer.paused_utterance()
        if not pcm:
            return
        loop = asyncio.get_running_loop()
        hints = self.engines.hints(self.lang, self.known_items, self.expect)
        job = loop.run_in_executor(
            self.engines.executor, self.engines.primary.transcribe, pcm, hints
        )
        self._early = (pcm, job)
        self.early_transcripts += 1
        self._mark_now("whisper_started")
        pause = self._endpointer.pause_ms
        if not self.answer_only and pause is not None:
            job.add_done_callback(functools.partial(self._hold_if_unfinished, pause))

    def _hold_if_unfinished(self, pause_ms: float, job: asyncio.Future[TranscriptLike]) -> None:
        """Hold the pause that began at ``pause_ms`` when Whisper's reading of the speech
        before it stops mid-sentence ("add milk and ...", "remind me to ..."): the
        speaker is thinking. Too late once the speech ended, or after a failure."""
        if job.cancelled() or job.exception() is not None or self.speech_ended.is_set():
            return
        if pause_ms in self.held_pauses:
            return
        parse = self.engines.parse(self.lang, self.last_item)
        if not unfinished(job.result().text, self.lang, parse):
            return
        if self._endpointer.hold(pause_ms):
            self.held_pauses.add(pause_ms)
            _LOGGER.debug("turn %s: words stop mid-sentence, waiting on", self.session_id)

    async def settle(self) -> None:
        """For audio fed faster than it is spoken (replay, benchmarks): wait for the
        early transcript of the current pause, which a live stream gives the time of
        its silence, so a pause after words that stop mid-sentence is held as it would
        be live."""
        pause = self._endpointer.pause_ms
        if self._early is None or pause is None or self.speech_ended.is_set():
            return
        job = self._early[1]
        if not job.done():
            await asyncio.wait([job])
        self._hold_if_unfinished(pause, job)

    async def _transcribe(self, utterance: bytes) -> TranscriptLike:
        if self._early is not None:
            pcm, job = self._early
            self._early = None
            if pcm == utterance:
                self.used_early_transcript = True
                return await job
            # The speech went on after that pause: the early transcript is stale.
            job.add_done_callback(_discard_result)
        loop = asyncio.get_running_loop()
        hints = self.engines.hints(self.lang, self.known_items, self.expect)
        self._mark_now("whisper_started")
        return await loop.run_in_executor(
            self.engines.executor, self.engines.primary.transcribe, utterance, hints
        )

    def _mark_now(self, name: str) -> None:
        """Set a milestone that may happen more than once (the last one counts)."""
        self.milestones.marks.pop(name, None)
        self.milestones.mark(name)

    async def _verifier_ready(self) -> VerifierSession | None:
        """The turn's verifier once it is ready (None: the language has none, or it
        failed). Shielded: a cancelled caller leaves the job to ``close``, which
        hands the verifier back."""
        if self._verifier is None and self._verifier_job is not None:
            try:
                self._verifier = await asyncio.shield(self._verifier_job)
            except asyncio.CancelledError:
                raise
            except Exception:  # the turn goes on with Whisper alone: nothing acts
                _LOGGER.exception("turn %s: no verifier", self.session_id)
                self._verifier_job = None
        return self._verifier

    async def _feed_verifier(self) -> None:
        verifier = await self._verifier_ready()
        # accept() only queues the audio for the verifier's own decoder thread.
        while (chunk := await self._chunks.get()) is not None:
            if verifier is not None:
                verifier.accept(chunk)

    # --- the turn ---------------------------------------------------------------------
    async def run(self, sink: SpeechSink) -> TurnResult:
        """Wait for end of speech, then decide, act and answer."""
        if self._feeder is None:
            self.start()
        await self.speech_ended.wait()
        if self.no_speech:
            if self._feeder is not None:
                self._feeder.cancel()
            self._drop_early()
            await self._finish_verifier()
            return TurnResult(
                {"whisper": "", "verifier": ""}, "none", None, [], "", dict(self.milestones.marks)
            )
        primary_job = asyncio.ensure_future(self._transcribe(self.utterance()))
        # The verifier may take as long as Whisper does: the gate waits for both.
        whisper_busy = threading.Event()
        whisper_busy.set()
        primary_job.add_done_callback(lambda _: whisper_busy.clear())
        assert self._feeder is not None  # noqa: S101
        await self._feeder
        verifier_t = await self._finish_verifier(whisper_busy.is_set)
        if verifier_t is not None:
            self.milestones.mark("verifier_ready")
        primary_t = await primary_job
        self.milestones.mark("whisper_ready")
        heard_a = Heard("whisper", primary_t.text, primary_t.rejected, primary_t.alternatives)
        heard_b = (
            Heard(
                "verifier",
                verifier_t.text,
                verifier_t.rejected,
                pauses=tuple(map(tuple, verifier_t.details.get("pauses", ()))),
                brief_pauses=tuple(map(tuple, verifier_t.details.get("brief_pauses", ()))),
                quiet=bool(verifier_t.details.get("quiet")),
                unsaid=int(verifier_t.details.get("unsaid_frames", 0)),
                levels=tuple(
                    (str(w), float(db)) for w, db in verifier_t.details.get("word_levels", ())
                ),
            )
            if verifier_t
            else None
        )
        # The gate and the second opinion read the same texts (best readings, beam
        # alternatives) more than once: parse each once per turn.
        parse = functools.lru_cache(maxsize=64)(self.engines.parse(self.lang, self.last_item))
        vocabulary = self._verifier.vocabulary if self._verifier is not None else frozenset()
        gate = decide(heard_a, heard_b, parse, vocabulary, self._sounds, lang=self.lang)
        transcripts = {"whisper": heard_a.text, "verifier": heard_b.text if heard_b else ""}
        gate = await self._looked_again(
            gate, heard_a, heard_b, verifier_t, parse,
            vocabulary=vocabulary, transcripts=transcripts,
        )  # fmt: skip
        gate = unspeakable(not_understood(gate, heard_a, self.lang), self.lang)
        self.milestones.mark("gate_decision")
        if self.answer_only:
            return TurnResult(transcripts, "answer", None, [], "", dict(self.milestones.marks))
        self._log(gate, transcripts)
        if gate.decision == "chat" and self.memory is not None and not self.dry_run:
            answered = await self.memory.answer(
                user=self.user, site=self.site, question=heard_a.text, lang=self.lang,
                narrator=self.engines.narrator, executor=self.engines.executor,
                budget_ms=self.narration_budget,
            )  # fmt: skip
            if answered is not None:
                self.milestones.mark("memory_answer")
                speech = await speak(self.engines, [], self.lang, sink, fallback=answered.text,
                                     wrap=self._marking)  # fmt: skip
                await self._keep(heard_a.text, speech)
                marks = dict(self.milestones.marks)
                return TurnResult(transcripts, "recall", gate, [], speech, marks)
        receipts = await self._act(gate, transcripts)
        speech = await self._answer(gate, receipts, sink)
        await self._keep(heard_a.text, speech)
        return TurnResult(
            transcripts, gate.decision, gate, receipts, speech, dict(self.milestones.marks)
        )

    async def _looked_again(
        self,
        gate: GateDecision,
        heard_a: Heard,
        heard_b: Heard | None,
        verifier_t: TranscriptLike | None,
        parse: Any,
        *,
        vocabulary: frozenset[str],
        transcripts: dict[str, str],
    ) -> GateDecision:
        """The gate's decision after the looks a turn may take again at its audio (the
        verifier's, Whisper's, the larger model's); what they read in ``transcripts``."""
        if gate.reason == "article_item":
            gate = await self._article_weighed(gate, heard_a, heard_b) or gate
        settle = None
        if item_from_the_beam(gate, heard_a, parse, vocabulary, self._sounds):
            settle = "beam_item"
        elif (
            second_look := await self._second_look(gate, heard_a, heard_b, verifier_t, parse)
        ) is not None:
            gate, transcripts["verifier_second_look"] = second_look
        elif (
            look := await self._whisper_look(gate, heard_a, heard_b, parse, vocabulary)
        ) is not None:
            gate, transcripts["whisper_look"] = look
            if item_from_the_look(gate, heard_a, parse, vocabulary, self._sounds):
                settle = "look_item"
        elif self._wants_second_opinion(gate, heard_a, heard_b, parse, vocabulary):
            second, heard = await self._second_opinion(heard_b, parse, vocabulary)
            gate, transcripts["whisper_second"] = second or gate, heard.text
        if settle is not None:
            gate, second_text = await self._item_settled(gate, heard_b, parse, vocabulary, settle)
            if second_text is not None:
                transcripts["whisper_second"] = second_text
        return gate

    async def _keep(self, question: str, answer: str) -> None:
        """The turn in the speaker's diary (memory on, not a dry run)."""
        if self.memory is None or self.dry_run:
            return
        await self.memory.record(
            user=self.user, site=self.site, turn_id=self.session_id, question=question,
            answer=answer, lang=self.lang, asked_at=self._asked_at,
        )  # fmt: skip

    async def _article_weighed(
        self, gate: GateDecision, heard_a: Heard, heard_b: Heard | None
    ) -> GateDecision | None:
        """The gate's decision acting on what both engines agreed, when it asked only
        because the verifier heard an article before an added item it also knows with
        one more first word ("add a coffee", "iced coffee"), Whisper wrote the item
        with no article ("add coffee"), and Whisper's model finds its own reading far
        likelier (``ARTICLE_MARGIN``) than each with the longer item put in
        (``article_readings``): a reverberant room's echo of "add" reads as "a" to the
        verifier. Never when Whisper's reading has the article too ("add a milk" for
        "add oat milk" was heard by both), and only in a quiet room (``Heard.quiet``):
        in noise, Whisper's model found "milk" up to 16.5 nats likelier than "oat milk"
        when "oat milk" was said (flite, babble at 10 dB)."""
        if heard_b is None or not heard_b.quiet:
            return None
        readings = article_readings(gate, heard_a.text) if heard_a.usable else None
        if not readings:
            return None
        loop = asyncio.get_running_loop()
        weigh = functools.partial(
            self.engines.primary.weigh, self.utterance(), [heard_a.text, *readings], self.lang
        )
        scores = await loop.run_in_executor(self.engines.executor, weigh)
        self.milestones.mark("whisper_article")
        below = scores[0] - max(scores[1:])
        if below < ARTICLE_MARGIN:
            return None
        details = {**gate.details, "article_below": round(below, 2)}
        return replace(gate, decision="act", reason="article_weighed", agreed=True, details=details)

    async def _second_look(
        self,
        gate: GateDecision,
        heard_a: Heard,
        heard_b: Heard | None,
        verifier_t: TranscriptLike | None,
        parse: Any,
    ) -> tuple[GateDecision, str] | None:
        """The gate's decision, and what the verifier heard, when it took a second
        look at its audio with Whisper's reading and found that reading fit better
        than its own (``StreamingVerifier.reconsider``), and the gate then acts.

        Only for a change Whisper proposed and the verifier did not confirm, or that
        Whisper's words say once its small words are mended (``_look_readings``): the
        verifier's search prunes its paths to keep up with speech, and can lose the
        one that was said (a synthetic or deeper voice: "add tea" for "add cheese").
        Weighed by the verifier's own acoustic model, against its own reading; only
        a sentence of its grammar (items it knows), and only when the verifier then
        hears the same items, amounts and days there among all of their kind: a
        second look finds the path its search lost, never a reading it would not
        have been sure of, nor a near-homophone of what was said. What the gate then
        runs is what it proposed, or nothing."""
        if self._verifier is None or verifier_t is None or heard_b is None:
            return None
        looked = _look_readings(gate, heard_a, heard_b, parse, self.lang)
        if looked is None:
            return None
        proposal, readings = looked
        found = (getattr(parse(heard_b.text), "commands", ()) or ()) if heard_b.text else ()
        if tells_a_time(found, proposal):
            # "remind me to take out the trash tonight" for "... tonight at eight":
            # Whisper left the time out, and a second look has no time to weigh
            return None
        loop = asyncio.get_running_loop()
        items = [i for c in proposal if isinstance(i := getattr(c, "item", None), str)]
        look = functools.partial(self._verifier.reconsider, readings, verifier_t, items)
        second_t = await loop.run_in_executor(self.engines.executor, look)
        self.milestones.mark("verifier_second_look")
        if second_t is None:
            return None
        heard = replace(
            heard_b,
            text=second_t.text,
            rejected=second_t.rejected,
            pauses=tuple(map(tuple, second_t.details.get("pauses", ()))),
            brief_pauses=tuple(map(tuple, second_t.details.get("brief_pauses", ()))),
            unsaid=int(second_t.details.get("unsaid_frames", 0)),
        )
        second = decide(
            heard_a, heard, parse, self._verifier.vocabulary, self._sounds, lang=self.lang
        )
        if second.decision != "act" or not (
            same_commands(second.commands, proposal)
            # Whisper's list as the verifier paused in it ("milk eggs": two items)
            or same_commands(second.commands, commands_of(parse(listed(readings[0], heard.pauses))))
        ):
            return None
        return replace(second, details={**second.details, "second_look": True}), heard.text

    async def _whisper_look(
        self,
        gate: GateDecision,
        heard_a: Heard,
        heard_b: Heard | None,
        parse: Any,
        vocabulary: frozenset[str],
    ) -> tuple[GateDecision, str] | None:
        """The gate's decision, and Whisper's reading, when the verifier was sure of a
        change that Whisper's best reading did not say, and Whisper finds the verifier's
        words in its own reading almost as likely as what it wrote
        (``spliced_readings``, ``WhisperEngine.weigh_against``), and the gate then acts.

        The mirror of the verifier's second look: Whisper's beam can lose the words
        that were said ("add a dozen acres" for "eggs", "add red" for "bread" on a
        muffled voice) while its model, asked, finds them as likely. Never after a
        refusal, never for a reading that leaves out words Whisper heard or changes
        an amount, a unit, a day or a time ("add one juice" for "add lime juice":
        Whisper's model found them about as likely), and only for what the verifier
        heard itself, sure; the gate's other checks (a rival item in
        Whisper's beam, an article before an item, a guessed meaning) still ask.

        Not when Whisper's best reading named items the verifier knows: two items both
        engines can hear may be near-homophones, which Whisper's model cannot tell
        apart either ("oatmeal" scored 0.3 nats above "oat milk", which was said, on
        espeak-ng in white noise). Nor when an item of each shares a word ("lime
        juice" and "juice"): the verifier cannot hear an item it does not know, and
        hears the nearest it knows.

        Measured on the 91 turns that asked with a sure verifier's change that these
        rules let Whisper weigh (espeak-ng and flite voices; quiet, white noise at 20
        dB, babble at 10 dB, a reverberant room): the verifier's 61 wrong readings
        scored 4.3 nats or more below Whisper's own (6.1 or more, but for an article
        before an item, which the gate asks about anyway); 16 of its 30 right ones
        were within 3."""
        if gate.decision not in ("confirm", "chat") or heard_b is None or not heard_b.usable:
            return None
        if gate.reason in ("rival_item", "article_item", "ambiguous_request"):
            return None
        if not heard_a.usable:
            return None
        own = parse(heard_a.text)
        if said_no(own):
            return None
        # "and the soda to the shopping list" names soda, with its verb put back as the
        # verifier's: said "add miso", the verifier heard "add the soap", Whisper's model
        # found that about as likely, and soap was added while soda went unseen.
        repaired = verb_asked(heard_a, own, heard_b, parse)
        own_commands = commands_of(own) or (repaired[0] if repaired else ())
        if names_known_items(own_commands, vocabulary):
            return None  # two items both engines know: weighing them would be a guess
        commands = commands_of(parse(heard_b.text))
        if not commands or any(c.action in READ_ONLY_ACTIONS for c in commands):
            return None
        if shares_item_words(own_commands, commands):
            return None  # "lime juice" heard as "juice" by a verifier that cannot hear it
        readings = [
            text
            for text in spliced_readings(
                heard_a.text, heard_b.text, amount_and_time_words(self.lang)
            )
            if same_commands(commands_of(parse(text)), commands)
        ][:_MAX_WEIGHED]
        if not readings:
            return None
        loop = asyncio.get_running_loop()
        weigh = functools.partial(
            self.engines.primary.weigh_against, self.utterance(), heard_a.text, readings,
            self.lang,
        )  # fmt: skip
        found = await loop.run_in_executor(self.engines.executor, weigh)
        self.milestones.mark("whisper_look")
        if found is None:
            return None
        reading, below = found
        second = decide(
            replace(heard_a, text=reading), heard_b, parse, vocabulary, self._sounds, lang=self.lang
        )
        if second.decision != "act" or not same_commands(second.commands, commands):
            return None
        details = {**second.details, "whisper_look": reading, "below_best": round(below, 2)}
        return replace(second, reason="whisper_look", details=details), reading

    def _wants_second_opinion(
        self,
        gate: GateDecision,
        heard_a: Heard,
        heard_b: Heard | None,
        parse: Any,
        vocabulary: frozenset[str],
    ) -> bool:
        """The verifier, sure of itself, heard a change that Whisper's reading did not
        confirm (never after a refusal: a second reading must not skip a "don't").

        Not when Whisper's best reading named items the verifier knows (the gate then
        proposes them: "engines_disagree"): the engines heard two different items, and
        a second model siding with one of them is a guess ("oatmeal" for "oat milk" on
        a synthetic voice in noise).

        A weak verifier transcript only in a quiet room (``Heard.quiet``), and never
        against other known items of Whisper's: in babble, a weak one and the larger
        model both heard "oatmeal" for "oat milk". In silence, a voice the verifier
        finds unusual (espeak-ng's) is what makes it unsure, not sounds around it."""
        if gate.decision not in ("confirm", "chat") or heard_b is None:
            return False
        if not heard_b.text.strip() or (heard_a.usable and said_no(parse(heard_a.text))):
            return False  # "we don't need bread anymore": asked, never read otherwise
        commands = getattr(parse(heard_b.text), "commands", ()) or ()
        if heard_b.rejected == WEAK and heard_b.quiet:
            if names_known_items(gate.commands, vocabulary) and not same_commands(
                gate.commands, commands
            ):
                return False
        elif heard_b.rejected is not None:
            return False
        # (the question's commands are Whisper's, unless they name the verifier's known
        # item for one of Whisper's it does not know: ``known_for_unknown``)
        whisper_known = not gate.details.get(KNOWN_FOR_UNKNOWN) and names_known_items(
            gate.commands, vocabulary
        )
        if gate.reason == "engines_disagree" and whisper_known:
            return False
        if gate.reason in ("rival_item", "article_item"):  # both agreed, and it asks
            return False
        if not self.engines.primary.has_second_opinion(self.lang):
            return False
        return any(c.changes_state for c in commands)

    async def _second_opinion(
        self, heard_b: Heard | None, parse: Any, vocabulary: frozenset[str]
    ) -> tuple[GateDecision | None, Heard]:
        """Whisper again with its larger model: its gate decision when that one acts on
        its own reading of the item (None otherwise: not on an item only its beam and
        the verifier named, ``item_from_the_beam``: "Put tea on the list." in its beam
        for its best "Put me on the list.", said "put ghee on the list"), and what it
        read."""
        gate, heard = await self._second_reading(heard_b, parse, vocabulary)
        if gate.decision != "act" or item_from_the_beam(
            gate, heard, parse, vocabulary, self._sounds
        ):
            return None, heard
        return replace(gate, details={**gate.details, "second_opinion": True}), heard

    async def _second_reading(
        self, heard_b: Heard | None, parse: Any, vocabulary: frozenset[str]
    ) -> tuple[GateDecision, Heard]:
        """Whisper's larger model's reading, and the gate's decision on it."""
        loop = asyncio.get_running_loop()
        hints = self.engines.hints(self.lang, self.known_items, self.expect)
        transcribe = functools.partial(self.engines.primary.transcribe, second=True)
        second_t = await loop.run_in_executor(
            self.engines.executor, transcribe, self.utterance(), hints
        )
        self.milestones.mark("whisper_second_ready")
        heard = Heard("whisper", second_t.text, second_t.rejected, second_t.alternatives)
        gate = decide(heard, heard_b, parse, vocabulary, self._sounds, lang=self.lang)
        return gate, heard

    async def _item_settled(
        self,
        gate: GateDecision,
        heard_b: Heard | None,
        parse: Any,
        vocabulary: frozenset[str],
        reason: str,
    ) -> tuple[GateDecision, str | None]:
        """The gate's decision on a known item the verifier named where Whisper's best
        reading named one it does not know (``known_item_for_unknown``) or a word that
        is none ("Put me on the list."), reached
        through Whisper's beam (``reason`` "beam_item": "add tea" for "add D", said
        "add ghee") or its weighing (``_whisper_look``, "look_item": "add tea" for "add
        meat"), and the larger model's reading: done when that model's own reading acts
        on the same commands; asked otherwise, about the change the larger model heard
        when it heard one."""
        text = None
        proposal = gate.commands
        if self.engines.primary.has_second_opinion(self.lang):
            # its own reading of the item, not its beam's: "add ghee" best, "add tea" in it
            second, heard = await self._second_opinion(heard_b, parse, vocabulary)
            text = heard.text
            if second is not None and same_commands(second.commands, gate.commands):
                details = {**gate.details, **second.details, reason: True}
                return replace(second, details=details), text
            proposal = _first_change(heard, parse) or proposal
        details = {**gate.details, reason: True}
        asked = GateDecision("confirm", proposal, proposal[0].action, reason, False, details)
        return asked, text

    async def _finish_verifier(
        self, wait_while: Callable[[], bool] | None = None
    ) -> TranscriptLike | None:
        """The verifier's transcript (once; it also hands the verifier back)."""
        if self._finished:
            return None
        self._finished = True
        verifier = await self._verifier_ready()
        if verifier is None:
            return None
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.engines.executor, verifier.finish, wait_while)

    async def close(self) -> None:
        """Release what the turn holds, whatever state it is in."""
        if self._feeder is not None:
            self._feeder.cancel()
        if self._published is not None:
            self._published.cancel()
        self._drop_early()
        await self._finish_verifier()
        release, self._release_endpointer = self._release_endpointer, None
        if release is not None:
            release(self._endpointer)

    def _drop_early(self) -> None:
        if self._early is not None:
            self._early[1].add_done_callback(_discard_result)
            self._early = None

    async def _act(self, gate: GateDecision, transcripts: dict[str, str]) -> list[Receipt]:
        if self.service is None or gate.decision in ("none", "chat"):
            return []
        source = Source(kind="voice", site=self.site, user=self.user)
        details = {
            "transcripts": transcripts,
            "decision": gate.decision,
            "gate_reason": gate.reason,
        }
        if "agreed_reading" in gate.details:  # engine A agreed on its n-th reading
            details["agreed_reading"] = gate.details["agreed_reading"]
        if gate.decision == "confirm" and gate.details.get(ASK) == ASK_TIME:
            # the question asks what time (ASK_TIME); the answer completes the proposal
            details[ASK] = ASK_TIME
            if PART in gate.details:
                details[PART] = gate.details[PART]
        base = f"voice-{self.session_id}"
        requests: list[Request] = []
        if gate.decision in ("act", "read"):
            for index, command in enumerate(gate.commands, start=1):
                rid = base if index == 1 else f"{base}.{index}"
                requests.append(Request(rid, source, command=command, details=details))
        elif gate.decision == "confirm":
            requests.append(Request.proposing(base, source, gate.commands, details))
        else:  # reject
            requests.append(
                Request(
                    base,
                    source,
                    rejection=gate.reason or "refused",
                    action=gate.intent,
                    details=details,
                )
            )
        if self.dry_run:  # what would be done and said, nothing changed
            return await self.service.rehearse(requests)
        published = self._expect_published(base) if self._expect_published else None
        try:
            results: list[Result] = await self.service.execute_batch(requests)
        except BaseException:
            if published is not None:
                published.cancel()
            raise
        self.milestones.mark("receipt_committed")
        if published is not None:
            self._published = asyncio.create_task(self._mark_published(published))
        return [r.receipt for r in results]

    async def _mark_published(self, published: asyncio.Future[None]) -> None:
        try:
            async with asyncio.timeout(PUBLISH_WAIT_S):
                await published
        except TimeoutError:  # broker away: the outbox publishes it later
            published.cancel()
            return
        self.milestones.mark("receipt_published")

    async def reread(self) -> str:
        """Whisper's reading of this turn's utterance heard as a request (the items'
        words in its hints), whatever the turn expected: an answer that goes on to say
        what was meant ("No, oat milk.", heard "no hope milk" with only the answer
        words)."""
        loop = asyncio.get_running_loop()
        hints = self.engines.hints(self.lang, self.known_items, "command")
        heard = await loop.run_in_executor(
            self.engines.executor, self.engines.primary.transcribe, self.utterance(), hints
        )
        return str(heard.text)

    async def published(self) -> None:
        """Wait (bounded) until the turn's receipt reached the broker, if it has one."""
        if self._published is not None:
            await asyncio.shield(self._published)

    async def _answer(self, gate: GateDecision, receipts: list[Receipt], sink: SpeechSink) -> str:
        fallback = _FALLBACK.get((gate.decision, self.lang[:2]), "")
        return await speak(
            self.engines, receipts, self.lang, sink, fallback=fallback, wrap=self._marking,
            budget_ms=self.narration_budget,
        )  # fmt: skip

    def narration_budget(self) -> float | None:
        """What is left for the LLM of the first-audio target, now (None: no target)."""
        target = self.first_audio_target_ms
        ended = self.milestones.marks.get("end_of_speech")
        if target is None or ended is None:
            return None
        since = (time.perf_counter() - self.milestones.start) * 1000 - ended
        return max(0.0, target - since - self.engines.synthesis.estimate_ms)

    async def _marking(self, chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        async for chunk in chunks:
            self.milestones.mark("first_speech_audio")
            yield chunk

    def _log(self, gate: GateDecision, transcripts: dict[str, str]) -> None:
        if self.log_transcripts:
            _LOGGER.info(
                "turn %s: %s (%s) heard %r",
                self.session_id,
                gate.decision,
                gate.reason,
                transcripts,
            )
        else:
            _LOGGER.info(
                "turn %s: %s (%s), transcripts of %d and %d characters",
                self.session_id,
                gate.decision,
                gate.reason,
                len(transcripts["whisper"]),
                len(transcripts["verifier"]),
            )


def _discard_result(job: asyncio.Future[Any]) -> None:
    """Retrieve an unused early transcript (or its error) so nothing is left unawaited."""
    if not job.cancelled() and job.exception() is not None:
        _LOGGER.debug("an unused early transcription failed: %s", job.exception())


_FALLBACK = {
    ("chat", "en"): "Sorry, I can only help with the shopping list and the agenda.",
    ("chat", "pt"): "Desculpe, só consigo ajudar com a lista de compras e a agenda.",
}


async def speak(
    engines: Engines,
    receipts: Sequence[Receipt],
    lang: str,
    sink: SpeechSink,
    *,
    fallback: str = "",
    wrap: Callable[[AsyncIterator[bytes]], AsyncIterator[bytes]] | None = None,
    budget_ms: Callable[[], float | None] | None = None,
) -> str:
    """Narrate the receipts (or say ``fallback``) and stream the speech to ``sink``.

    ``budget_ms``: the LLM's time for each narration, asked just before it (None:
    the narrator's own budget)."""
    loop = asyncio.get_running_loop()
    texts = []
    for receipt in receipts:
        narrate = functools.partial(
            engines.narrator.narrate, receipt, lang, budget_ms=budget_ms() if budget_ms else None
        )
        texts.append((await loop.run_in_executor(engines.executor, narrate)).text)
    text = " ".join(t for t in texts if t) if receipts else fallback
    if not text:
        return ""
    chunks = engines.synthesis.timed(
        in_thread(engines.speaker.synthesize(text, lang), engines.executor)
    )
    await sink(text, engines.speaker.sample_rate_for(lang), wrap(chunks) if wrap else chunks)
    return text


async def in_thread(iterator: Iterator[bytes], executor: Executor) -> AsyncIterator[bytes]:
    """Pull a blocking iterator (one sentence per step) without blocking the loop."""
    loop = asyncio.get_running_loop()
    done = object()
    while True:
        item = await loop.run_in_executor(executor, next, iterator, done)
        if item is done:
            return
        assert isinstance(item, bytes)  # noqa: S101
        yield item


_FRAGMENT_WORDS = 3
"""At most this many words that say no request are a fragment (``unfinished``)."""


def unfinished(text: str, lang: str, parse: Parse | None = None) -> bool:
    """True if ``text`` stops mid-sentence: on one of the lexicon's ``unfinished_words``
    ("add milk and", "remind me to", "add, um", "remind me"), trailing off ("add
    milk..."), or, read by ``parse``, a request without its item or title ("add two
    liters", "remind me in ten minutes": ``missing_slot``), or a fragment: at most
    ``_FRAGMENT_WORDS`` words that say no request, or none that Whisper could read.

    A fragment is mostly the start of a request Whisper misheard, cut short where the
    speaker stopped to think: "take that" for "take the ...", "remind meter" for
    "remind me to ...", "head" for "add, uh, ...". More words that say nothing are a
    sentence of their own ("the weather is lovely today"), not held."""
    from appliance.intents.lexicon import load_lexicon
    from appliance.intents.text import words_of

    stripped = text.rstrip()
    if stripped.endswith(("...", "\u2026")):
        return True
    words = tuple(w.key for w in words_of(stripped) if w.key != ",")
    if not words:
        return parse is not None
    if any(words[-len(p) :] == p for p in load_lexicon(lang).unfinished_words):
        return True
    if parse is None:
        return False
    read = parse(stripped)
    reason = getattr(read, "reason", None)
    if isinstance(reason, str) and reason.startswith("missing_slot"):
        return True
    return len(words) <= _FRAGMENT_WORDS and getattr(read, "intent", None) is None


def _first_change(heard: Heard, parse: Parse) -> tuple[Command, ...]:
    """The commands of the first of ``heard``'s readings, best then its beam's, that
    says a change ("adquark to the shopping list", then "add quark ..."); none when
    one before it refused, or it was rejected."""
    if not heard.usable:
        return ()
    for text in (heard.text, *heard.alternatives):
        result = parse(text)
        if said_no(result):
            return ()
        commands = commands_of(result)
        if commands and all(c.changes_state for c in commands):
            return commands
    return ()


def _look_readings(
    gate: GateDecision, heard_a: Heard, heard_b: Heard, parse: Parse, lang: str
) -> tuple[tuple[Command, ...], list[str]] | None:
    """The change a second look weighs, and Whisper's readings of it, its own words
    first: for a change Whisper proposed and the verifier did not confirm, or for
    Whisper's words that say a change once the small words it mishears are mended
    ("and a kilo on rice to the shopping list"). The other readings are those words
    mended, with a dropped "of" put back ("a kilo rice"), and with the words that
    change nothing the verifier heard after them ("thanks": ``with_courtesy``), when
    they mean the very same: the verifier weighs each its grammar says. None for
    anything else."""

    def changes(text: str) -> tuple[Command, ...]:
        commands = tuple(getattr(parse(text), "commands", ()) or ())
        return () if any(c.action in READ_ONLY_ACTIONS for c in commands) else commands

    if gate.decision == "confirm" and gate.reason in ("engines_disagree", "not_confirmed"):
        reading = (
            gate.details.get(LISTED_READING) or gate.details.get("repaired_reading") or heard_a.text
        )
        proposal = gate.commands
        if not same_commands(changes(reading), proposal):
            return None  # the question is the verifier's reading, not Whisper's
    elif gate.decision == "chat" and heard_a.usable:
        mended = mended_words(heard_a.text, heard_b.pauses)
        reading = next((r for r in (mended, *repaired_readings(mended)) if changes(r)), "")
        proposal = changes(reading) if reading else ()
        if not proposal:
            return None
    else:
        return None
    readings: list[str] = []
    mended = mended_words(reading, heard_b.pauses)
    for text in (reading, mended, with_of(reading), with_of(mended)):  # fewest changes first
        # each also with the "thanks" or "please" the verifier heard after Whisper's words
        for one in (text, with_courtesy(text, heard_b.text, lang)):
            if one not in readings and (one == reading or same_commands(changes(one), proposal)):
                readings.append(one)
    return proposal, readings
