"""A real mosquitto for tests: free port, password file, the shipped ACL.

With ``tls=True`` it also listens with TLS on a second port, with a server
certificate (for ``localhost`` and ``127.0.0.1``) from a throwaway CA that
``make_ca`` writes into the work directory with the ``openssl`` command.
"""

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
    "alice": "alice-secret",
}
PERSON_ACL = """
user alice
topic write appliance/u/alice/cmd/#
topic read appliance/u/alice/receipts/#
"""
"""A person's own MQTT user, as the shipped ACL's commented example shows it."""


def _openssl(*args: str | Path) -> None:
    subprocess.run(
        [shutil.which("openssl") or "/usr/bin/openssl", *map(str, args)],
        check=True,
        capture_output=True,
    )


def make_ca(directory: Path, name: str = "Test CA") -> tuple[Path, Path]:
    """A self-signed CA (EC P-256, one day): its certificate and key."""
    directory.mkdir(parents=True, exist_ok=True)
    cert, key = directory / "ca.crt", directory / "ca.key"
    _openssl(
        "req", "-x509", "-new", "-nodes", "-newkey", "ec", "-pkeyopt",
        "ec_paramgen_curve:prime256v1", "-keyout", key, "-out", cert, "-days", "1",
        "-subj", f"/CN={name}",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
    )  # fmt: skip
    return cert, key


def make_server_cert(
    directory: Path, ca_cert: Path, ca_key: Path, names: tuple[str, ...] = ("localhost",)
) -> tuple[Path, Path]:
    """A server certificate signed by the CA, for ``names`` and 127.0.0.1."""
    cert, key, csr = directory / "server.crt", directory / "server.key", directory / "server.csr"
    ext = directory / "server.ext"
    alt = ",".join([*(f"DNS:{n}" for n in names), "IP:127.0.0.1"])
    ext.write_text(
        f"subjectAltName={alt}\n"
        "basicConstraints=critical,CA:FALSE\n"
        "keyUsage=critical,digitalSignature\n"
        "extendedKeyUsage=serverAuth\n"
        "subjectKeyIdentifier=hash\n"
        "authorityKeyIdentifier=keyid\n"
    )
    _openssl(
        "req", "-new", "-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
        "-keyout", key, "-out", csr, "-subj", f"/CN={names[0]}",
    )  # fmt: skip
    _openssl(
        "x509", "-req", "-in", csr, "-CA", ca_cert, "-CAkey", ca_key, "-CAcreateserial",
        "-out", cert, "-days", "1", "-extfile", ext,
    )  # fmt: skip
    return cert, key


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Mosquitto:
    def __init__(self, workdir: Path, port: int | None = None, *, tls: bool = False) -> None:
        self.binary = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
        self.workdir = workdir
        self.port = port or free_port()
        self.tls_port: int | None = None
        self.ca_file: Path | None = None
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
        acl = (ROOT / "config" / "mosquitto" / "acl").read_text()
        (workdir / "acl").write_text(acl + PERSON_ACL)
        tls_listener = ""
        if tls:
            certs = workdir / "certs"
            self.ca_file, ca_key = make_ca(certs)
            server_cert, server_key = make_server_cert(certs, self.ca_file, ca_key)
            self.tls_port = free_port()
            tls_listener = f"""listener {self.tls_port} 127.0.0.1
cafile {self.ca_file}
certfile {server_cert}
keyfile {server_key}
"""
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
{tls_listener}"""
        )
        passwd.chmod(0o600)

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    @property
    def tls_url(self) -> str:
        """The TLS listener (``tls=True``), by the name its certificate holds."""
        if self.tls_port is None:
            msg = "this broker has no TLS listener: Mosquitto(..., tls=True)"
            raise RuntimeError(msg)
        return f"mqtts://localhost:{self.tls_port}"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [self.binary, "-c", str(self.workdir / "mosquitto.conf")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        for port in (self.port, self.tls_port):
            if port is not None:
                self._wait_listening(port, deadline)

    def _wait_listening(self, port: int, deadline: float) -> None:
        assert self.proc is not None
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    return
            except OSError:
                if self.proc.poll() is not None:
                    log = (self.workdir / "mosquitto.log").read_text(errors="replace")
                    raise RuntimeError(f"mosquitto exited: {log[-2000:]}") from None
                time.sleep(0.05)
        raise RuntimeError(f"mosquitto did not listen on {port} in 10 s")

    def stop(self, *, kill: bool = False) -> None:
        if self.proc is None:
            return
        if kill:
            self.proc.kill()
        else:
            self.proc.terminate()
        self.proc.wait(10)
        self.proc = None
