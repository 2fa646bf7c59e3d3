"""Soak: one node for ``SOAK_SECONDS`` (an hour by default) under mixed traffic; does
anything grow?

The node runs as its own process (``appliance run``, voice off, its embedded
PostgreSQL) against a real mosquitto. A Home Assistant-like client sends a mix of
commands at ``SOAK_RATE`` per second (3 by default): shopping add / complete / remove /
list, agenda add / list / remove, ``memory.add``, free text on ``cmd/text``, and
malformed payloads (a bad field with a request id, which must be answered; broken
JSON, whose receipt carries an id of the node's choosing). Meanwhile a satellite
(kitchen, living room, office in turn) connects every ``SOAK_SATELLITE_PERIOD`` seconds
(20 by default), says what it is (retained ``info`` and ``status``), stays half the
period and leaves.

Every ``SOAK_SAMPLE_SECONDS`` (10) the bench samples the node's RSS (``VmRSS``), its
open file descriptors (``/proc/<pid>/fd``), the connections to its database
(``pg_stat_activity``) and the receipt latency of the commands answered since the last
sample. Reported: first / last / max, least-squares slope per hour of RSS and fds
after the first 10 % (warm-up), receipts lost (commands with a request id and no
receipt: must be 0), and a verdict: ``flat`` when the RSS slope after warm-up is below
20 MB/hour and fds and database connections end within 2 of where they stood after
warm-up, else ``growing``.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import os
import signal
import statistics
import subprocess
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import psycopg

from appliance.protocol.voice import SatelliteInfo
from appliance.store.embedded import DATABASE, EmbeddedPostgres
from bench.commands import Load, percentile
from bench.load import spawn_node, wait_for_log
from tests.support.mosquitto import Mosquitto
from tests.support.node import NODE_READY
from tests.support.satellite import satellite

WARM_UP = 0.1
RSS_SLOPE_MB_PER_HOUR = 20.0
ENDS_WITHIN = 2
SITES = ("kitchen", "living_room", "office")
ITEMS = 40
Body = dict[str, Any]


# --- traffic -----------------------------------------------------------------------------
class Receipts(Load):
    """:class:`Load` that also keeps each receipt's status."""

    def __init__(self, port: int) -> None:
        self.status: dict[str, str] = {}
        super().__init__(port)

    def _on_message(self, client: Any, userdata: Any, message: mqtt.MQTTMessage) -> None:
        super()._on_message(client, userdata, message)
        rid = message.topic.rsplit("/", 1)[1]
        try:
            self.status.setdefault(rid, str(json.loads(message.payload).get("status")))
        except (ValueError, AttributeError):
            self.status.setdefault(rid, "unreadable")


def _tomorrow(k: int) -> str:
    day = dt.datetime.now(dt.UTC).replace(minute=0, second=0, microsecond=0)
    return (day + dt.timedelta(days=1, hours=k % 8)).isoformat()


def _mix() -> list[tuple[str, str, Callable[[int], Body | bytes]]]:
    """(kind, topic, payload of the k-th round): one round is one pass over the list."""
    return [
        ("shopping.add", "shopping/add", lambda k: {"item": f"soak item {k % ITEMS}"}),
        ("shopping.list", "shopping/list", lambda k: {}),
        ("agenda.add", "agenda/add", lambda k: {"title": f"soak {k}", "start": _tomorrow(k)}),
        ("shopping.complete", "shopping/complete", lambda k: {"item": f"soak item {k % ITEMS}"}),
        ("memory.add", "memory/add", lambda k: {
            "text": f"I like soak dish number {k % ITEMS} for dinner", "kind": "preference"}),
        ("agenda.list", "agenda/list", lambda k: {"range": "week"}),
        ("text", "text", lambda k: {"text": "add apples to the shopping list", "lang": "en"}),
        ("shopping.remove", "shopping/remove", lambda k: {"item": f"soak item {k % ITEMS}"}),
        ("agenda.remove", "agenda/remove", lambda k: {"title": f"soak {k}"}),
        ("malformed_field", "shopping/add", lambda k: {"item": "", "quantity": -1}),
        ("text", "text", lambda k: {"text": "remove apples from the shopping list", "lang": "en"}),
        ("malformed_json", "shopping/add", lambda k: b'{"item": "broken'),
    ]  # fmt: skip


