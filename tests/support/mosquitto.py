"""A real mosquitto for tests: free port, password file, the shipped ACL."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
USERS = {
    "appliance": "node-secret",
    "homeassistant": "ha-secret",
    "kitchen": "sat-secret",
    "living_room": "sat2-secret",
    "office": "sat3-secret",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Mosquitto:
    def __init__(self, workdir: Path, port: int | None = None) -> None:
        self.binary = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
        self.workdir = workdir
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        workdir.mkdir(parents=True, exist_ok=True)
        passwd = workdir / "passwd"
        passwd.write_text("")
        for user, password in USERS.items():
            subprocess.run(
                [shutil.which("mosquitto_passwd") or "/usr/bin/mosquitto_passwd", "-b",
                 str(passwd), user, password],
                check=True, capture_output=True,
            )  # fmt: skip
        shutil.copy(ROOT / "config" / "mosquitto" / "acl", workdir / "acl")
        (workdir / "mosquitto.conf").write_text(
            f"""per_listener_settings false
allow_anonymous false
password_file {passwd}
acl_file {workdir / "acl"}
listener {self.port} 127.0.0.1
max_queued_messages 100000
max_inflight_messages 100
set_tcp_nodelay true
persistence true
persistence_location {workdir}/
autosave_interval 1
autosave_on_changes false
log_dest file {workdir / "mosquitto.log"}
{"user root" if os.geteuid() == 0 else ""}
"""
        )
        passwd.chmod(0o600)

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [self.binary, "-c", str(self.workdir / "mosquitto.conf")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                if self.proc.poll() is not None:
                    log = (self.workdir / "mosquitto.log").read_text(errors="replace")
                    raise RuntimeError(f"mosquitto exited: {log[-2000:]}") from None
                time.sleep(0.05)
        raise RuntimeError("mosquitto did not listen in 10 s")

    def stop(self, *, kill: bool = False) -> None:
        if self.proc is None:
            return
        if kill:
            self.proc.kill()
        else:
            self.proc.terminate()
        self.proc.wait(10)
        self.proc = None
