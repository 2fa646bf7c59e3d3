"""`appliance models`: checked downloads from a real HTTP server on 127.0.0.1.

The server runs in a thread on a free port and serves generated files: a zip laid out
like a Vosk model, a tar.gz, plain files. It honours Range (and If-Range) when told
to, can drop a connection part-way, and records every request. A guard makes any
connection or name lookup outside 127.0.0.1 fail the test.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import random
import re
import shutil
import socket
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from appliance.models import (
    ModelFetchError,
    add_models_commands,
    fetch,
    find,
    installed,
    run_models_command,
    verify,
)
from appliance.models import download as download_module
from appliance.models.catalog import CATALOG
from appliance.models.fetch import models_dir
from appliance.models.progress import Progress

LOOPBACK = "127.0.0.1"
VOSK_TOP = "vosk-model-small-pt-0.3"


# --- the server ------------------------------------------------------------------------


@dataclass
class ServerState:
    files: dict[str, bytes] = field(default_factory=dict)
    support_range: bool = True
    fail_once: dict[str, int] = field(default_factory=dict)  # path -> bytes sent, then drop
    requests: list[dict[str, Any]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)


class _Server(ThreadingHTTPServer):
    state: ServerState


class Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        state = self.server.state
        seen: dict[str, Any] = {
            "path": self.path,
            "range": self.headers.get("Range"),
            "if_range": self.headers.get("If-Range"),
        }
        state.requests.append(seen)
        if self.path == "/slow":
            state.release.wait(10)
            return
        body = state.files.get(self.path)
        if body is None:
            seen["status"] = 404
            self.send_error(404)
            return
        etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
        start = self._range_start(seen["range"], seen["if_range"], etag)
        if start >= len(body) > 0:
            seen["status"] = 416
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{len(body)}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        seen["status"] = 206 if start else 200
        self.send_response(seen["status"])
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body) - start))
        self.send_header("ETag", etag)
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        self.end_headers()
        payload = body[start:]
        limit = state.fail_once.pop(self.path, None)
        if limit is not None:
            payload = payload[:limit]
            self.close_connection = True
        self.wfile.write(payload)

    def _range_start(self, header: str | None, if_range: str | None, etag: str) -> int:
        if not header or not self.server.state.support_range:
            return 0
        if if_range is not None and if_range != etag:
            return 0  # the file changed: send it whole
        match = re.fullmatch(r"bytes=(\d+)-", header)
        assert match, header
        return int(match.group(1))

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """No proxies, and no connection or lookup anywhere but 127.0.0.1."""
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    real_getaddrinfo = socket.getaddrinfo
    real_connect = socket.socket.connect

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in (LOOPBACK, LOOPBACK.encode()):
            raise AssertionError(f"test tried to look up {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    def connect(self: socket.socket, address: Any) -> None:
        if not (isinstance(address, tuple) and address[0] == LOOPBACK):
            raise AssertionError(f"test tried to connect to {address!r}")
        real_connect(self, address)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)


@pytest.fixture
def server() -> Iterator[tuple[str, ServerState]]:
    state = ServerState()
    httpd = _Server((LOOPBACK, 0), Handler)
    httpd.state = state
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://{LOOPBACK}:{httpd.server_address[1]}", state
    finally:
        state.release.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


# --- generated models ------------------------------------------------------------------


def blob(size: int, seed: int = 1) -> bytes:
    return random.Random(seed).randbytes(size)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def vosk_zip(top: str = VOSK_TOP) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(f"{top}/", "")
        zf.writestr(f"{top}/am/final.mdl", blob(60_000, 2))
        zf.writestr(f"{top}/conf/model.conf", "--sample-frequency=16000\n")
        zf.writestr(f"{top}/graph/HCLr.fst", blob(40_000, 3))
        zf.writestr(f"{top}/README", "a test model\n")
    return buf.getvalue()


def make_zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(zipfile.ZipInfo(name), data)
    return buf.getvalue()


def make_tar(members: list[tarfile.TarInfo | tuple[str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                tar.addfile(member)
            else:
                info = tarfile.TarInfo(member[0])
                info.size = len(member[1])
                tar.addfile(info, io.BytesIO(member[1]))
    return buf.getvalue()


def link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info


def whisper_tar() -> bytes:
    return make_tar(
        [
            ("model.bin", blob(50_000, 4)),
            ("config.json", b"{}"),
            ("tokenizer.json", b'{"t": 1}'),
        ]
    )


def leftovers(data_dir: Path) -> list[str]:
    """Partial downloads and staging folders left in the models folder."""
    root = models_dir(data_dir)
    found = [p.name for p in root.glob(".staging-*")]
    found += [p.name for p in (root / ".partial").glob("*") if p.suffix != ".lock"]
    return found


# --- fetch -----------------------------------------------------------------------------


def test_zip_is_checked_unpacked_recorded_and_found(
    server: tuple[str, ServerState], data_dir: Path
) -> None:
    base, state = server
    body = state.files["/vosk.zip"] = vosk_zip()
    path = fetch(
        f"{base}/vosk.zip",
        sha(body),
        models_dir(data_dir),
        name="vosk-pt",
        language="pt",
        progress=False,
    )
    assert path == models_dir(data_dir) / "vosk-pt"  # the lone top folder became the model
    assert (path / "am" / "final.mdl").read_bytes() == blob(60_000, 2)
    assert (path / "conf" / "model.conf").is_file()

    record = json.loads((models_dir(data_dir) / "manifest.json").read_text())["models"]["vosk-pt"]
    assert record["name"] == "vosk-pt"
    assert record["kind"] == "vosk"  # guessed from am/ and conf/
    assert record["url"] == f"{base}/vosk.zip"
    assert record["sha256"] == sha(body)
    assert record["size"] == len(body)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", record["fetched_at"])
    assert record["files"]["am/final.mdl"] == sha(blob(60_000, 2))

    assert find(data_dir, "vosk", "pt") == path
    assert find(data_dir, "vosk", "pt-BR") == path  # a generic pt model serves pt-BR
    assert find(data_dir, "vosk", "en") is None
    assert find(data_dir, "piper", "pt") is None
    assert [m.name for m in installed(data_dir)] == ["vosk-pt"]
    assert list((models_dir(data_dir) / ".partial").iterdir()) == []
    assert [r["range"] for r in state.requests] == [None]


def test_tar_gz_and_plain_file(server: tuple[str, ServerState], data_dir: Path) -> None:
    base, state = server
    tar = state.files["/whisper-small.tar.gz"] = whisper_tar()
    gguf = state.files["/tiny.Q4.gguf"] = blob(30_000, 5)
    dest = models_dir(data_dir)

    whisper = fetch(f"{base}/whisper-small.tar.gz", sha(tar), dest, name="ws", progress=False)
    assert whisper == dest / "ws"
    assert (whisper / "model.bin").read_bytes() == blob(50_000, 4)

    model = fetch(f"{base}/tiny.Q4.gguf", sha(gguf), dest, name="tiny", progress=False)
    assert model == dest / "tiny" / "tiny.Q4.gguf"
    assert model.read_bytes() == gguf

    kinds = {m.name: m.kind for m in installed(data_dir)}
    assert kinds == {"ws": "whisper", "tiny": "gguf"}
    assert find(data_dir, "gguf") == model
    assert leftovers(data_dir) == []


def test_wrong_sha256_is_refused_and_nothing_is_installed(
    server: tuple[str, ServerState], data_dir: Path
) -> None:
    base, state = server
    body = state.files["/vosk.zip"] = vosk_zip()
    wrong = "0" * 64
    with pytest.raises(ModelFetchError) as err:
        fetch(f"{base}/vosk.zip", wrong, models_dir(data_dir), name="vosk-pt", progress=False)
    message = str(err.value)
    assert "checksum mismatch" in message
    assert f"expected sha256 {wrong}" in message
    assert f"got {sha(body)}" in message
    assert not (models_dir(data_dir) / "vosk-pt").exists()
    assert not (models_dir(data_dir) / "manifest.json").exists()
    assert leftovers(data_dir) == []  # the bad download is deleted


def test_bad_requests_are_refused_before_any_traffic(
    server: tuple[str, ServerState], data_dir: Path
) -> None:
    base, state = server
    dest = models_dir(data_dir)
    cases = [
        ("ftp://127.0.0.1/x.zip", "a" * 64, "x", "only http://, https:// and file://"),
        (f"{base}/x.zip", "not-a-hash", "x", "not a sha256 checksum"),
        (f"{base}/x.zip", "a" * 64, "../x", "not a usable model name"),
        (f"{base}/x.zip", "a" * 64, ".partial", "not a usable model name"),
    ]
    for url, digest, name, expected in cases:
        with pytest.raises(ModelFetchError, match=re.escape(expected)):
            fetch(url, digest, dest, name=name, progress=False)
    assert state.requests == []


def test_interrupted_download_resumes_with_a_range_request(
    server: tuple[str, ServerState], data_dir: Path
) -> None:
    base, state = server
    body = state.files["/vosk.zip"] = vosk_zip()
    state.fail_once["/vosk.zip"] = 30_000
    dest = models_dir(data_dir)
    with pytest.raises(ModelFetchError, match=r"interrupted after .* Run the same command again"):
        fetch(f"{base}/vosk.zip", sha(body), dest, name="vosk-pt", progress=False)
    parts = list((dest / ".partial").glob("*.part"))
    assert [p.stat().st_size for p in parts] == [30_000]
    assert not (dest / "vosk-pt").exists()

    path = fetch(f"{base}/vosk.zip", sha(body), dest, name="vosk-pt", progress=False)
    assert (path / "am" / "final.mdl").read_bytes() == blob(60_000, 2)
    second = state.requests[-1]
    assert second["range"] == "bytes=30000-"
    assert second["if_range"] is not None  # guarded by the ETag seen first
    assert second["status"] == 206
    assert leftovers(data_dir) == []


def test_resume_starts_over_when_the_server_ignores_range(
    server: tuple[str, ServerState], data_dir: Path
) -> None:
    base, state = server
    state.support_range = False
    body = state.files["/m.gguf"] = blob(100_000, 6)
    state.fail_once["/m.gguf"] = 10_000
    dest = models_dir(data_dir)
    with pytest.raises(ModelFetchError, match="interrupted"):
        fetch(f"{base}/m.gguf", sha(body), dest, name="m", progress=False)
    path = fetch(f"{base}/m.gguf", sha(body), dest, name="m", progress=False)
    assert path.read_bytes() == body
    assert state.requests[-1]["range"] == "bytes=10000-"
    assert state.requests[-1]["status"] == 200


def test_resume_starts_over_when_the_file_changed_on_the_server(
    server: tuple[str, ServerState], data_dir: Path
) -> None:
    base, state = server
    state.files["/m.gguf"] = blob(100_000, 6)
    state.fail_once["/m.gguf"] = 10_000
    dest = models_dir(data_dir)
    with pytest.raises(ModelFetchError, match="interrupted"):
        fetch(f"{base}/m.gguf", sha(state.files["/m.gguf"]), dest, name="m", progress=False)
    new = state.files["/m.gguf"] = blob(100_000, 7)
    path = fetch(f"{base}/m.gguf", sha(new), dest, name="m", progress=False)
    assert path.read_bytes() == new
    assert state.requests[-1]["status"] == 200  # If-Range did not match: whole file


def test_a_complete_partial_file_is_not_downloaded_again(
    server: tuple[str, ServerState], data_dir: Path
) -> None:
    """A verified download whose install failed is reused (the server answers 416)."""
    base, state = server
    body = state.files["/m.gguf"] = blob(20_000, 8)
    dest = models_dir(data_dir)
    with pytest.raises(ModelFetchError, match="does not contain"):
        fetch(f"{base}/m.gguf", sha(body), dest, name="m", inside="other", progress=False)
    path = fetch(f"{base}/m.gguf", sha(body), dest, name="m", progress=False)
    assert path.read_bytes() == body
    assert [r["status"] for r in state.requests] == [200, 416]


@pytest.mark.parametrize(
    ("archive", "why"),
    [
        ("zip-dotdot", "contains '..'"),
        ("zip-absolute", "absolute path"),
        ("tar-dotdot", "contains '..'"),
        ("tar-absolute", "absolute path"),
        ("tar-symlink-absolute", "link to the absolute path"),
        ("tar-symlink-up", "outside the model"),
        ("tar-symlink-chain", "outside the model"),
        ("tar-hardlink", "hard link"),
    ],
)
def test_unsafe_archives_are_refused(
    server: tuple[str, ServerState], data_dir: Path, tmp_path: Path, archive: str, why: str
) -> None:
    base, state = server
    evil = b"owned"
    bodies = {
        "zip-dotdot": make_zip({"model/ok.txt": b"ok", "../../evil.txt": evil}),
        "zip-absolute": make_zip({f"{tmp_path}/evil.txt": evil}),
        "tar-dotdot": make_tar([("model/ok.txt", b"ok"), ("model/../../evil.txt", evil)]),
        "tar-absolute": make_tar([(f"{tmp_path}/evil.txt", evil)]),
        "tar-symlink-absolute": make_tar([link("model/out", str(tmp_path))]),
        "tar-symlink-up": make_tar([link("model/out", "../..")]),
        # each link looks harmless on its own; together they climb out
        "tar-symlink-chain": make_tar(
            [link("d/l", ".."), link("d/l/l2", ".."), ("d/l/l2/evil.txt", evil)]
        ),
        "tar-hardlink": make_tar([link("model/h", "/etc/passwd", tarfile.LNKTYPE)]),
    }
    suffix = ".zip" if archive.startswith("zip") else ".tar.gz"
    body = state.files[f"/{archive}{suffix}"] = bodies[archive]
    with pytest.raises(ModelFetchError) as err:
        fetch(
            f"{base}/{archive}{suffix}",
            sha(body),
            models_dir(data_dir),
            name="bad",
            progress=False,
        )
    assert "refusing to unpack" in str(err.value)
    assert why in str(err.value)
    assert not (models_dir(data_dir) / "bad").exists()
    assert not (models_dir(data_dir) / "manifest.json").exists()
    assert list(tmp_path.rglob("evil.txt")) == []
    assert [p.name for p in models_dir(data_dir).glob(".staging-*")] == []


def test_http_404_is_explained(server: tuple[str, ServerState], data_dir: Path) -> None:
    base, _ = server
    with pytest.raises(ModelFetchError) as err:
        fetch(f"{base}/missing.zip", "a" * 64, models_dir(data_dir), name="x", progress=False)
    assert "was not found on the server (HTTP 404 Not Found)" in str(err.value)
    assert f"{base}/missing.zip" in str(err.value)


def test_connection_refused_is_explained(data_dir: Path) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind((LOOPBACK, 0))
        port = sock.getsockname()[1]
    with pytest.raises(ModelFetchError) as err:
        fetch(
            f"http://{LOOPBACK}:{port}/m.zip",
            "a" * 64,
            models_dir(data_dir),
            name="x",
            progress=False,
        )
    assert f"could not connect to {LOOPBACK}:{port}: connection refused" in str(err.value)


def test_timeout_is_explained(server: tuple[str, ServerState], data_dir: Path) -> None:
    base, _ = server
    with pytest.raises(ModelFetchError) as err:
        fetch(f"{base}/slow", "a" * 64, models_dir(data_dir), name="x", timeout=0.3)
    assert "did not answer within 0.3 s (timed out)" in str(err.value)


def test_not_enough_disk_space_is_refused_early(
    server: tuple[str, ServerState], data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, state = server
    body = state.files["/m.gguf"] = blob(20_000, 9)

    class Usage:
        total, used, free = 10**9, 10**9, 1000

    monkeypatch.setattr(shutil, "disk_usage", lambda _p: Usage())
    with pytest.raises(ModelFetchError, match=r"not enough disk space for downloading m\.gguf"):
        fetch(f"{base}/m.gguf", sha(body), models_dir(data_dir), name="m", progress=False)
    assert not (models_dir(data_dir) / "m").exists()


def test_file_url_installs_from_a_local_copy(tmp_path: Path, data_dir: Path) -> None:
    stick = tmp_path / "usb stick"
    stick.mkdir()
    body = vosk_zip()
    (stick / "vosk model.zip").write_bytes(body)
    url = (stick / "vosk model.zip").as_uri()
    path = fetch(url, sha(body), models_dir(data_dir), name="vosk-pt", language="pt")
    assert (path / "am" / "final.mdl").is_file()
    assert find(data_dir, "vosk", "pt") == path

    with pytest.raises(ModelFetchError, match="does not exist or is not a file"):
        fetch((stick / "nothing.zip").as_uri(), sha(body), models_dir(data_dir), name="y")


def test_installed_model_needs_force_to_be_replaced(
    server: tuple[str, ServerState], data_dir: Path
) -> None:
    base, state = server
    old = state.files["/m.gguf"] = blob(1000, 10)
    dest = models_dir(data_dir)
    fetch(f"{base}/m.gguf", sha(old), dest, name="m", progress=False)
    new = state.files["/m.gguf"] = blob(1000, 11)
    with pytest.raises(ModelFetchError, match=r"already installed .* use --force"):
        fetch(f"{base}/m.gguf", sha(new), dest, name="m", progress=False)
    assert len(state.requests) == 1  # refused before downloading
    path = fetch(f"{base}/m.gguf", sha(new), dest, name="m", progress=False, force=True)
    assert path.read_bytes() == new
    assert installed(data_dir)[0].sha256 == sha(new)
    assert leftovers(data_dir) == []


# --- progress --------------------------------------------------------------------------


def test_progress_lines_on_stderr_are_sane(
    server: tuple[str, ServerState],
    data_dir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base, state = server
    monkeypatch.setattr(download_module, "CHUNK", 16 * 1024)
    body = state.files["/big.gguf"] = blob(3 * 1024 * 1024, 12)
    fetch(f"{base}/big.gguf", sha(body), models_dir(data_dir), name="big")
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "\r" not in captured.err  # not a terminal: plain lines
    lines = captured.err.splitlines()
    assert 5 <= len(lines) <= 12, lines  # about one per tenth, not one per chunk
    percents = [int(re.search(r"(\d+)%", line).group(1)) for line in lines]  # type: ignore[union-attr]
    assert percents == sorted(percents)
    assert percents[-1] == 100
    assert lines[-1].startswith("big.gguf  3.0 MiB / 3.0 MiB  100%  ")
    assert re.search(r"\d+(\.\d)? [KMG]?i?B/s$", lines[-1])


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_redraws_one_line_on_a_terminal() -> None:
    now = [0.0]
    stream = FakeTerminal()
    bar = Progress("m.zip", 4096, stream=stream, clock=lambda: now[0])
    for _ in range(4):
        now[0] += 1.0
        bar.update(1024)
    bar.finish()
    text = stream.getvalue()
    assert text.endswith("\n") and text.count("\n") == 1
    frames = [f.rstrip() for f in text.strip().split("\r") if f]
    assert frames[0] == "m.zip  1.0 KiB / 4.0 KiB   25%  1.0 KiB/s  3 s left"
    assert frames[-1] == "m.zip  4.0 KiB / 4.0 KiB  100%  1.0 KiB/s"


def test_progress_without_a_known_size() -> None:
    now = [0.0]
    stream = io.StringIO()
    bar = Progress("m.bin", None, stream=stream, clock=lambda: now[0], interval=10)
    for _ in range(30):
        now[0] += 1.0
        bar.update(2048)
    bar.finish()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 4  # at 1 s, 11 s, 21 s, and the end
    assert lines[-1] == "m.bin  60.0 KiB  2.0 KiB/s"


# --- registry --------------------------------------------------------------------------


def test_verify_finds_changed_and_missing_files(
    server: tuple[str, ServerState], data_dir: Path
) -> None:
    base, state = server
    body = state.files["/vosk.zip"] = vosk_zip()
    path = fetch(f"{base}/vosk.zip", sha(body), models_dir(data_dir), name="v", progress=False)
    [result] = verify(data_dir)
    assert result.ok and result.files == 4
    (path / "README").write_text("edited\n")
    (path / "graph" / "HCLr.fst").unlink()
    [result] = verify(data_dir)
    assert not result.ok
    assert set(result.problems) == {
        "changed: README (sha256 differs from the manifest)",
        "missing: graph/HCLr.fst",
    }
    [unknown] = verify(data_dir, ["nope"])
    assert unknown.problems == ("not installed (not in the manifest)",)


def test_find_prefers_the_closest_language_then_the_newest(
    server: tuple[str, ServerState], data_dir: Path
) -> None:
    base, state = server
    dest = models_dir(data_dir)
    for name, lang in [("pt-generic", "pt"), ("pt-br", "pt-BR"), ("pt-pt", "pt-PT")]:
        body = state.files[f"/{name}.gguf"] = name.encode()
        fetch(
            f"{base}/{name}.gguf",
            sha(body),
            dest,
            name=name,
            language=lang,
            kind="gguf",
            progress=False,
        )
    assert find(data_dir, "gguf", "pt_BR") == dest / "pt-br" / "pt-br.gguf"
    assert find(data_dir, "gguf", "pt-PT") == dest / "pt-pt" / "pt-pt.gguf"
    assert find(data_dir, "gguf", "pt") == dest / "pt-generic" / "pt-generic.gguf"
    assert find(data_dir, "gguf", "en") is None


# --- the command -----------------------------------------------------------------------


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="appliance")
    add_models_commands(parser.add_subparsers(dest="command"))
    return parser.parse_args(["models", *argv])


def test_command_fetch_list_verify(
    server: tuple[str, ServerState], data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, state = server
    body = state.files["/whisper-small.tar.gz"] = whisper_tar()
    args = parse("fetch", "--url", f"{base}/whisper-small.tar.gz", "--sha256", sha(body))
    assert run_models_command(args, data_dir) == 0
    out = capsys.readouterr()
    assert out.out == f"installed whisper-small at {models_dir(data_dir) / 'whisper-small'}\n"
    assert "100%" in out.err

    assert run_models_command(parse("list"), data_dir) == 0
    listing = capsys.readouterr().out
    for entry in CATALOG:
        assert entry.name in listing
    assert "needs --sha256" in listing
    assert re.search(r"whisper-small\s+whisper\s+\?\s+", listing)

    assert run_models_command(parse("verify"), data_dir) == 0
    assert capsys.readouterr().out == "ok      whisper-small (3 files)\n"
    (models_dir(data_dir) / "whisper-small" / "config.json").write_text('{"x": 1}')
    assert run_models_command(parse("verify", "whisper-small"), data_dir) == 1
    assert "changed: config.json" in capsys.readouterr().out


def test_command_catalog_model_without_a_checksum_is_refused(
    server: tuple[str, ServerState], data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, state = server
    assert run_models_command(parse("fetch", "vosk-model-small-pt-0.3"), data_dir) == 4
    err = capsys.readouterr().err
    assert err.startswith("appliance: the catalog has no checksum")
    assert (
        "appliance models fetch vosk-model-small-pt-0.3 "
        "--sha256 <sha256 of vosk-model-small-pt-0.3.zip>"
    ) in err
    assert run_models_command(parse("fetch", "pt_BR-faber-medium"), data_dir) == 4
    err = capsys.readouterr().err
    assert (
        "--sha256 <sha256 of pt_BR-faber-medium.onnx> "
        "--sha256 <sha256 of pt_BR-faber-medium.onnx.json>"
    ) in err
    assert state.requests == []  # and the guard saw no lookup of any other host
    assert not models_dir(data_dir).exists()


def test_command_catalog_model_from_a_mirror(
    server: tuple[str, ServerState], data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, state = server
    body = state.files["/mirror/vosk-model-small-pt-0.3.zip"] = vosk_zip()
    args = parse(
        "fetch",
        "vosk-model-small-pt-0.3",
        "--url",
        f"{base}/mirror/vosk-model-small-pt-0.3.zip",
        "--sha256",
        sha(body).upper(),
        "--no-progress",
    )
    assert run_models_command(args, data_dir) == 0
    assert capsys.readouterr().err == ""
    [model] = installed(data_dir)
    assert (model.name, model.kind, model.language) == ("vosk-model-small-pt-0.3", "vosk", "pt")
    assert find(data_dir, "vosk", "pt") == models_dir(data_dir) / "vosk-model-small-pt-0.3"


def test_command_piper_voice_is_two_files(
    server: tuple[str, ServerState], data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, state = server
    onnx = state.files["/v/pt_BR-faber-medium.onnx"] = blob(20_000, 13)
    conf = state.files["/v/pt_BR-faber-medium.onnx.json"] = b'{"audio": {"sample_rate": 22050}}'
    urls = [f"{base}/v/pt_BR-faber-medium.onnx", f"{base}/v/pt_BR-faber-medium.onnx.json"]
    only_one = parse("fetch", "pt_BR-faber-medium", "--sha256", sha(onnx), "--no-progress")
    assert run_models_command(only_one, data_dir) == 4
    assert "give --sha256 once per file" in capsys.readouterr().err
    args = parse(
        "fetch",
        "pt_BR-faber-medium",
        "--url",
        urls[0],
        "--url",
        urls[1],
        "--sha256",
        sha(onnx),
        "--sha256",
        sha(conf),
        "--no-progress",
    )
    assert run_models_command(args, data_dir) == 0
    voice = find(data_dir, "piper", "pt")
    assert voice == models_dir(data_dir) / "pt_BR-faber-medium" / "pt_BR-faber-medium.onnx"
    assert voice.read_bytes() == onnx
    assert voice.with_name("pt_BR-faber-medium.onnx.json").read_bytes() == conf


def test_command_resumes_an_interrupted_fetch(
    server: tuple[str, ServerState], data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, state = server
    body = state.files["/m.gguf"] = blob(50_000, 14)
    state.fail_once["/m.gguf"] = 20_000
    argv = ("fetch", "--url", f"{base}/m.gguf", "--sha256", sha(body), "--kind", "gguf")
    assert run_models_command(parse(*argv), data_dir) == 4
    assert "Run the same command again to resume" in capsys.readouterr().err
    assert run_models_command(parse(*argv), data_dir) == 0
    assert state.requests[-1]["range"] == "bytes=20000-"
    assert find(data_dir, "gguf") == models_dir(data_dir) / "m" / "m.gguf"


def test_command_usage_errors(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = [
        (parse("fetch"), "give a catalog NAME, or --url URL --sha256 HEX"),
        (parse("fetch", "no-such-model"), "'no-such-model' is not in the catalog"),
        (parse("fetch", "--url", "http://127.0.0.1:9/m.gguf"), "give one --sha256 per --url"),
        (
            parse("fetch", "vosk-model-small-pt-0.3", "--kind", "gguf"),
            "--kind cannot be used with a catalog model",
        ),
    ]
    for args, message in cases:
        assert run_models_command(args, data_dir) == 4
        assert message in capsys.readouterr().err
    assert run_models_command(parse("verify"), data_dir) == 0
    assert capsys.readouterr().out == "no models installed\n"
