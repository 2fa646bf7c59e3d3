"""Load the voice turn's models once: end of speech, both engines, narration, speech.

Heavy imports happen here, inside ``load_engines``, so a node with voice disabled (or
a command that needs no models) never pays for them.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from appliance.settings import Settings
from appliance.voice.answers import ANSWER_WORDS, TIME_WORDS
from appliance.voice.turn import Engines, VerifierSession

if TYPE_CHECKING:
    from appliance.asr.verifier import Expect

_LOGGER = logging.getLogger(__name__)


def load_engines(settings: Settings, *, executor_threads: int = 4) -> Engines:
    """Everything a voice turn needs, loaded (blocking: call it in a thread)."""
    from appliance.asr.base import Hints
    from appliance.asr.whisper import WhisperEngine
    from appliance.audio.vad import Endpointer
    from appliance.intents import IntentParser
    from appliance.llm.narrator import Narrator
    from appliance.tts.piper import PiperSpeaker

    started = time.perf_counter()
    languages = _languages(settings)
    whisper = WhisperEngine(settings.whisper, data_dir=settings.data_dir)
    for lang in languages:
        whisper.warm_up(lang)
        if whisper.has_second_opinion(lang):
            whisper.load(lang, second=True)
    endpointers = _EndpointerPool(lambda: Endpointer(settings.vad))
    endpointers.release(endpointers.acquire())  # fail early if the VAD cannot load
    narrator = Narrator(settings.llm, settings.data_dir, timezone=settings.tz)
    narrator.load(tuple(languages))
    speaker = PiperSpeaker(settings.tts, data_dir=settings.data_dir, languages=languages)
    parser = IntentParser(timezone=settings.timezone)
    pool = _VerifierPool(settings)
    for lang in languages:
        pool.warm(lang)

    def hints(lang: str, items: Sequence[str], expect: Expect) -> Any:
        if expect == "answer":  # a yes or no: no item is said
            return Hints(lang=lang, vocabulary=ANSWER_WORDS[lang])
        if expect == "time":  # the time a question asked for: no item is said
            return Hints(lang=lang, vocabulary=TIME_WORDS[lang])
        return Hints(lang=lang, items=tuple(items))

    def parse_for(lang: str, last_item: str | None = None) -> Callable[[str], Any]:
        now = dt.datetime.now(settings.tz)
        return functools.partial(parser.parse, lang=lang, now=now, last_item=last_item)

    def answered_time(text: str, lang: str, day: dt.date, part: str | None) -> dt.datetime | None:
        time_of_day = parser.time_of_day(text, lang=lang, part=part)
        if time_of_day is None:
            return None
        return dt.datetime.combine(day, time_of_day, tzinfo=settings.tz)

    engines = Engines(
        primary=whisper,
        verifier_for=pool.session,
        prepare_verifier=pool.prepare,
        endpointer=endpointers.acquire,
        release_endpointer=endpointers.release,
        narrator=narrator,
        speaker=speaker,
        hints=hints,
        parse=parse_for,
        answered_time=answered_time,
        executor=ThreadPoolExecutor(executor_threads, thread_name_prefix="voice"),
    )
    _LOGGER.info("voice engines loaded in %.2f s (%s)", time.perf_counter() - started,
                 ", ".join(languages))  # fmt: skip
    return engines


@functools.lru_cache(maxsize=8)
def _item_keys(names: tuple[str, ...]) -> frozenset[str]:
    """The ``item_key`` of each item a grammar holds (the gate compares keys)."""
    from appliance.actions.items import item_key

    return frozenset(item_key(n) for n in names)


def _languages(settings: Settings) -> list[str]:
    wanted = {settings.language, *settings.voice.site_languages.values()}
    return sorted(lang for lang in wanted if lang in ("en", "pt"))


class _EndpointerPool:
    """Endpointers with their Silero model loaded (~100 ms each), reused across turns."""

    def __init__(self, create: Callable[[], Any]) -> None:
        self._create = create
        self._idle: list[Any] = []
        self._lock = threading.Lock()

    def acquire(self) -> Any:
        with self._lock:
            endpointer = self._idle.pop() if self._idle else None
        if endpointer is None:
            return self._create()
        endpointer.reset()
        return endpointer

    def release(self, endpointer: Any) -> None:
        with self._lock:
            self._idle.append(endpointer)


class _VerifierPool:
    """Long-lived verifiers (each owns a decoder thread), one per concurrent session."""

    def __init__(self, settings: Settings) -> None:
        from appliance.asr.verifier import VerifierSettings

        self._settings: VerifierSettings = _with_fetched_models(settings)
        self._idle: dict[str, list[Any]] = {}
        self._lock = threading.Lock()
        self._missing: set[str] = set()
        self._grammar_of: dict[int, object] = {}

    def session(self, lang: str, items: Sequence[str], expect: Expect) -> VerifierSession | None:
        from appliance.asr.grammar import build_grammar
        from appliance.asr.verifier import create_verifier

        if lang in self._missing:
            return None
        grammar = build_grammar(lang, tuple(items))
        with self._lock:
            idle = self._idle.setdefault(lang, [])
            verifier = idle.pop() if idle else None
        if verifier is None:
            verifier = create_verifier(lang, self._settings, grammar)
            if verifier is None:
                self._missing.add(lang)
                return None
        else:
            self._use_grammar(verifier, grammar)
        self._grammar_of[id(verifier)] = grammar.key
        verifier.start(expect=expect)
        release = functools.partial(self._release, lang, verifier)
        return _PooledSession(verifier, release, _item_keys(grammar.items))

    def warm(self, lang: str) -> None:
        """One verifier for ``lang`` made now and left idle (none where the language
        has no verifier): making one loads its grammar on its decoder thread, holding
        the GIL for about a second, which on the first turn after a start delayed both
        engines (receipt 1.3 s after the end of speech instead of 0.45 s, and a
        verifier that missed Whisper's end: the turn asked back)."""
        session = self.session(lang, (), "command")
        if session is not None:
            session.finish()  # nothing heard: back to the pool

    def prepare(self, lang: str, items: Sequence[str]) -> None:
        """Give the idle verifiers the grammar for ``items`` now (blocking, in a worker),
        so the next session does not wait for the swap."""
        from appliance.asr.grammar import build_grammar

        if lang in self._missing:
            return
        grammar = build_grammar(lang, tuple(items))
        while True:  # one at a time: the others stay available to a new session
            with self._lock:
                idle = self._idle.get(lang, [])
                stale = [v for v in idle if self._grammar_of.get(id(v)) != grammar.key]
                if not stale:
                    return
                verifier = stale[0]
                idle.remove(verifier)
            try:
                self._use_grammar(verifier, grammar)
            finally:
                self._release(lang, verifier)

    def _use_grammar(self, verifier: Any, grammar: Any) -> None:
        """Swap the verifier's grammar if it has another one. A swap holds the decoder
        (and the GIL) for about a second: only when the known items changed."""
        if self._grammar_of.get(id(verifier)) != grammar.key:
            verifier.set_grammar(grammar)
            verifier.wait_idle(5.0)
            self._grammar_of[id(verifier)] = grammar.key

    def _release(self, lang: str, verifier: Any) -> None:
        with self._lock:
            self._idle.setdefault(lang, []).append(verifier)


class _PooledSession:
    def __init__(
        self, verifier: Any, release: Callable[[], None], vocabulary: frozenset[str]
    ) -> None:
        self._verifier = verifier
        self._release = release
        self.vocabulary = vocabulary

    def accept(self, pcm: bytes) -> None:
        self._verifier.accept(pcm)

    def finish(self, wait_while: Callable[[], bool] | None = None) -> Any:
        try:
            return self._verifier.finish(wait_while)
        finally:
            self._release()

    def reconsider(self, text: str | Sequence[str], transcript: Any, items: Sequence[str]) -> Any:
        """The verifier's second look at the utterance of ``transcript`` with another
        reading (``StreamingVerifier.reconsider``); None once the verifier has begun
        another one (it went back to the pool at ``finish``)."""
        utterance = transcript.details.get("utterance")
        if not isinstance(utterance, int):
            return None
        return self._verifier.reconsider(text, utterance, items)


def _with_fetched_models(settings: Settings) -> Any:
    """Verifier settings, with Vosk models installed by ``models fetch`` filled in."""
    from appliance.models import find

    verifier = settings.verifier
    updates = {}
    for lang, field in (("en", "vosk_model_en"), ("pt", "vosk_model_pt")):
        if getattr(verifier, field) is None:
            found = find(settings.data_dir, "vosk", lang)
            if found is not None:
                updates[field] = found
    return verifier.model_copy(update=updates)
