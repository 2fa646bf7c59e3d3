"""The satellite's parts on their own: settings, WAV in and out, sound processing,
the local end of speech, the command line."""

from __future__ import annotations

import subprocess
import sys
import time
import wave
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from satellites.audio import WavInput, WavOutput, chime, read_wav, scale
from satellites.processing import Cleaner, StreamEnd
from satellites.settings import SatelliteSettings, load_settings
from tests.support import speech
from tests.support.alsa import MIC, SPEAKER, AlsaFileDevices

ROOT = Path(__file__).resolve().parents[2]


def write_wav(path: Path, pcm: bytes, rate: int = 16_000, channels: int = 1) -> Path:
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(channels)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(pcm)
    return path


def rms(pcm: bytes) -> float:
    samples = np.frombuffer(pcm, dtype=np.int16).astype(np.float64)
    return float(np.sqrt(np.mean(samples**2))) if len(samples) else 0.0


# --- settings ----------------------------------------------------------------------
def test_settings_from_file_and_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "satellite.toml"
    config.write_text(
        'site = "kitchen"\narea = "Kitchen"\n[mqtt]\nurl = "mqtt://node.local:1883"\n'
        '[wake]\nmodels = ["okay_nabu", "hey_jarvis"]\nthreshold = 0.6\n'
    )
    monkeypatch.setenv("SATELLITE_MQTT__PASSWORD", "s3cret")
    monkeypatch.setenv("SATELLITE_AUDIO__VOLUME", "40")
    settings = load_settings(config)
    assert settings.site == "kitchen"
    assert settings.display_name == "Kitchen"
    assert settings.mqtt.url == "mqtt://node.local:1883"
    assert settings.mqtt.password is not None
    assert settings.mqtt.password.get_secret_value() == "s3cret"
    assert "s3cret" not in repr(settings)
    assert settings.wake.models == ["okay_nabu", "hey_jarvis"]
    assert settings.audio.volume == 40


