"""The verifier's streaming machinery, settings and engine choice (no real audio)."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from appliance.asr.base import REJECT_TIMEOUT, AsrError, Transcript
from appliance.asr.grammar import Grammar, build_grammar
from appliance.asr.verifier import (
    Expect,
    Result,
    StreamingVerifier,
    VerifierSettings,
    create_verifier,
    vosk_model_path,
)
from appliance.audio import denoise
from appliance.audio.pcm import chunks as pcm_chunks
from appliance.audio.pcm import rms_dbfs
from tests.support import speech


class FakeEngine(StreamingVerifier):
    """Counts bytes; ``delay`` seconds per fed piece; fails on a chunk of 0xFF."""

    engine = "fake"

    def __init__(self, settings: VerifierSettings, delay: float = 0.0) -> None:
        self.delay = delay
        self.fail_on_ff = True
        self.fed = 0
        self.heard = b""
        self.begun = 0
        self.discarded = 0
        self.expect: Expect = "command"
        self.grammar_keys: list[str] = []
        self.closed = threading.Event()
        super().__init__("en", settings)

    def _engine_set_grammar(self, grammar: Grammar) -> None:
        self.grammar_keys.append(grammar.key)

    def _engine_begin(self, expect: Expect) -> None:
        self.begun += 1
        self.fed = 0
        self.heard = b""
        self.expect = expect

    def _engine_feed(self, pcm: bytes) -> None:
        if self.fail_on_ff and pcm[:2] == b"\xff\xff":
            raise RuntimeError("broken audio")
        time.sleep(self.delay)
        self.fed += len(pcm)
        self.heard += pcm

    def _engine_end(self) -> Result:
        return Result(f"{self.fed} bytes", confidence=1.0, details={"fed": self.fed})

    def _engine_discard(self) -> None:
        self.discarded += 1

    def _engine_close(self) -> None:
        self.closed.set()


@pytest.fixture
def fake() -> Iterator[FakeEngine]:
    engine = FakeEngine(VerifierSettings(max_final_ms=200, max_utterance_s=1.0, denoise=False))
    yield engine
    engine.close()


def test_streaming_round_trip(fake: FakeEngine) -> None:
    fake.start(expect="answer")
    for _ in range(5):
        fake.accept(b"\x00\x00" * 1600)
    transcript = fake.finish()
    assert transcript.text == "16000 bytes"
    assert transcript.engine == "fake"
    assert transcript.rejected is None and transcript.usable
    assert transcript.details["audio_ms"] == pytest.approx(500)
    assert transcript.details["expect"] == "answer"
    assert transcript.details["finish_ms"] < 200
    assert fake.expect == "answer"
    fake.start(expect="time")
    fake.accept(b"\x00\x00" * 1600)
    assert fake.finish().details["expect"] == "time"
    assert fake.expect == "time"


def test_finish_is_bounded_when_decoding_lags(fake: FakeEngine) -> None:
    fake.delay = 0.1  # 100 ms of work per 100 ms piece: 1 s behind after 1 s of audio
    fake.start()
    fake.accept(b"\x00\x00" * 16000)
    started = time.perf_counter()
    transcript = fake.finish()
    waited = time.perf_counter() - started
    assert transcript.rejected == REJECT_TIMEOUT and transcript.text == ""
    assert 0.19 < waited < 0.4
    fake.delay = 0.0
    fake.start()  # the aborted utterance stops within one piece; the next one works
    fake.accept(b"\x00\x00" * 160)
    assert fake.finish().text == "320 bytes"


def test_audio_beyond_the_limit_is_rejected(fake: FakeEngine) -> None:
    fake.start()
    for _ in range(15):  # 1.5 s, limit 1 s
        fake.accept(b"\x00\x00" * 1600)
    transcript = fake.finish()
    assert transcript.rejected == "too_long"
    assert transcript.details["audio_ms"] == pytest.approx(1000)


def test_restart_cancel_and_misuse(fake: FakeEngine) -> None:
    with pytest.raises(AsrError):
        fake.accept(b"\x00\x00")
    with pytest.raises(AsrError):
        fake.finish()
    fake.start()
    with pytest.raises(AsrError):
        fake.accept(b"\x00")
    fake.accept(b"\x00\x00" * 100)
    fake.start()  # drops the first utterance
    fake.accept(b"\x00\x00" * 10)
    assert fake.finish().text == "20 bytes"
    fake.start()
    fake.cancel()
    fake.start()
    assert fake.finish().text == "0 bytes"
    assert fake.discarded >= 2


@pytest.mark.skipif(not denoise.available(), reason="RNNoise (pyrnnoise) not installed")
def test_the_engine_hears_noisy_audio_through_the_noise_suppression() -> None:
    noise = speech.white_noise(1_500, dbfs=-30.0, seed=4)
    talk = speech.babble(1_500, dbfs=-30.0)  # people talking: not a steady noise
    quiet = speech.concat(speech.silence(400), speech.tone(1_000, dbfs=-20.0))
    hiss = speech.white_noise(2_000, dbfs=-70.0, seed=5)  # a quiet room's microphone
    for suppress, audio, expect, expect_denoised in [
        (True, noise, "command", True),
        (False, noise, "command", False),
        (True, noise, "answer", True),
        (True, talk, "command", True),
        (True, talk, "answer", False),  # a yes or no is heard raw among voices
        (True, noise, "time", True),
        (True, quiet, "command", False),  # digital silence before the sound: nothing to remove
        (True, hiss, "command", False),
        (True, b"\x01\x00" * 800, "command", False),  # shorter than the floor's window
    ]:
        engine = FakeEngine(VerifierSettings(max_final_ms=2_000, denoise=suppress))
        engine.fail_on_ff = False  # denoised audio may well start with a -1
        engine.start(expect=expect)
        for chunk in pcm_chunks(audio, 2048):
            engine.accept(chunk)
        transcript = engine.finish()
        assert transcript.text == f"{len(audio)} bytes"  # every sample, once
        assert transcript.details["denoised"] is expect_denoised
        # people talking (unsteady noise before the speech): a second look fades them
        assert transcript.details["talkers"] is (audio is talk and suppress)
        if audio in (noise, talk) and suppress:  # measured, whatever is then heard
            assert transcript.details["noise_floor_dbfs"] > -33
        if not expect_denoised:
            assert engine.heard == audio
        elif audio is noise:  # (RNNoise keeps much of people talking)
            assert rms_dbfs(engine.heard[16_000:]) < rms_dbfs(audio[16_000:]) - 30
        else:
            assert engine.heard != audio
        engine.close()


def test_engine_errors_do_not_kill_the_worker(fake: FakeEngine) -> None:
    fake.start()
    fake.accept(b"\xff\xff" * 10)
    transcript = fake.finish()
    assert transcript.rejected == "engine_error"
    fake.start()
    fake.accept(b"\x00\x00")
    assert fake.finish().text == "2 bytes"


def test_grammar_swap_and_close(fake: FakeEngine) -> None:
    grammar = build_grammar("en")
    fake.set_grammar(grammar)
    with pytest.raises(AsrError):
        fake.set_grammar(build_grammar("pt"))
    assert fake.wait_idle(1.0)
    assert fake.grammar_keys == [grammar.key]
    fake.close()
    assert fake.closed.is_set()
    with pytest.raises(AsrError):
        fake.start()


def test_settings() -> None:
    settings = VerifierSettings()
    assert settings.vosk_model_en is None and settings.vosk_model_pt is None
    assert settings.max_final_ms == 400
    for name, field in VerifierSettings.model_fields.items():
        assert field.description, name
    with pytest.raises(ValidationError):
        VerifierSettings(max_final_ms=0)
    with pytest.raises(ValidationError):
        VerifierSettings(unknown=1)  # type: ignore[call-arg]


def test_engine_choice(tmp_path: Path) -> None:
    settings = VerifierSettings(vosk_model_en=tmp_path / "missing", vosk_model_pt=None)
    assert vosk_model_path("en", settings) is None
    for lang in ("en", "pt"):  # no Vosk model: PocketSphinx, Portuguese included
        verifier = create_verifier(lang, settings, build_grammar(lang))
        assert verifier is not None
        try:
            assert verifier.engine == "pocketsphinx" and verifier.lang == lang
        finally:
            verifier.close()
    other = dataclasses.replace(build_grammar("pt"), lang="es")
    assert create_verifier("es", settings, other) is None
    (tmp_path / "vosk-pt" / "am").mkdir(parents=True)
    installed = VerifierSettings(vosk_model_pt=tmp_path / "vosk-pt")
    assert vosk_model_path("pt", installed) == tmp_path / "vosk-pt"
    with pytest.raises(AsrError):  # a model directory that Vosk cannot load
        create_verifier("pt", installed, build_grammar("pt"))
    with pytest.raises(AsrError):
        create_verifier("en", settings, build_grammar("pt"))


def _finish_one_second(engine: FakeEngine, whisper_s: float | None) -> tuple[Transcript, float]:
    """1 s of audio handed over at once, then finish() with Whisper at work for
    ``whisper_s`` more seconds (None: for ever); the transcript and the wait."""
    engine.start()
    engine.accept(b"\x00\x00" * 16000)
    started = time.perf_counter()
    deadline = started + (whisper_s if whisper_s is not None else 3600.0)
    transcript = engine.finish(wait_while=lambda: time.perf_counter() < deadline)
    return transcript, time.perf_counter() - started


def test_finish_waits_longer_while_the_other_engine_is_still_at_work() -> None:
    engine = FakeEngine(
        VerifierSettings(
            max_final_ms=200, patient_final_ms=2_000, max_utterance_s=5.0, denoise=False
        )
    )
    try:
        engine.delay = 0.1  # decoding 1 s of audio takes about 1 s
        transcript, waited = _finish_one_second(engine, None)  # Whisper still busy
        assert transcript.text == "32000 bytes"
        assert 0.5 < waited < 1.9
        # Whisper done after 300 ms: the verifier has its own 200 ms from then on
        transcript, waited = _finish_one_second(engine, 0.3)
        assert transcript.rejected == REJECT_TIMEOUT
        assert 0.45 < waited < 0.7  # Whisper seen busy up to 20 ms before 300 ms
        assert 0 < transcript.details["behind_ms"] < 1000
        # ... which is enough for a verifier that fell a little behind
        engine.delay = 0.04  # 1 s of audio in about 0.4 s
        transcript, waited = _finish_one_second(engine, 0.3)
        assert transcript.text == "32000 bytes"
        assert 0.3 < waited < 0.5
        assert 850 <= transcript.details["behind_at_end_ms"] <= 1000
    finally:
        engine.close()


def test_finish_waits_no_longer_than_patient_final_ms() -> None:
    engine = FakeEngine(
        VerifierSettings(max_final_ms=200, patient_final_ms=600, max_utterance_s=5.0, denoise=False)
    )
    try:
        engine.delay = 0.1
        engine.start()
        engine.accept(b"\x00\x00" * 32000)  # 2 s of audio, about 2 s to decode
        started = time.perf_counter()
        transcript = engine.finish(wait_while=lambda: True)
        waited = time.perf_counter() - started
        assert transcript.rejected == REJECT_TIMEOUT
        assert 0.59 < waited < 0.8
        assert transcript.details["behind_ms"] > 500
    finally:
        engine.close()