@dataclass
class _Sent:
    kinds: Counter[str] = field(default_factory=Counter)
    expected: list[str] = field(default_factory=list)
    """Request ids that must get a receipt (broken JSON has none of its own)."""
    unmatched: int = 0
    kind_of: dict[str, str] = field(default_factory=dict)


def _traffic(load: Receipts, rate: float, stop: threading.Event, sent: _Sent) -> None:
    mix = _mix()
    start = time.perf_counter()
    i = 0
    while not stop.is_set():
        delay = start + i / rate - time.perf_counter()
        if delay > 0 and stop.wait(delay):
            break
        kind, topic, payload = mix[i % len(mix)]
        body = payload(i // len(mix))
        if isinstance(body, bytes):
            load.client.publish(f"appliance/cmd/{topic}", body, qos=1)
            sent.unmatched += 1
        else:
            rid = f"soak{uuid.uuid4().hex[:10]}"
            load.publish(f"appliance/cmd/{topic}", rid, body)
            sent.expected.append(rid)
            sent.kind_of[rid] = kind
        sent.kinds[kind] += 1
        i += 1


async def _satellites(broker: Mosquitto, period: float, stop: asyncio.Event) -> int:
    """A satellite comes (retained info and status), stays half the period, leaves."""
    visits = 0
    while not stop.is_set():
        site = SITES[visits % len(SITES)]
        info = SatelliteInfo(site=site, name=site.replace("_", " ").title(), lang="en")
        async with satellite(broker, site, info=info):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), period / 2)
        visits += 1
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), period / 2)
    return visits


# --- sampling ----------------------------------------------------------------------------
def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _fds(pid: int) -> int:
    return sum(1 for _ in Path(f"/proc/{pid}/fd").iterdir())


def _connections(admin_url: str) -> int:
    """Connections to the node's database (the bench's own goes to ``postgres``)."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (DATABASE,)
        ).fetchone()
    return int(row[0]) if row else 0


def _sample(pid: int, admin_url: str, load: Receipts, since: float, at: float) -> dict[str, Any]:
    window = [
        (load.received[rid] - load.sent[rid]) * 1000
        for rid, got in list(load.received.items())
        if since <= got < at and rid in load.sent
    ]
    return {
        "t_s": 0.0,
        "rss_mb": round(_rss_mb(pid), 1),
        "fds": _fds(pid),
        "pg_connections": _connections(admin_url),
        "receipts": len(window),
        "latency_ms_p50": round(statistics.median(window), 1) if window else None,
        "latency_ms_max": round(max(window), 1) if window else None,
    }


def _slope_per_hour(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of (seconds, value), per hour."""
    if len(points) < 2:  # a line needs two points
        return None
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    var = sum((x - mx) ** 2 for x in xs)
    if not var:
        return None
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / var * 3600


def _series(samples: list[dict[str, Any]], key: str, warm_s: float) -> dict[str, Any]:
    values = [s[key] for s in samples]
    after = [s for s in samples if s["t_s"] >= warm_s] or samples
    slope = _slope_per_hour([(s["t_s"], s[key]) for s in after])
    return {
        "first": values[0],
        "after_warm_up": after[0][key],
        "last": values[-1],
        "max": max(values),
        "min": min(values),
        "slope_per_hour_after_warm_up": round(slope, 2) if slope is not None else None,
    }


def _verdict(series: dict[str, dict[str, Any]]) -> tuple[str, list[str]]:
    why = []
    rss = series["rss_mb"]["slope_per_hour_after_warm_up"]
    if rss is None or rss >= RSS_SLOPE_MB_PER_HOUR:
        why.append(f"RSS slope {rss} MB/hour after warm-up (limit {RSS_SLOPE_MB_PER_HOUR:g})")
    for key in ("fds", "pg_connections"):
        start, end = series[key]["after_warm_up"], series[key]["last"]
        if abs(end - start) > ENDS_WITHIN:
            why.append(f"{key} {start} after warm-up -> {end} at the end (more than ±2)")
    return ("growing" if why else "flat"), why


