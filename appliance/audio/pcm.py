"""16 kHz mono int16 PCM: reading WAV files into it, converting, measuring, writing.

PCM here is always ``bytes`` of little-endian signed 16-bit mono samples at
``SAMPLE_RATE`` (16 kHz) unless a function says otherwise.

``read_wav``/``decode_wav`` accept any common WAV: integer PCM of 8 (unsigned), 16, 24
or 32 bits, IEEE float of 32 or 64 bits, plain or ``WAVE_FORMAT_EXTENSIBLE``, any
channel count and sample rate; they down-mix to mono and resample to 16 kHz. The stdlib
``wave`` module of Python 3.11 refuses float and extensible files, so reading uses a
small RIFF parser; writing uses ``wave``.

The resampler is a polyphase windowed-sinc (Kaiser) filter in numpy, the same design
as ``scipy.signal.resample_poly`` (scipy is not a dependency): within 0.3 dB up to 0.875
of the lower Nyquist frequency (7 kHz at 16 kHz), -6 dB at Nyquist, and tones above
1.25 x Nyquist alias back attenuated by more than 55 dB.
"""

from __future__ import annotations

import logging
import math
import struct
import wave
from collections.abc import Iterator
from functools import lru_cache
from os import PathLike
from pathlib import Path

import numpy as np
import numpy.typing as npt

from appliance.audio import SAMPLE_RATE, SAMPLE_WIDTH, AudioError

log = logging.getLogger(__name__)

FloatArray = npt.NDArray[np.float32]

MIN_DBFS = -120.0
"""``rms_dbfs`` of digital silence (instead of minus infinity)."""

_FORMAT_PCM = 0x0001
_FORMAT_FLOAT = 0x0003
_FORMAT_EXTENSIBLE = 0xFFFE
_STREAMED_SIZES = (0, 0xFFFFFFFF)  # data chunk size left unset by a streaming writer
_MAX_RATE = 768_000


# ---------------------------------------------------------------------------------------
# checks and conversions


def check_pcm(pcm: bytes) -> None:
    """Raise ``AudioError`` unless ``pcm`` can be 16-bit PCM (an even number of bytes)."""
    if not isinstance(pcm, bytes | bytearray | memoryview):
        raise AudioError(f"PCM must be bytes, not {type(pcm).__name__}")
    if len(pcm) % SAMPLE_WIDTH:
        raise AudioError(f"PCM has an odd number of bytes ({len(pcm)}): not 16-bit samples")


def duration_ms(pcm: bytes, rate: int = SAMPLE_RATE) -> float:
    """Length of 16-bit mono ``pcm`` at ``rate`` in milliseconds."""
    check_pcm(pcm)
    return len(pcm) / SAMPLE_WIDTH * 1000.0 / rate


def to_float32(pcm: bytes) -> FloatArray:
    """16-bit PCM bytes to a new, writable float32 array in [-1, 1)."""
    check_pcm(pcm)
    samples = np.frombuffer(pcm, dtype="<i2")
    return samples.astype(np.float32) / np.float32(32768.0)


