"""Load the voice turn's models once: end of speech, both engines, narration, speech.

Heavy imports happen here, inside ``load_engines``, so a node with voice disabled (or
a command that needs no models) never pays for them.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from appliance.settings import Settings
from appliance.voice.turn import Engines, VerifierSession

_LOGGER = logging.getLogger(__name__)


def load_engines(settings: Settings, *, executor_threads: int = 4) -> Engines:
    """Everything a voice turn needs, loaded (blocking: call it in a thread)."""
    from appliance.asr.base import Hints
    from appliance.asr.whisper import WhisperEngine
    from appliance.audio.vad import Endpointer, load_silero
    from appliance.intents import IntentParser
    from appliance.llm.narrator import Narrator
    from appliance.tts.piper import PiperSpeaker

    started = time.perf_counter()
    languages = _languages(settings)
    whisper = WhisperEngine(settings.whisper, data_dir=settings.data_dir)
    for lang in languages:
        whisper.load(lang)
    silero_check = load_silero()  # fail early if the VAD cannot load
    del silero_check
    narrator = Narrator(settings.llm, settings.data_dir)
    narrator.load(tuple(languages))
    speaker = PiperSpeaker(settings.tts, data_dir=settings.data_dir, languages=languages)
    parser = IntentParser(timezone=settings.timezone)
    verifier_for = _verifier_factory(settings)

    def hints(lang: str, items: Sequence[str]) -> Any:
        return Hints(lang=lang, items=tuple(items))

    def parse_for(lang: str, _now: str) -> Callable[[str], Any]:
        now = dt.datetime.now(settings.tz)
        return functools.partial(parser.parse, lang=lang, now=now)

    engines = Engines(
        primary=whisper,
        verifier_for=verifier_for,
        endpointer=lambda: Endpointer(settings.vad),
        narrator=narrator,
        speaker=speaker,
        hints=hints,
        parse=parse_for,
        executor=ThreadPoolExecutor(executor_threads, thread_name_prefix="voice"),
    )
    _LOGGER.info("voice engines loaded in %.2f s (%s)", time.perf_counter() - started,
                 ", ".join(languages))  # fmt: skip
    return engines


def _languages(settings: Settings) -> list[str]:
    wanted = {settings.language, *settings.voice.site_languages.values()}
    return sorted(lang for lang in wanted if lang in ("en", "pt"))


def _verifier_factory(
    settings: Settings,
) -> Callable[[str, Sequence[str]], VerifierSession | None]:
    from appliance.asr.grammar import build_grammar
    from appliance.asr.verifier import create_verifier

    def verifier_for(lang: str, items: Sequence[str]) -> VerifierSession | None:
        grammar = build_grammar(lang, tuple(items))
        verifier = create_verifier(lang, settings.verifier, grammar, data_dir=settings.data_dir)
        if verifier is None:
            return None
        session: VerifierSession = verifier.start()
        return session

    return verifier_for
