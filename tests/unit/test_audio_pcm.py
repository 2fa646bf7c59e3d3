"""PCM helpers: WAV decoding of every common encoding, resampling, levels, errors."""

from __future__ import annotations

import math
import struct
from pathlib import Path

import numpy as np
import pytest

from appliance.audio import AudioError
from appliance.audio.pcm import (
    MIN_DBFS,
    StreamResampler,
    check_pcm,
    chunks,
    decode_wav,
    decode_wav_float,
    duration_ms,
    encode_wav,
    frame_dbfs,
    from_float32,
    read_wav,
    resample,
    rms_dbfs,
    to_float32,
    write_wav,
)
from appliance.errors import ApplianceError

DATA = Path(__file__).resolve().parents[1] / "data" / "audio"
FIXTURES = sorted(DATA.glob("*.wav"))
HALF_SCALE_SINE_DBFS = 20 * math.log10(0.5 / math.sqrt(2))  # -9.03


def peak_hz(pcm: bytes) -> float:
    x = to_float32(pcm)
    spectrum = np.abs(np.fft.rfft(x * np.hanning(len(x))))
    return float(np.argmax(spectrum) * 16_000 / len(x))


def sine(rate: int, hz: float, seconds: float, amplitude: float = 0.5) -> np.ndarray:
    t = np.arange(round(rate * seconds)) / rate
    return amplitude * np.sin(2 * math.pi * hz * t)


def fmt_chunk(tag: int, channels: int, rate: int, bits: int) -> bytes:
    block = channels * bits // 8
    body = struct.pack("<HHIIHH", tag, channels, rate, rate * block, block, bits)
    return b"fmt " + struct.pack("<I", len(body)) + body


def riff(*chunks_: bytes, size: int | None = None) -> bytes:
    body = b"WAVE" + b"".join(chunks_)
    return b"RIFF" + struct.pack("<I", len(body) if size is None else size) + body


def data_chunk(payload: bytes, size: int | None = None) -> bytes:
    return b"data" + struct.pack("<I", len(payload) if size is None else size) + payload


def test_fixtures_present() -> None:
    assert len(FIXTURES) == 7
    assert sum(f.stat().st_size for f in FIXTURES) < 3_000_000


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_read_any_wav_as_16k_mono(path: Path) -> None:
    pcm = read_wav(path)
    assert duration_ms(pcm) == pytest.approx(250, abs=1)
    assert peak_hz(pcm) == pytest.approx(440, abs=8)
    assert rms_dbfs(pcm) == pytest.approx(HALF_SCALE_SINE_DBFS, abs=0.15)


def test_sixteen_k_mono_passes_through_exactly() -> None:
    rng = np.random.default_rng(1)
    pcm = rng.integers(-32768, 32767, 1600, dtype=np.int16).astype("<i2").tobytes()
    assert decode_wav(encode_wav(pcm)) == pcm


def test_write_then_read(tmp_path: Path) -> None:
    pcm = from_float32(sine(16_000, 1000, 0.5))
    write_wav(tmp_path / "a.wav", pcm)
    assert read_wav(tmp_path / "a.wav") == pcm
    write_wav(tmp_path / "b.wav", from_float32(sine(8000, 1000, 0.5)), rate=8000)
    up = read_wav(tmp_path / "b.wav")
    assert duration_ms(up) == pytest.approx(500, abs=1)
    assert peak_hz(up) == pytest.approx(1000, abs=8)


def test_stereo_is_downmixed() -> None:
    left = sine(16_000, 500, 0.2, 0.4)
    right = sine(16_000, 2000, 0.2, 0.4)
    frames = np.stack([left, right], axis=1).reshape(-1)
    payload = np.rint(frames * 32767).astype("<i2").tobytes()
    wav = riff(fmt_chunk(1, 2, 16_000, 16), data_chunk(payload))
    mono = to_float32(decode_wav(wav))
    assert np.allclose(mono, (left + right) / 2, atol=2e-4)


def test_streamed_and_padded_chunks() -> None:
    payload = from_float32(sine(16_000, 300, 0.1))
    odd_chunk = b"LIST" + struct.pack("<I", 3) + b"abc" + b"\0"  # odd size, pad byte
    streamed = riff(odd_chunk, fmt_chunk(1, 1, 16_000, 16), data_chunk(payload, 0xFFFFFFFF))
    assert decode_wav(streamed) == payload
    truncated = riff(fmt_chunk(1, 1, 16_000, 16), data_chunk(payload[:-1], len(payload)))
    assert decode_wav(truncated) == payload[:-2]  # partial last sample dropped


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "not a WAV"),
        (b"hello world, not audio at all", "not a WAV"),
        (b"ID3\x03\x00" + bytes(100), "not a WAV"),
        (riff(data_chunk(b"\0\0")), "before its fmt"),
        (riff(fmt_chunk(1, 1, 16_000, 16)), "no data chunk"),
        (riff(b"junk" + struct.pack("<I", 2) + b"ab"), "no fmt chunk"),
        (riff(fmt_chunk(2, 1, 16_000, 4), data_chunk(b"\0\0")), "unsupported WAV encoding"),
        (riff(fmt_chunk(1, 1, 16_000, 12), data_chunk(b"\0\0")), "sample size"),
        (riff(fmt_chunk(3, 1, 16_000, 16), data_chunk(b"\0\0")), "float sample size"),
        (riff(fmt_chunk(1, 0, 16_000, 16), data_chunk(b"")), "channels"),
        (riff(fmt_chunk(1, 1, 10, 16), data_chunk(b"\0\0")), "out of range"),
        (riff(b"fmt " + struct.pack("<I", 4) + b"abcd"), "too short"),
    ],
)
def test_garbled_wav_raises_audio_error(data: bytes, message: str) -> None:
    with pytest.raises(AudioError, match=message):
        decode_wav(data)


