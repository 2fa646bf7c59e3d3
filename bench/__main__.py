"""``python -m bench [NAME ...]``: run benchmarks, write bench/results/<name>.json.

Without names every benchmark runs but the hour-long soak (``make soak``)."""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import (
    answers,
    commands,
    load,
    memory,
    satellite,
    soak,
    startup,
    voice,
    voice_confirm,
    voice_pauses,
    voice_phrasings,
    voice_pt,
    whisper,
)

RESULTS = Path(__file__).resolve().parent / "results"
BENCHMARKS: dict[str, Callable[[], dict[str, Any]]] = {
    "answers": answers.run,
    "commands": commands.run,
    "load": load.run,
    "memory": memory.run,
    "satellite": satellite.run,
    "soak": soak.run,
    "startup": startup.run,
    "voice": voice.run,
    "voice_confirm": voice_confirm.run,
    "voice_pt": voice_pt.run,
    "voice_pauses": voice_pauses.run,
    "voice_phrasings": voice_phrasings.run,
    "whisper": whisper.run,
}

ON_REQUEST = frozenset({"soak"})
"""Run only when named (an hour by default)."""


def main(names: list[str]) -> int:
    RESULTS.mkdir(exist_ok=True)
    for name in names or [n for n in BENCHMARKS if n not in ON_REQUEST]:
        print(f"bench {name} ...", flush=True)
        figures = BENCHMARKS[name]()
        record = {
            "benchmark": name,
            "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "machine": {
                "cpus": os.cpu_count(),
                "python": platform.python_version(),
                "platform": platform.platform(),
            },
            "figures": figures,
        }
        (RESULTS / f"{name}.json").write_text(json.dumps(record, indent=2) + "\n")
        print(json.dumps(figures, indent=2), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
