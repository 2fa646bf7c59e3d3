"""Download one file into ``<models>/.partial``, resuming when possible, and check it.

http(s) downloads resume with an HTTP ``Range`` request (guarded by ``If-Range`` with
the ETag or Last-Modified the server gave first); ``file://`` copies (a USB stick)
resume too. The partial file is named after the URL, so running the same command
again picks it up. The sha256 is checked on the complete file; on a mismatch the file
is deleted.
"""

from __future__ import annotations

import fcntl
import hashlib
import http.client
import json
import logging
import re
import socket
import ssl
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from email.message import Message
from pathlib import Path
from typing import IO, Protocol
from urllib.parse import urlsplit

from appliance import __version__
from appliance.models.errors import ModelFetchError
from appliance.models.progress import Progress, human_bytes
from appliance.models.space import disk_full_error, ensure_free_space, is_disk_full

logger = logging.getLogger(__name__)

PARTIAL = ".partial"
CHUNK = 256 * 1024
DEFAULT_TIMEOUT = 30.0  # seconds, for connecting and for each read
SCHEMES = ("http", "https", "file")
USER_AGENT = f"appliance/{__version__} (model fetch)"
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_CONTENT_RANGE = re.compile(r"^bytes (\d+)-(\d+)/(\d+|\*)$")


