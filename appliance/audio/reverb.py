"""Late reverberation, for the verifier's ears: told apart from dry speech, and turned
down for a second look.

A room smears each sound into the next: its reverberant tail fills the gaps between
words and the closures of stops, which PocketSphinx's model, made from close-talking
speech, hears as other sounds ("dates" for "eggs", "dill" for "milk"). Whisper hears
through it. A tail decays at the room's pace, 60 dB in its reverberation time, so the
level of reverberant speech never falls faster than that: ``level_fall_db``, the
fastest fall over 50 ms among frames loud enough above the quietest to show one (the
99th percentile of the falls), is 31-48 dB on dry speech (100 on espeak-ng's, which
stops dead; 23 and more with white noise 30 dB down) and 8-18 dB in rooms of 0.3-0.6 s
(10 commands each of Piper's, flite's and espeak-ng's voices; 19-27 dB at 0.2 s with
the direct sound 10 dB above the tail).

``dereverbed`` subtracts an estimate of the late reverberation from the spectrum
(Lebart, Boucher and Denbigh, 2001): the power of each band 50 ms earlier, decayed as
a room of ``rt60_s`` would decay it. On dry speech it takes some of the speech's own
(a vowel held 50 ms looks like its own tail), so it is for reverberant audio only.
"""

from __future__ import annotations

import math

import numpy as np

from appliance.audio import SAMPLE_RATE
from appliance.audio.pcm import check_pcm, frame_dbfs, from_float32, to_float32

REVERBERANT_FALL_DB = 18.0
"""Speech whose level never falls faster than this in 50 ms is reverberant
(``level_fall_db``): above the rooms measured but for one command of 30 in the 0.3 s
room (18.3 dB), below dry speech (23 dB and more, noise 30 dB down included)."""
_FALL_MS = 50
_HEADROOM_DB = 30.0  # frames this far above the quietest can show a fall
_BELOW_TOP_DB = 35.0  # and within this of the loudest: the speech's, not a tail's end
_MIN_LOUD_FRAMES = 20
_FFT = 512  # 32 ms
_HOP = 128  # 8 ms
_SMOOTHING = 0.5  # of each band's power from one hop to the next


def level_fall_db(pcm: bytes) -> float | None:
    """How fast the level of ``pcm`` falls at the fastest: the 99th percentile, over
    its 10 ms frames at least ``_HEADROOM_DB`` above the quietest tenth of them and
    within ``_BELOW_TOP_DB`` of the loudest twentieth, of the fall in dB over the next
    50 ms. None when too few frames stand that far above the rest (noise 20 dB below
    the speech hides any fall past it)."""
    check_pcm(pcm)
    levels = frame_dbfs(pcm)
    lag = _FALL_MS // 10
    if levels.size <= lag:
        return None
    floor = float(np.quantile(levels, 0.1))
    top = float(np.quantile(levels, 0.95))
    loud = levels[:-lag] >= max(floor + _HEADROOM_DB, top - _BELOW_TOP_DB)
    if int(np.count_nonzero(loud)) < _MIN_LOUD_FRAMES:
        return None
    falls = (levels[:-lag] - levels[lag:])[loud]
    return float(np.quantile(falls, 0.99))


def reverberant(pcm: bytes) -> bool:
    """True if ``pcm`` is speech heard across a reverberant room (``level_fall_db``)."""
    fall = level_fall_db(pcm)
    return fall is not None and fall < REVERBERANT_FALL_DB


def dereverbed(
    pcm: bytes, *, rt60_s: float = 0.5, early_ms: float = 50.0, floor_db: float = -10.0
) -> bytes:
    """``pcm`` with its late reverberation subtracted (spectral subtraction, 32 ms
    frames every 8 ms): each band's power is lowered by what a room of ``rt60_s``
    leaves of its power ``early_ms`` before, by ``floor_db`` at most."""
    check_pcm(pcm)
    samples = to_float32(pcm).astype(np.float64)
    if samples.size < _FFT:
        return bytes(pcm)
    window = np.sqrt(np.hanning(_FFT + 1)[:_FFT])  # analysis and synthesis
    padded = np.concatenate([np.zeros(_FFT), samples, np.zeros(_FFT)])
    count = 1 + (padded.size - _FFT) // _HOP
    starts = _HOP * np.arange(count)
    spectra = np.fft.rfft(padded[starts[:, None] + np.arange(_FFT)] * window, axis=1)
    power = np.abs(spectra) ** 2
    smoothed = np.empty_like(power)
    running = power[0]
    for index in range(count):
        running = _SMOOTHING * running + (1.0 - _SMOOTHING) * power[index]
        smoothed[index] = running
    delay = max(1, round(early_ms / 1000 * SAMPLE_RATE / _HOP))
    decay = math.exp(-2.0 * 3.0 * math.log(10.0) / rt60_s * delay * _HOP / SAMPLE_RATE)
    late = np.zeros_like(smoothed)
    late[delay:] = decay * smoothed[:-delay]
    kept = np.maximum(1.0 - late / np.maximum(smoothed, 1e-12), 10.0 ** (floor_db / 10.0))
    frames = np.fft.irfft(spectra * np.sqrt(kept), n=_FFT, axis=1) * window
    out = np.zeros(padded.size)
    weight = np.zeros(padded.size)
    for start, frame in zip(starts, frames, strict=True):
        out[start : start + _FFT] += frame
        weight[start : start + _FFT] += window**2
    result = out / np.maximum(weight, 1e-8)
    return from_float32(result[_FFT : _FFT + samples.size])
