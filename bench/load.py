"""One node under load: N virtual satellites talking at once while Home Assistant sends commands.

The node runs as its own process (``appliance run``: embedded PostgreSQL, every model,
voice on) against a real mosquitto. For N = 1, 2 and 4 satellites (sites ``room1`` ..
``room4``, each logged in with its site name as the shipped ACL wants) every satellite
does back-to-back turns for ``BENCH_LOAD_SECONDS`` (60 s by default): claim, stream a
Piper rendition of a kitchen command as fast as it is spoken, answer ``played`` at
once, wait for ``end``, next. Meanwhile a Home Assistant-like client sends
``shopping.add`` / ``shopping.list`` at ``BENCH_LOAD_RATE`` per second (5 by default)
and times each receipt. Baseline, in the same run, first: one satellite, no commands.

Per phase: turns completed and per minute, the node's own milestones (diagnostics
topic) end of speech -> receipt published and -> first speech audio sent (p50/p95),
command latency (p50/p95) and throughput, CPU of the node, of its PostgreSQL (the
node's child processes), of mosquitto and of the whole machine, the node's RSS.
Claims from different sites that land within ``voice.arbitration_ms`` of each other
compete (the node takes them for one spoken command), so the loser is told to stand
down and tries again after a short random pause: those are counted too.

The satellites answer ``played`` as soon as the speech has arrived (no real playback
time), so turns per minute is an upper bound for people talking.

Two nodes (``two_nodes``): the same for 2 and 4 satellites with two node processes
(voice on, models loaded in each) in one MQTT shared group, on one PostgreSQL the
bench starts and the same kind of broker; per node also its CPU, RSS, the commands the
broker handed it and the voice turns it ran, and ratios against the one-node phases
with as many satellites. ``BENCH_LOAD_PHASES`` picks ``one_node``, ``two_nodes`` or
both (the default); what a run does not measure is kept from bench/results/load.json.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiomqtt
import psycopg

from appliance.protocol.topics import OFFLINE
from appliance.protocol.voice import Control, SiteTopics
from appliance.store.embedded import EmbeddedPostgres
from bench.commands import NODE_COMMAND, Load, percentile, start_node
from tests.support import speech
from tests.support.mosquitto import USERS, Mosquitto
from tests.support.node import NODE_READY
from tests.support.satellite import Satellite

CACHE = Path(__file__).resolve().parent / ".cache" / "load"
RESULT = Path(__file__).resolve().parent / "results" / "load.json"
COMMANDS = [
    "add two liters of milk to the shopping list",
    "add a dozen eggs to the shopping list",
    "what's on my shopping list",
    "remove the eggs from the shopping list",
    "add bread to the shopping list",
    "take the bread off the shopping list",
]
YES = "yes"
SATELLITES = (1, 2, 4)
SITES = [f"room{i}" for i in range(1, max(SATELLITES) + 1)]
PASSWORD = "load-bench-{site}"  # noqa: S105 - a throwaway broker's test password
SATURATION_GROWTH = 1.2
SATURATION_P95_MS = 2000.0


# --- audio ---------------------------------------------------------------------------
def _rendition(text: str) -> bytes:
    """Piper's rendition of ``text`` with the node's pre- and post-roll, cached on disk."""
    key = hashlib.sha256(f"piper-1.0|300|1500|{text}".encode()).hexdigest()[:16]
    path = CACHE / f"{key}.pcm"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(speech.pad(speech.piper(text, **speech.CLEAR), 300, 1500))
        tmp.replace(path)
    return path.read_bytes()


# --- /proc ---------------------------------------------------------------------------
CLK_TCK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> list[str]:
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2 :].split()


def _ticks(pid: int) -> int:
    fields = _stat(pid)
    return int(fields[11]) + int(fields[12])  # utime + stime


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                children.setdefault(int(_stat(int(entry.name))[1]), []).append(int(entry.name))
    out, todo = [], list(children.get(pid, []))
    while todo:
        child = todo.pop()
        out.append(child)
        todo.extend(children.get(child, []))
    return out


def _rss_mb(pid: int, key: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _machine() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + values[4]
    return sum(values) - idle, sum(values)


@dataclass
class _Cpu:
    """CPU seconds of the node(s), the PostgreSQL (the postmaster ``pg_ctl`` started, and
    its backends) and the broker, over a phase."""

    nodes: dict[int, int]
    broker: int
    bench: int
    db: dict[int, int]
    machine: tuple[int, int]
    at: float = field(default_factory=time.perf_counter)

    @classmethod
    def sample(cls, nodes: list[int], broker: int, pgdata: Path) -> _Cpu:
        db: dict[int, int] = {}
        pids = [child for node in nodes for child in _descendants(node)]
        with contextlib.suppress(OSError, IndexError, ValueError):
            postmaster = int((pgdata / "postmaster.pid").read_text().split()[0])
            pids += [postmaster, *_descendants(postmaster)]
        for pid in pids:
            with contextlib.suppress(OSError):
                db[pid] = _ticks(pid)
        return cls(
            {node: _ticks(node) for node in nodes},
            _ticks(broker),
            _ticks(os.getpid()),
            db,
            _machine(),
        )

    def percent_since(self, before: _Cpu, names: list[str]) -> dict[str, Any]:
        wall = self.at - before.at
        db = sum(t - before.db.get(pid, 0) for pid, t in self.db.items())
        busy = self.machine[0] - before.machine[0]
        total = self.machine[1] - before.machine[1] or 1

        def pct(ticks: int) -> float:
            return round(ticks / CLK_TCK / wall * 100, 1)

        each = {pid: self.nodes[pid] - before.nodes[pid] for pid in self.nodes}
        out: dict[str, Any] = {"node": pct(sum(each.values()))}
        if len(each) > 1:
            out["node_each"] = {name: pct(t) for name, t in zip(names, each.values(), strict=True)}
        return {
            **out,
            "node_postgres": pct(db),
            "mosquitto": pct(self.broker - before.broker),
            "bench_process": pct(self.bench - before.bench),
            "machine_busy_of_all_cores": round(busy / total * 100, 1),
        }


# --- satellites ----------------------------------------------------------------------
@contextlib.asynccontextmanager
async def _satellite(port: int, site: str) -> AsyncIterator[Satellite]:
    """A connected virtual satellite at ``site`` (``tests.support.satellite``'s, with
    the bench's own users)."""
    will = aiomqtt.Will(SiteTopics("appliance", site).status, OFFLINE, qos=1, retain=True)
    async with aiomqtt.Client(
        "127.0.0.1", port, username=site, password=PASSWORD.format(site=site), will=will
    ) as client:
        sat = Satellite(client, site)
        await client.subscribe(f"{sat.topics.base}/control", qos=1)
        await client.subscribe(f"{sat.topics.base}/play/#", qos=1)
        task = asyncio.create_task(sat.listen(), name=f"listen-{site}")
        try:
            yield sat
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


async def _control(sat: Satellite, sid: str, kinds: tuple[str, ...], within_s: float) -> Control:
    """The first control of session ``sid`` of one of ``kinds`` (it is taken off the list)."""
    async with asyncio.timeout(within_s):
        while True:
            for control in sat.controls:
                if control.session_id == sid and control.type in kinds:
                    sat.controls.remove(control)
                    return control
            sat.arrived.clear()
            await sat.arrived.wait()


@dataclass
class _Turn:
    site: str
    session_id: str
    started: float
    ended: float


@dataclass
class _Tally:
    turns: list[_Turn] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)


