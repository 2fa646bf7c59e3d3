"""The satellite's wake word on the real openWakeWord models and synthesized speech.

"hey jarvis" said by Piper and by espeak-ng voices, inside longer audio (silence, white
noise, babble), is heard exactly once, right after it is said; kitchen commands,
chatter, some near phrases and noise alone do not wake it; the quiet gate saves work
over a quiet room without changing what is heard (scores move a little); ``reset()``
starts afresh.

Audio is fed in the satellite's 64 ms chunks. To keep the module fast, every phrase of a
condition is laid out in one long recording (a few seconds apart, more than the
refractory period) and each recording is listened to once per detector.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import numpy as np
import pytest

from satellites.settings import WakeSettings
from satellites.wake import Detection, WakeDetector
from tests.support import speech as sp

CHUNK_BYTES = 2_048  # 64 ms, what the satellite reads from the microphone
WAKE = "hey jarvis"
BEFORE_MS = 1_500  # more than the quiet gate's second
AFTER_MS = 2_500  # more than the refractory period

ESPEAK = pytest.mark.skipif(not sp.have_espeak(), reason="espeak-ng is not installed")
VOICES: dict[str, Callable[[str], bytes]] = {
    "piper": sp.piper,
    "piper_fast": lambda t: sp.piper(t, length_scale=0.85),
    "piper_slow": lambda t: sp.piper(t, length_scale=1.2),
    "espeak_us": lambda t: sp.espeak(t, "en-us"),
    "espeak_gb": lambda t: sp.espeak(t, "en-gb"),
    "espeak_us_f3": lambda t: sp.espeak(t, "en-us+f3"),
    "espeak_scotland": lambda t: sp.espeak(t, "en-gb-scotland"),
}
CONDITIONS: dict[str, Callable[[bytes], bytes]] = {
    "clean": lambda pcm: pcm,
    "white20": lambda pcm: sp.add_white_noise(pcm, 20),
    "babble15": lambda pcm: sp.add_babble(pcm, 15),
    "babble10": lambda pcm: sp.add_babble(pcm, 10),
}
# What is heard reliably here (checked over 8 noise seeds; Piper's clip differs from run
# to run, 12 of 12 syntheses were heard in this babble at 10 dB, though bench/satellite.py
# with another cut of babble misses 2 of 6 Piper variants at 10 dB). Not reliable, so not
# tested: espeak-ng voices other than en-us+f3 in babble (en-us missed 1 in 8 at 15 dB,
# en-gb 1-3 in 8, en-gb-scotland 3-6 in 8 at 15-10 dB), en-us+f3 at 10 dB.
HEARD = {
    "clean": tuple(VOICES),
    "white20": tuple(VOICES),
    "babble15": ("piper", "piper_fast", "piper_slow", "espeak_us_f3"),
    "babble10": ("piper", "piper_fast", "piper_slow"),
}
NOT_WAKE = (
    "add eggs to the shopping list",
    "what's on my agenda tomorrow",
    "the weather is lovely today",
    "I watched a movie last night",
    "hey there",
    "hey Harvey",
    "hey Davis",
    "a jar of jam",
    "Harvey is nervous about the service",
)
# Near misses that are NOT asserted, because they do wake it for some voices:
# "hey Travis" (espeak-ng en-gb 0.88; Piper 0.3-0.6 depending on the synthesis),
# "hey, jars of jam" (Piper 0.9+), "hey jars", "hey java" (0.9+ for most voices).
# bench/satellite.py reports the figures (near_misses).


def param(*values: str) -> object:
    """A test parameter, skipped without espeak-ng when it names an espeak voice."""
    marks = [ESPEAK] if any(v.startswith("espeak") for v in values) else []
    return pytest.param(*values, marks=marks, id="-".join(values))


def phrase_end_s(pcm: bytes) -> float:
    """Where speech ends in a clip: the end of its last 10 ms frame within 40 dB of
    the loudest frame (synthesizers leave some silence at the end)."""
    x = np.frombuffer(pcm, dtype=np.int16).astype(np.float64)
    frame = 160
    energy = np.mean(x[: len(x) - len(x) % frame].reshape(-1, frame) ** 2, axis=1)
    loud = np.nonzero(energy >= energy.max() * 1e-4)[0]
    return float((loud[-1] + 1) * frame / sp.SAMPLE_RATE)


def feed(detector: WakeDetector, pcm: bytes) -> list[Detection]:
    """The detections over ``pcm`` fed in 64 ms chunks, ``at_s`` counted from its start."""
    start = detector.position_s
    heard = []
    for offset in range(0, len(pcm), CHUNK_BYTES):
        hit = detector.process(pcm[offset : offset + CHUNK_BYTES])
        if hit is not None:
            heard.append(replace(hit, at_s=round(hit.at_s - start, 3)))
    return heard


def listen(detector: WakeDetector, pcm: bytes) -> list[Detection]:
    """The detections over ``pcm`` from a fresh start."""
    detector.reset()
    return feed(detector, pcm)


@dataclass(frozen=True)
class Said:
    label: str
    start_s: float
    end_s: float  # where the words end (by energy)


def recording(
    clips: dict[str, bytes], condition: Callable[[bytes], bytes] = CONDITIONS["clean"]
) -> tuple[bytes, list[Said]]:
    """The clips one after another with silence around each, noise added per clip."""
    parts, said, at = [], [], 0.0
    for label, clip in clips.items():
        piece = condition(sp.pad(clip, BEFORE_MS, AFTER_MS))
        start = at + BEFORE_MS / 1000
        said.append(Said(label, start, start + phrase_end_s(clip)))
        parts.append(piece)
        at += len(piece) / (2 * sp.SAMPLE_RATE)
    return sp.concat(*parts), said


def heard_during(heard: list[Detection], said: Said) -> list[Detection]:
    return [d for d in heard if said.start_s <= d.at_s <= said.end_s + 1.0]


@pytest.fixture(scope="module")
def detector() -> Iterator[WakeDetector]:
    """The satellite's default: hey_jarvis, threshold 0.5, quiet gate at -60 dBFS and
    the speech gate."""
    wake = WakeDetector(WakeSettings())
    yield wake
    wake.close()


@pytest.fixture(scope="module")
def ungated() -> Iterator[WakeDetector]:
    wake = WakeDetector(WakeSettings(quiet_gate=False, speech_gate=False))
    yield wake
    wake.close()


@pytest.fixture(scope="module")
def quiet_gate_only() -> Iterator[WakeDetector]:
    wake = WakeDetector(WakeSettings(speech_gate=False))
    yield wake
    wake.close()


@pytest.fixture(scope="module")
def wake_clips() -> dict[str, bytes]:
    return {
        voice: speak(WAKE)
        for voice, speak in VOICES.items()
        if sp.have_espeak() or not voice.startswith("espeak")
    }


@pytest.fixture(scope="module")
def heard(
    detector: WakeDetector, wake_clips: dict[str, bytes]
) -> dict[str, tuple[list[Detection], list[Said]]]:
    """Per condition: what the default detector heard, and where each phrase was said."""
    out = {}
    for condition, voices in HEARD.items():
        clips = {v: wake_clips[v] for v in voices if v in wake_clips}
        pcm, said = recording(clips, CONDITIONS[condition])
        out[condition] = (listen(detector, pcm), said)
    return out


# --- the wake phrase ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("condition", "voice"),
    [param(c, v) for c, voices in HEARD.items() for v in voices],
)
def test_wake_phrase_is_heard_once(
    heard: dict[str, tuple[list[Detection], list[Said]]], condition: str, voice: str
) -> None:
    detections, said = heard[condition]
    phrase = next(s for s in said if s.label == voice)
    mine = heard_during(detections, phrase)
    assert len(mine) == 1, f"{voice} in {condition}: {detections}"
    assert mine[0].name == "hey_jarvis"
    assert mine[0].score >= WakeSettings().threshold
    # heard as the words end (the model needs the whole phrase), not a second later:
    # within 0.6 s (the benchmark's p90 is 576 ms; Piper's renditions around the phrase
    # vary from process to process, and with them the noise over it)
    assert -0.25 <= mine[0].at_s - phrase.end_s <= 0.6, (mine[0], phrase)


@pytest.mark.parametrize("condition", list(HEARD))
def test_nothing_else_is_heard_in_the_recording(
    heard: dict[str, tuple[list[Detection], list[Said]]], condition: str
) -> None:
    """One detection per phrase: the refractory period holds, silence and noise
    around the phrases wake nothing."""
    detections, said = heard[condition]
    assert len(detections) == len(said), detections


def test_refractory_period_is_what_keeps_it_to_one(wake_clips: dict[str, bytes]) -> None:
    clip = sp.pad(wake_clips["piper"], BEFORE_MS, AFTER_MS)
    eager = WakeDetector(WakeSettings(refractory_s=0))
    try:
        assert len(listen(eager, clip)) >= 3  # the phrase scores high for several frames
    finally:
        eager.close()


def test_a_second_wake_after_the_refractory_period_is_heard(
    detector: WakeDetector, wake_clips: dict[str, bytes]
) -> None:
    clip = wake_clips["piper"]
    pcm = sp.concat(sp.silence(500), clip, sp.silence(2_500), clip, sp.silence(1_000))
    assert len(listen(detector, pcm)) == 2


# --- what must not wake it -----------------------------------------------------------
@pytest.mark.parametrize("voice", ["piper", "piper_slow", param("espeak_us"), param("espeak_gb")])
def test_other_speech_does_not_wake_it(detector: WakeDetector, voice: str) -> None:
    speak = VOICES[voice]
    pcm = sp.concat(*(sp.pad(speak(text), 300, 700) for text in NOT_WAKE))
    assert listen(detector, pcm) == []


@pytest.mark.parametrize(
    "noise",
    [
        pytest.param(lambda: sp.white_noise(8_000, -40), id="white-40dBFS"),
        pytest.param(lambda: sp.white_noise(8_000, -20), id="white-20dBFS"),
        pytest.param(lambda: sp.babble(8_000, -30), id="babble-30dBFS"),
        pytest.param(lambda: sp.tone(3_000, 1_000, -20), id="tone"),
    ],
)
def test_noise_alone_does_not_wake_it(detector: WakeDetector, noise: Callable[[], bytes]) -> None:
    assert listen(detector, noise()) == []


# --- the quiet gate ----------------------------------------------------------------------
def with_room(pcm: bytes, dbfs: float | None) -> bytes:
    """``pcm`` with a room's steady white noise at ``dbfs`` added (None: none)."""
    if dbfs is None:
        return pcm
    room = np.frombuffer(sp.white_noise(len(pcm) / 32, dbfs, seed=3), dtype=np.int16)
    mixed = np.frombuffer(pcm, dtype=np.int16).astype(np.int32) + room
    return np.clip(mixed, -32768, 32767).astype(np.int16).tobytes()


