"""The benchmark's reverberant room (``tests.support.speech.add_reverb``)."""

from __future__ import annotations

import numpy as np

from appliance.audio.pcm import to_float32
from tests.support import speech


def _click() -> bytes:
    """One full-scale sample, then silence: the room's impulse response."""
    pcm = np.zeros(16_000, dtype=np.int16)
    pcm[100] = 20_000
    return pcm.tobytes()


def test_the_tail_has_the_energy_and_decay_asked_for() -> None:
    response = to_float32(speech.add_reverb(_click(), 0.4, 3.0)).astype(np.float64)
    direct = response[100] ** 2
    tail = response[101:]
    ratio_db = 10 * np.log10(direct / np.sum(tail**2))
    assert abs(ratio_db - 3.0) < 0.1
    # 60 dB down after 0.4 s: the energy in the tail's last 100 ms is far below its first
    first = np.sum(tail[:1600] ** 2)
    last = np.sum(tail[4800:6400] ** 2)
    assert 10 * np.log10(first / last) > 35
    assert not np.any(tail[6500:])  # nothing after the response ends


def test_length_and_peak_are_kept_and_it_is_repeatable() -> None:
    dry = speech.pad(speech.tone(500, 300.0, -12.0), 100, 300)
    wet = speech.add_reverb(dry)
    assert len(wet) == len(dry) and wet != dry
    assert wet == speech.add_reverb(dry)
    peak = lambda pcm: int(np.max(np.abs(np.frombuffer(pcm, dtype=np.int16))))  # noqa: E731
    assert abs(peak(wet) - peak(dry)) <= 1