# --- the run -----------------------------------------------------------------------------
async def _run(seconds: float, rate: float, every: float, period: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="appliance-soak-") as tmp:
        broker = Mosquitto(Path(tmp) / "mosquitto")
        broker.start()
        log = Path(tmp) / "node.log"
        started = time.perf_counter()
        node = spawn_node(Path(tmp) / "node", broker, log, NODE_ID="soak", VOICE__ENABLED="false")
        load: Receipts | None = None
        try:
            ready_s = await wait_for_log(node, log, NODE_READY, 120) - started
            admin_url = EmbeddedPostgres(Path(tmp) / "node").admin_url()
            load = Receipts(broker.port)
            sent, stop_traffic, stop_sats = _Sent(), threading.Event(), asyncio.Event()
            traffic = asyncio.ensure_future(
                asyncio.to_thread(_traffic, load, rate, stop_traffic, sent)
            )
            sats = asyncio.create_task(_satellites(broker, period, stop_sats), name="satellites")
            samples: list[dict[str, Any]] = []
            t0 = last = time.perf_counter()
            try:
                while True:
                    now = time.perf_counter()
                    sample = await asyncio.to_thread(_sample, node.pid, admin_url, load, last, now)
                    sample["t_s"] = round(now - t0, 1)
                    samples.append(sample)
                    last = now
                    if node.poll() is not None:
                        msg = f"node exited ({node.returncode}) after {now - t0:.0f} s"
                        raise RuntimeError(msg)
                    print(
                        f"  {sample['t_s']:>6.0f} s  rss {sample['rss_mb']} MB  "
                        f"fds {sample['fds']}  pg {sample['pg_connections']}  "
                        f"p50 {sample['latency_ms_p50']} ms",
                        flush=True,
                    )
                    if now - t0 >= seconds:
                        break
                    await asyncio.sleep(min(every, max(0.0, t0 + seconds - time.perf_counter())))
            finally:
                stop_traffic.set()
                stop_sats.set()
                await traffic
                visits = await sats
            for _ in range(150):  # up to 30 s for the last receipts
                if all(rid in load.received for rid in sent.expected):
                    break
                await asyncio.sleep(0.2)
            lost = [rid for rid in sent.expected if rid not in load.received]
            statuses: dict[str, Counter[str]] = {}
            for rid in sent.expected:
                statuses.setdefault(sent.kind_of[rid], Counter())[load.status.get(rid, "none")] += 1
            others = [rid for rid in load.received if rid not in load.sent]
            latencies = [
                (load.received[rid] - load.sent[rid]) * 1000
                for rid in sent.expected
                if rid in load.received
            ]
        finally:
            if load is not None:
                load.close()
            node.send_signal(signal.SIGTERM)
            try:
                node.wait(30)
            except subprocess.TimeoutExpired:
                node.kill()
                node.wait(10)
            broker.stop()
    warm_s = seconds * WARM_UP
    series = {key: _series(samples, key, warm_s) for key in ("rss_mb", "fds", "pg_connections")}
    verdict, why = _verdict(series)
    return {
        "seconds": seconds,
        "commands_per_s": rate,
        "sample_every_s": every,
        "satellite_period_s": period,
        "node_ready_s": round(ready_s, 1),
        "warm_up_s": round(warm_s, 1),
        "commands_sent": dict(sent.kinds),
        "receipts_expected": len(sent.expected),
        "receipts_lost": len(lost),
        "lost_request_ids": lost[:20],
        "receipt_statuses_by_kind": {kind: dict(counts) for kind, counts in statuses.items()},
        "receipts_for_broken_json": len(others),
        "broken_json_sent": sent.unmatched,
        "receipt_latency_ms": {
            "p50": round(statistics.median(latencies), 1) if latencies else None,
            "p95": round(percentile(latencies, 0.95), 1) if latencies else None,
            "max": round(max(latencies), 1) if latencies else None,
        },
        "satellite_visits": visits,
        "series": series,
        "verdict": verdict,
        "verdict_why": why
        or [
            f"RSS slope < {RSS_SLOPE_MB_PER_HOUR:g} MB/hour after warm-up; fds and database "
            f"connections within ±{ENDS_WITHIN} of where they stood after warm-up"
        ],
        "samples": samples,
        "notes": "voice off; the node's own embedded PostgreSQL; RSS slope over a short run "
        "is an extrapolation (a few MB over minutes is tens of MB per hour)",
    }


def run() -> dict[str, Any]:
    seconds = float(os.environ.get("SOAK_SECONDS", "3600"))
    rate = float(os.environ.get("SOAK_RATE", "3"))
    every = float(os.environ.get("SOAK_SAMPLE_SECONDS", "10"))
    period = float(os.environ.get("SOAK_SATELLITE_PERIOD", "20"))
    return asyncio.run(_run(seconds, rate, every, period))
