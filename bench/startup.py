"""Start-up to ready with embedded defaults (own PostgreSQL and MQTT broker).

Measured from process spawn to the node's "ready" log line: fresh data directory once,
then on existing data. Baseline in the same run: spawning the interpreter to import
the node module and exit, which every start pays.
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from tests.support.mosquitto import free_port
from tests.support.node import NODE_READY


def _start(data_dir: Path, port: int) -> tuple[float, float]:
    env = {**os.environ, "APPLIANCE_MQTT__EMBEDDED_PORT": str(port)}
    for key in ("APPLIANCE_DB__URL", "APPLIANCE_MQTT__URL"):
        env.pop(key, None)
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "appliance", "--data-dir", str(data_dir), "run"],
        env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.stderr is not None
    ready = None
    for raw in proc.stderr:
        if NODE_READY.search(raw):
            ready = time.perf_counter() - start
            break
    threading.Thread(target=proc.stderr.read, daemon=True).start()
    proc.send_signal(signal.SIGTERM)
    stop_start = time.perf_counter()
    proc.wait(60)
    if ready is None:
        raise RuntimeError("node did not become ready")
    return ready, time.perf_counter() - stop_start


def run(repeats: int = 3) -> dict[str, Any]:
    baseline = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import appliance.node"], check=True)
        baseline.append(time.perf_counter() - start)
    with tempfile.TemporaryDirectory(prefix="appliance-start-") as tmp:
        data = Path(tmp) / "data"
        fresh, _ = _start(data, free_port())
        warm = [_start(data, free_port()) for _ in range(repeats)]
    ready = statistics.median(r for r, _ in warm)
    return {
        "fresh_data_dir_ready_s": round(fresh, 2),
        "existing_data_ready_s_median": round(ready, 2),
        "existing_data_ready_s_runs": [round(r, 2) for r, _ in warm],
        "stop_s_median": round(statistics.median(s for _, s in warm), 2),
        "baseline_import_s_median": round(statistics.median(baseline), 2),
        "ratio_to_baseline": round(ready / statistics.median(baseline), 2),
        "goals": {"existing_data_ready_s": 5.0},
    }