def from_float32(samples: npt.ArrayLike) -> bytes:
    """Float samples in [-1, 1] to 16-bit PCM bytes (clipped, rounded)."""
    array = np.asarray(samples, dtype=np.float64)
    if array.ndim != 1:
        raise AudioError(f"expected mono samples, got an array of shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise AudioError("samples contain NaN or infinity")
    scaled = np.clip(np.rint(array * 32768.0), -32768, 32767)
    return scaled.astype("<i2").tobytes()


def chunks(pcm: bytes, chunk_bytes: int = 2048) -> Iterator[bytes]:
    """Split ``pcm`` into pieces of ``chunk_bytes`` (the last one may be shorter)."""
    check_pcm(pcm)
    if chunk_bytes <= 0 or chunk_bytes % SAMPLE_WIDTH:
        raise ValueError(f"chunk_bytes must be a positive even number, not {chunk_bytes}")
    view = bytes(pcm)
    for start in range(0, len(view), chunk_bytes):
        yield view[start : start + chunk_bytes]


def frame_dbfs(pcm: bytes, frame_ms: int = 10) -> npt.NDArray[np.float64]:
    """``rms_dbfs`` of each whole ``frame_ms`` frame of ``pcm`` (a shorter last piece
    left out), in one pass."""
    check_pcm(pcm)
    frame = SAMPLE_RATE * frame_ms // 1000
    count = len(pcm) // SAMPLE_WIDTH // frame
    samples = np.frombuffer(pcm, dtype="<i2", count=count * frame).astype(np.float64)
    power = np.mean(samples.reshape(count, frame) ** 2, axis=1)
    with np.errstate(divide="ignore"):
        levels: npt.NDArray[np.float64] = 10.0 * np.log10(power / 32768.0**2)
    return np.maximum(levels, MIN_DBFS)


def rms_dbfs(pcm: bytes) -> float:
    """Root-mean-square level in dB relative to full scale (a full-scale square wave is 0,
    a full-scale sine -3.01); ``MIN_DBFS`` for empty input or digital silence."""
    check_pcm(pcm)
    if not pcm:
        return MIN_DBFS
    samples = np.frombuffer(pcm, dtype="<i2").astype(np.float64)
    rms = math.sqrt(float(np.mean(samples * samples)))
    if rms <= 0.0:
        return MIN_DBFS
    return max(MIN_DBFS, 20.0 * math.log10(rms / 32768.0))


# ---------------------------------------------------------------------------------------
# resampling


@lru_cache(maxsize=16)
def _polyphase_filter(up: int, down: int) -> tuple[npt.NDArray[np.float64], int]:
    """Low-pass FIR for ``up``/``down`` resampling, as a (up, taps) polyphase bank.

    Returns the bank and the filter's half length (its delay in upsampled samples).
    """
    factor = max(up, down)
    half_len = 10 * factor
    n = np.arange(-half_len, half_len + 1, dtype=np.float64)
    cutoff = 1.0 / factor  # of the upsampled Nyquist frequency
    taps = cutoff * np.sinc(cutoff * n) * np.kaiser(len(n), 5.0)
    taps *= up / taps.sum()  # unity gain after zero-stuffing by ``up``
    per_phase = math.ceil(len(taps) / up)
    padded = np.zeros(per_phase * up)
    padded[: len(taps)] = taps
    bank = padded.reshape(per_phase, up).T.copy()  # bank[phase, j] = taps[phase + j*up]
    return bank, half_len


def resample(samples: npt.ArrayLike, src_rate: int, dst_rate: int) -> FloatArray:
    """Resample mono float samples from ``src_rate`` to ``dst_rate`` (polyphase FIR).

    The output has ``ceil(len * dst_rate / src_rate)`` samples and no delay.
    """
    x = np.asarray(samples, dtype=np.float64)
    if x.ndim != 1:
        raise AudioError(f"expected mono samples, got an array of shape {x.shape}")
    stream = StreamResampler(src_rate, dst_rate)
    if src_rate == dst_rate or len(x) == 0:
        return x.astype(np.float32)
    return np.concatenate([stream.push(x), stream.flush()])


class StreamResampler:
    """The resampler on a stream: ``push`` chunks as they come, ``flush`` at the end
    (``resample`` is one push and the flush).

    The concatenated output is exactly ``resample`` of the concatenated input. Each
    output sample waits for the input its filter reaches (about 10 input samples of
    look-ahead), so ``push`` returns a little less than its share until ``flush``.
    """

    def __init__(self, src_rate: int, dst_rate: int) -> None:
        if src_rate <= 0 or dst_rate <= 0:
            raise AudioError(f"sample rates must be positive ({src_rate} -> {dst_rate})")
        g = math.gcd(src_rate, dst_rate)
        self._up, self._down = dst_rate // g, src_rate // g
        self._bank, self._half_len = _polyphase_filter(self._up, self._down)
        self._taps = self._bank.shape[1]
        # Input from absolute index ``_start`` on (earlier input is no longer needed);
        # samples before 0 are zeros, as ``resample`` pads them.
        self._held = np.zeros(self._taps, dtype=np.float64)
        self._start = -self._taps
        self._received = 0
        self._produced = 0

    def push(self, samples: npt.ArrayLike) -> FloatArray:
        """The output that ``samples`` (and what came before) make available."""
        x = np.asarray(samples, dtype=np.float64).ravel()
        self._held = np.concatenate([self._held, x])
        self._received += len(x)
        # Output n needs input up to (n * down + half_len) // up.
        ready = (self._received * self._up - self._half_len - 1) // self._down + 1
        return self._emit(max(ready, self._produced))

    def flush(self) -> FloatArray:
        """The rest of the output (the input's end padded with zeros)."""
        total = -(-self._received * self._up // self._down)
        self._held = np.concatenate([self._held, np.zeros(self._taps + 1)])
        return self._emit(total)

    def _emit(self, upto: int) -> FloatArray:
        out = np.empty(max(0, upto - self._produced), dtype=np.float64)
        j = np.arange(self._taps)
        block = max(1, 262_144 // self._taps)  # bounds the temporary index matrix
        for lo in range(0, len(out), block):
            n = np.arange(self._produced + lo, min(upto, self._produced + lo + block))
            m = n * self._down + self._half_len  # position on the upsampled grid
            phase, base = m % self._up, m // self._up
            idx = base[:, None] - j[None, :] - self._start
            out[lo : lo + len(n)] = np.einsum("ij,ij->i", self._bank[phase], self._held[idx])
        if len(out) == 0:
            return np.zeros(0, dtype=np.float32)
        self._produced = upto
        # Keep what the next output's filter reaches back to.
        first = (upto * self._down + self._half_len) // self._up - self._taps + 1
        drop = max(0, min(first - self._start, len(self._held) - self._taps))
        self._held = self._held[drop:]
        self._start += drop
        return out.astype(np.float32)


# ---------------------------------------------------------------------------------------
# WAV files


def read_wav(path: str | PathLike[str]) -> bytes:
    """Read any WAV file as 16 kHz mono int16 PCM (down-mixed, resampled)."""
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise AudioError(f"cannot read {path}: {err.strerror or err}") from err
    return decode_wav(data)


def decode_wav(data: bytes) -> bytes:
    """Decode the bytes of any WAV file to 16 kHz mono int16 PCM."""
    samples, rate = decode_wav_float(data)
    mono = samples.mean(axis=1, dtype=np.float64) if samples.shape[1] > 1 else samples[:, 0]
    return from_float32(resample(mono, rate, SAMPLE_RATE))


def decode_wav_float(data: bytes) -> tuple[FloatArray, int]:
    """Decode a WAV file to float32 samples of shape (frames, channels) and its rate."""
    fmt, payload = _riff_chunks(bytes(data))
    tag, channels, rate, bits = fmt
    width = bits // 8
    block = width * channels
    usable = len(payload) - len(payload) % block
    if usable != len(payload):
        log.debug("WAV data ends with a partial frame; %d bytes dropped", len(payload) - usable)
    raw = payload[:usable]
    if tag == _FORMAT_FLOAT:
        dtype = "<f4" if bits == 32 else "<f8"
        flat = np.frombuffer(raw, dtype=dtype).astype(np.float32)
        if not np.all(np.isfinite(flat)):
            raise AudioError("WAV float samples contain NaN or infinity")
    elif bits == 8:
        flat = (np.frombuffer(raw, dtype=np.uint8).astype(np.float32) - 128.0) / 128.0
    elif bits == 16:
        flat = np.frombuffer(raw, dtype="<i2").astype(np.float32) / 32768.0
    elif bits == 24:
        b = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 3).astype(np.int32)
        ints = b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)
        ints = np.where(ints >= 1 << 23, ints - (1 << 24), ints)
        flat = ints.astype(np.float32) / float(1 << 23)
    else:  # 32-bit int
        flat = (np.frombuffer(raw, dtype="<i4").astype(np.float64) / float(1 << 31)).astype(
            np.float32
        )
    return flat.reshape(-1, channels), rate


def _riff_chunks(data: bytes) -> tuple[tuple[int, int, int, int], bytes]:
    """(format tag, channels, rate, bits) and the sample bytes of a RIFF/WAVE file."""
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise AudioError("not a WAV file (no RIFF/WAVE header)")
    fmt: tuple[int, int, int, int] | None = None
    offset = 12
    while offset + 8 <= len(data):
        chunk_id = data[offset : offset + 4]
        (size,) = struct.unpack_from("<I", data, offset + 4)
        body_start = offset + 8
        if chunk_id == b"fmt ":
            fmt = _parse_fmt(data[body_start : body_start + size])
        elif chunk_id == b"data":
            if fmt is None:
                raise AudioError("WAV data chunk comes before its fmt chunk")
            if size in _STREAMED_SIZES or body_start + size > len(data):
                if size not in _STREAMED_SIZES:
                    log.debug("WAV data chunk is truncated (%d of %d bytes)", len(data), size)
                size = len(data) - body_start
            return fmt, data[body_start : body_start + size]
        offset = body_start + size + (size & 1)
    if fmt is None:
        raise AudioError("WAV file has no fmt chunk")
    raise AudioError("WAV file has no data chunk")


def _parse_fmt(body: bytes) -> tuple[int, int, int, int]:
    if len(body) < 16:
        raise AudioError("WAV fmt chunk is too short")
    tag, channels, rate, _byte_rate, block_align, bits = struct.unpack_from("<HHIIHH", body)
    if tag == _FORMAT_EXTENSIBLE:
        if len(body) < 40:
            raise AudioError("WAV extensible fmt chunk is too short")
        (tag,) = struct.unpack_from("<H", body, 24)  # first two bytes of the sub-format GUID
    if tag not in (_FORMAT_PCM, _FORMAT_FLOAT):
        raise AudioError(f"unsupported WAV encoding (format tag {tag:#06x}); need PCM or float")
    if tag == _FORMAT_PCM and bits not in (8, 16, 24, 32):
        raise AudioError(f"unsupported WAV sample size: {bits} bits")
    if tag == _FORMAT_FLOAT and bits not in (32, 64):
        raise AudioError(f"unsupported WAV float sample size: {bits} bits")
    if not 1 <= channels <= 64:
        raise AudioError(f"WAV file has {channels} channels")
    if not 1000 <= rate <= _MAX_RATE:
        raise AudioError(f"WAV sample rate {rate} Hz is out of range")
    if block_align != channels * bits // 8:
        raise AudioError(f"WAV block size {block_align} does not match {channels}x{bits} bits")
    return tag, channels, rate, bits


def write_wav(path: str | PathLike[str], pcm: bytes, rate: int = SAMPLE_RATE) -> None:
    """Write 16-bit mono ``pcm`` at ``rate`` as a plain WAV file."""
    check_pcm(pcm)
    try:
        with wave.open(str(path), "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(SAMPLE_WIDTH)
            out.setframerate(rate)
            out.writeframes(bytes(pcm))
    except OSError as err:
        raise AudioError(f"cannot write {path}: {err.strerror or err}") from err


def encode_wav(pcm: bytes, rate: int = SAMPLE_RATE) -> bytes:
    """The bytes of a WAV file holding 16-bit mono ``pcm`` at ``rate``."""
    check_pcm(pcm)
    header = struct.pack(
        "<4sI4s4sIHHIIHH4sI",
        b"RIFF",
        36 + len(pcm),
        b"WAVE",
        b"fmt ",
        16,
        _FORMAT_PCM,
        1,
        rate,
        rate * SAMPLE_WIDTH,
        SAMPLE_WIDTH,
        16,
        b"data",
        len(pcm),
    )
    return header + bytes(pcm)