@pytest.fixture(scope="module")
def gate_clips(wake_clips: dict[str, bytes]) -> dict[str, bytes]:
    return {v: wake_clips[v] for v in ("piper", "piper_slow", "espeak_gb") if v in wake_clips}


@pytest.mark.parametrize("room_dbfs", [None, -70.0], ids=["digital-silence", "room-70dBFS"])
def test_quiet_gate_hears_what_no_gate_hears(
    detector: WakeDetector,
    ungated: WakeDetector,
    gate_clips: dict[str, bytes],
    room_dbfs: float | None,
) -> None:
    """Quiet stretches under the gate around the phrases: the same detections, at the
    same time, with the same scores (when voice comes, the embeddings still in the wake
    model's context are recomputed, so it scores exactly what upstream scores)."""
    pcm, said = recording(gate_clips)
    pcm = with_room(pcm, room_dbfs)
    reused = detector._features.reused
    gated = listen(detector, pcm)
    assert detector._features.reused - reused > 100  # the gate did act here
    plain = listen(ungated, pcm)
    assert len(gated) == len(plain) == len(said), (gated, plain)
    assert gated == plain


def test_the_gates_are_exact_in_steady_noise(
    detector: WakeDetector, ungated: WakeDetector, gate_clips: dict[str, bytes]
) -> None:
    """Noise above the quiet floor all along: the speech gate skips the noise between
    the phrases, and the phrases are scored as upstream scores them."""
    pcm, _ = recording(gate_clips)
    pcm = with_room(pcm, -45.0)
    gated, plain = listen(detector, pcm), listen(ungated, pcm)
    assert gated == plain
    assert len(gated) == len(gate_clips)


