"""Engine A's transcription time: the encoder window, and the verifier beside it.

Medians over the voice benchmark's first commands (Piper, clean, 2-3 s), in one process:

- ``plain``: faster-whisper's ``transcribe`` with its defaults, the baseline;
- ``window_30s`` / ``window_20s``: the turn's own transcription (bias, beam
  alternatives) with the encoder reading 30 s (Whisper's own, the default) and 20 s
  (``WhisperSettings.encoder_window_s``);
- ``..._beside_verifier``: the same while the PocketSphinx verifier decodes speech in
  real time the whole time. In a turn Whisper starts at the first pause, and the
  verifier is still decoding for its first few hundred milliseconds (2 cores: the two
  share them), so this bounds what the verifier costs it;
- ``heard_alike_30s``: how many commands the window heard word for word as 30 s did.

The encoder keeps its last output for the same audio (``WhisperEngine._encode``), so
each run here starts without it.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable
from typing import Any

from bench.voice import COMMANDS
from tests.support import speech

_CHUNK = 2_048  # bytes: 64 ms, a satellite's chunk


def _median_ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 1)


class _Verifier:
    """A verifier decoding speech in real time on its own thread, until stopped."""

    def __init__(self, audio: bytes) -> None:
        from appliance.asr.grammar import build_grammar
        from appliance.asr.pocketsphinx_engine import PocketSphinxVerifier

        self._engine = PocketSphinxVerifier(build_grammar("en"))
        self._audio = audio
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._engine.start()
            for start in range(0, len(self._audio), _CHUNK):
                if self._stop.is_set():
                    break
                self._engine.accept(self._audio[start : start + _CHUNK])
                time.sleep(_CHUNK / 32_000)
            self._engine.finish()

    def __enter__(self) -> _Verifier:
        self._thread.start()
        time.sleep(1.0)  # decoding by then
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._engine.close()


def run(commands: int = 10) -> dict[str, Any]:
    from appliance.asr.base import Hints
    from appliance.asr.whisper import ENCODER_WINDOW_S, WhisperEngine, WhisperSettings

    clips = [speech.pad(speech.piper(text), 300, 300) for text in COMMANDS[:commands]]
    whisper = WhisperEngine()
    whisper.load("en")
    whisper.warm_up("en")
    windows = sorted({30.0, 20.0, ENCODER_WINDOW_S}, reverse=True)
    engines = {w: whisper.with_settings(WhisperSettings(encoder_window_s=w)) for w in windows}
    hints = Hints(lang="en")

    def timed(call: Callable[[bytes], Any]) -> tuple[list[float], list[str]]:
        seconds, texts = [], []
        for clip in clips:
            for engine in engines.values():
                engine._encoded = None
            started = time.perf_counter()
            result = call(clip)
            seconds.append(time.perf_counter() - started)
            texts.append(result.text)
        return seconds, texts

    figures: dict[str, Any] = {}
    heard: dict[float, list[str]] = {}
    plain, _ = timed(lambda clip: whisper.plain_transcribe(clip, "en"))
    figures["plain_ms"] = _median_ms(plain)
    for window, engine in engines.items():
        seconds, heard[window] = timed(lambda clip, e=engine: e.transcribe(clip, hints))
        figures[f"window_{window:g}s_ms"] = _median_ms(seconds)
    with _Verifier(b"".join(clips)):
        for window, engine in engines.items():
            seconds, _ = timed(lambda clip, e=engine: e.transcribe(clip, hints))
            figures[f"window_{window:g}s_beside_verifier_ms"] = _median_ms(seconds)
    for window in windows:
        name = f"window_{window:g}s"
        figures[f"ratio_{name}_vs_plain"] = round(figures[f"{name}_ms"] / figures["plain_ms"], 2)
        figures[f"ratio_{name}_beside_verifier_vs_plain"] = round(
            figures[f"{name}_beside_verifier_ms"] / figures["plain_ms"], 2
        )
    figures["heard_alike_30s"] = {
        f"window_{w:g}s": f"{sum(a == b for a, b in zip(heard[w], heard[30.0], strict=True))}"
        f"/{len(clips)}"
        for w in windows
        if w != 30.0
    }
    figures["commands"] = len(clips)
    figures["default_window_s"] = ENCODER_WINDOW_S
    return figures
