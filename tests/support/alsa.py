"""Real PyAudio capture and playback on a machine with no sound card.

ALSA's built-in ``file`` plugin, declared in an ``.asoundrc`` under a HOME the test
owns, gives PortAudio two devices: ``satmic`` reads raw PCM from a FIFO that the
test feeds at the pace of speech (16 kHz, 16-bit, mono), and ``satspk`` writes
whatever is played, raw, to a file (in the format the player opened it with). The
program under test must run with ``env()`` (a child process), because ALSA reads
its configuration once per process.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import BinaryIO

SAMPLE_RATE = 16_000
CHUNK_BYTES = 2_048  # 64 ms

MIC = "satmic"
SPEAKER = "satspk"


class AlsaFileDevices:
    def __init__(self, home: Path) -> None:
        self.home = home
        home.mkdir(parents=True, exist_ok=True)
        self.mic_fifo = home / "mic.fifo"
        self.speaker_file = home / "speaker.raw"
        self.unused = home / "mic-playback.raw"
        if not self.mic_fifo.exists():
            os.mkfifo(self.mic_fifo)
        self.speaker_file.write_bytes(b"")
        (home / ".asoundrc").write_text(
            f"""pcm.{MIC} {{
  type file
  slave.pcm null
  file "{self.unused}"
  infile "{self.mic_fifo}"
  format "raw"
  hint {{ show on description "test microphone (raw PCM from a FIFO)" }}
}}
pcm.{SPEAKER} {{
  type file
  slave.pcm null
  file "{self.speaker_file}"
  format "raw"
  hint {{ show on description "test speaker (raw PCM into a file)" }}
}}
"""
        )
        self._stop = threading.Event()
        self._feeder: threading.Thread | None = None

    def env(self) -> dict[str, str]:
        """The environment of a process that should see these devices."""
        return {**os.environ, "HOME": str(self.home)}

    def feed(self, pcm: bytes, *, then_silence_s: float = 60.0) -> None:
        """Play ``pcm`` into the microphone at real-time pace, then silence, in a
        thread; the FIFO opens when the program opens the microphone."""

        def run() -> None:
            # PortAudio opens every device once to probe it when it starts: that
            # reader goes away at once. Each time the reader goes, start over.
            while not self._stop.is_set():
                try:
                    with self.mic_fifo.open("wb") as fifo:
                        self._write_paced(fifo, pcm, then_silence_s)
                    return
                except BrokenPipeError:
                    continue

        self._feeder = threading.Thread(target=run, name="alsa-mic-feed", daemon=True)
        self._feeder.start()

    def _write_paced(self, fifo: BinaryIO, pcm: bytes, then_silence_s: float) -> None:
        start = time.monotonic()
        silence = bytes(CHUNK_BYTES)
        total = len(pcm) + int(then_silence_s * SAMPLE_RATE) * 2
        for offset in range(0, total, CHUNK_BYTES):
            if self._stop.is_set():
                return
            chunk = pcm[offset : offset + CHUNK_BYTES] or silence
            fifo.write(chunk.ljust(CHUNK_BYTES, b"\0"))
            fifo.flush()
            due = start + (offset + CHUNK_BYTES) / (SAMPLE_RATE * 2)
            time.sleep(max(0.0, due - time.monotonic()))

    def played(self) -> bytes:
        """Everything the program played so far, raw."""
        return self.speaker_file.read_bytes()

    def close(self) -> None:
        self._stop.set()
        if self._feeder is not None:
            # A feeder still waiting for a reader: open the FIFO once to release it.
            if self._feeder.is_alive():
                try:
                    fd = os.open(self.mic_fifo, os.O_RDONLY | os.O_NONBLOCK)
                    os.close(fd)
                except OSError:
                    pass
            self._feeder.join(timeout=5)
