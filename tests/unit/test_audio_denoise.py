"""RNNoise on a 16 kHz stream: noise goes, speech stays, chunking does not matter."""

from __future__ import annotations

import numpy as np
import pytest

from appliance.audio import AudioError
from appliance.audio.denoise import (
    Denoiser,
    available,
    noise_floor_dbfs,
    noise_spread_db,
    quiet_expanded,
)
from appliance.audio.pcm import MIN_DBFS, frame_dbfs, rms_dbfs
from tests.support import speech

needs_rnnoise = pytest.mark.skipif(not available(), reason="RNNoise (pyrnnoise) not installed")


def _denoise(pcm: bytes, chunk: int = 2048) -> bytes:
    denoiser = Denoiser()
    out = [denoiser.process(pcm[i : i + chunk]) for i in range(0, len(pcm), chunk)]
    out.append(denoiser.flush())
    denoiser.close()
    return b"".join(out)


@needs_rnnoise
def test_noise_alone_is_suppressed() -> None:
    noise = speech.white_noise(2_000, dbfs=-30.0, seed=1)
    cleaned = _denoise(noise)
    assert len(cleaned) == len(noise)
    # past the first half second (RNNoise learns the noise), at least 30 dB quieter
    assert rms_dbfs(cleaned[16_000:]) < rms_dbfs(noise[16_000:]) - 30


@needs_rnnoise
def test_speech_is_kept_and_the_noise_around_it_goes() -> None:
    said = speech.pad(speech.piper("add two liters of milk to the shopping list"), 500, 800)
    noisy = speech.add_white_noise(said, 20, seed=2)
    cleaned = _denoise(noisy)
    x, y = (np.frombuffer(p, dtype="<i2").astype(np.float64) for p in (said, cleaned))
    lag = 320  # about 20 ms: resampling and RNNoise's own frame
    voiced = np.abs(x) > 0
    first, last = int(np.argmax(voiced)), len(x) - int(np.argmax(voiced[::-1]))
    clean_part, out_part = x[first : last - lag], y[first + lag : last]
    # the speech keeps its level (within 3 dB) and its shape
    level = 10 * np.log10(np.mean(out_part**2) / np.mean(clean_part**2))
    assert abs(level) < 3, level
    assert np.corrcoef(clean_part, out_part)[0, 1] > 0.9
    # the trailing noise is gone
    assert rms_dbfs(cleaned[-8_000:]) < rms_dbfs(noisy[-8_000:]) - 30


@needs_rnnoise
def test_chunking_does_not_change_the_output() -> None:
    noisy = speech.add_white_noise(speech.pad(speech.piper("add bread"), 300, 300), 15, seed=3)
    whole = _denoise(noisy, chunk=len(noisy))
    assert len(whole) == len(noisy)
    for chunk in (2, 320, 2048, 5000):
        assert _denoise(noisy, chunk) == whole, chunk


@needs_rnnoise
def test_a_closed_denoiser_refuses_audio() -> None:
    denoiser = Denoiser()
    denoiser.close()
    denoiser.close()  # twice is fine
    with pytest.raises(AudioError, match="closed"):
        denoiser.process(bytes(2048))
    with pytest.raises(AudioError):
        Denoiser().process(b"\x00")  # half a sample


def test_the_noise_floor_is_the_level_between_the_words() -> None:
    said = speech.pad(speech.piper("add two liters of milk to the shopping list"), 500, 500)
    assert noise_floor_dbfs(said) == MIN_DBFS  # digital silence around the words
    assert noise_floor_dbfs(b"") == MIN_DBFS
    for snr in (10, 20, 30):
        noisy = speech.add_white_noise(said, snr, seed=snr)
        noise_level = rms_dbfs(noisy) - snr  # about: the speech is most of the level
        assert abs(noise_floor_dbfs(noisy) - noise_level) < 6, snr
    assert abs(noise_floor_dbfs(speech.white_noise(500, dbfs=-50.0)) + 50) < 2


def test_a_steady_noise_varies_little_and_people_talking_much() -> None:
    for steady in (speech.white_noise(320, dbfs=-40.0, seed=1), speech.tone(320, 100, -40)):
        assert noise_spread_db(steady) < 1.5
    for seed in range(4):
        assert noise_spread_db(speech.babble(320, dbfs=-40.0, seed=seed)) > 2
    assert noise_spread_db(b"") == 0.0


def test_talkers_around_the_words_fade_and_the_words_keep_their_level() -> None:
    said = speech.pad(speech.piper("add two liters of milk to the shopping list"), 300, 1200)
    mixed = speech.add_babble(said, 10)
    expanded = quiet_expanded(mixed)
    assert len(expanded) == len(mixed)
    clean, before, after = (frame_dbfs(p) for p in (said, mixed, expanded))
    talkers_alone = clean < -60  # the pauses: only the talkers behind
    words = clean > -30
    assert np.median(before[talkers_alone] - after[talkers_alone]) > 10
    assert np.median(before[words] - after[words]) < 1
    # the talkers alone are turned down by at most floor_db
    assert np.min(after - before) >= -30.5
    quiet = speech.concat(speech.silence(300), speech.tone(500, dbfs=-20.0))
    assert quiet_expanded(quiet) == quiet  # nothing far quieter than the sound but silence
    assert quiet_expanded(b"") == b""
