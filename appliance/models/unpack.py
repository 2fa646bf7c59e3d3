"""Unpack zip and tar.gz archives without letting any member escape the target folder.

Refused: absolute member names, ``..`` components, symbolic links that point (or
members that pass through a link) outside the target, hard links, devices and FIFOs.
The checks run member by member, before anything is written for that member, and the
resolved path of every parent folder is checked again, so a link planted by an
earlier member cannot be used to write elsewhere.
"""

from __future__ import annotations

import logging
import re
import shutil
import stat
import tarfile
import zipfile
from pathlib import Path
from typing import IO, Literal

from appliance.models.errors import ModelFetchError
from appliance.models.space import ensure_free_space

logger = logging.getLogger(__name__)

ArchiveType = Literal["zip", "tar.gz"]
ARCHIVE_TYPES: tuple[ArchiveType, ...] = ("zip", "tar.gz")

_DRIVE = re.compile(r"^[A-Za-z]:")


def detect_archive(name: str) -> ArchiveType | None:
    """The archive type a file or URL name ends with, or None for a plain file."""
    lowered = name.lower().split("?", 1)[0]
    if lowered.endswith(".zip"):
        return "zip"
    if lowered.endswith((".tar.gz", ".tgz")):
        return "tar.gz"
    return None


def unpack(archive: Path, kind: ArchiveType, dest: Path, *, label: str = "") -> None:
    """Unpack ``archive`` into the existing folder ``dest``."""
    label = label or archive.name
    try:
        if kind == "zip":
            _unpack_zip(archive, dest, label)
        else:
            _unpack_tar(archive, dest, label)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError) as err:
        raise ModelFetchError(f"{label} is not a valid {kind} archive: {err}") from err


def _unpack_zip(archive: Path, dest: Path, label: str) -> None:
    root = dest.resolve()
    with zipfile.ZipFile(archive) as zf:
        members = zf.infolist()
        ensure_free_space(dest, sum(m.file_size for m in members), what=f"unpacking {label}")
        for info in members:
            target = _target(root, info.filename, label)
            if stat.S_ISLNK(info.external_attr >> 16):
                raise _unsafe(label, info.filename, "is a symbolic link")
            if target is None:
                continue
            if info.is_dir():
                _mkdir(target, root, label, info.filename)
                continue
            _mkdir(target.parent, root, label, info.filename)
            with zf.open(info) as src:
                _write(src, target, label, info.filename)


def _unpack_tar(archive: Path, dest: Path, label: str) -> None:
    root = dest.resolve()
    with tarfile.open(archive, "r:gz") as tar:
        members = tar.getmembers()
        ensure_free_space(dest, sum(m.size for m in members), what=f"unpacking {label}")
        for member in members:
            target = _target(root, member.name, label)
            if target is None:
                continue
            if member.isdir():
                _mkdir(target, root, label, member.name)
            elif member.isfile():
                _mkdir(target.parent, root, label, member.name)
                src = tar.extractfile(member)
                if src is None:  # pragma: no cover - isfile() members always have data
                    raise _unsafe(label, member.name, "has no data")
                with src:
                    _write(src, target, label, member.name)
            elif member.issym():
                _mkdir(target.parent, root, label, member.name)
                _symlink(member, target, root, label)
            elif member.islnk():
                raise _unsafe(label, member.name, "is a hard link")
            else:
                raise _unsafe(label, member.name, "is a device or FIFO")


def _target(root: Path, name: str, label: str) -> Path | None:
    """Where member ``name`` goes under ``root``; None for the archive's own root."""
    clean = name.replace("\\", "/")
    if clean.startswith("/") or _DRIVE.match(clean):
        raise _unsafe(label, name, "has an absolute path")
    parts = [p for p in clean.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise _unsafe(label, name, "contains '..'")
    if not parts:
        return None
    target = root.joinpath(*parts)
    if not _inside(target.parent.resolve(), root):
        raise _unsafe(label, name, "goes through a link that leads outside")
    return target


def _symlink(member: tarfile.TarInfo, target: Path, root: Path, label: str) -> None:
    link = member.linkname
    if link.startswith("/") or _DRIVE.match(link):
        raise _unsafe(label, member.name, f"is a link to the absolute path {link!r}")
    if not _inside((target.parent / link).resolve(), root):
        raise _unsafe(label, member.name, f"is a link to {link!r}, outside the model")
    if target.is_symlink() or target.exists():
        raise _unsafe(label, member.name, "replaces another member")
    target.symlink_to(link)


def _mkdir(folder: Path, root: Path, label: str, name: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    if not _inside(folder.resolve(), root):
        raise _unsafe(label, name, "goes through a link that leads outside")


def _write(src: IO[bytes], target: Path, label: str, name: str) -> None:
    if target.is_symlink():
        raise _unsafe(label, name, "would be written through a symbolic link")
    try:
        with target.open("wb") as out:
            shutil.copyfileobj(src, out, 1 << 20)
    except OSError as err:
        raise ModelFetchError(f"could not unpack {name} from {label}: {err}") from err


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _unsafe(label: str, name: str, why: str) -> ModelFetchError:
    logger.debug("refused archive %s: member %r %s", label, name, why)
    return ModelFetchError(
        f"refusing to unpack {label}: member {name!r} {why}; nothing was installed"
    )
