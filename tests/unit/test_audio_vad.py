"""The endpointer on the real Silero VAD, with synthesized speech and real noise signals."""

from __future__ import annotations

import random
import time

import numpy as np
import pytest
from pydantic import ValidationError

from appliance.audio import AudioError
from appliance.audio.pcm import chunks, from_float32, to_float32
from appliance.audio.vad import (
    FRAME_BYTES,
    FRAME_MS,
    Endpointer,
    Event,
    FrameScorer,
    NoSpeech,
    SpeechEnded,
    SpeechPaused,
    SpeechStarted,
    VadSettings,
    load_silero,
)
from tests.support import speech as sp

COMMAND = "add two liters of milk to the shopping list"
LONG_TALK = (
    "so yesterday I went to the market and then I walked all the way to the bakery "
    "because my sister wanted fresh bread for the whole family and the neighbours"
)


@pytest.fixture(scope="module")
def model() -> FrameScorer:
    return load_silero()


def run(ep: Endpointer, pcm: bytes, chunk_bytes: int = 2048) -> list[Event]:
    events: list[Event] = []
    for piece in chunks(pcm, chunk_bytes):
        events += ep.feed(piece)
    return events


def run_offered(ep: Endpointer, pcm: bytes) -> tuple[list[Event], list[bytes]]:
    """The events, and what ``paused_utterance()`` offered at each pause."""
    offered: list[bytes] = []
    events: list[Event] = []
    for piece in chunks(pcm, 2048):
        new = ep.feed(piece)
        events += new
        offered += [ep.paused_utterance() for e in new if isinstance(e, SpeechPaused)]
    return events, offered


def kinds(events: list[Event]) -> list[type]:
    """The event types, pauses left out."""
    return [type(e) for e in events if not isinstance(e, SpeechPaused)]


def speech_bounds_ms(pcm: bytes, floor_db: float = 60.0) -> tuple[float, float]:
    """First and last 10 ms frame within ``floor_db`` of the loudest one."""
    x = to_float32(pcm).astype(np.float64)
    frames = x[: len(x) - len(x) % 160].reshape(-1, 160)
    energy = 10 * np.log10(np.mean(frames**2, axis=1) + 1e-12)
    loud = np.flatnonzero(energy > energy.max() - floor_db)
    return loud[0] * 10.0, (loud[-1] + 1) * 10.0