async def _one_turn(sat: Satellite, pcm: bytes, yes: bytes, tally: _Tally) -> bool:
    """Claim (again after a stand-down), stream, answer a question with "yes", wait for
    ``end``. False when the node did not take the claim."""
    sat.controls.clear()
    sat.speech.clear()
    sat.speech_by_session.clear()
    started = time.perf_counter()
    sid = await sat.claim()
    first = await _control(sat, sid, ("accept", "reject", "stand_down"), 10)
    if first.type != "accept":
        tally.counts[f"{first.type}_{first.reason or ''}".rstrip("_").split(" ")[0]] += 1
        return False
    await sat.stream(sid, pcm)
    while True:
        last = await _control(sat, sid, ("end", "stop", "listen"), 60)
        if last.type == "listen":
            tally.counts["questions"] += 1
            await sat.stream(sid, yes)
            continue
        break
    if last.type == "stop":
        tally.counts[f"stopped_{last.reason}"] += 1
        return True
    tally.turns.append(_Turn(sat.site, sid, started, time.perf_counter()))
    return True


async def _talk(
    sat: Satellite,
    *,
    offset: int,
    deadline: float,
    audio: list[bytes],
    yes: bytes,
    tally: _Tally,
) -> None:
    """Back-to-back turns until ``deadline``."""
    n = offset
    while time.perf_counter() < deadline:
        try:
            taken = await _one_turn(sat, audio[n % len(audio)], yes, tally)
        except TimeoutError:
            tally.counts["timeouts"] += 1
            taken = False
        if taken:
            n += 1
        else:
            await asyncio.sleep(random.uniform(0.3, 0.8))


