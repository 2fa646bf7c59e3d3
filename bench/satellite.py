"""The satellite listening for its wake word: idle CPU, wake latency, false wakes per hour.

- ``idle_cpu``: the real ``satellite`` process (its console script) on a real mosquitto,
  its microphone the ALSA ``satmic`` device fed in real time from a FIFO (no node: it
  only listens). CPU time of the process (user + system, all threads) over a steady
  window after start-up, as percent of one core: a quiet room (pink noise at -65 dBFS,
  under the quiet gate), a room with background noise (pink, -45 dBFS) and babble at
  conversational level (-30 dBFS, no wake word), each with the gates as shipped (quiet
  below -60 dBFS, and no voice by Silero) and turned off
  (``SATELLITE_WAKE__QUIET_GATE=false``, ``SATELLITE_WAKE__SPEECH_GATE=false``).
  Baselines in the same run: the CPU seconds
  of a fixed numpy FFT workload (before each run), and the in-process detector's own
  CPU on the same audio (ratio process / detector = what the process adds).
- ``wake_latency``: "hey jarvis" (Piper at three speeds and two noise scales,
  espeak-ng voices at two speeds; clean over a quiet floor, white noise at 20 dB,
  babble at 15 and 10 dB) fed to an in-process :class:`WakeDetector` in 64 ms chunks
  after 2 s of room floor. Latency = end of the chunk that woke it minus the end of
  the phrase (by energy, on the clean clip). Resolution: 64 ms chunks, and
  openWakeWord scores one frame per 80 ms from features of the last ~1.3 s; it may
  fire before the last phoneme has fully decayed (negative latency). On a live
  stream add the compute time of that chunk (``on_stream_ms``).
- ``near_misses``: the highest score of phrases that sound like the wake word.
- ``false_wakes``: an hour of non-wake audio assembled from synthesized speech (kitchen
  commands, chatter, TV-like reading, near-sounding words) by Piper and espeak-ng
  voices, in scenes: quiet, white noise and babble at several SNRs, and noise alone.
  Cached under ``bench/.cache/`` (the hour is ~115 MB). hey_jarvis, okay_nabu and alexa
  run with the satellite's defaults (each model as if alone: one shared front end).

``python -m bench satellite``; results in ``bench/results/satellite.json``.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import itertools
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from appliance.audio.pcm import from_float32
from satellites.settings import WakeSettings
from satellites.wake import WakeDetector
from tests.support import speech
from tests.support.alsa import MIC, SPEAKER, AlsaFileDevices
from tests.support.mosquitto import USERS, Mosquitto

CACHE = Path(__file__).resolve().parent / ".cache"
RATE = 16_000
CHUNK_BYTES = 2_048  # 64 ms: what the satellite reads from its microphone
PIPER_SEED = 20_240_601
"""onnxruntime's global seed: Piper draws noise in its model, so without it every
process synthesizes a slightly different clip (``tests.support.speech`` is not
deterministic for Piper)."""
GOALS = {"idle_cpu_pct": 10.0, "wake_latency_ms": 200, "false_wakes_per_hour": 0.5}


# --- signals -----------------------------------------------------------------------------
def pink_noise(ms: float, dbfs: float, *, seed: int = 0) -> bytes:
    """1/f noise with an RMS level of ``dbfs``."""
    n = round(ms * RATE / 1000)
    rng = np.random.default_rng(seed)
    spectrum = np.fft.rfft(rng.standard_normal(n))
    freqs = np.fft.rfftfreq(n, 1 / RATE)
    freqs[0] = freqs[1]
    x = np.fft.irfft(spectrum / np.sqrt(freqs), n)
    x *= 10 ** (dbfs / 20) / float(np.sqrt(np.mean(x * x)))
    return from_float32(x)


def floats(pcm: bytes) -> np.ndarray:
    return np.frombuffer(pcm, dtype=np.int16).astype(np.float64) / 32768


def to_pcm(x: np.ndarray) -> bytes:
    return (np.clip(x, -1, 32767 / 32768) * 32768).astype(np.int16).tobytes()


def mix(*parts: bytes) -> bytes:
    """Samples added (the length of the first)."""
    total = floats(parts[0]).copy()
    for part in parts[1:]:
        y = floats(part)[: len(total)]
        total[: len(y)] += y
    return to_pcm(total)


def phrase_end_s(pcm: bytes) -> float:
    """The end of the last 10 ms frame within 40 dB of the loudest one."""
    x = floats(pcm)
    energy = np.mean(x[: len(x) - len(x) % 160].reshape(-1, 160) ** 2, axis=1)
    loud = np.nonzero(energy >= energy.max() * 1e-4)[0]
    return float((loud[-1] + 1) * 160 / RATE)


def pct(values: list[float], q: float) -> float | None:
    return round(float(np.percentile(values, q)), 1) if values else None


def med(values: list[float], digits: int = 1) -> float | None:
    return round(statistics.median(values), digits) if values else None


class ScoringDetector(WakeDetector):
    """A :class:`WakeDetector` that also records every frame's probability and every
    model's own detections (each model keeps its own threshold and refractory state,
    so these are the detections it would make alone)."""

    def __init__(self, settings: WakeSettings) -> None:
        super().__init__(settings)
        self.frames: dict[str, list[tuple[float, float]]] = {n: [] for n in self.names}
        self.hits: list[Any] = []

    def _score(self, state: Any, probability: float) -> Any:
        self.frames[state.name].append((self.position_s, probability))
        hit = super()._score(state, probability)
        if hit is not None:
            self.hits.append(hit)
        return hit


def baseline_cpu_s() -> float:
    """CPU seconds of a fixed single-threaded numpy workload (FFTs)."""
    x = np.random.default_rng(0).standard_normal(1 << 16)
    started = time.process_time()
    for _ in range(400):
        np.fft.irfft(np.fft.rfft(x))
    return time.process_time() - started


# --- idle CPU of the real satellite process ---------------------------------------------
class _Microphone:
    """Feeds ``satmic``'s FIFO at the pace of speech. Unlike ``AlsaFileDevices.feed`` it
    opens the FIFO again when a reader goes away: PortAudio opens and closes the device
    while it probes, and a feeder that gives up then leaves the real capture blocked in
    ``open()`` forever."""

    def __init__(self, fifo: Path, pcm: bytes) -> None:
        self._fifo, self._pcm = fifo, pcm
        self._stop = threading.Event()
        self.fed = 0
        self.reopened = 0
        self._thread = threading.Thread(target=self._run, name="mic-feed", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)

    def _run(self) -> None:
        started: float | None = None
        while not self._stop.is_set() and self.fed < len(self._pcm):
            try:
                fd = os.open(self._fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as err:
                if err.errno != errno.ENXIO:  # ENXIO: no reader yet
                    raise
                time.sleep(0.01)
                continue
            try:
                while not self._stop.is_set() and self.fed < len(self._pcm):
                    if started is None:
                        started = time.monotonic() - self.fed / (2 * RATE)
                    try:
                        self.fed += os.write(fd, self._pcm[self.fed : self.fed + CHUNK_BYTES])
                    except BlockingIOError:
                        time.sleep(0.005)
                        continue
                    due = started + self.fed / (2 * RATE)
                    time.sleep(max(0.0, due - time.monotonic()))
            except BrokenPipeError:
                self.reopened += 1
            finally:
                os.close(fd)


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _satellite_cpu(
    broker: Mosquitto, home: Path, room: bytes, *, gate: bool, warmup_s: float, window_s: float
) -> dict[str, Any]:
    devices = AlsaFileDevices(home)
    env = devices.env() | {"SATELLITE_MQTT__PASSWORD": USERS["kitchen"]}
    env.pop("SATELLITE_CONFIG", None)
    if not gate:
        env["SATELLITE_WAKE__QUIET_GATE"] = "false"
        env["SATELLITE_WAKE__SPEECH_GATE"] = "false"
    script = Path(sys.executable).with_name("satellite")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "satellites"]
    mic = _Microphone(devices.mic_fifo, room)
    mic.start()
    proc = subprocess.Popen(
        [*command, "--site", "kitchen", "--broker", broker.url, "--input-device", MIC,
         "--output-device", SPEAKER, "--no-chimes"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    lines: list[str] = []
    connected = threading.Event()

    def read_log() -> None:
        assert proc.stderr is not None
        for raw in proc.stderr:
            line = raw.decode("utf-8", "replace").rstrip()
            lines.append(line)
            if "connected to MQTT broker" in line:
                connected.set()

    reader = threading.Thread(target=read_log, name="satellite-log", daemon=True)
    reader.start()
    try:
        if not connected.wait(30):
            raise RuntimeError("satellite did not connect: " + "\n".join(lines[-20:]))
        time.sleep(warmup_s)
        fed_before = mic.fed
        samples = [(time.monotonic(), _cpu_s(proc.pid))]
        while samples[-1][0] - samples[0][0] < window_s - 0.01:
            time.sleep(5.0)
            samples.append((time.monotonic(), _cpu_s(proc.pid)))
        fed_s = (mic.fed - fed_before) / (2 * RATE)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        mic.stop()
        reader.join(5)
    wall = samples[-1][0] - samples[0][0]
    cpu = samples[-1][1] - samples[0][1]
    intervals = [100 * (b[1] - a[1]) / (b[0] - a[0]) for a, b in itertools.pairwise(samples)]
    return {
        "cpu_pct": round(100 * cpu / wall, 2),
        "cpu_pct_5s_median": med(intervals, 2),
        "cpu_pct_5s_range": [round(min(intervals), 2), round(max(intervals), 2)],
        "window_s": round(wall, 1),
        "mic_fed_realtime": round(fed_s / wall, 3),  # ~1.0: the microphone was live
        "wakes": sum(bool(re.search(r"wake word \S+ \(", line)) for line in lines),
        "exit_code": proc.returncode,
    }


def _detector_cpu_pct(room: bytes, gates: bool) -> float:
    """The same work in this process: the detector alone over 20 s of the room."""
    detector = WakeDetector(WakeSettings(quiet_gate=gates, speech_gate=gates))
    pcm = room[: 20 * 2 * RATE]
    for offset in range(0, 4 * 2 * RATE, CHUNK_BYTES):  # past the start-up fill
        detector.process(pcm[offset : offset + CHUNK_BYTES])
    started = time.process_time()
    for offset in range(4 * 2 * RATE, len(pcm), CHUNK_BYTES):
        detector.process(pcm[offset : offset + CHUNK_BYTES])
    used = time.process_time() - started
    detector.close()
    return 100 * used / (len(pcm) / (2 * RATE) - 4)


def idle_cpu(*, repeats: int = 1, warmup_s: float = 12.0, window_s: float = 45.0) -> dict[str, Any]:
    length_ms = (warmup_s + window_s + 15) * 1000
    rooms = {
        "quiet_room_pink_-65dBFS": pink_noise(length_ms, -65, seed=1),
        "background_pink_-45dBFS": pink_noise(length_ms, -45, seed=2),
        "babble_-30dBFS": speech.babble(length_ms, -30, seed=4),
    }
    runs: dict[str, list[dict[str, Any]]] = {}
    baselines: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-satellite-") as tmp:
        broker = Mosquitto(Path(tmp) / "mosquitto")
        broker.start()
        try:
            n = 0
            for _ in range(repeats):
                for room, pcm in rooms.items():
                    for gate in (True, False):
                        baseline = statistics.median(baseline_cpu_s() for _ in range(3))
                        baselines.append(baseline)
                        n += 1
                        result = _satellite_cpu(
                            broker, Path(tmp) / f"home{n}", pcm,
                            gate=gate, warmup_s=warmup_s, window_s=window_s,
                        )  # fmt: skip
                        result["baseline_cpu_s"] = round(baseline, 3)
                        result["cpu_pct_per_baseline_s"] = round(result["cpu_pct"] / baseline, 2)
                        key = f"{room}/{'gates_on' if gate else 'gates_off'}"
                        runs.setdefault(key, []).append(result)
                        print(f"  idle {key}: {result['cpu_pct']}% of a core", flush=True)
        finally:
            broker.stop()
    figures: dict[str, Any] = {}
    for key, results in runs.items():
        room, gate = key.split("/")
        cpu = med([r["cpu_pct"] for r in results], 2)
        inproc = _detector_cpu_pct(rooms[room], gate == "gates_on")
        figures[key] = {
            "cpu_pct_of_one_core": cpu,
            "runs": results,
            "in_process_detector_cpu_pct": round(inproc, 2),
            "ratio_process_to_detector": round(cpu / inproc, 2) if cpu and inproc else None,
            "cpu_pct_per_baseline_s": med([r["cpu_pct_per_baseline_s"] for r in results], 2),
        }
    return {
        "by_room_and_gate": figures,
        "baseline_numpy_fft_cpu_s_median": round(statistics.median(baselines), 3),
        "baseline_numpy_fft_cpu_s_range": [round(min(baselines), 3), round(max(baselines), 3)],
        "warmup_s": warmup_s,
        "gates_off_via": "SATELLITE_WAKE__QUIET_GATE=false SATELLITE_WAKE__SPEECH_GATE=false",
    }


# --- wake latency ------------------------------------------------------------------------
WAKE = "hey jarvis"
ESPEAK_VOICES = ("en-us", "en-gb", "en-us+f3", "en-gb+f2", "en-us+m3", "en-gb-scotland",
                 "en-gb-x-rp", "en-029")  # fmt: skip
WAKE_VOICES: dict[str, Callable[[], bytes]] = {
    **{
        f"piper_ls{ls}_ns{ns}": (
            lambda ls=ls, ns=ns: speech.piper(
                WAKE, length_scale=ls, noise_scale=ns, noise_w_scale=0.333
            )
        )
        for ls in (0.85, 1.0, 1.2)
        for ns in (0.333, 0.667)
    },
    **{
        f"espeak_{voice}_{rate}": (lambda v=voice, r=rate: speech.espeak(WAKE, v, speed=r))
        for voice in ESPEAK_VOICES
        for rate in (150, 175)
    },
}
WAKE_CONDITIONS: dict[str, Callable[[bytes], bytes]] = {
    "clean": lambda pcm: pcm,
    "white20": lambda pcm: speech.add_white_noise(pcm, 20, seed=5),
    "babble15": lambda pcm: speech.add_babble(pcm, 15, seed=6),
    "babble10": lambda pcm: speech.add_babble(pcm, 10, seed=7),
}
LEAD_MS, TRAIL_MS = 2_000, 2_500


@dataclass
class Trial:
    voice: str
    condition: str
    end_s: float  # end of the phrase from the start of the trial
    latency_ms: float | None = None
    at_s_latency_ms: float | None = None
    score: float | None = None
    wake_chunk_ms: float | None = None
    extra: int = 0  # detections outside the phrase's window
    chunk_ms: list[float] = field(default_factory=list)
    first_chunk_ms: float = 0.0


def _trial_audio(voice: str, condition: str) -> tuple[bytes, float]:
    clip = WAKE_VOICES[voice]()
    floor = pink_noise(LEAD_MS + len(clip) / 32 + TRAIL_MS, -65, seed=9)
    pcm = mix(WAKE_CONDITIONS[condition](speech.pad(clip, LEAD_MS, TRAIL_MS)), floor)
    return pcm, LEAD_MS / 1000 + phrase_end_s(clip)


def _run_trial(detector: WakeDetector, voice: str, condition: str) -> Trial:
    pcm, end_s = _trial_audio(voice, condition)
    trial = Trial(voice, condition, end_s)
    detector.reset()
    origin = detector.position_s
    for k, offset in enumerate(range(0, len(pcm), CHUNK_BYTES)):
        started = time.perf_counter()
        hit = detector.process(pcm[offset : offset + CHUNK_BYTES])
        took = (time.perf_counter() - started) * 1000
        if k == 1:  # the first whole frame: upstream's 8 s start-up fill runs here
            trial.first_chunk_ms = took
        elif k > 1:
            trial.chunk_ms.append(took)
        if hit is None:
            continue
        chunk_end = min(offset + CHUNK_BYTES, len(pcm)) / (2 * RATE)
        if trial.latency_ms is None and LEAD_MS / 1000 <= chunk_end <= end_s + 1.5:
            trial.latency_ms = (chunk_end - end_s) * 1000
            trial.at_s_latency_ms = (hit.at_s - origin - end_s) * 1000
            trial.score = hit.score
            trial.wake_chunk_ms = took
        else:
            trial.extra += 1
    return trial


def wake_latency() -> dict[str, Any]:
    detector = WakeDetector(WakeSettings())
    trials = [
        _run_trial(detector, voice, condition)
        for condition in WAKE_CONDITIONS
        for voice in WAKE_VOICES
    ]
    detector.close()
    heard = [t for t in trials if t.latency_ms is not None]
    latencies = [t.latency_ms for t in heard if t.latency_ms is not None]
    on_stream = [
        t.latency_ms + t.wake_chunk_ms
        for t in heard
        if t.latency_ms is not None and t.wake_chunk_ms is not None
    ]
    chunk_ms = [ms for t in trials for ms in t.chunk_ms]

    def rate(selected: list[Trial]) -> str:
        return f"{sum(t.latency_ms is not None for t in selected)}/{len(selected)}"

    by_condition = {}
    for condition in WAKE_CONDITIONS:
        mine = [t for t in trials if t.condition == condition]
        lat = [t.latency_ms for t in mine if t.latency_ms is not None]
        by_condition[condition] = {
            "heard": rate(mine),
            "heard_piper": rate([t for t in mine if t.voice.startswith("piper")]),
            "heard_espeak": rate([t for t in mine if t.voice.startswith("espeak")]),
            "latency_ms_median": med(lat),
            "latency_ms_p90": pct(lat, 90),
        }
    by_family = {}
    for family in ("piper", "espeak"):
        lat = [t.latency_ms for t in heard if t.voice.startswith(family) and t.latency_ms]
        by_family[family] = {"latency_ms_median": med(lat), "latency_ms_p90": pct(lat, 90)}
    return {
        "utterances": len(trials),
        "heard": rate(trials),
        "extra_detections": sum(t.extra for t in trials),
        "latency_ms_median": med(latencies),
        "latency_ms_p90": pct(latencies, 90),
        "latency_ms_min_max": [round(min(latencies)), round(max(latencies))] if latencies else None,
        "latency_by_at_s_ms_median": med(
            [t.at_s_latency_ms for t in heard if t.at_s_latency_ms is not None]
        ),
        "on_stream_ms_median": med(on_stream),
        "on_stream_ms_p90": pct(on_stream, 90),
        "compute_per_64ms_chunk_ms": {
            "median": med(chunk_ms, 2),
            "p90": pct(chunk_ms, 90),
            "p99": pct(chunk_ms, 99),
            "max": round(max(chunk_ms), 1),
            "first_whole_frame_after_reset_median": med([t.first_chunk_ms for t in trials]),
        },
        "score_median": med([t.score for t in heard if t.score is not None], 3),
        "by_condition": by_condition,
        "by_voice_family": by_family,
        "missed": [f"{t.voice}/{t.condition}" for t in trials if t.latency_ms is None],
        "resolution_note": "64 ms chunks; openWakeWord scores one 80 ms frame at a time "
        "from ~1.3 s of embedding context, so it can fire before the tail of the phrase "
        "has decayed",
    }


def quiet_gate_effect() -> dict[str, Any]:
    """The latency set (clean over a -65 dBFS floor, and babble at 15 dB) with the gate
    as shipped and turned off: does it change what is heard?"""
    gated = WakeDetector(WakeSettings())
    plain = WakeDetector(WakeSettings(quiet_gate=False, speech_gate=False))
    same = changed = 0
    score_diff: list[float] = []
    at_diff: list[float] = []
    for condition in ("clean", "babble15"):
        for voice in WAKE_VOICES:
            a = _run_trial(gated, voice, condition)
            b = _run_trial(plain, voice, condition)
            if (a.latency_ms is None) != (b.latency_ms is None) or a.extra != b.extra:
                changed += 1
                continue
            same += 1
            if a.score is not None and b.score is not None:
                score_diff.append(abs(a.score - b.score))
            if a.latency_ms is not None and b.latency_ms is not None:
                at_diff.append(abs(a.latency_ms - b.latency_ms))
    gated.close()
    plain.close()
    return {
        "utterances": same + changed,
        "detection_changed": changed,
        "score_abs_diff_median": med(score_diff, 4),
        "score_abs_diff_max": round(max(score_diff), 4) if score_diff else None,
        "latency_abs_diff_ms_max": round(max(at_diff)) if at_diff else None,
    }


# --- near misses -------------------------------------------------------------------------
NEAR = (
    "hey Travis",
    "hey, jars of jam",
    "hey jars",
    "hey java",
    "hey service",
    "hey Harvey",
    "hey Marvis",
    "hey Davis",
    "jarvis",
    "a jar of jam",
    "Harvey is nervous",
)
NEAR_VOICES: dict[str, Callable[[str], bytes]] = {
    "piper": lambda t: speech.piper(t, **speech.CLEAR),
    "piper_slow": lambda t: speech.piper(t, length_scale=1.2, **speech.CLEAR),
    "espeak_us": lambda t: speech.espeak(t, "en-us"),
    "espeak_gb": lambda t: speech.espeak(t, "en-gb"),
    "espeak_us_f3": lambda t: speech.espeak(t, "en-us+f3"),
}


def near_misses() -> dict[str, Any]:
    detector = ScoringDetector(WakeSettings())
    table: dict[str, dict[str, float]] = {}
    for text in NEAR:
        row = {}
        for voice, speak in NEAR_VOICES.items():
            detector.reset()
            detector.frames["hey_jarvis"].clear()
            pcm = speech.pad(speak(text), 1_000, 1_500)
            for offset in range(0, len(pcm), CHUNK_BYTES):
                detector.process(pcm[offset : offset + CHUNK_BYTES])
            row[voice] = round(max(p for _, p in detector.frames["hey_jarvis"]), 3)
        table[text] = row
    detector.close()
    return {
        "max_score_by_phrase_and_voice": table,
        "woke": sorted(f"{t}/{v}" for t, row in table.items() for v, s in row.items() if s >= 0.5),
    }


# --- an hour of non-wake audio -----------------------------------------------------------
ITEMS = (
    "milk", "eggs", "bread", "butter", "coffee", "rice", "bananas", "apples", "tomatoes",
    "cheese", "yogurt", "olive oil", "flour", "sugar", "oat milk", "chicken", "pasta",
    "onions", "garlic", "dish soap", "paper towels", "orange juice", "peanut butter",
    "strawberry jam", "cereal", "carrots", "lemons", "toilet paper", "cat food", "tea",
)  # fmt: skip
ITEM_TEMPLATES = (
    "add {} to the shopping list", "put {} on the shopping list", "add two packs of {} to my list",
    "remove {} from the shopping list", "take {} off the list", "do we still need {}",
    "check off the {}", "we're out of {}", "is {} on the shopping list", "don't forget the {}",
)  # fmt: skip
COMMANDS = (
    "what's on my agenda tomorrow", "what's my next appointment", "what's on my shopping list",
    "add dentist tomorrow at three pm to my calendar", "remind me to call mom at six",
    "what do I have on Friday", "cancel my meeting on Monday", "set a timer for ten minutes",
    "move the haircut to Thursday morning", "how long is left on the timer",
    "turn off the kitchen lights", "what's the weather like today", "what time is it",
    "play some jazz in the living room", "turn the volume down", "never mind", "stop",
    "add a dozen eggs and a loaf of bread to the shopping list", "clear the shopping list",
)  # fmt: skip
CHATTER = (
    "I watched a movie last night and fell asleep halfway through.",
    "Can you pass me the salt, please?", "My sister is coming for dinner on Saturday.",
    "The weather is lovely today, we should go for a walk.",
    "Did you remember to lock the back door?", "I think the washing machine is broken again.",
    "We should leave at eight if we want to avoid the traffic.",
    "The kids have a school trip next Wednesday.", "Dinner will be ready in about twenty minutes.",
    "Have you seen my keys anywhere?", "I'll be home late tonight, don't wait up.",
    "That was the best lasagna I have ever had.", "The dog needs to go to the vet next week.",
    "Could you turn the oven on to two hundred degrees?", "I can't find the remote control.",
    "Let's order pizza tonight, I'm too tired to cook.", "The neighbours are having a party again.",
    "Grandma called, she wants us to visit at Easter.", "Do you want tea or coffee?",
    "The plumber said he would come between nine and twelve.", "Good morning, did you sleep well?",
    "I'm going to the gym after work.", "Who left the milk out of the fridge?",
    "We need to book the flights for the summer holiday.", "This soup needs a bit more pepper.",
    "Happy birthday! Make a wish and blow out the candles.", "Can you help me with my homework?",
    "It's raining again, take an umbrella.", "The bus was twenty minutes late this morning.",
    "I finished the book you lent me, it was brilliant.",
)  # fmt: skip
SOUNDALIKE = (
    "The jam jars are in the top cupboard.", "Harvey was nervous before the interview.",
    "The customer service line was busy again.", "Travis said he would bring the car back tonight.",
    "Hey, are the jars clean yet?", "Hey Travis, dinner is ready.",
    "Hey Harvey, can you grab the door?", "I get nervous when the service is slow.",
    "Marvelous jars of honey from the market.", "Jarrod and Travis are playing chess.",
    "Hey, has anyone seen my glasses?", "The waiter's service was marvellous.",
    "We need more mason jars for the pickles.", "Harvey's nervous dog barks at the mailman.",
    "She services the boiler every autumn.", "Hey, pass the jar of olives.",
    "Jars, jugs and bottles go in the recycling.", "Hey Marvin, turn that down.",
    "The travel service called about the flight.", "Heavy jars of paint are in the garage.",
    "Hey, how's it going?", "Hey there, long time no see.", "Nervous Harvey served the jam.",
    "Davis and Travis are both in the service.", "Hey, Mavis, the kettle's boiling.",
)  # fmt: skip
TV = (
    "Good evening. Tonight, heavy rain is expected across the north, with winds reaching "
    "fifty miles an hour along the coast. Drivers are advised to take extra care.",
    "In the second half, the home side pressed forward, and with ten minutes to go the "
    "captain scored a stunning goal from the edge of the box.",
    "The octopus is a master of disguise. Within a fraction of a second, it can change "
    "both the colour and the texture of its skin to match its surroundings.",
    "Preheat the oven, then whisk the eggs with the sugar until pale. Fold in the flour "
    "gently, pour the batter into the tin and bake for twenty five minutes.",
    "Shares in the technology sector fell sharply this morning after the company reported "
    "lower than expected profits for the third quarter.",
    "Scientists say the new telescope will let them look further back in time than ever "
    "before, to when the first galaxies were forming.",
    "The minister defended the plan, saying it would create thousands of jobs and cut "
    "energy bills for families over the next decade.",
    "Our contestants have sixty seconds on the clock. The category is world capitals. "
    "Your time starts now.",
    "The castle was built in the twelfth century and survived three sieges before it was "
    "finally abandoned in the sixteen hundreds.",
    "Now, here is the rest of the weather. Tomorrow will start cloudy, with sunny spells "
    "developing in the afternoon, and temperatures around eighteen degrees.",
    "Detective Inspector Harvey looked nervously at the jar on the table and asked the "
    "butler where he had been on the night of the murder.",
    "After the break, we will be talking to a chef who turned his grandmother's recipes "
    "into one of the busiest restaurants in the city.",
)  # fmt: skip
HOUR_VOICES: dict[str, Callable[[str], bytes]] = {
    "piper": lambda t: speech.piper(t, **speech.CLEAR),
    "piper_fast_noisy": lambda t: speech.piper(
        t, length_scale=0.9, noise_scale=0.667, noise_w_scale=0.333
    ),
    "piper_slow": lambda t: speech.piper(t, length_scale=1.15, **speech.CLEAR),
    **{
        f"espeak_{voice}": (lambda t, voice=voice, rate=rate: speech.espeak(t, voice, speed=rate))
        for voice, rate in (("en-us", 160), ("en-gb", 170), ("en-us+f3", 165), ("en-gb+f2", 150),
                            ("en-us+m3", 175), ("en-gb-scotland", 160), ("en-029", 155),
                            ("en-gb-x-rp", 165))
    },
}  # fmt: skip
# (kind, weight, SNR in dB or noise level in dBFS)
SCENES = (
    ("quiet", 4, None), ("white_snr20", 2, 20), ("white_snr10", 1, 10),
    ("babble_snr15", 2, 15), ("babble_snr5", 1, 5), ("tv", 2, None),
    ("noise_white", 1, -40), ("noise_pink", 1, -35), ("noise_babble", 1, -28),
)  # fmt: skip
HOUR_RECIPE = "v2"


def _sentences(rng: np.random.Generator) -> dict[str, list[str]]:
    items = [t.format(i) for t in ITEM_TEMPLATES for i in ITEMS]
    picked = [items[k] for k in rng.choice(len(items), 90, replace=False)]
    return {
        "command": [*picked, *COMMANDS],
        "chatter": list(CHATTER),
        "soundalike": list(SOUNDALIKE),
        "tv": list(TV),
    }


def _scene(
    rng: np.random.Generator, kind: str, level: float | None, seconds: float, pools: Any
) -> tuple[np.ndarray, list[dict[str, Any]]]:
    n = int(seconds * RATE)
    ms = seconds * 1000
    if kind.startswith("noise_"):
        seed = int(rng.integers(1 << 30))
        assert level is not None
        noise = {
            "noise_white": lambda: speech.white_noise(ms, level, seed=seed),
            "noise_pink": lambda: pink_noise(ms, level, seed=seed),
            "noise_babble": lambda: speech.babble(ms, level, seed=seed % 8),
        }[kind]()
        return floats(noise)[:n], []
    track = np.zeros(n)
    said: list[dict[str, Any]] = []
    at = float(rng.uniform(0.2, 1.5))
    voices = list(HOUR_VOICES)
    voice = voices[int(rng.integers(len(voices)))]  # a TV voice reads on
    while True:
        if kind == "tv":
            text = pools["tv"][int(rng.integers(len(pools["tv"])))]
        else:
            pool = ("command", "command", "chatter", "chatter", "soundalike")[int(rng.integers(5))]
            text = pools[pool][int(rng.integers(len(pools[pool])))]
            voice = voices[int(rng.integers(len(voices)))]
        clip = speech.scale_to_dbfs(HOUR_VOICES[voice](text), float(rng.uniform(-32, -20)))
        x = floats(clip)
        start = int(at * RATE)
        if start + len(x) > n:
            break
        track[start : start + len(x)] += x
        said.append({"start_s": round(at, 2), "end_s": round(at + len(x) / RATE, 2),
                     "text": text, "voice": voice})  # fmt: skip
        gap = rng.uniform(0.2, 0.8) if kind == "tv" else rng.uniform(0.4, 3.0)
        at += len(x) / RATE + float(gap)
    if kind.startswith(("white", "babble")):
        assert level is not None
        seed = int(rng.integers(1 << 30))
        noise = (
            speech.white_noise(ms, seed=seed)
            if kind.startswith("white")
            else speech.babble(ms, seed=seed % 8)
        )
        track = floats(speech.mix_at_snr(to_pcm(track), noise, level))
    return track, said


def _schedule(rng: np.random.Generator) -> Iterator[tuple[str, float | None]]:
    """Scene kinds in proportion to their weights: each round holds every kind
    ``weight`` times, shuffled."""
    deck = [(kind, level) for kind, weight, level in SCENES for _ in range(weight)]
    while True:
        for k in rng.permutation(len(deck)):
            yield deck[int(k)]


def hour_of_speech(seconds: float = 3_600.0) -> tuple[np.ndarray, list[dict[str, Any]], Path]:
    """The non-wake hour (int16 samples) and what is said when; built once, cached."""
    key = hashlib.sha256(
        json.dumps([HOUR_RECIPE, seconds, ITEMS, ITEM_TEMPLATES, COMMANDS, CHATTER, SOUNDALIKE,
                    TV, list(HOUR_VOICES), SCENES, PIPER_SEED]).encode()
    ).hexdigest()[:12]  # fmt: skip
    audio_path = CACHE / f"non_wake_hour_{key}.pcm"
    manifest_path = CACHE / f"non_wake_hour_{key}.json"
    if audio_path.exists() and manifest_path.exists():
        samples = np.fromfile(audio_path, dtype=np.int16)
        return samples, json.loads(manifest_path.read_text()), audio_path
    CACHE.mkdir(exist_ok=True)
    rng = np.random.default_rng(7)
    pools = _sentences(rng)
    parts: list[np.ndarray] = []
    manifest: list[dict[str, Any]] = []
    schedule = _schedule(rng)
    total = 0.0
    while total < seconds:
        kind, level = next(schedule)
        length = min(float(rng.uniform(40, 90)), seconds - total)
        if length < 5:
            break
        track, said = _scene(rng, kind, level, length, pools)
        floor = floats(pink_noise(length * 1000, -65, seed=int(rng.integers(1 << 30))))
        track[: len(floor)] += floor[: len(track)]
        parts.append((np.clip(track, -1, 32767 / 32768) * 32768).astype(np.int16))
        for item in said:
            item["start_s"] = round(total + item["start_s"], 2)
            item["end_s"] = round(total + item["end_s"], 2)
        manifest.append(
            {
                "kind": kind,
                "start_s": round(total, 2),
                "end_s": round(total + length, 2),
                "said": said,
            }
        )
        total += len(track) / RATE
    samples = np.concatenate(parts)
    tmp = audio_path.with_suffix(".tmp")
    samples.tofile(tmp)
    tmp.replace(audio_path)
    manifest_path.write_text(json.dumps(manifest))
    return samples, manifest, audio_path


def _listen_long(samples: np.ndarray, models: list[str]) -> ScoringDetector:
    detector = ScoringDetector(WakeSettings(models=models))
    pcm = samples.tobytes()
    for offset in range(0, len(pcm), CHUNK_BYTES):
        detector.process(pcm[offset : offset + CHUNK_BYTES])
    return detector


def _what_was_said(manifest: list[dict[str, Any]], at_s: float) -> dict[str, Any]:
    for scene in manifest:
        if scene["start_s"] <= at_s <= scene["end_s"] + 0.01:
            for said in scene["said"]:
                if said["start_s"] - 0.3 <= at_s <= said["end_s"] + 1.5:
                    return {"scene": scene["kind"], "text": said["text"], "voice": said["voice"]}
            return {"scene": scene["kind"], "text": None}
    return {"scene": None, "text": None}


def false_wakes(
    models: tuple[str, ...] = ("hey_jarvis", "okay_nabu", "alexa"), seconds: float = 3_600.0
) -> dict[str, Any]:
    started = time.perf_counter()
    samples, manifest, path = hour_of_speech(seconds)
    built_s = time.perf_counter() - started
    audio_s = len(samples) / RATE
    # two halves, one thread each (TFLite runs outside the GIL), split at a scene start
    middle = min((s["start_s"] for s in manifest), key=lambda s: abs(s - audio_s / 2))
    cut = int(middle * RATE)
    halves = [(samples[:cut], 0.0), (samples[cut:], middle)]
    cpu_before, wall_before = time.process_time(), time.perf_counter()
    with ThreadPoolExecutor(2) as pool:
        detectors = list(pool.map(lambda h: _listen_long(h[0], list(models)), halves))
    cpu_s = time.process_time() - cpu_before
    wall_s = time.perf_counter() - wall_before
    per_model: dict[str, Any] = {}
    for name in models:
        hits = []
        top: list[tuple[float, float]] = []
        for detector, (_, offset) in zip(detectors, halves, strict=True):
            hits += [(h.at_s + offset, h.score) for h in detector.hits if h.name == name]
            top += [(t + offset, p) for t, p in detector.frames[name]]
        # the highest score per second of audio, then the ten highest of those
        best: dict[int, tuple[float, float]] = {}
        for t, p in top:
            if p > best.get(int(t), (0.0, 0.0))[1]:
                best[int(t)] = (t, p)
        highest = sorted(best.values(), key=lambda tp: -tp[1])[:10]
        probabilities = np.array([p for _, p in top])
        per_model[name] = {
            "false_wakes": len(hits),
            "false_wakes_per_hour": round(len(hits) / (audio_s / 3600), 2),
            "wakes": [
                {"at_s": round(t, 2), "score": s, **_what_was_said(manifest, t)} for t, s in hits
            ],
            "top_scores": [
                {"at_s": round(t, 2), "score": round(p, 3), **_what_was_said(manifest, t)}
                for t, p in highest
            ],
            "frames_over_0.1": int((probabilities >= 0.1).sum()),
            "frames_over_0.3": int((probabilities >= 0.3).sum()),
        }
    utterances = sum(len(s["said"]) for s in manifest)
    kinds: dict[str, float] = {}
    for scene in manifest:
        kinds[scene["kind"]] = kinds.get(scene["kind"], 0.0) + scene["end_s"] - scene["start_s"]
    speech_s = sum(u["end_s"] - u["start_s"] for s in manifest for u in s["said"])
    for detector in detectors:
        detector.close()
    return {
        "audio_s": round(audio_s, 1),
        "speech_s": round(speech_s, 1),
        "utterances": utterances,
        "distinct_texts": len({u["text"] for s in manifest for u in s["said"]}),
        "scene_minutes": {k: round(v / 60, 1) for k, v in sorted(kinds.items())},
        "by_model": per_model,
        "settings": "threshold 0.5, trigger_level 1, refractory 2 s, quiet and speech gates",
        "compute": {
            "models_together": list(models),
            "cpu_s": round(cpu_s, 1),
            "wall_s": round(wall_s, 1),
            "real_time_factor_cpu": round(cpu_s / audio_s, 4),
            "real_time_factor_wall_2_threads": round(wall_s / audio_s, 4),
        },
        "assembly_s": round(built_s, 1),
        "cache": str(path.relative_to(Path(__file__).resolve().parents[1])),
    }


# --- entry point ----------------------------------------------------------------------
@contextlib.contextmanager
def _stage(name: str, timings: dict[str, float]) -> Iterator[None]:
    print(f"  {name} ...", flush=True)
    started = time.perf_counter()
    yield
    timings[name] = round(time.perf_counter() - started, 1)


def run() -> dict[str, Any]:
    import onnxruntime  # type: ignore[import-untyped]

    onnxruntime.set_seed(PIPER_SEED)  # Piper's clips the same on every run
    timings: dict[str, float] = {}
    figures: dict[str, Any] = {}
    with _stage("idle_cpu", timings):
        figures["idle_cpu"] = idle_cpu()
    with _stage("wake_latency", timings):
        figures["wake_latency"] = wake_latency()
    with _stage("quiet_gate_effect", timings):
        figures["quiet_gate_effect"] = quiet_gate_effect()
    with _stage("near_misses", timings):
        figures["near_misses"] = near_misses()
    with _stage("false_wakes", timings):
        figures["false_wakes"] = false_wakes()
    figures["stage_seconds"] = timings
    figures["goals"] = GOALS
    return figures