def pink_noise(ms: float, dbfs: float, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    n = round(ms * 16)
    spectrum = np.fft.rfft(rng.standard_normal(n))
    f = np.arange(len(spectrum))
    spectrum[1:] /= np.sqrt(f[1:])
    x = np.fft.irfft(spectrum, n)
    return from_float32(x * (10 ** (dbfs / 20) / np.sqrt(np.mean(x**2))))


def brown_noise(ms: float, dbfs: float, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    x = np.cumsum(rng.standard_normal(round(ms * 16)))
    x -= np.convolve(x, np.ones(801) / 801, mode="same")  # remove the drift
    return from_float32(x * (10 ** (dbfs / 20) / np.sqrt(np.mean(x**2))))


def hum(ms: float, dbfs: float) -> bytes:
    t = np.arange(round(ms * 16)) / 16_000
    x = sum(np.sin(2 * np.pi * 50 * k * t) / k for k in (1, 2, 3, 5, 7))
    return from_float32(x * (10 ** (dbfs / 20) / np.sqrt(np.mean(x**2))))


def clicks(ms: float, dbfs: float, seed: int = 0) -> bytes:
    """Door knocks / keyboard: 5 ms decaying bursts every 150-600 ms over white noise."""
    rng = np.random.default_rng(seed)
    x = to_float32(sp.white_noise(ms, dbfs - 30, seed=seed)).astype(np.float64)
    pos = 0
    while pos < len(x) - 80:
        burst = rng.standard_normal(80) * np.exp(-np.arange(80) / 15) * 10 ** (dbfs / 20) * 4
        x[pos : pos + 80] += burst
        pos += int(rng.integers(2400, 9600))
    return from_float32(np.clip(x, -1, 1))


# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "voice"),
    [
        (COMMAND, "piper"),
        (COMMAND, "espeak"),
        ("remove eggs from the shopping list", "piper"),
        ("what's on my agenda tomorrow", "espeak"),
        ("add jam", "piper"),
    ],
)
def test_command_then_silence_ends_in_time(model: FrameScorer, text: str, voice: str) -> None:
    if voice == "espeak" and not sp.have_espeak():
        pytest.skip("espeak-ng is not installed")
    # the same audio every run: the bounds below are checked to a few frames
    speech = sp.piper(text, **sp.FIXED) if voice == "piper" else sp.espeak(text)
    start, end = speech_bounds_ms(speech)
    audio = sp.pad(speech, 1000, 1500)
    ep = Endpointer(VadSettings(), model)
    events = run(ep, audio)
    pauses = [e for e in events if isinstance(e, SpeechPaused)]
    events = [e for e in events if not isinstance(e, SpeechPaused)]
    assert [type(e) for e in events] == [SpeechStarted, SpeechEnded]
    started, ended = events
    assert isinstance(started, SpeechStarted)
    assert isinstance(ended, SpeechEnded)
    assert ended.reason == "silence"
    assert abs(started.at_ms - (1000 + start)) <= 3 * FRAME_MS
    # ended one trailing silence after the last sound: Silero's own tail plus our frame
    # granularity add at most three frames. A last word well below the speaker's level
    # ("... list" at the end of a sentence) may start the silence a little earlier; the
    # utterance then keeps more after it (checked below: it holds the whole command).
    lag = ended.at_ms - (1000 + end)
    assert 700 - 400 <= lag <= 700 + 3 * FRAME_MS, lag
    tail = 300 + (400 if lag < 700 - FRAME_MS else 0)
    assert ended.speech_end_ms == pytest.approx(ended.at_ms - 700, abs=FRAME_MS)
    # the last pause is the one that became the end: 300 ms into the same silence (a
    # silence that began relative to the speaker, above the room's level, offers no
    # pause: the utterance with its longer tail is not there before the end)
    if tail == 300:
        assert pauses
        assert pauses[-1].silence_from_ms == ended.speech_end_ms
        assert pauses[-1].at_ms == pytest.approx(pauses[-1].silence_from_ms + 300, abs=FRAME_MS)
    assert ep.done
    assert ep.result == ended
    # utterance = pre-roll + speech + post-roll, and it holds the whole command
    utterance = ep.utterance()
    seconds = len(utterance) / 32_000
    assert seconds * 1000 == pytest.approx(
        (ended.at_ms - 700) - started.at_ms + 300 + tail, abs=2 * FRAME_MS
    )
    u_start, u_end = speech_bounds_ms(utterance)
    assert u_start >= 250  # the pre-roll is there
    assert u_end - u_start == pytest.approx(end - start, abs=3 * FRAME_MS)
    # the session is over: more audio is ignored
    assert ep.feed(sp.piper(COMMAND)) == []
    assert ep.finish() == []


def test_a_pause_offers_the_utterance_so_far(model: FrameScorer) -> None:
    """At a pause, ``paused_utterance()`` is what ``utterance()`` becomes if the pause
    is the end; if speech resumes, the final utterance is longer and there is a new pause."""
    first = sp.piper("add milk")
    second = sp.piper("and two dozen eggs to the shopping list")
    audio = sp.pad(first, 600, 0) + b"\0" * 32 * 250 + sp.pad(second, 0, 1200)
    ep = Endpointer(VadSettings(), model)
    events, offered = run_offered(ep, audio)
    kinds = [type(e) for e in events]
    assert kinds[0] is SpeechStarted
    assert kinds[-1] is SpeechEnded
    # one in the gap, and one at the end unless the sentence's last word was quieter
    # than the speaker's level (then the end comes without an offer)
    pauses = [e for e in events if isinstance(e, SpeechPaused)]
    ended = events[-1]
    assert isinstance(ended, SpeechEnded)
    at_end = pauses[-1].silence_from_ms == ended.speech_end_ms
    assert len(pauses) >= (2 if at_end else 1)
    assert len(offered) == len(pauses)
    final = ep.utterance()
    if at_end:
        assert offered[-1] == final
    assert len(offered[0]) < len(final) - 32 * 1500  # the gap's offer stops at "milk"
    assert final.startswith(offered[0][: len(offered[0]) - 32 * 300])
    # no pause is offered while speaking, or after the end
    assert ep.paused_utterance() == b"" or ep.done


def _hold_at_pauses(ep: Endpointer, audio: bytes) -> list[Event]:
    """Feed ``audio``, holding each pause as it is reported (as a turn does when the
    words before it stop mid-sentence)."""
    events: list[Event] = []
    for piece in chunks(audio, 2048):
        new = ep.feed(piece)
        events += new
        for event in new:
            if isinstance(event, SpeechPaused):
                assert ep.pause_ms == event.silence_from_ms
                assert ep.hold(event.silence_from_ms)
    return events


def test_a_held_pause_ends_the_speech_only_after_the_longer_silence(
    model: FrameScorer,
) -> None:
    """A gap of a second after "add milk and" ends an utterance, unless it is held."""
    first = sp.pad(sp.piper("add milk and"), 600, 0)
    second = sp.pad(sp.piper("eggs to the shopping list"), 0, 1800)
    audio = first + b"\0" * 32 * 1000 + second
    plain = run(Endpointer(VadSettings(), model), audio)
    ended = plain[-1]
    assert isinstance(ended, SpeechEnded) and ended.at_ms < len(first) / 32 + 1000
    ep = Endpointer(VadSettings(), model)
    held = _hold_at_pauses(ep, audio)
    ended = held[-1]
    assert isinstance(ended, SpeechEnded)
    assert ended.at_ms > (len(first) + len(second)) / 32 + 1000 - 1800  # after "eggs ..."
    assert len(ep.utterance()) > len(first) + 32 * 1000
    # a held pause that is the end ends at hold_silence_ms
    ep = Endpointer(VadSettings(hold_silence_ms=1200), model)
    events = _hold_at_pauses(ep, sp.pad(sp.piper("add milk and"), 600, 2000))
    ended = events[-1]
    assert isinstance(ended, SpeechEnded) and ended.speech_end_ms is not None
    assert 1200 <= ended.at_ms - ended.speech_end_ms < 1200 + FRAME_MS


def test_only_the_current_pause_can_be_held(model: FrameScorer) -> None:
    ep = Endpointer(VadSettings(), model)
    assert ep.pause_ms is None and not ep.hold(0.0)
    events = run(ep, sp.pad(sp.piper("add milk"), 600, 400))
    pause = next(e for e in events if isinstance(e, SpeechPaused))
    assert not ep.hold(pause.silence_from_ms + FRAME_MS)  # not this pause
    assert ep.hold(pause.silence_from_ms)
    run(ep, sp.piper("and eggs"))  # the speech resumed: that pause is over
    assert ep.pause_ms is None and not ep.hold(pause.silence_from_ms)


def test_no_pause_when_it_is_not_shorter_than_the_end(model: FrameScorer) -> None:
    audio = sp.pad(sp.piper(COMMAND), 500, 1200)
    events = run(Endpointer(VadSettings(pause_ms=700), model), audio)
    assert [type(e) for e in events] == [SpeechStarted, SpeechEnded]


def test_chunk_size_does_not_matter(model: FrameScorer) -> None:
    audio = sp.pad(sp.piper(COMMAND), 700, 1200)
    reference = run(Endpointer(VadSettings(), model), audio, 2048)
    rng = random.Random(5)
    ep = Endpointer(VadSettings(), model)
    events: list[Event] = []
    pos = 0
    while pos < len(audio):
        size = 2 * rng.randint(1, 3000)
        events += ep.feed(audio[pos : pos + size])
        pos += size
    assert events == reference
    assert run(Endpointer(VadSettings(), model), audio, 2) == reference


def test_reset_reuses_the_model(model: FrameScorer) -> None:
    audio = sp.pad(sp.piper("remove eggs from the shopping list"), 500, 1000)
    ep = Endpointer(VadSettings(), model)
    first = run(ep, audio)
    first_utterance = ep.utterance()
    ep.reset()
    assert not ep.done
    assert ep.utterance() == b""
    assert run(ep, audio) == first
    assert ep.utterance() == first_utterance


@pytest.mark.parametrize(
    "noise",
    [
        pytest.param(lambda: sp.silence(6000), id="digital-silence"),
        pytest.param(lambda: sp.white_noise(6000, -60, seed=1), id="white-60"),
        pytest.param(lambda: sp.white_noise(6000, -35, seed=2), id="white-35"),
        pytest.param(lambda: sp.white_noise(6000, -15, seed=3), id="white-15"),
        pytest.param(lambda: sp.white_noise(6000, -5, seed=4), id="white-5"),
        pytest.param(lambda: pink_noise(6000, -30), id="pink-30"),
        pytest.param(lambda: pink_noise(6000, -12, seed=1), id="pink-12"),
        pytest.param(lambda: brown_noise(6000, -20), id="brown-20"),
        pytest.param(lambda: hum(6000, -20), id="hum-20"),
        pytest.param(lambda: clicks(6000, -20), id="clicks-20"),
        pytest.param(lambda: sp.tone(6000, 1000, -20), id="tone-1k"),
    ],
)
def test_noise_only_ends_in_no_speech(model: FrameScorer, noise: object) -> None:
    assert callable(noise)
    ep = Endpointer(VadSettings(), model)
    events = run(ep, noise())
    assert len(events) == 1, events
    assert isinstance(events[0], NoSpeech)
    assert events[0].at_ms == pytest.approx(5000, abs=FRAME_MS)
    assert ep.utterance() == b""


def test_short_burst_is_dropped_and_speech_after_it_counts(model: FrameScorer) -> None:
    speech = sp.piper("hello")
    start, _ = speech_bounds_ms(speech)
    burst = speech[int(start * 32) : int(start * 32) + 150 * 32]  # 150 ms of a voice
    alone = Endpointer(VadSettings(), model)
    events = run(alone, sp.concat(sp.silence(500), burst, sp.silence(5500)))
    assert [type(e) for e in events] == [NoSpeech]

    command = sp.piper(COMMAND)
    c_start, _ = speech_bounds_ms(command)
    ep = Endpointer(VadSettings(), model)
    events = run(ep, sp.concat(sp.silence(500), burst, sp.silence(1500), command, sp.silence(1200)))
    assert kinds(events) == [SpeechStarted, SpeechEnded]
    onset = 500 + 150 + 1500 + c_start
    assert abs(events[0].at_ms - onset) <= 3 * FRAME_MS


def test_max_length_cuts_a_long_utterance(model: FrameScorer) -> None:
    talk = sp.piper(LONG_TALK, length_scale=0.9)
    assert len(talk) / 32 > 6000
    ep = Endpointer(VadSettings(max_utterance_ms=3000), model)
    events = run(ep, sp.pad(talk, 400, 0))
    assert kinds(events) == [SpeechStarted, SpeechEnded]
    started, ended = events
    assert isinstance(ended, SpeechEnded)
    assert ended.reason == "max_length"
    assert ended.at_ms - started.at_ms == pytest.approx(3000, abs=FRAME_MS)
    assert len(ep.utterance()) / 32 == pytest.approx(3000 + 300, abs=FRAME_MS)


@pytest.mark.parametrize("snr_db", [20, 10])
def test_speech_in_white_noise(model: FrameScorer, snr_db: float) -> None:
    speech = sp.piper("what's on my agenda tomorrow")
    audio = sp.add_white_noise(sp.pad(speech, 800, 1500), snr_db, seed=7)
    events = run(Endpointer(VadSettings(), model), audio)
    assert kinds(events) == [SpeechStarted, SpeechEnded]
    ended = events[-1]
    assert isinstance(ended, SpeechEnded)
    assert ended.reason == "silence"


@pytest.mark.parametrize(
    ("text", "voice"),
    [(COMMAND, "piper"), ("what's on my agenda tomorrow", "en-us"), ("remove the eggs", "en-us")],
)
def test_a_steady_noise_still_offers_the_early_pause(
    model: FrameScorer, text: str, voice: str
) -> None:
    # A fan or white noise 20 dB below the speaker: Silero keeps hearing a little voice in
    # it, so the silence after the command begins only relative to the speaker. Once the
    # room is back at its own level nothing quieter is being said: the pause is offered
    # at 300 ms, and it is the utterance that the end (700 ms) keeps.
    said = sp.piper(text, **sp.FIXED) if voice == "piper" else sp.espeak(text, voice=voice)
    audio = sp.add_white_noise(sp.pad(said, 800, 1500), 20, seed=3)
    ep = Endpointer(VadSettings(), model)
    events, offered = run_offered(ep, audio)
    assert kinds(events) == [SpeechStarted, SpeechEnded]
    ended = events[-1]
    assert isinstance(ended, SpeechEnded)
    pause = [e for e in events if isinstance(e, SpeechPaused)][-1]
    assert pause.silence_from_ms == ended.speech_end_ms
    assert pause.at_ms < ended.at_ms - 300
    assert offered[-1] == ep.utterance()
    # it holds the whole command: from the pre-roll before the onset past the last sound
    _, end = speech_bounds_ms(said)
    assert events[0].at_ms - 300 + len(offered[-1]) / 32 > 800 + end


def test_a_quieter_last_word_in_steady_noise_is_kept(model: FrameScorer) -> None:
    # "... to the shopping LIST", the last word 12 dB below the rest: quiet against the
    # speaker, still well above the room. The utterance keeps it whole.
    head = sp.piper("add two liters of milk to the shopping", **sp.FIXED)
    last = sp.piper("list", **sp.FIXED)
    _, end = speech_bounds_ms(last)
    quiet = (to_float32(last) * 10 ** (-12 / 20)).astype(np.float32)
    said = head + from_float32(quiet)
    audio = sp.add_white_noise(sp.pad(said, 800, 1500), 20, seed=3)
    ep = Endpointer(VadSettings(), model)
    events = run(ep, audio)
    assert kinds(events) == [SpeechStarted, SpeechEnded]
    utterance = ep.utterance()
    onset = events[0].at_ms
    kept_until = onset - 300 + len(utterance) / 32  # the utterance starts at the pre-roll
    assert kept_until >= 800 + len(head) / 32 + end


@pytest.mark.parametrize(
    ("text", "voice"),
    [(COMMAND, "piper"), ("what's on my agenda tomorrow", "en-us"), ("add eggs", "en-us+f3")],
)
@pytest.mark.parametrize("snr_db", [12, 15])
def test_a_command_in_babble_ends_when_the_speaker_stops(
    model: FrameScorer, text: str, voice: str, snr_db: float
) -> None:
    # Silero hears the babble as voice and never finds the end; the speaker near the
    # microphone is louder than the room, and the drop after the command is the end.
    said = sp.piper(text) if voice == "piper" else sp.espeak(text, voice=voice)
    audio = sp.add_babble(sp.pad(said, 400, 4000), snr_db)
    events = run(Endpointer(VadSettings(), model), audio)
    assert kinds(events) == [SpeechStarted, SpeechEnded]
    ended = events[-1]
    assert isinstance(ended, SpeechEnded)
    assert ended.reason == "silence"
    assert ended.speech_end_ms is not None
    spoken_until = 400 + len(said) / 32
    assert spoken_until - 600 < ended.speech_end_ms < spoken_until + 500


def test_silero_alone_rarely_finds_the_end_in_babble(model: FrameScorer) -> None:
    # the case the relative level is for: at 10 dB, Silero hears the room as speech
    ended = 0
    texts = (COMMAND, "what's on my agenda tomorrow", "remove the bread from my list")
    for text in texts:
        audio = sp.add_babble(sp.pad(sp.espeak(text, voice="en-us"), 400, 4000), 10)
        alone = run(Endpointer(VadSettings(relative_silence_db=None), model), audio)
        ended += any(isinstance(e, SpeechEnded) and e.reason == "silence" for e in alone)
        ours = run(Endpointer(VadSettings(), model), audio)
        assert isinstance(ours[-1], SpeechEnded)
        assert ours[-1].reason == "silence"
    assert ended <= 1


def test_the_relative_level_leaves_clean_speech_alone(model: FrameScorer) -> None:
    for said in (sp.piper(COMMAND), sp.espeak("add eggs to the shopping list", voice="en-gb")):
        audio = sp.pad(said, 400, 2000)
        with_level = run(Endpointer(VadSettings(), model), audio)[-1]
        silero_only = run(Endpointer(VadSettings(relative_silence_db=None), model), audio)[-1]
        assert isinstance(with_level, SpeechEnded)
        assert isinstance(silero_only, SpeechEnded)
        assert with_level.speech_end_ms == pytest.approx(silero_only.speech_end_ms, abs=100)


def test_stream_end_closes_the_session(model: FrameScorer) -> None:
    speech = sp.piper(COMMAND)
    ep = Endpointer(VadSettings(), model)
    events = run(ep, sp.pad(speech, 500, 0))
    assert kinds(events) == [SpeechStarted]
    assert ep.speech_started
    end = ep.finish()
    assert len(end) == 1
    assert isinstance(end[0], SpeechEnded)
    assert len(ep.utterance()) > len(speech) * 0.8

    quiet = Endpointer(VadSettings(), model)
    assert run(quiet, sp.silence(1000)) == []
    assert quiet.finish() == [NoSpeech(31 * FRAME_MS)]  # whole frames scored


def test_pending_bytes_and_odd_input(model: FrameScorer) -> None:
    ep = Endpointer(VadSettings(), model)
    assert ep.feed(bytes(FRAME_BYTES - 2)) == []
    assert ep.elapsed_ms == 0
    ep.feed(b"\0\0")
    assert ep.elapsed_ms == FRAME_MS
    with pytest.raises(AudioError):
        ep.feed(b"\0")


def test_settings_are_validated() -> None:
    with pytest.raises(ValidationError):
        VadSettings(min_speech_ms=2000, max_utterance_ms=1000)
    with pytest.raises(ValidationError):
        VadSettings(threshold=1.5)

    with pytest.raises(ValidationError):
        VadSettings.model_validate({"trailing_silence": 700})
    s = VadSettings()
    assert (s.threshold, s.trailing_silence_ms, s.min_speech_ms) == (0.5, 700, 250)
    assert (s.max_utterance_ms, s.no_speech_timeout_ms, s.pre_roll_ms) == (15_000, 5000, 300)


def test_frame_cost(model: FrameScorer) -> None:
    audio = sp.pad(sp.piper(COMMAND), 0, 0) * 3
    ep = Endpointer(VadSettings(max_utterance_ms=60_000, trailing_silence_ms=5000), model)
    frames = len(audio) // FRAME_BYTES
    started = time.process_time()
    run(ep, audio, 4096)
    per_frame_ms = (time.process_time() - started) * 1000 / frames
    print(f"VAD: {per_frame_ms:.3f} ms CPU per 32 ms frame over {frames} frames")
    assert per_frame_ms < 3.0  # 10% of real time; measured ~0.15 ms