# --- Home Assistant's commands ----------------------------------------------------------
def _commands(load: Load, rate: float, stop: threading.Event) -> list[str]:
    """``shopping.add`` and ``shopping.list`` alternately at ``rate`` per second."""
    sent: list[str] = []
    start = time.perf_counter()
    i = 0
    while not stop.is_set():
        delay = start + i / rate - time.perf_counter()
        if delay > 0 and stop.wait(delay):
            break
        rid = f"load{uuid.uuid4().hex[:10]}"
        if i % 2:
            load.publish("appliance/cmd/shopping/list", rid, {})
        else:
            load.publish(
                "appliance/cmd/shopping/add", rid, {"item": f"ha item {i % 20}", "quantity": 1}
            )
        sent.append(rid)
        i += 1
    return sent


# --- one phase ---------------------------------------------------------------------------
@dataclass
class _Rig:
    nodes: list[subprocess.Popen[bytes]]
    broker: Mosquitto
    sats: list[Satellite]
    load: Load
    diagnostics: dict[str, dict[str, Any]]
    audio: list[bytes]
    yes: bytes
    pgdata: Path
    names: list[str] = field(default_factory=lambda: ["bench"])
    db_url: str | None = None
    """The shared database (several nodes): which node ran each voice session."""


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def _p95(values: list[float]) -> float | None:
    return round(percentile(values, 0.95), 1) if values else None


def _between(reports: list[dict[str, Any]], start: str, end: str) -> list[float]:
    out = []
    for report in reports:
        marks = report["milestones_ms"]
        if start in marks and end in marks:
            out.append(marks[end] - marks[start])
    return out


