"""MQTT command to receipt: sustained throughput and latency at a fixed rate.

The node runs as its own process (``appliance run``) against a real mosquitto and the
embedded PostgreSQL; the load comes from a paho client in this process. Baseline, in
the same run: a trivial responder that answers each command with one publish and no
database, so the ratio shows what the node's work costs over the broker alone.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt

from tests.support.mosquitto import USERS, Mosquitto
from tests.support.node import NODE_READY

ROOT = Path(__file__).resolve().parents[1]
NODE_COMMAND = [sys.executable, "-m", "appliance"]


class Load:
    """Publishes commands and records when each receipt arrives."""

    def __init__(self, port: int, receipt_filter: str = "appliance/receipts/+") -> None:
        self.sent: dict[str, float] = {}
        self.received: dict[str, float] = {}
        self.done = threading.Event()
        self.expected = 0
        self._lock = threading.Lock()
        self.client = mqtt.Client(
            mqtt.CallbackAPIVersion.VERSION2, client_id=f"bench-{uuid.uuid4().hex[:6]}"
        )
        self.client.username_pw_set("homeassistant", USERS["homeassistant"])
        self.client.max_inflight_messages_set(1000)
        self.client.max_queued_messages_set(0)
        self.client.on_message = self._on_message
        subscribed = threading.Event()
        self.client.on_subscribe = lambda *a: subscribed.set()
        self.client.connect("127.0.0.1", port)
        _nodelay(self.client)
        self.client.loop_start()
        self.client.subscribe(receipt_filter, qos=1)
        subscribed.wait(10)

    def _on_message(self, client: Any, userdata: Any, message: mqtt.MQTTMessage) -> None:
        rid = message.topic.rsplit("/", 1)[1]
        now = time.perf_counter()
        with self._lock:
            if rid not in self.received:
                self.received[rid] = now
                if len(self.received) >= self.expected:
                    self.done.set()

    def publish(self, topic: str, request_id: str, body: dict[str, Any]) -> None:
        payload = json.dumps({"request_id": request_id, **body})
        self.sent[request_id] = time.perf_counter()
        self.client.publish(topic, payload, qos=1)

    def burst(self, n: int, topic: str, timeout: float = 120) -> float:
        """Send n commands at once; commands per second until the last receipt."""
        self.reset(n)
        start = time.perf_counter()
        for i in range(n):
            self.publish(topic, f"b{uuid.uuid4().hex[:10]}", {"item": f"item {i}", "quantity": 1})
        if not self.done.wait(timeout):
            raise RuntimeError(f"only {len(self.received)} of {n} receipts in {timeout} s")
        return n / (max(self.received.values()) - start)

    def paced(self, rate: float, seconds: float, topic: str) -> list[float]:
        """Send at ``rate`` per second; latency (ms) of each command."""
        n = int(rate * seconds)
        self.reset(n)
        start = time.perf_counter()
        for i in range(n):
            due = start + i / rate
            delay = due - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            self.publish(topic, f"p{uuid.uuid4().hex[:10]}", {"item": f"paced {i % 50}"})
        if not self.done.wait(60):
            raise RuntimeError(f"only {len(self.received)} of {n} receipts")
        return [(self.received[r] - self.sent[r]) * 1000 for r in self.received]

    def reset(self, n: int) -> None:
        with self._lock:
            self.sent.clear()
            self.received.clear()
            self.expected = n
            self.done.clear()

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


def _nodelay(client: mqtt.Client) -> None:
    """Send each MQTT packet at once (Nagle would hold it for the peer's delayed ACK)."""
    sock = client.socket()
    if isinstance(sock, socket.socket):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def echo_responder(port: int) -> mqtt.Client:
    """Answers every command on appliance/cmd/# with one publish, like a node without work."""
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="bench-echo")
    client.username_pw_set("appliance", USERS["appliance"])
    client.max_inflight_messages_set(1000)
    client.max_queued_messages_set(0)

    def on_message(c: Any, userdata: Any, message: mqtt.MQTTMessage) -> None:
        rid = json.loads(message.payload)["request_id"]
        c.publish(f"appliance/receipts/{rid}", message.payload, qos=1)

    client.on_message = on_message
    ready = threading.Event()
    client.on_subscribe = lambda *a: ready.set()
    client.connect("127.0.0.1", port)
    _nodelay(client)
    client.loop_start()
    client.subscribe("appliance/cmd/#", qos=1)
    ready.wait(10)
    return client


def start_node(data_dir: Path, broker: Mosquitto) -> tuple[subprocess.Popen[bytes], float]:
    env = {
        **os.environ,
        "APPLIANCE_DATA_DIR": str(data_dir),
        "APPLIANCE_MQTT__URL": broker.url,
        "APPLIANCE_MQTT__USERNAME": "appliance",
        "APPLIANCE_MQTT__PASSWORD": USERS["appliance"],
        "APPLIANCE_LOG_LEVEL": "INFO",
        "APPLIANCE_NODE_ID": "bench",
    }
    start = time.perf_counter()
    proc = subprocess.Popen(
        [*NODE_COMMAND, "run"], env=env, stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.stderr is not None
    for raw in proc.stderr:
        line = raw.decode(errors="replace")
        if NODE_READY.search(line.encode()):
            ready = time.perf_counter() - start
            # Keep reading, or the node blocks on a full pipe.
            threading.Thread(target=proc.stderr.read, daemon=True).start()
            return proc, ready
    raise RuntimeError("node exited before it was ready")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(repeats: int = 3) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="appliance-bench-") as tmp:
        broker = Mosquitto(Path(tmp) / "mosquitto")
        broker.start()
        try:
            baseline = []
            echo = echo_responder(broker.port)
            load = Load(broker.port)
            load.burst(500, "appliance/cmd/shopping/add")  # warm-up
            for _ in range(repeats):
                baseline.append(load.burst(3000, "appliance/cmd/shopping/add"))
            baseline_latency = load.paced(200, 5, "appliance/cmd/shopping/add")
            echo.loop_stop()
            echo.disconnect()
            load.close()

            node, _ = start_node(Path(tmp) / "node", broker)
            try:
                load = Load(broker.port)
                load.burst(500, "appliance/cmd/shopping/add")  # warm-up
                throughput = [load.burst(3000, "appliance/cmd/shopping/add")
                              for _ in range(repeats)]  # fmt: skip
                latencies = load.paced(200, 10, "appliance/cmd/shopping/add")
                load.close()
            finally:
                node.send_signal(signal.SIGTERM)
                node.wait(30)
        finally:
            broker.stop()
    node_tp = statistics.median(throughput)
    echo_tp = statistics.median(baseline)
    return {
        "commands_per_second_median": round(node_tp, 1),
        "commands_per_second_runs": [round(x, 1) for x in throughput],
        "baseline_echo_per_second_median": round(echo_tp, 1),
        "ratio_to_baseline": round(node_tp / echo_tp, 3),
        "latency_at_200_per_s_ms": {
            "p50": round(percentile(latencies, 0.5), 2),
            "p99": round(percentile(latencies, 0.99), 2),
            "max": round(max(latencies), 2),
            "n": len(latencies),
        },
        "baseline_latency_at_200_per_s_ms": {
            "p50": round(percentile(baseline_latency, 0.5), 2),
            "p99": round(percentile(baseline_latency, 0.99), 2),
        },
        "goals": {"commands_per_second": 1000, "p99_ms_at_200_per_s": 50},
    }
