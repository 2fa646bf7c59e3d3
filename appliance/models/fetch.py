"""Fetch a model: download it (checked), unpack it safely, move it into place, record it.

Layout under the models folder (``<data_dir>/models``, see :func:`models_dir`)::

    .partial/        downloads in progress (resumable), named after their URL
    .staging-*/      an install being assembled (removed when done)
    <name>/          an installed model
    manifest.json    what is installed (see :mod:`appliance.models.manifest`)

The checksum is verified before anything is unpacked; the model folder appears under
its name in one rename, so a reader never sees half a model.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal
from urllib.parse import unquote, urlsplit

from appliance.models import manifest
from appliance.models.catalog import CatalogEntry
from appliance.models.download import (
    DEFAULT_TIMEOUT,
    PARTIAL,
    Downloaded,
    check_url,
    download,
    file_sha256,
    forget,
    normalize_sha256,
)
from appliance.models.errors import ModelFetchError
from appliance.models.manifest import InstalledModel, Source
from appliance.models.unpack import ArchiveType, detect_archive, unpack

logger = logging.getLogger(__name__)

ArchiveChoice = Literal["zip", "tar.gz", "none"]
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$")
_FILE_NAME = re.compile(r"^[^/\\\x00-\x1f\x7f]{1,255}$")
_STAGING = ".staging-"


@dataclass(frozen=True)
class FileSpec:
    """One file to download for a model."""

    url: str
    sha256: str
    archive: ArchiveType | None = None  # None: installed as a plain file


def models_dir(data_dir: Path) -> Path:
    return data_dir / "models"


def fetch(
    url: str,
    sha256: str,
    dest_dir: Path,
    *,
    name: str,
    archive: ArchiveChoice | None = None,
    kind: str | None = None,
    language: str | None = None,
    inside: str | None = None,
    progress: bool = True,
    timeout: float = DEFAULT_TIMEOUT,
    force: bool = False,
) -> Path:
    """Download ``url``, check ``sha256``, install it as ``dest_dir/name``.

    ``dest_dir`` is the models folder (``models_dir(data_dir)``). ``archive`` None
    guesses from the URL (``.zip``, ``.tar.gz``/``.tgz``); "none" installs the file
    as is. ``inside`` names the model inside the download (a folder of the archive
    that becomes the installed folder, or a file); without it a lone top folder of
    an archive is used. ``kind`` None is guessed from the files. Returns the path
    an engine loads (the same that :func:`appliance.models.registry.find` returns).
    """
    spec = FileSpec(url=url, sha256=sha256, archive=archive_of(url, archive))
    return install(
        (spec,),
        dest_dir,
        name=name,
        kind=kind,
        language=language,
        inside=inside,
        progress=progress,
        timeout=timeout,
        force=force,
    )


def fetch_entry(
    entry: CatalogEntry,
    dest_dir: Path,
    *,
    sha256s: Sequence[str] = (),
    urls: Sequence[str] = (),
    name: str | None = None,
    progress: bool = True,
    timeout: float = DEFAULT_TIMEOUT,
    force: bool = False,
) -> Path:
    """Install a catalog entry; ``urls`` replace its URLs (a mirror, a USB stick)."""
    hashes = resolve_hashes(entry, sha256s)
    if urls and len(urls) != len(entry.files):
        raise ModelFetchError(
            f"{entry.name} is {_count(entry)}; give --url once per file, in this order: "
            + ", ".join(file_name_of(f.url) for f in entry.files)
        )
    specs = tuple(
        FileSpec(url=urls[i] if urls else f.url, sha256=hashes[i], archive=f.archive)
        for i, f in enumerate(entry.files)
    )
    return install(
        specs,
        dest_dir,
        name=name or entry.name,
        kind=entry.kind,
        language=entry.language,
        inside=entry.inside,
        progress=progress,
        timeout=timeout,
        force=force,
    )


def resolve_hashes(entry: CatalogEntry, given: Sequence[str]) -> list[str]:
    """The sha256 of each file of ``entry``: the catalog's, or the user's if it has none."""
    if not given:
        if entry.needs_sha256:
            raise ModelFetchError(needs_sha256_message(entry))
        return [normalize_sha256(f.sha256 or "") for f in entry.files]
    if len(given) != len(entry.files):
        raise ModelFetchError(
            f"{entry.name} is {_count(entry)}: give --sha256 once per file, in this order: "
            + ", ".join(file_name_of(f.url) for f in entry.files)
        )
    hashes = []
    for remote, value in zip(entry.files, given, strict=True):
        digest = normalize_sha256(value)
        if remote.sha256 is not None and normalize_sha256(remote.sha256) != digest:
            raise ModelFetchError(
                f"--sha256 {digest} for {file_name_of(remote.url)} is not the catalog's "
                f"{remote.sha256}; refusing to install it"
            )
        hashes.append(digest)
    return hashes


def needs_sha256_message(entry: CatalogEntry) -> str:
    flags = " ".join(f"--sha256 <sha256 of {file_name_of(f.url)}>" for f in entry.files)
    lines = [
        f"the catalog has no checksum it can vouch for for {entry.name}, and models are "
        "never installed unchecked. Pass the sha256 of each file:",
        f"  appliance models fetch {entry.name} {flags}",
    ]
    if entry.checksum_hint:
        lines.append(entry.checksum_hint)
    return "\n".join(lines)


def install(
    specs: Sequence[FileSpec],
    dest_dir: Path,
    *,
    name: str,
    kind: str | None = None,
    language: str | None = None,
    inside: str | None = None,
    progress: bool = True,
    timeout: float = DEFAULT_TIMEOUT,
    force: bool = False,
) -> Path:
    """Download every file of ``specs`` and install them together as ``dest_dir/name``."""
    _check_request(specs, name, inside)
    dest_dir.mkdir(parents=True, exist_ok=True)
    _refuse_if_installed(dest_dir, name, force)
    downloads = [
        download(
            spec.url,
            spec.sha256,
            dest_dir / PARTIAL,
            label=file_name_of(spec.url),
            progress=progress,
            timeout=timeout,
        )
        for spec in specs
    ]
    with manifest.locked(dest_dir):
        _refuse_if_installed(dest_dir, name, force)
        record = _install_locked(
            specs, downloads, dest_dir, name=name, kind=kind, language=language, inside=inside
        )
    for done in downloads:
        forget(done.path)
    logger.debug("installed model %s (%s) at %s", name, record.kind or "unknown kind", record.path)
    return record.path


def _install_locked(
    specs: Sequence[FileSpec],
    downloads: Sequence[Downloaded],
    dest_dir: Path,
    *,
    name: str,
    kind: str | None,
    language: str | None,
    inside: str | None,
) -> InstalledModel:
    for stale in dest_dir.glob(_STAGING + "*"):  # left by a crash; we hold the lock
        shutil.rmtree(stale, ignore_errors=True)
    models = manifest.load(dest_dir)  # a damaged manifest stops us before any change
    staging = Path(tempfile.mkdtemp(prefix=f"{_STAGING}{name}-", dir=dest_dir))
    try:
        content = staging / "content"
        content.mkdir()
        for spec, done in zip(specs, downloads, strict=True):
            if spec.archive is not None:
                unpack(done.path, spec.archive, content, label=file_name_of(spec.url))
            else:
                _place_file(done.path, content / file_name_of(spec.url))
        root, model = _locate(content, inside, all(s.archive for s in specs))
        first = downloads[0]
        record = InstalledModel(
            name=name,
            kind=kind or _guess_kind(root, model),
            language=language,
            url=first.url,
            sha256=first.sha256,
            size=sum(d.size for d in downloads),
            fetched_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            root=dest_dir / name,
            model=model,
            files=_hash_tree(root),
            sources=tuple(
                Source(url=d.url, sha256=d.sha256, size=d.size, archive=s.archive)
                for s, d in zip(specs, downloads, strict=True)
            ),
        )
        _swap(root, dest_dir / name, staging)
        models[name] = record
        manifest.save(dest_dir, models)
        return record
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _check_request(specs: Sequence[FileSpec], name: str, inside: str | None) -> None:
    """Everything that can be refused before any network traffic."""
    if not _NAME.match(name):
        raise ModelFetchError(
            f"{name!r} is not a usable model name: use letters, digits and . _ + - "
            "(not starting with a dot)"
        )
    if not specs:
        raise ModelFetchError(f"nothing to fetch for {name}")
    plain = []
    for spec in specs:
        check_url(spec.url)
        normalize_sha256(spec.sha256)
        if spec.archive is None:
            plain.append(file_name_of(spec.url))
    if len(set(plain)) != len(plain):
        raise ModelFetchError(f"two files of {name} have the same name: {', '.join(plain)}")
    if inside is not None:
        _relative(inside)


def _refuse_if_installed(dest_dir: Path, name: str, force: bool) -> None:
    target = dest_dir / name
    if not force and (target.exists() or target.is_symlink()):
        raise ModelFetchError(f"{name} is already installed in {target}; use --force to replace it")


def _place_file(downloaded: Path, target: Path) -> None:
    """Put a verified plain file into the staging folder; keep the download until done."""
    try:
        target.hardlink_to(downloaded)
    except OSError:
        shutil.copyfile(downloaded, target)


def _locate(content: Path, inside: str | None, all_archives: bool) -> tuple[Path, str]:
    """The folder to install and the model's path inside it."""
    if inside is not None:
        candidate = content.joinpath(*_relative(inside))
        if candidate.is_dir() and not candidate.is_symlink():
            return candidate, ""
        if candidate.is_file():
            return content, PurePosixPath(*_relative(inside)).as_posix()
        raise ModelFetchError(
            f"the download does not contain {inside!r}: is it the right file for this model?"
        )
    entries = list(content.iterdir())
    if all_archives and len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink():
        return entries[0], ""
    return content, _guess_model(content)