async def _phase(rig: _Rig, n: int, seconds: float, rate: float) -> dict[str, Any]:
    assert rig.broker.proc is not None
    pids, broker_pid = [node.pid for node in rig.nodes], rig.broker.proc.pid
    tally = _Tally()
    stop = threading.Event()
    rss_peak = dict.fromkeys(pids, 0.0)
    log_from = _broker_log_size(rig.broker)
    before = _Cpu.sample(pids, broker_pid, rig.pgdata)
    start = time.perf_counter()
    deadline = start + seconds
    commands = (
        asyncio.ensure_future(asyncio.to_thread(_commands, rig.load, rate, stop)) if rate else None
    )
    talkers = []
    for i, sat in enumerate(rig.sats[:n]):
        talkers.append(
            asyncio.create_task(
                _talk(
                    sat,
                    offset=i * 2,
                    deadline=deadline,
                    audio=rig.audio,
                    yes=rig.yes,
                    tally=tally,
                ),
                name=f"talk-{sat.site}",
            )
        )
        await asyncio.sleep(min(1.0, seconds / 20))  # do not all wake at the same instant
    while not all(t.done() for t in talkers):
        for pid in pids:
            rss_peak[pid] = max(rss_peak[pid], _rss_mb(pid))
        if time.perf_counter() >= deadline:
            stop.set()
        await asyncio.sleep(0.5)
    stop.set()
    await asyncio.gather(*talkers)
    after = _Cpu.sample(pids, broker_pid, rig.pgdata)
    elapsed = time.perf_counter() - start
    sent = await commands if commands is not None else []
    # the turns' reports and the commands' receipts still on their way
    for _ in range(150):  # up to 30 s; the receipts land in paho's thread
        if all(t.session_id in rig.diagnostics for t in tally.turns) and all(
            r in rig.load.received for r in sent
        ):
            break
        await asyncio.sleep(0.2)
    reports = [
        rig.diagnostics[t.session_id] for t in tally.turns if t.session_id in rig.diagnostics
    ]
    tally.counts["turns_without_report"] += len(tally.turns) - len(reports)
    answered = [r for r in sent if r in rig.load.received]
    eos_receipt = _between(reports, "end_of_speech", "receipt_published")
    eos_speech = _between(reports, "end_of_speech", "first_speech_audio_sent")
    latencies = [(rig.load.received[r] - rig.load.sent[r]) * 1000 for r in answered]
    figures: dict[str, Any] = {
        "satellites": n,
        "ha_commands_per_s": rate,
        "seconds": round(elapsed, 1),
        "turns_completed": len(tally.turns),
        "turns_per_minute": round(len(tally.turns) / elapsed * 60, 1),
        "turns_per_minute_per_satellite": round(len(tally.turns) / elapsed * 60 / n, 1),
        "decisions": dict(Counter(r["decision"] for r in reports)),
        "claims_not_taken": dict(tally.counts),
        "end_of_speech_to_receipt_published_ms": {
            "p50": _median(eos_receipt),
            "p95": _p95(eos_receipt),
            "n": len(eos_receipt),
        },
        "end_of_speech_to_first_speech_audio_sent_ms": {
            "p50": _median(eos_speech),
            "p95": _p95(eos_speech),
            "n": len(eos_speech),
        },
        "turn_wall_s_median": _median([t.ended - t.started for t in tally.turns]),
        "cpu_percent_of_one_core": after.percent_since(before, rig.names),
    }
    rss = {
        name: {"peak_sampled": round(rss_peak[pid]), "end": round(_rss_mb(pid))}
        for name, pid in zip(rig.names, pids, strict=True)
    }
    figures["node_rss_mb"] = rss[rig.names[0]] if len(pids) == 1 else rss
    if len(pids) > 1:
        figures["per_node"] = await asyncio.to_thread(
            _per_node, rig, log_from, [t.session_id for t in tally.turns]
        )
    if rate:
        figures["commands"] = {
            "sent": len(sent),
            "unanswered": len(sent) - len(answered),
            "latency_ms": {"p50": _median(latencies), "p95": _p95(latencies)},
            # first command sent to last receipt (the stream stops at the deadline)
            "receipts_per_s": round(
                len(answered)
                / (
                    max(rig.load.received[r] for r in answered)
                    - min(rig.load.sent[r] for r in answered)
                ),
                2,
            )
            if len(answered) > 1
            else None,
        }
    return figures


def _broker_log_size(broker: Mosquitto) -> int:
    with contextlib.suppress(OSError):
        return (broker.workdir / "mosquitto.log").stat().st_size
    return 0


def _per_node(rig: _Rig, log_from: int, sessions: list[str]) -> dict[str, Any]:
    """Commands each node took (the broker's log of what it sent to which client) and
    voice turns each ran (the shared database's ``voice_sessions``)."""
    with (rig.broker.workdir / "mosquitto.log").open("rb") as log:
        log.seek(log_from)
        text = log.read().decode(errors="replace")
    commands = Counter(
        match.group(1) for match in re.finditer(r"Sending PUBLISH to appliance-(\S+) \([^)]*, '"
                                                r"appliance/cmd/", text)
    )  # fmt: skip
    turns: Counter[str] = Counter()
    if rig.db_url is not None and sessions:
        with psycopg.connect(rig.db_url) as conn:
            rows = conn.execute(
                "SELECT node_id, count(*) FROM voice_sessions WHERE session_id = ANY(%s)"
                " GROUP BY node_id",
                (sessions,),
            ).fetchall()
        turns.update({str(node): int(n) for node, n in rows})
    return {
        name: {"commands_handled": commands.get(name, 0), "voice_turns_run": turns.get(name, 0)}
        for name in rig.names
    }


# --- the run -----------------------------------------------------------------------------
def _add_users(broker: Mosquitto) -> None:
    """The bench's satellites as broker users (before the broker starts)."""
    tool = shutil.which("mosquitto_passwd") or "/usr/bin/mosquitto_passwd"
    for site in SITES:
        subprocess.run(
            [tool, "-b", str(broker.workdir / "passwd"), site, PASSWORD.format(site=site)],
            check=True,
            capture_output=True,
        )