def test_quiet_gate_stops_the_embedding_after_a_quiet_second(
    detector: WakeDetector, ungated: WakeDetector
) -> None:
    loud = sp.white_noise(1_000, -45)
    quiet = sp.white_noise(10_000, -70, seed=1)
    detector.reset()
    feed(detector, loud + quiet[: 2 * 2 * sp.SAMPLE_RATE])
    computed, reused = detector._features.computed, detector._features.reused
    feed(detector, quiet[2 * 2 * sp.SAMPLE_RATE :])  # 8 s: 100 windows
    assert detector._features.computed == computed
    assert detector._features.reused - reused >= 95
    # without the gate, every window is computed
    listen(ungated, loud + quiet)
    assert ungated._features.reused == 0


def test_quiet_gate_analyses_all_sound_above_its_floor(quiet_gate_only: WakeDetector) -> None:
    quiet_gate_only.reset()
    feed(quiet_gate_only, sp.silence(80))  # upstream's start-up fill (8 s of zeros) is quiet
    reused = quiet_gate_only._features.reused
    feed(quiet_gate_only, sp.white_noise(5_000, -55))  # a quiet room, but above -60 dBFS
    assert quiet_gate_only._features.reused == reused


def test_speech_gate_skips_steady_noise_but_never_voice(detector: WakeDetector) -> None:
    detector.reset()
    feed(detector, sp.white_noise(2_000, -45))
    computed, reused = detector._features.computed, detector._features.reused
    feed(detector, sp.white_noise(5_000, -45, seed=2))  # a fan: no voice in it
    assert detector._features.computed - computed <= 2
    assert detector._features.reused - reused >= 55
    computed, reused = detector._features.computed, detector._features.reused
    feed(detector, sp.babble(5_000, -30))  # voices (a TV): everything is analysed
    assert detector._features.reused - reused <= 13  # the first second may still be idle
    assert detector._features.computed - computed >= 50


# --- reset ---------------------------------------------------------------------------
def test_reset_then_the_same_audio_is_heard_again(
    detector: WakeDetector, wake_clips: dict[str, bytes]
) -> None:
    clip = wake_clips["piper"]
    pcm = sp.pad(clip, 700, 1_500)
    first = listen(detector, pcm)
    second = listen(detector, pcm)
    assert len(first) == len(second) == 1
    assert second[0].at_s == first[0].at_s
    assert second[0].score == pytest.approx(first[0].score, abs=1e-3)
    assert 0 <= first[0].at_s - (0.7 + phrase_end_s(clip)) <= 0.5


def test_a_wake_right_after_reset_is_heard(
    detector: WakeDetector, wake_clips: dict[str, bytes]
) -> None:
    """The satellite resets the detector after a turn; a wake said at once must count,
    even though the last detection is less than the refractory period of audio ago."""
    pcm = sp.pad(wake_clips["piper"], 200, 300)
    assert len(listen(detector, pcm)) == 1
    # the same detector, reset right away, the phrase again
    assert len(listen(detector, pcm)) == 1
