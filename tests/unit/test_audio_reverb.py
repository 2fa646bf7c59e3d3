"""Late reverberation: told apart from dry and noisy speech, and turned down."""

from __future__ import annotations

import numpy as np
import pytest

from appliance.audio import AudioError
from appliance.audio.pcm import frame_dbfs
from appliance.audio.reverb import REVERBERANT_FALL_DB, dereverbed, level_fall_db, reverberant
from tests.support import speech

SAID = "add two liters of milk to the shopping list"


def _voices() -> dict[str, bytes]:
    voices = {"piper": speech.piper(SAID), "piper_deeper": speech.deeper(speech.piper(SAID))}
    if speech.have_flite():
        voices["flite"] = speech.flite(SAID, "awb")
    if speech.have_espeak():
        voices["espeak"] = speech.espeak(SAID, "en-gb+f3", speed=170)
    return {name: speech.pad(pcm, 300, 700) for name, pcm in voices.items()}


@pytest.mark.parametrize(("rt60_s", "drr_db"), [(0.3, 6.0), (0.4, 3.0), (0.6, 0.0)])
def test_speech_across_a_room_is_reverberant(rt60_s: float, drr_db: float) -> None:
    for name, dry in _voices().items():
        fall = level_fall_db(dry)
        assert fall is not None and fall > 30.0, (name, fall)
        assert not reverberant(dry), name
        wet = speech.add_reverb(dry, rt60_s, drr_db)
        fall = level_fall_db(wet)
        assert fall is not None and fall < REVERBERANT_FALL_DB, (name, rt60_s, fall)
        assert reverberant(wet), name


def test_a_small_room_and_noise_are_not_taken_for_a_reverberant_one() -> None:
    for name, dry in _voices().items():
        # a tail 10 dB under the direct sound, gone in 0.2 s: no smearing worth undoing
        assert not reverberant(speech.add_reverb(dry, 0.2, 10.0)), name
        assert not reverberant(speech.add_white_noise(dry, 30)), name
        # noise 20 dB below the speech hides how fast it falls: nothing is known
        assert level_fall_db(speech.add_white_noise(dry, 20)) is None, name
        assert not reverberant(speech.add_babble(dry, 10)), name
    assert level_fall_db(b"") is None
    assert level_fall_db(speech.silence(1000)) is None


def test_the_tail_between_the_words_goes_and_the_words_stay() -> None:
    dry = speech.pad(speech.piper(SAID), 300, 700)
    wet = speech.add_reverb(dry)
    out = dereverbed(wet)
    assert len(out) == len(wet)
    dry_levels, wet_levels, out_levels = frame_dbfs(dry), frame_dbfs(wet), frame_dbfs(out)
    words = dry_levels > np.quantile(dry_levels, 0.95) - 20.0
    # the room's tail after the last word (100-300 ms after it): lower, by 10 dB at most
    end = int(np.flatnonzero(words)[-1])
    tail = slice(end + 10, end + 30)
    assert np.median(out_levels[tail]) < np.median(wet_levels[tail]) - 5.0
    # the words: within a few dB of their level in the room
    assert abs(np.median(out_levels[words]) - np.median(wet_levels[words])) < 3.0
    assert level_fall_db(out) > level_fall_db(wet) + 2.0  # it falls faster, as dry speech does


def test_short_or_odd_audio() -> None:
    assert dereverbed(b"") == b""
    short = speech.tone(10)
    assert dereverbed(short) == short
    with pytest.raises(AudioError):
        dereverbed(b"\x00")
    with pytest.raises(AudioError):
        level_fall_db(b"\x00\x00\x00")