async def _collect(port: int, diagnostics: dict[str, dict[str, Any]]) -> None:
    from tests.support.mosquitto import USERS

    async with aiomqtt.Client(
        "127.0.0.1", port, username="homeassistant", password=USERS["homeassistant"]
    ) as client:
        await client.subscribe("appliance/diagnostics/voice/+", qos=1)
        async for message in client.messages:
            report = json.loads(bytes(message.payload))  # type: ignore[arg-type]
            diagnostics[report["session_id"]] = report


async def _cancel(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def _wait_for_models(sat: Satellite, audio: bytes, yes: bytes) -> float:
    """Until the node takes a claim (it refuses with ``loading`` meanwhile): one turn."""
    started = time.perf_counter()
    tally = _Tally()
    async with asyncio.timeout(300):
        while True:
            if await _one_turn(sat, audio, yes, tally):
                break
            await asyncio.sleep(0.5)
    return time.perf_counter() - started


async def _warm(sats: list[Satellite], audio: list[bytes], yes: bytes) -> None:
    """A turn at every site, overlapping (a verifier per session)."""
    warm = _Tally()
    warming = []
    for i, sat in enumerate(sats):
        warming.append(
            asyncio.create_task(
                _talk(
                    sat,
                    offset=i,
                    deadline=time.perf_counter() + 0.1,
                    audio=audio,
                    yes=yes,
                    tally=warm,
                ),
                name=f"warm-{sat.site}",
            )
        )
        await asyncio.sleep(1.0)
    await asyncio.gather(*warming)


def _broker(tmp: Path, *, log_publishes: bool = False) -> Mosquitto:
    """The bench's broker; ``log_publishes`` logs every PUBLISH it sends to whom (to
    count the commands each node of a shared group took)."""
    broker = Mosquitto(tmp / "mosquitto")
    _add_users(broker)
    if log_publishes:
        conf = broker.workdir / "mosquitto.conf"
        types = "".join(f"log_type {t}\n" for t in ("error", "warning", "notice", "debug"))
        conf.write_text(conf.read_text() + types)
    broker.start()
    return broker


async def _one_node(seconds: float, rate: float, audio: list[bytes], yes: bytes) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="appliance-load-") as tmp:
        broker = _broker(Path(tmp))
        node, ready_s = start_node(Path(tmp) / "node", broker)
        diagnostics: dict[str, dict[str, Any]] = {}
        load: Load | None = None
        try:
            async with contextlib.AsyncExitStack() as stack:
                collector = asyncio.create_task(
                    _collect(broker.port, diagnostics), name="diagnostics"
                )
                stack.push_async_callback(_cancel, collector)
                sats = [await stack.enter_async_context(_satellite(broker.port, s)) for s in SITES]
                models_s = await _wait_for_models(sats[0], audio[0], yes)
                rss_loaded = _rss_mb(node.pid)
                await _warm(sats, audio, yes)
                load = Load(broker.port)
                rig = _Rig(
                    [node],
                    broker,
                    sats,
                    load,
                    diagnostics,
                    audio,
                    yes,
                    Path(tmp) / "node" / "postgres",
                )
                phases = {"baseline_1_satellite_no_commands": await _phase(rig, 1, seconds, 0)}
                for n in SATELLITES:
                    print(f"  {n} satellite(s) + commands ...", flush=True)
                    phases[f"{n}_satellites"] = await _phase(rig, n, seconds, rate)
                rss = {
                    "loaded": round(rss_loaded),
                    "end": round(_rss_mb(node.pid)),
                    "peak": round(_rss_mb(node.pid, "VmHWM")),
                }
        finally:
            if load is not None:
                load.close()
            node.send_signal(signal.SIGTERM)
            node.wait(30)
            broker.stop()
    return _summary(
        phases=phases, seconds=seconds, rate=rate, ready_s=ready_s, models_s=models_s, rss=rss
    )


# --- two nodes -------------------------------------------------------------------------
NODE_NAMES = ("bench-a", "bench-b")
TWO_NODE_SATELLITES = (2, 4)
GROUP = "appliance"
VOICE_READY = re.compile(rb"appliance\.node: voice ready")