class _Reader(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...


@dataclass(frozen=True)
class Downloaded:
    url: str
    path: Path  # the verified file, still in .partial
    sha256: str
    size: int


def normalize_sha256(value: str) -> str:
    """Lower-case hex digest; accepts a ``sha256:`` prefix; refuses anything else."""
    digest = value.strip().lower().removeprefix("sha256:")
    if not _SHA256.match(digest):
        raise ModelFetchError(f"{value!r} is not a sha256 checksum: expected 64 hexadecimal digits")
    return digest


def check_url(url: str) -> str:
    """The URL's scheme, if it is one we fetch from (http, https, file)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise ModelFetchError(
            f"cannot fetch {url!r}: only http://, https:// and file:// URLs are supported"
        )
    if scheme != "file" and not parts.hostname:
        raise ModelFetchError(f"cannot fetch {url!r}: the URL has no host")
    return scheme


def file_sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def partial_path(partial_dir: Path, url: str) -> Path:
    return partial_dir / (hashlib.sha256(url.encode()).hexdigest()[:32] + ".part")


def discard(part: Path) -> None:
    """Forget a partial download (the file and what we noted about it)."""
    part.unlink(missing_ok=True)
    _meta_path(part).unlink(missing_ok=True)


def forget(part: Path) -> None:
    """After a successful install: the partial file, its notes and its lock file."""
    discard(part)
    part.with_suffix(".lock").unlink(missing_ok=True)


def download(
    url: str,
    sha256: str,
    partial_dir: Path,
    *,
    label: str,
    progress: bool = True,
    timeout: float = DEFAULT_TIMEOUT,
) -> Downloaded:
    """Fetch ``url`` into ``partial_dir`` and check it against ``sha256``."""
    expected = normalize_sha256(sha256)
    scheme = check_url(url)
    partial_dir.mkdir(parents=True, exist_ok=True)
    part = partial_path(partial_dir, url)
    with _exclusive(part.with_suffix(".lock"), url):
        if scheme == "file":
            _copy_local(url, part, label=label, progress=progress)
        else:
            _download_http(url, part, expected, label=label, progress=progress, timeout=timeout)
        actual = file_sha256(part)
        if actual != expected:
            discard(part)
            raise ModelFetchError(
                f"checksum mismatch for {url}: expected sha256 {expected}, got {actual}. "
                "The download was deleted and nothing was installed; "
                "check the URL and the --sha256 value."
            )
        size = part.stat().st_size
    logger.debug("downloaded %s (%d bytes, sha256 %s)", url, size, actual)
    return Downloaded(url=url, path=part, sha256=actual, size=size)


# --- http(s) ------------------------------------------------------------------------


def _download_http(
    url: str, part: Path, expected: str, *, label: str, progress: bool, timeout: float
) -> None:
    offset = _resume_offset(part, url)
    for _ in range(2):
        if _http_attempt(
            url, part, offset, expected=expected, label=label, progress=progress, timeout=timeout
        ):
            return
        discard(part)  # the partial file cannot be resumed: start over once
        offset = 0
    raise ModelFetchError(f"could not download {url}: the server's answers made no sense")


def _http_attempt(
    url: str,
    part: Path,
    offset: int,
    *,
    expected: str,
    label: str,
    progress: bool,
    timeout: float,
) -> bool:
    """One request; False when the partial file must be dropped and the request redone."""
    headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
    if offset:
        headers["Range"] = f"bytes={offset}-"
        meta = _read_meta(part)
        validator = meta.get("etag") or meta.get("last_modified")
        if validator:
            headers["If-Range"] = validator
        logger.info("resuming %s at byte %d", url, offset)
    request = urllib.request.Request(url, headers=headers)  # noqa: S310 - scheme checked
    try:
        response = urllib.request.urlopen(request, timeout=timeout)  # noqa: S310
    except urllib.error.HTTPError as err:
        err.close()
        if err.code == 416 and offset:  # nothing after `offset`: complete already?
            return file_sha256(part) == expected
        raise _http_error(url, err) from err
    except (urllib.error.URLError, OSError, http.client.HTTPException) as err:
        raise _connection_error(url, err, timeout) from err
    with response:
        start, total = _plan(url, response.status, response.headers, offset)
        if start < 0:
            return False
        _write_meta(part, url, response.headers)
        _stream(response, part, start, total, label=label, progress=progress, source=url)
    return True


def _plan(url: str, status: int, headers: Message, offset: int) -> tuple[int, int | None]:
    """Where to start writing and the full size; start -1 means start over."""
    if status == 206:
        match = _CONTENT_RANGE.match(headers.get("Content-Range", "").strip())
        if not match or int(match.group(1)) != offset:
            logger.info("%s: unexpected Content-Range %r; starting over", url, match)
            return -1, None
        return offset, None if match.group(3) == "*" else int(match.group(3))
    if status != 200:
        raise ModelFetchError(f"unexpected answer from the server for {url}: HTTP {status}")
    if offset:
        logger.info("%s: the server cannot resume downloads; starting from the beginning", url)
    length = headers.get("Content-Length")
    return 0, int(length) if length and length.isdigit() else None


# --- file:// -------------------------------------------------------------------------


def _copy_local(url: str, part: Path, *, label: str, progress: bool) -> None:
    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        raise ModelFetchError(f"cannot fetch {url!r}: file:// URLs must name a local file")
    source = Path(urllib.request.url2pathname(parts.path))
    if not source.is_file():
        raise ModelFetchError(f"{source} does not exist or is not a file ({url})")
    total = source.stat().st_size
    offset = _resume_offset(part, url)
    if offset > total:
        discard(part)
        offset = 0
    _write_meta(part, url, Message())
    try:
        with source.open("rb") as src:
            src.seek(offset)
            _stream(src, part, offset, total, label=label, progress=progress, source=str(source))
    except OSError as err:
        raise ModelFetchError(f"could not read {source}: {err.strerror or err}") from err


# --- shared --------------------------------------------------------------------------


def _stream(
    reader: _Reader,
    part: Path,
    start: int,
    total: int | None,
    *,
    label: str,
    progress: bool,
    source: str,
) -> None:
    if total is not None:
        ensure_free_space(part.parent, total - start, what=f"downloading {label}")
    bar = Progress(label, total, start=start) if progress else None
    received = start
    try:
        with part.open("r+b" if start else "wb") as out:
            out.seek(start)
            out.truncate()
            while chunk := _read(reader, source, received, total):
                _write(out, chunk, part.parent)
                received += len(chunk)
                if bar is not None:
                    bar.update(len(chunk))
    finally:
        if bar is not None:
            bar.finish()
    if total is not None and received < total:
        raise _interrupted(source, received, total, "the connection closed early")


def _read(reader: _Reader, source: str, received: int, total: int | None) -> bytes:
    try:
        return reader.read(CHUNK)
    except TimeoutError as err:
        raise _interrupted(source, received, total, "timed out") from err
    except (OSError, http.client.HTTPException) as err:
        raise _interrupted(source, received, total, str(err) or type(err).__name__) from err


def _write(out: IO[bytes], chunk: bytes, folder: Path) -> None:
    try:
        out.write(chunk)
    except OSError as err:
        if is_disk_full(err):
            raise disk_full_error(folder, err) from err
        raise ModelFetchError(f"could not write to {folder}: {err.strerror or err}") from err


def _resume_offset(part: Path, url: str) -> int:
    if not part.exists():
        return 0
    if _read_meta(part).get("url") != url:
        discard(part)
        return 0
    return part.stat().st_size


def _meta_path(part: Path) -> Path:
    return part.with_suffix(".json")


def _read_meta(part: Path) -> dict[str, str]:
    try:
        data = json.loads(_meta_path(part).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): str(v) for k, v in data.items() if isinstance(v, str)}


def _write_meta(part: Path, url: str, headers: Message) -> None:
    meta = {"url": url}
    etag = headers.get("ETag")
    if etag and not etag.startswith("W/"):  # If-Range needs a strong validator
        meta["etag"] = etag
    if headers.get("Last-Modified"):
        meta["last_modified"] = str(headers["Last-Modified"])
    _meta_path(part).write_text(json.dumps(meta), encoding="utf-8")


@contextmanager
def _exclusive(lock: Path, url: str) -> Iterator[None]:
    with lock.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as err:
            raise ModelFetchError(f"another download of {url} is already running") from err
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# --- errors a person can act on --------------------------------------------------------


def _interrupted(source: str, received: int, total: int | None, why: str) -> ModelFetchError:
    of = f" of {human_bytes(total)}" if total is not None else ""
    return ModelFetchError(
        f"the download of {source} was interrupted after {human_bytes(received)}{of} "
        f"({why}). Run the same command again to resume."
    )


def _http_error(url: str, err: urllib.error.HTTPError) -> ModelFetchError:
    code, reason = err.code, err.reason
    if code == 404:
        text = f"{url} was not found on the server (HTTP 404 Not Found); check the URL"
    elif code in (401, 403):
        text = f"the server refused access to {url} (HTTP {code} {reason})"
    elif code >= 500:
        text = f"the server failed to send {url} (HTTP {code} {reason}); try again later"
    else:
        text = f"the server answered HTTP {code} {reason} for {url}"
    return ModelFetchError(text)


_Explain = Callable[[str, float, BaseException], str]

_EXPLANATIONS: tuple[tuple[type[BaseException], _Explain], ...] = (
    (
        ConnectionRefusedError,
        lambda host, _t, _e: (
            f"could not connect to {host}: connection refused "
            "(is the address right, and is the server running?)"
        ),
    ),
    (
        socket.gaierror,
        lambda host, _t, _e: (
            f"could not find the host {host!r}: is this machine online, and is the name right?"
        ),
    ),
    (
        TimeoutError,
        lambda host, t, _e: (
            f"{host} did not answer within {t:g} s (timed out); check the network and retry"
        ),
    ),
    (
        ssl.SSLError,
        lambda host, _t, e: f"the secure connection to {host} failed: {e}",
    ),
)


def _connection_error(url: str, err: BaseException, timeout: float) -> ModelFetchError:
    reason: BaseException | str = err
    if isinstance(err, urllib.error.URLError):
        reason = err.reason
    host = urlsplit(url).netloc
    if isinstance(reason, BaseException):
        for kind, explain in _EXPLANATIONS:
            if isinstance(reason, kind):
                return ModelFetchError(explain(host, timeout, reason))
    return ModelFetchError(f"could not download {url} from {host}: {reason}")