def test_nan_float_wav_is_refused() -> None:
    payload = np.array([0.0, np.nan, 0.5], dtype="<f4").tobytes()
    with pytest.raises(AudioError, match="NaN"):
        decode_wav_float(riff(fmt_chunk(3, 1, 16_000, 32), data_chunk(payload)))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(AudioError, match="cannot read"):
        read_wav(tmp_path / "nope.wav")
    assert issubclass(AudioError, ApplianceError)


def test_odd_pcm_is_refused() -> None:
    for call in (check_pcm, to_float32, rms_dbfs, duration_ms):
        with pytest.raises(AudioError, match="odd number of bytes"):
            call(b"\0\0\0")
    with pytest.raises(AudioError):
        list(chunks(b"\0"))
    with pytest.raises(ValueError, match="even"):
        list(chunks(b"\0\0", 3))


def test_chunks_split_and_rejoin() -> None:
    pcm = bytes(range(256)) * 20  # 5120 bytes
    parts = list(chunks(pcm, 2048))
    assert [len(p) for p in parts] == [2048, 2048, 1024]
    assert b"".join(parts) == pcm
    assert list(chunks(b"")) == []


def test_float_conversions_clip_and_round() -> None:
    assert from_float32([0.0, 1.0, -1.0, 2.0, -2.0]) == struct.pack(
        "<5h", 0, 32767, -32768, 32767, -32768
    )
    x = to_float32(struct.pack("<3h", 0, 16384, -32768))
    assert x.dtype == np.float32
    assert x.flags.writeable
    assert list(x) == [0.0, 0.5, -1.0]
    with pytest.raises(AudioError):
        from_float32([0.0, float("nan")])


def test_rms_dbfs_levels() -> None:
    assert rms_dbfs(b"") == MIN_DBFS
    assert rms_dbfs(bytes(3200)) == MIN_DBFS
    assert rms_dbfs(struct.pack("<h", 32767) * 100) == pytest.approx(0.0, abs=0.01)
    full_sine = from_float32(sine(16_000, 1000, 1.0, 1.0))
    assert rms_dbfs(full_sine) == pytest.approx(-3.01, abs=0.05)


def test_frame_dbfs_is_each_frames_rms_dbfs() -> None:
    """Each whole 10 ms frame's ``rms_dbfs``, in one pass: half a second of silence,
    then a half-scale sine; a last piece shorter than a frame is left out."""
    pcm = bytes(16_000) + from_float32(sine(16_000, 440, 1.0, 0.5)) + bytes(100)
    levels = frame_dbfs(pcm)
    assert len(levels) == 150
    assert list(levels[:50]) == [MIN_DBFS] * 50
    assert np.allclose(levels[50:], HALF_SCALE_SINE_DBFS, atol=0.1)
    assert np.allclose(levels, [rms_dbfs(c) for c in chunks(pcm, 320) if len(c) == 320])
    assert frame_dbfs(b"").size == 0


@pytest.mark.parametrize("src", [8000, 11_025, 22_050, 24_000, 44_100, 48_000, 96_000])
def test_resampler_keeps_tones_and_levels(src: int) -> None:
    for hz in (300.0, 1000.0, 3400.0):
        y = resample(sine(src, hz, 0.5), src, 16_000)
        assert len(y) == math.ceil(0.5 * src * 16_000 / src)
        ref = sine(16_000, hz, 0.5)
        middle = slice(200, len(y) - 200)  # ignore the edges
        assert np.max(np.abs(y[middle] - ref[middle])) < 0.01, (src, hz)  # 0.17 dB


def test_resampler_rejects_aliases() -> None:
    # 10 kHz is above the 8 kHz Nyquist frequency of 16 kHz: it must be filtered out
    y = resample(sine(44_100, 10_000, 0.5), 44_100, 16_000)
    assert 20 * math.log10(float(np.sqrt(np.mean(y[200:-200] ** 2))) / 0.3536) < -50


@pytest.mark.parametrize(("src", "dst"), [(16_000, 48_000), (48_000, 16_000), (22_050, 16_000)])
@pytest.mark.parametrize("sizes", [[1024], [1, 2, 3, 500, 7, 4000], [480], [20_000]])
def test_a_stream_resamples_exactly_as_the_whole(src: int, dst: int, sizes: list[int]) -> None:
    x = np.random.default_rng(1).standard_normal(10_007).astype(np.float32)
    stream = StreamResampler(src, dst)
    pieces, start = [], 0
    for n in range(len(x)):
        size = sizes[n % len(sizes)]
        pieces.append(stream.push(x[start : start + size]))
        start += size
        if start >= len(x):
            break
    pieces.append(stream.flush())
    assert np.array_equal(np.concatenate(pieces), resample(x, src, dst))
    # output comes out as the input does, not all at the end
    assert sum(len(p) for p in pieces[:-1]) > 0.99 * len(x) * dst / src - 20


def test_resampler_edge_cases() -> None:
    assert len(resample(np.zeros(0), 44_100, 16_000)) == 0
    assert len(resample(np.ones(1), 48_000, 16_000)) == 1
    with pytest.raises(AudioError):
        resample(np.zeros((2, 2)), 8000, 16_000)
    with pytest.raises(AudioError):
        resample(np.zeros(4), 0, 16_000)
