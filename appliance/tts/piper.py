"""Piper text-to-speech: a reply becomes int16 mono PCM, one sentence at a time.

Voices load once, at construction (about 0.8 s each on a 2-core CPU); a voice serving two
languages (see ``TtsSettings.fallback_language``) loads once. Every call blocks: the node
runs construction and each ``next()`` of ``synthesize`` in an executor. Synthesis of
different replies may run in parallel threads (onnxruntime sessions are thread-safe and
Piper serializes its espeak-ng phonemizer).

Memory: onnxruntime keeps what a call allocated in its arena for the next one, so a
long sentence (a shopping list read out) left a node ~250 MB bigger for good. Each call
here shrinks the arena back when it ends (``memory.enable_memory_arena_shrinkage``;
measured, a short sentence takes ~20% longer, 109 ms instead of 92), and a long sentence
is synthesized in pieces (``TtsSettings.max_piece_chars``), so what one call needs stays
bounded whatever the length of the list.

Missing voices: the constructor gets the languages it must serve; a language without a
voice (configured, bundled or found under ``<data_dir>/models/``) is spoken with the
``fallback_language`` voice when one is configured, and otherwise makes the constructor
raise ``TtsError``. ``synthesize`` for a language the speaker was not built for raises
``TtsError`` too, before any audio.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import onnxruntime  # type: ignore[import-untyped,unused-ignore]
import onnxruntime.capi.onnxruntime_pybind11_state as ort_state  # type: ignore[import-untyped,unused-ignore]
from piper import PiperVoice, SynthesisConfig

from appliance.tts.errors import TtsError
from appliance.tts.lexicon import Lang, language
from appliance.tts.normalize import speakable
from appliance.tts.sentences import split_sentences
from appliance.tts.settings import TtsSettings
from appliance.tts.voices import VoiceFiles, resolve_voice

log = logging.getLogger(__name__)

SAMPLE_WIDTH = 2
"""Bytes per sample: signed 16-bit little-endian."""
CHANNELS = 1

_PIPER_ERRORS: tuple[type[BaseException], ...] = (
    OSError,
    ValueError,
    KeyError,
    TypeError,
    RuntimeError,
    ort_state.Fail,
    ort_state.InvalidArgument,
    ort_state.InvalidGraph,
    ort_state.InvalidProtobuf,
    ort_state.NoSuchFile,
    ort_state.RuntimeException,
)


class _ShrinkingSession:
    """An ``InferenceSession`` whose every run gives its arena back when it ends (Piper
    calls ``run`` without run options)."""

    def __init__(self, session: onnxruntime.InferenceSession) -> None:
        self._session = session
        self._options = onnxruntime.RunOptions()
        self._options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")

    def run(self, output_names: Any, input_feed: Any, run_options: Any = None) -> Any:
        return self._session.run(output_names, input_feed, run_options or self._options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


def _load(files: VoiceFiles) -> PiperVoice:
    started = time.perf_counter()
    try:
        voice = PiperVoice.load(files.model, config_path=files.config)
    except _PIPER_ERRORS as err:
        raise TtsError(f"cannot load Piper voice {files.model}: {err}") from err
    voice = dataclasses.replace(voice, session=_ShrinkingSession(voice.session))
    log.info(
        "loaded Piper voice %s (%d Hz) in %.2f s",
        files.model.name,
        voice.config.sample_rate,
        time.perf_counter() - started,
    )
    return voice


class PiperSpeaker:
    """Piper voices for the given languages, and sentence-by-sentence synthesis."""

    def __init__(
        self,
        settings: TtsSettings | None = None,
        *,
        data_dir: Path | None = None,
        languages: Iterable[str] = ("en",),
    ) -> None:
        """Load a voice for each of ``languages`` ("en", "pt"; the first is the default).

        ``data_dir`` is the node's data directory: voices are looked for in its
        ``models/`` folder when the settings name none. Raises TtsError when a language
        has no voice and no fallback, or when a voice fails to load.
        """
        self._settings = settings or TtsSettings()
        models_dir = data_dir / "models" if data_dir is not None else None
        wanted = list(dict.fromkeys(language(tag) for tag in languages))
        if not wanted:
            raise TtsError("PiperSpeaker needs at least one language")
        loaded: dict[VoiceFiles, PiperVoice] = {}
        self._voices: dict[Lang, PiperVoice] = {}
        self._files: dict[Lang, VoiceFiles] = {}
        started = time.perf_counter()
        for lang in wanted:
            files = self._voice_files(lang, models_dir)
            if files not in loaded:
                loaded[files] = _load(files)
            self._voices[lang] = loaded[files]
            self._files[lang] = files
        self.load_seconds = time.perf_counter() - started
        """Time spent loading the voices."""
        self._config = SynthesisConfig(
            noise_scale=self._settings.noise_scale,
            noise_w_scale=self._settings.noise_w_scale,
            length_scale=self._settings.length_scale,
            volume=self._settings.volume,
        )

    def _voice_files(self, lang: Lang, models_dir: Path | None) -> VoiceFiles:
        files = resolve_voice(lang, self._settings, models_dir)
        if files is not None:
            return files
        fallback = self._settings.fallback_language
        if fallback is not None and fallback != lang:
            files = resolve_voice(fallback, self._settings, models_dir)
            if files is not None:
                log.warning("no Piper voice for %r: speaking it with the %r voice", lang, fallback)
                return files
        where = f" or put one (with its .onnx.json) under {models_dir}" if models_dir else ""
        raise TtsError(
            f"no Piper voice for language {lang!r}: set tts.voice_{lang} to an .onnx file"
            f"{where}, or set tts.fallback_language"
        )

    @property
    def languages(self) -> tuple[Lang, ...]:
        """The languages this speaker can speak, the default first."""
        return tuple(self._voices)

    @property
    def sample_rate(self) -> int:
        """Sample rate (Hz) of the default language's voice."""
        return self.sample_rate_for(self.languages[0])

    def sample_rate_for(self, lang: str) -> int:
        """Sample rate (Hz) of the audio ``synthesize(..., lang)`` yields."""
        return self._voice(lang).config.sample_rate

    def voice_files(self, lang: str) -> VoiceFiles:
        """The voice files speaking ``lang``."""
        self._voice(lang)
        return self._files[language(lang)]

    def _voice(self, lang: str) -> PiperVoice:
        code = language(lang)
        voice = self._voices.get(code)
        if voice is None:
            raise TtsError(f"this speaker has no voice for {code!r} (it speaks {self.languages})")
        return voice

    def synthesize(self, text: str, lang: str) -> Iterator[bytes]:
        """``text`` as int16 mono PCM at ``sample_rate_for(lang)``, one item per sentence
        (per piece of a long one, ``split_long``).

        Each sentence is normalized with ``speakable`` and synthesized only when the
        previous item has been taken, so the first audio is ready after the first sentence.
        Raises TtsError (at once) for a language without a voice, and (while iterating)
        when Piper fails.
        """
        voice = self._voice(lang)
        return self._stream(voice, split_sentences(text, lang), language(lang))

    def _stream(self, voice: PiperVoice, sentences: list[str], lang: Lang) -> Iterator[bytes]:
        rate = voice.config.sample_rate
        silence = bytes(SAMPLE_WIDTH * round(rate * self._settings.sentence_silence_ms / 1000))
        pause = silence[: len(silence) // (2 * SAMPLE_WIDTH) * SAMPLE_WIDTH]
        for index, sentence in enumerate(sentences):
            pieces = split_long(speakable(sentence, lang), self._settings.max_piece_chars)
            for number, piece in enumerate(pieces):
                started = time.perf_counter()
                try:
                    pcm = b"".join(
                        c.audio_int16_bytes for c in voice.synthesize(piece, self._config)
                    )
                except _PIPER_ERRORS as err:
                    raise TtsError(f"Piper failed on sentence {index + 1}: {err}") from err
                if not pcm:
                    continue
                elapsed = time.perf_counter() - started
                seconds = len(pcm) / (SAMPLE_WIDTH * rate)
                log.debug(
                    "sentence %d/%d (piece %d/%d): %.2f s of audio in %.3f s (RTF %.3f)",
                    index + 1, len(sentences), number + 1, len(pieces), seconds, elapsed,
                    elapsed / seconds,
                )  # fmt: skip
                if number < len(pieces) - 1:
                    pcm += pause
                elif index < len(sentences) - 1:
                    pcm += silence
                yield pcm


_CLAUSE_END = re.compile(r"(?<=[,;])\s+")


def split_long(text: str, max_chars: int) -> list[str]:
    """``text`` (one sentence, as spoken) cut after its commas into pieces of at most
    ``max_chars`` where the commas allow (a clause longer than that stays whole); the
    text itself when it is no longer than that."""
    if len(text) <= max_chars:
        return [text]
    pieces: list[str] = []
    for clause in _CLAUSE_END.split(text):
        if pieces and len(pieces[-1]) + 1 + len(clause) <= max_chars:
            pieces[-1] = f"{pieces[-1]} {clause}"
        else:
            pieces.append(clause)
    return pieces
