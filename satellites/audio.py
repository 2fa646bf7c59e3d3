"""Sound in and out: PyAudio devices or WAV files behind one small interface.

The client reads fixed 64 ms chunks of 16 kHz 16-bit mono PCM from an
:class:`AudioInput` and plays the node's speech on an :class:`AudioOutput`. Both
calls block, so the client runs them in threads. The WAV versions make the same
client a virtual satellite: ``satellite --input command.wav --output reply.wav``.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import logging
import threading
import time
import wave
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from appliance.audio import AudioError as NodeAudioError
from appliance.audio import pcm as pcm_io
from appliance.protocol.voice import CHUNK_BYTES, SAMPLE_RATE, SAMPLE_WIDTH
from satellites.errors import AudioError

_LOGGER = logging.getLogger(__name__)
CHUNK_SAMPLES = CHUNK_BYTES // SAMPLE_WIDTH


class AudioInput(Protocol):
    hears_output: bool
    """Whether what the satellite plays can reach this input (a microphone in the
    room: yes; a file: no). Chimes mute an input that hears them."""

    def read(self) -> bytes | None:
        """The next 64 ms chunk (blocking); None once the input has ended."""

    def close(self) -> None: ...


class AudioOutput(Protocol):
    def start(self, rate: int, width: int, channels: int) -> None:
        """Open for a new sound in this format."""

    def write(self, pcm: bytes) -> None:
        """Play (blocking while the device buffer is full)."""

    def finish(self) -> None:
        """Wait until what was written has been heard."""

    def abort(self) -> None:
        """Stop now; safe to call from another thread."""

    def close(self) -> None: ...


# --- PCM helpers -------------------------------------------------------------------
def scale(pcm: bytes, volume: int) -> bytes:
    """16-bit PCM at ``volume`` percent."""
    if volume >= 100:
        return pcm
    samples = np.frombuffer(pcm, dtype=np.int16).astype(np.float32) * (volume / 100)
    return samples.astype(np.int16).tobytes()


def chime(kind: str) -> bytes:
    """A built-in 16 kHz chime: two rising notes at the wake, two falling at the end."""
    notes = (880.0, 1320.0) if kind == "wake" else (1320.0, 880.0)
    parts = []
    for freq in notes:
        t = np.arange(int(0.07 * SAMPLE_RATE)) / SAMPLE_RATE
        envelope = np.minimum(1.0, np.minimum(t, t[::-1]) / 0.01)
        parts.append(0.25 * envelope * np.sin(2 * np.pi * freq * t))
    return (np.concatenate(parts) * 32767).astype(np.int16).tobytes()


def read_wav(path: Path) -> bytes:
    """Any WAV file as 16 kHz 16-bit mono PCM (``appliance.audio.pcm`` converts it)."""
    try:
        return pcm_io.read_wav(path)
    except NodeAudioError as err:
        msg = f"cannot read {path}: {err}"
        raise AudioError(msg) from err


# --- WAV files ---------------------------------------------------------------------
class WavInput:
    """A WAV file as a microphone: chunks at the pace of speech (or as fast as read),
    then silence for ``tail_s`` so the turn can end, then the end of input."""

    hears_output = False

    def __init__(self, path: Path, *, realtime: bool = True, tail_s: float = 30.0) -> None:
        self._pcm = read_wav(path)
        self._realtime = realtime
        self._tail = int(tail_s * SAMPLE_RATE) * SAMPLE_WIDTH
        self._offset = 0
        self._started: float | None = None
        self._closed = threading.Event()

    def read(self) -> bytes | None:
        if self._closed.is_set() or self._offset >= len(self._pcm) + self._tail:
            return None
        if self._realtime:
            now = time.monotonic()
            if self._started is None:
                self._started = now
            due = self._started + self._offset / (SAMPLE_RATE * SAMPLE_WIDTH)
            if due > now and self._closed.wait(due - now):
                return None
        chunk = self._pcm[self._offset : self._offset + CHUNK_BYTES]
        chunk += bytes(CHUNK_BYTES - len(chunk))
        self._offset += CHUNK_BYTES
        return chunk

    def close(self) -> None:
        self._closed.set()


class WavOutput:
    """Everything played, one after another, in one 16 kHz mono WAV file."""

    def __init__(self, path: Path) -> None:
        if not path.parent.is_dir():
            msg = f"cannot write {path}: no directory {path.parent}"
            raise AudioError(msg)
        self._path = path
        self._format = (SAMPLE_RATE, 2, 1)
        self._pending: list[bytes] = []
        self._played: list[bytes] = []  # 16 kHz mono, one per sound
        self._lock = threading.Lock()
        self._aborted = False

    def start(self, rate: int, width: int, channels: int) -> None:
        with self._lock:
            self._format = (rate, width, channels)
            self._pending = []
            self._aborted = False

    def write(self, pcm: bytes) -> None:
        with self._lock:
            if not self._aborted:
                self._pending.append(pcm)

    def finish(self) -> None:
        with self._lock:
            rate, width, channels = self._format
            sound = io.BytesIO()
            with wave.open(sound, "wb") as wav:  # raw PCM as a WAV, for the one converter
                wav.setnchannels(channels)
                wav.setsampwidth(width)
                wav.setframerate(rate)
                wav.writeframes(b"".join(self._pending))
            self._played.append(pcm_io.decode_wav(sound.getvalue()))
            self._pending = []
            self._save()

    def abort(self) -> None:
        with self._lock:
            self._aborted = True
            self._pending = []

    def _save(self) -> None:
        pcm_io.write_wav(self._path, b"".join(self._played), SAMPLE_RATE)

    def close(self) -> None:
        with self._lock:
            self._save()


# --- PyAudio devices ---------------------------------------------------------------
_ALSA_HANDLER: Any = None


def _quiet_alsa() -> None:
    """ALSA prints a line per card it probes and fails to find; say nothing instead."""
    global _ALSA_HANDLER  # noqa: PLW0603 - the callback must outlive every call into ALSA
    if _ALSA_HANDLER is not None:
        return
    try:
        asound = ctypes.CDLL("libasound.so.2")
    except OSError:
        return
    handler_type = ctypes.CFUNCTYPE(
        None, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p
    )
    _ALSA_HANDLER = handler_type(lambda *_: None)
    asound.snd_lib_error_set_handler(_ALSA_HANDLER)


def _pyaudio() -> Any:
    try:
        import pyaudio  # type: ignore[import-untyped]
    except ImportError as err:
        msg = "sound devices need the satellite extra: pip install 'appliance[satellite]'"
        raise AudioError(msg) from err
    _quiet_alsa()
    return pyaudio


def list_devices() -> list[tuple[int, str, int, int]]:
    """(index, name, input channels, output channels) of every device PortAudio sees."""
    pa = _pyaudio().PyAudio()
    try:
        return [
            (
                i,
                str(info["name"]),
                int(info["maxInputChannels"]),
                int(info["maxOutputChannels"]),
            )
            for i in range(pa.get_device_count())
            for info in [pa.get_device_info_by_index(i)]
        ]
    finally:
        pa.terminate()


def find_device(pa: Any, wanted: str | int | None, *, output: bool) -> int | None:
    """A device index from an index or a part of a name; None: the system default."""
    if wanted is None:
        return None
    key = "maxOutputChannels" if output else "maxInputChannels"
    names = []
    for index in range(pa.get_device_count()):
        info = pa.get_device_info_by_index(index)
        if int(info[key]) < 1:
            continue
        if (isinstance(wanted, int) or str(wanted).isdigit()) and index == int(wanted):
            return index
        if isinstance(wanted, str) and wanted.lower() in str(info["name"]).lower():
            return index
        names.append(f"{index}: {info['name']}")
    kind = "output" if output else "input"
    msg = f"no {kind} device {wanted!r}; found: {', '.join(names) or 'none'}"
    raise AudioError(msg)


class PyAudioInput:
    """A microphone: 16 kHz mono 16-bit, one 64 ms chunk per read."""

    hears_output = True

    def __init__(self, device: str | int | None = None) -> None:
        pyaudio = _pyaudio()
        self._pa = pyaudio.PyAudio()
        try:
            index = find_device(self._pa, device, output=False)
            self._stream = self._pa.open(
                format=pyaudio.paInt16,
                channels=1,
                rate=SAMPLE_RATE,
                input=True,
                input_device_index=index,
                frames_per_buffer=CHUNK_SAMPLES,
            )
        except (OSError, ValueError) as err:
            self._pa.terminate()
            msg = f"cannot open the microphone {device!r}: {err}"
            raise AudioError(msg) from err
        except AudioError:
            self._pa.terminate()
            raise
        self._closed = False
        # A read blocks for up to a chunk in the reader's thread; closing the stream
        # under it freed what PortAudio was reading into (a segfault on SIGTERM).
        self._lock = threading.Lock()

    def read(self) -> bytes | None:
        with self._lock:
            if self._closed:
                return None
            try:
                data: bytes = self._stream.read(CHUNK_SAMPLES, exception_on_overflow=False)
            except OSError as err:
                msg = f"microphone read failed: {err}"
                raise AudioError(msg) from err
        return data

    def close(self) -> None:
        # after the read in progress, if any; a device stuck in a read for 2 s is
        # closed anyway
        locked = self._lock.acquire(timeout=2.0)
        try:
            if self._closed:
                return
            self._closed = True
            with contextlib.suppress(OSError):
                self._stream.stop_stream()
                self._stream.close()
            self._pa.terminate()
        finally:
            if locked:
                self._lock.release()


class PyAudioOutput:
    """A speaker; one PortAudio stream per sound, opened in the sound's own format."""

    def __init__(self, device: str | int | None = None) -> None:
        self._pyaudio = _pyaudio()
        self._pa = self._pyaudio.PyAudio()
        try:
            self._index = find_device(self._pa, device, output=True)
        except AudioError:
            self._pa.terminate()
            raise
        self._stream: Any = None
        self._aborted = threading.Event()
        self._lock = threading.Lock()

    def start(self, rate: int, width: int, channels: int) -> None:
        with self._lock:
            self._drop_stream()
            self._aborted.clear()
            try:
                self._stream = self._pa.open(
                    format=self._pa.get_format_from_width(width),
                    channels=channels,
                    rate=rate,
                    output=True,
                    output_device_index=self._index,
                )
            except (OSError, ValueError) as err:
                msg = f"cannot open the speaker: {err}"
                raise AudioError(msg) from err

    def write(self, pcm: bytes) -> None:
        # Small pieces, so an abort from another thread is heard within ~50 ms.
        piece = 2_048
        for start in range(0, len(pcm), piece):
            with self._lock:
                stream = self._stream
                if stream is None:
                    return
                if self._aborted.is_set():
                    self._drop_stream()
                    return
                try:
                    stream.write(pcm[start : start + piece])
                except OSError as err:
                    msg = f"speaker write failed: {err}"
                    raise AudioError(msg) from err

    def finish(self) -> None:
        with self._lock:
            if self._aborted.is_set():
                self._drop_stream()
            else:
                self._close_stream()

    def abort(self) -> None:
        self._aborted.set()

    def _close_stream(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.stop_stream()  # plays what is buffered, then stops
                stream.close()

    def _drop_stream(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()  # an active stream discards what is buffered

    def close(self) -> None:
        self.abort()
        with self._lock:
            self._drop_stream()
        self._pa.terminate()