def _guess_model(root: Path) -> str:
    files = sorted(p.name for p in root.iterdir() if p.is_file())
    if len(files) == 1:
        return files[0]
    for suffix in (".onnx", ".gguf"):
        matches = [f for f in files if f.endswith(suffix)]
        if len(matches) == 1:
            return matches[0]
    return ""


def _guess_kind(root: Path, model: str) -> str | None:
    if (root / "am" / "final.mdl").is_file() or (root / "conf" / "model.conf").is_file():
        return "vosk"
    if model.endswith(".onnx") and (root / f"{model}.json").is_file():
        return "piper"
    if model.endswith(".gguf"):
        return "gguf"
    if (root / "model.bin").is_file() and (root / "config.json").is_file():
        return "whisper"
    return None


def _hash_tree(root: Path) -> dict[str, str]:
    files: dict[str, str] = {}
    for folder, _dirs, names in os.walk(root):
        for file_name in names:
            path = Path(folder) / file_name
            if path.is_file() and not path.is_symlink():
                files[path.relative_to(root).as_posix()] = file_sha256(path)
    return dict(sorted(files.items()))


def _swap(root: Path, target: Path, staging: Path) -> None:
    """Move ``root`` to ``target`` in one rename; an old install goes to ``staging``."""
    old: Path | None = None
    if target.exists() or target.is_symlink():
        old = staging / "old"
        target.rename(old)
    try:
        root.rename(target)
    except OSError as err:
        if old is not None:
            old.rename(target)
        raise ModelFetchError(f"could not move the model into {target}: {err}") from err


def archive_of(url: str, archive: ArchiveChoice | None) -> ArchiveType | None:
    if archive is None:
        return detect_archive(file_name_of(url))
    return None if archive == "none" else archive


def file_name_of(url: str) -> str:
    file_name = PurePosixPath(unquote(urlsplit(url).path)).name
    if not file_name or file_name.startswith(".") or not _FILE_NAME.match(file_name):
        raise ModelFetchError(
            f"cannot tell a usable file name from {url!r}; the URL must end with the file name"
        )
    return file_name


def _relative(inside: str) -> tuple[str, ...]:
    parts = tuple(p for p in inside.replace("\\", "/").split("/") if p not in ("", "."))
    if inside.startswith(("/", "\\")) or ".." in parts or not parts:
        raise ModelFetchError(f"{inside!r} is not a path inside the model")
    return parts


def _count(entry: CatalogEntry) -> str:
    n = len(entry.files)
    return "one file" if n == 1 else f"{n} files"