def spawn_node(data_dir: Path, broker: Mosquitto, log: Path, **env: str) -> subprocess.Popen[bytes]:
    """``appliance run`` with its log in ``log``; ``env`` adds ``APPLIANCE_*`` settings
    (``NODE_ID="a"`` sets ``APPLIANCE_NODE_ID``)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("APPLIANCE_")}
    environ.update(
        APPLIANCE_DATA_DIR=str(data_dir),
        APPLIANCE_MQTT__URL=broker.url,
        APPLIANCE_MQTT__USERNAME="appliance",
        APPLIANCE_MQTT__PASSWORD=USERS["appliance"],
        APPLIANCE_LOG_LEVEL="INFO",
        **{f"APPLIANCE_{key}": value for key, value in env.items()},
    )
    with log.open("wb") as out:
        return subprocess.Popen(
            [*NODE_COMMAND, "run"], env=environ, stdout=out, stderr=subprocess.STDOUT
        )


async def wait_for_log(
    proc: subprocess.Popen[bytes], log: Path, pattern: re.Pattern[bytes], within_s: float
) -> float:
    """``time.perf_counter()`` when ``pattern`` shows in the node's log (it must not exit
    meanwhile)."""
    async with asyncio.timeout(within_s):
        while not pattern.search(await asyncio.to_thread(log.read_bytes)):
            if proc.poll() is not None:
                tail = (await asyncio.to_thread(log.read_text, errors="replace"))[-3000:]
                msg = f"node exited ({proc.returncode}): {tail}"
                raise RuntimeError(msg)
            await asyncio.sleep(0.2)
    return time.perf_counter()


async def _two_nodes(seconds: float, rate: float, audio: list[bytes], yes: bytes) -> dict[str, Any]:
    """Two voice nodes in one shared group, on one PostgreSQL and one broker."""
    with tempfile.TemporaryDirectory(prefix="appliance-load2-") as tmp:
        broker = _broker(Path(tmp), log_publishes=True)
        server = EmbeddedPostgres(Path(tmp) / "pg")
        nodes: list[subprocess.Popen[bytes]] = []
        load: Load | None = None
        try:
            db_url = await asyncio.to_thread(server.start)
            started = time.perf_counter()
            logs = [Path(tmp) / f"{name}.log" for name in NODE_NAMES]
            for name, log in zip(NODE_NAMES, logs, strict=True):
                nodes.append(
                    spawn_node(
                        Path(tmp) / name,
                        broker,
                        log,
                        NODE_ID=name,
                        DB__URL=db_url,
                        MQTT__SHARED_GROUP=GROUP,
                        HOMEASSISTANT__DEVICE_ID="bench",
                    )
                )
            ready = [
                await wait_for_log(node, log, NODE_READY, 120) - started
                for node, log in zip(nodes, logs, strict=True)
            ]
            for node, log in zip(nodes, logs, strict=True):
                await wait_for_log(node, log, VOICE_READY, 300)
            models_s = time.perf_counter() - started
            rss_loaded = {n: round(_rss_mb(p.pid)) for n, p in zip(NODE_NAMES, nodes, strict=True)}
            diagnostics: dict[str, dict[str, Any]] = {}
            async with contextlib.AsyncExitStack() as stack:
                collector = asyncio.create_task(
                    _collect(broker.port, diagnostics), name="diagnostics"
                )
                stack.push_async_callback(_cancel, collector)
                sats = [await stack.enter_async_context(_satellite(broker.port, s)) for s in SITES]
                await _wait_for_models(sats[0], audio[0], yes)
                await _warm(sats, audio, yes)
                await _warm(sats, audio, yes)  # both nodes: each warm-up turn lands on one
                load = Load(broker.port)
                rig = _Rig(
                    nodes,
                    broker,
                    sats,
                    load,
                    diagnostics,
                    audio,
                    yes,
                    server.pgdata,
                    names=list(NODE_NAMES),
                    db_url=db_url,
                )
                phases = {}
                for n in TWO_NODE_SATELLITES:
                    print(f"  2 nodes, {n} satellites + commands ...", flush=True)
                    phases[f"2_nodes_{n}_satellites"] = await _phase(rig, n, seconds, rate)
            rss = {
                name: {
                    "loaded": rss_loaded[name],
                    "end": round(_rss_mb(proc.pid)),
                    "peak": round(_rss_mb(proc.pid, "VmHWM")),
                }
                for name, proc in zip(NODE_NAMES, nodes, strict=True)
            }
        finally:
            if load is not None:
                load.close()
            for node in nodes:
                node.send_signal(signal.SIGTERM)
            for node in nodes:
                try:
                    node.wait(30)
                except subprocess.TimeoutExpired:
                    node.kill()
                    node.wait(10)
            await asyncio.to_thread(server.stop, "fast")
            broker.stop()
    return {
        "node_ready_s": round(max(ready), 1),
        "models_ready_s": round(models_s, 1),
        "node_rss_mb": rss,
        "phases": phases,
    }


def _two_node_ratios(one: dict[str, Any], two: dict[str, Any]) -> dict[str, Any]:
    """Each two-node phase against the one-node phase with as many satellites."""

    def ratio(value: float | None, against: float | None) -> float | None:
        return round(value / against, 2) if value is not None and against else None

    def commands(phase: dict[str, Any], *keys: str) -> float | None:
        value: Any = phase.get("commands", {})
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        return float(value) if isinstance(value, int | float) else None

    out = {}
    for n in TWO_NODE_SATELLITES:
        base = one["phases"].get(f"{n}_satellites")
        phase = two["phases"][f"2_nodes_{n}_satellites"]
        if base is None:
            continue
        out[f"2_nodes_{n}_satellites_vs_1_node"] = {
            "turns_per_minute": ratio(phase["turns_per_minute"], base["turns_per_minute"]),
            "end_of_speech_to_receipt_p50": ratio(
                phase["end_of_speech_to_receipt_published_ms"]["p50"],
                base["end_of_speech_to_receipt_published_ms"]["p50"],
            ),
            "end_of_speech_to_receipt_p95": ratio(
                phase["end_of_speech_to_receipt_published_ms"]["p95"],
                base["end_of_speech_to_receipt_published_ms"]["p95"],
            ),
            "end_of_speech_to_first_speech_p50": ratio(
                phase["end_of_speech_to_first_speech_audio_sent_ms"]["p50"],
                base["end_of_speech_to_first_speech_audio_sent_ms"]["p50"],
            ),
            "command_latency_p50": ratio(
                commands(phase, "latency_ms", "p50"), commands(base, "latency_ms", "p50")
            ),
            "command_latency_p95": ratio(
                commands(phase, "latency_ms", "p95"), commands(base, "latency_ms", "p95")
            ),
            "receipts_per_s": ratio(
                commands(phase, "receipts_per_s"), commands(base, "receipts_per_s")
            ),
            "node_cpu_total": ratio(
                phase["cpu_percent_of_one_core"]["node"], base["cpu_percent_of_one_core"]["node"]
            ),
        }
    return out


TWO_NODE_NOTES = (
    "two node processes (voice on, every model loaded in each) in one MQTT shared group, "
    "on one PostgreSQL (started by the bench) and one mosquitto; commands are split by "
    "the broker's shared subscription, voice sessions by the database (voice_sessions). "
    "commands_handled per node counts the commands the broker sent to each node's client "
    "(its debug log, on in these phases only); voice_turns_run is from voice_sessions. "
    "This machine has 2 cores and one node already keeps them busy at 2-4 satellites: a "
    "second node cannot add CPU here, so it can only add memory and contention, not "
    "capacity; the ratios show that. 'node' CPU is the sum of both nodes. node_rss_mb "
    "'loaded' is at each node's 'voice ready' line, before any turn (one node's is after "
    "its first turn)."
)


# --- the run ------------------------------------------------------------------------------
PHASES = ("one_node", "two_nodes")


async def _run(seconds: float, rate: float, which: set[str]) -> dict[str, Any]:
    audio = await asyncio.to_thread(lambda: [_rendition(t) for t in COMMANDS])
    yes = await asyncio.to_thread(_rendition, YES)
    figures: dict[str, Any] = {}
    if "one_node" in which:
        figures = await _one_node(seconds, rate, audio, yes)
    if "two_nodes" in which:
        print("  two nodes ...", flush=True)
        figures["two_nodes"] = await _two_nodes(seconds, rate, audio, yes)
        figures["two_nodes"]["seconds_per_phase"] = seconds
        figures["two_nodes"]["ha_commands_per_s"] = rate
    return figures


def _saturation(phases: dict[str, Any]) -> dict[str, Any]:
    """The smallest N that meets either criterion, and every criterion it meets."""
    previous = None
    for n in SATELLITES:
        phase = phases[f"{n}_satellites"]
        why = []
        p95 = phase["end_of_speech_to_receipt_published_ms"]["p95"]
        if p95 is not None and p95 > SATURATION_P95_MS:
            why.append(f"p95 end of speech -> receipt {p95:.0f} ms > 2 s")
        tpm = phase["turns_per_minute"]
        if previous is not None and tpm <= previous * SATURATION_GROWTH:
            why.append(f"turns/min {previous} -> {tpm}: grew {tpm / previous - 1:.0%} (<= 20%)")
        if why:
            return {"n": n, "why": why}
        previous = tpm
    return {"n": None, "why": [f"neither criterion met up to {SATELLITES[-1]} satellites"]}


def _summary(
    *,
    phases: dict[str, Any],
    seconds: float,
    rate: float,
    ready_s: float,
    models_s: float,
    rss: dict[str, int],
) -> dict[str, Any]:
    base = phases["baseline_1_satellite_no_commands"]

    def ratio(value: float | None, against: float | None) -> float | None:
        return round(value / against, 2) if value is not None and against else None

    ratios = {
        f"{n}_satellites": {
            "turns_per_minute_per_satellite": ratio(
                phases[f"{n}_satellites"]["turns_per_minute_per_satellite"],
                base["turns_per_minute_per_satellite"],
            ),
            "end_of_speech_to_receipt_p50": ratio(
                phases[f"{n}_satellites"]["end_of_speech_to_receipt_published_ms"]["p50"],
                base["end_of_speech_to_receipt_published_ms"]["p50"],
            ),
            "end_of_speech_to_first_speech_p50": ratio(
                phases[f"{n}_satellites"]["end_of_speech_to_first_speech_audio_sent_ms"]["p50"],
                base["end_of_speech_to_first_speech_audio_sent_ms"]["p50"],
            ),
        }
        for n in SATELLITES
    }
    return {
        "seconds_per_phase": seconds,
        "ha_commands_per_s": rate,
        "node_ready_s": round(ready_s, 1),
        "models_ready_s": round(models_s, 1),
        "node_rss_mb": rss,
        "phases": phases,
        "ratios_to_baseline": ratios,
        "saturates_at": _saturation(phases),
        "saturation_rule": "smallest N where turns/min grows by <= 20% over the previous N, "
        "or p95 end of speech -> receipt published > 2 s",
        "notes": "percentiles over the phase's turns (n given); satellites answer 'played' "
        "at once; CPU in % of one core (2 cores = 200 %); shared, noisy machine",
    }


def _previous() -> dict[str, Any]:
    """The figures of the last run on file (to keep what this run does not measure)."""
    with contextlib.suppress(OSError, ValueError, KeyError):
        record = json.loads(RESULT.read_text())
        return {**record["figures"], "one_node_measured_at": record["when"]}
    return {}


def run() -> dict[str, Any]:
    """``BENCH_LOAD_PHASES``: ``one_node``, ``two_nodes`` or both (comma-separated, the
    default); figures not measured this time are kept from bench/results/load.json."""
    seconds = float(os.environ.get("BENCH_LOAD_SECONDS", "60"))
    rate = float(os.environ.get("BENCH_LOAD_RATE", "5"))
    which = {p.strip() for p in os.environ.get("BENCH_LOAD_PHASES", ",".join(PHASES)).split(",")}
    unknown = which - set(PHASES)
    if unknown or not which:
        msg = f"BENCH_LOAD_PHASES: {sorted(unknown)}; choose from {', '.join(PHASES)}"
        raise ValueError(msg)
    figures = asyncio.run(_run(seconds, rate, which))
    if "one_node" not in which:
        previous = _previous()
        previous.pop("two_nodes", None)
        figures = {**previous, **figures}
    elif "two_nodes" not in which:
        kept = _previous().get("two_nodes")
        if kept is not None:
            figures["two_nodes"] = kept
    two = figures.get("two_nodes")
    if two is not None and "phases" in figures:
        two["ratios_to_one_node"] = _two_node_ratios(figures, two)
        same = "one_node" in which and "two_nodes" in which
        two["notes"] = TWO_NODE_NOTES + (
            " Ratios against the 1-node phases of the same run."
            if same
            else " Ratios against 1-node phases of another run (one_node_measured_at);"
            " check both used the same seconds_per_phase."
        )
    return figures