@pytest.mark.parametrize(
    "bad",
    [
        {"site": "kitchen/1"},
        {"mqtt": {"url": "mqtt://user:pw@host:1883"}},
        {"mqtt": {"url": "http://host"}},
        {"wake": {"models": ["hey_siri"]}},
        {"audio": {"volume": 101}},
        {"unknown": 1},
    ],
)
def test_settings_refuse_what_cannot_work(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        SatelliteSettings.model_validate(bad)


# --- audio files -------------------------------------------------------------------
def test_wav_input_gives_wire_chunks_then_silence_then_ends(tmp_path: Path) -> None:
    tone = speech.tone(500, 440, -20)
    resampled = np.interp(
        np.linspace(0, len(tone) // 2 - 1, int(len(tone) // 2 * 44_100 / 16_000)),
        np.arange(len(tone) // 2),
        np.frombuffer(tone, dtype=np.int16),
    )
    pcm44 = np.repeat(resampled.astype(np.int16), 2).tobytes()
    for path, pcm, rate, channels in (
        (tmp_path / "mono.wav", tone, 16_000, 1),
        (tmp_path / "stereo44.wav", pcm44, 44_100, 2),
    ):
        source = WavInput(write_wav(path, pcm, rate, channels), realtime=False, tail_s=1.0)
        chunks = []
        while (chunk := source.read()) is not None:
            chunks.append(chunk)
        assert all(len(c) == 2048 for c in chunks)
        audio = b"".join(chunks)
        assert len(audio) == pytest.approx(1.5 * 32_000, abs=4096)
        assert rms(audio[:16_000]) == pytest.approx(rms(tone), rel=0.05)
        assert rms(audio[-16_000:]) == 0  # the tail is silence


def test_wav_input_in_real_time_paces_and_stops_when_closed(tmp_path: Path) -> None:
    source = WavInput(write_wav(tmp_path / "a.wav", speech.silence(1000)), tail_s=0)
    start = time.monotonic()
    for _ in range(8):  # 8 x 64 ms
        assert source.read() is not None
    assert time.monotonic() - start >= 0.4
    source.close()
    assert source.read() is None


def test_wav_output_keeps_every_sound_at_16_khz(tmp_path: Path) -> None:
    out = WavOutput(tmp_path / "out.wav")
    out.start(22_050, 2, 1)
    out.write(bytes(22_050 * 2))  # one second
    out.finish()
    out.start(16_000, 2, 1)
    out.write(chime("wake"))
    out.abort()  # cut: nothing of it is kept
    out.finish()
    out.close()
    with wave.open(str(tmp_path / "out.wav"), "rb") as written:
        assert written.getframerate() == 16_000
    pcm = read_wav(tmp_path / "out.wav")
    assert len(pcm) == pytest.approx(32_000, abs=4)


def test_volume_scales_the_sound() -> None:
    tone = speech.tone(200, 440, -10)
    assert scale(tone, 100) == tone
    assert rms(scale(tone, 25)) == pytest.approx(rms(tone) / 4, rel=0.01)
    assert rms(scale(tone, 0)) == 0


def test_unreadable_wav_is_a_clear_error(tmp_path: Path) -> None:
    from satellites.errors import AudioError

    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"RIFF....not a wav")
    with pytest.raises(AudioError, match="cannot read"):
        read_wav(bad)


# --- processing --------------------------------------------------------------------
def test_noise_suppression_lowers_steady_noise_and_keeps_length() -> None:
    noise = speech.white_noise(3000, -30)
    cleaner = Cleaner(noise_suppression=3, auto_gain_dbfs=0)
    out = b"".join(cleaner.process(noise[i : i + 2048]) for i in range(0, len(noise), 2048))
    assert len(out) == len(noise)
    # after it has learnt the noise (first second), it takes most of it away
    assert rms(out[32_000:]) < rms(noise[32_000:]) / 3


def test_stream_end_after_speech_and_trailing_silence() -> None:
    end = StreamEnd(trailing_silence_ms=800, no_speech_timeout_s=5, max_stream_s=15, use_vad=True)
    audio = speech.concat(speech.piper("add milk to the shopping list"), speech.silence(3000))
    reasons = []
    heard = 0
    for i in range(0, len(audio), 2048):
        heard += 2048
        if (reason := end.feed(audio[i : i + 2048])) is not None:
            reasons.append((reason, heard / 32_000))
            break
    speech_s = len(speech.piper("add milk to the shopping list")) / 32_000
    assert reasons and reasons[0][0] == "vad"
    assert speech_s + 0.5 < reasons[0][1] < speech_s + 1.5


def test_stream_end_without_speech_and_when_too_long() -> None:
    quiet = StreamEnd(trailing_silence_ms=800, no_speech_timeout_s=1, max_stream_s=15, use_vad=True)
    results = [quiet.feed(bytes(2048)) for _ in range(20)]
    assert results.index("timeout") == 15  # 16 x 64 ms = 1.02 s
    endless = StreamEnd(
        trailing_silence_ms=800, no_speech_timeout_s=1, max_stream_s=2, use_vad=False
    )
    results = [endless.feed(bytes(2048)) for _ in range(40)]
    assert results.index("timeout") == 31  # 2 s


# --- command line ------------------------------------------------------------------
def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "satellites", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_cli_refuses_bad_settings_with_a_clear_message() -> None:
    result = run_cli("--site", "no/slashes", "--input", "x.wav")
    assert result.returncode == 2
    assert "invalid settings" in result.stderr


def test_cli_input_file_that_does_not_exist() -> None:
    result = run_cli("--input", "/nonexistent/command.wav")
    assert result.returncode == 3
    assert "cannot read /nonexistent/command.wav" in result.stderr


def test_cli_output_into_a_missing_directory(tmp_path: Path) -> None:
    wav = write_wav(tmp_path / "in.wav", speech.silence(500))
    result = run_cli("--input", str(wav), "--output", "/nonexistent/dir/reply.wav")
    assert result.returncode == 3
    assert "no directory /nonexistent/dir" in result.stderr


def test_cli_lists_sound_devices_including_the_alsa_test_devices(tmp_path: Path) -> None:
    devices = AlsaFileDevices(tmp_path / "home")
    devices.feed(b"", then_silence_s=10)  # probing opens the microphone's FIFO
    try:
        result = run_cli("--list-devices", env=devices.env())
    finally:
        devices.close()
    assert result.returncode == 0, result.stderr
    assert MIC in result.stdout
    assert SPEAKER in result.stdout
    assert "ALSA lib" not in result.stderr  # ALSA's probing chatter is silenced


def test_satellite_install_pulls_none_of_the_node_models() -> None:
    # The satellite's modules import without the node's heavy engines.
    code = (
        "import sys, satellites.client, satellites.__main__;"
        "heavy = [m for m in ('faster_whisper', 'ctranslate2', 'llama_cpp', 'psycopg', "
        "'piper', 'vosk', 'pocketsphinx', 'onnxruntime') if m in sys.modules];"
        "print(heavy)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
