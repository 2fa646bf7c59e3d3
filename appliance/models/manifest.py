"""``<data_dir>/models/manifest.json``: what is installed, from where, with which hashes.

One JSON object, ``{"version": 1, "models": {name: record}}``, rewritten atomically
(temporary file + rename) under a lock file, so two ``models fetch`` runs cannot lose
each other's record.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from appliance.models.errors import ModelFetchError

MANIFEST = "manifest.json"
LOCK = ".lock"
VERSION = 1


@dataclass(frozen=True)
class Source:
    """One downloaded file an installed model came from."""

    url: str
    sha256: str
    size: int
    archive: str | None = None


@dataclass(frozen=True)
class InstalledModel:
    name: str
    kind: str | None  # vosk | piper | whisper | gguf, or None when unknown
    language: str | None
    url: str  # of the first (usually only) source
    sha256: str  # of the first source, as downloaded (the archive, not its contents)
    size: int  # bytes downloaded, all sources together
    fetched_at: str  # ISO 8601, UTC
    root: Path  # <data_dir>/models/<name>
    model: str = ""  # the model inside root, relative ("" = root itself)
    files: Mapping[str, str] = field(default_factory=dict)  # relative path -> sha256
    sources: tuple[Source, ...] = ()

    @property
    def path(self) -> Path:
        """What an engine loads: the model folder or file."""
        return self.root / self.model if self.model else self.root

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "language": self.language,
            "url": self.url,
            "sha256": self.sha256,
            "size": self.size,
            "fetched_at": self.fetched_at,
            "model": self.model,
            "files": dict(self.files),
            "sources": [vars(s) for s in self.sources],
        }

    @classmethod
    def from_json(cls, models_dir: Path, data: Mapping[str, Any]) -> InstalledModel:
        name = str(data["name"])
        return cls(
            name=name,
            kind=_opt_str(data.get("kind")),
            language=_opt_str(data.get("language")),
            url=str(data["url"]),
            sha256=str(data["sha256"]),
            size=int(data["size"]),
            fetched_at=str(data["fetched_at"]),
            root=models_dir / name,
            model=str(data.get("model") or ""),
            files={str(k): str(v) for k, v in dict(data.get("files") or {}).items()},
            sources=tuple(
                Source(
                    url=str(s["url"]),
                    sha256=str(s["sha256"]),
                    size=int(s["size"]),
                    archive=_opt_str(s.get("archive")),
                )
                for s in data.get("sources") or ()
            ),
        )


def load(models_dir: Path) -> dict[str, InstalledModel]:
    path = models_dir / MANIFEST
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as err:
        raise ModelFetchError(f"cannot read the model manifest {path}: {err}") from err
    try:
        return {
            str(name): InstalledModel.from_json(models_dir, record)
            for name, record in dict(raw["models"]).items()
        }
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise ModelFetchError(
            f"the model manifest {path} is damaged ({err!r}); move it away and fetch again"
        ) from err


def save(models_dir: Path, models: Mapping[str, InstalledModel]) -> None:
    data = {
        "version": VERSION,
        "models": {name: models[name].to_json() for name in sorted(models)},
    }
    fd, tmp = tempfile.mkstemp(prefix=".manifest-", suffix=".json", dir=models_dir)
    tmp_path = Path(tmp)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        tmp_path.chmod(0o644)  # mkstemp makes it private; the manifest is not secret
        tmp_path.replace(models_dir / MANIFEST)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


@contextmanager
def locked(models_dir: Path) -> Iterator[None]:
    """Hold the models folder's lock (blocking) while installing or removing."""
    models_dir.mkdir(parents=True, exist_ok=True)
    with (models_dir / LOCK).open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _opt_str(value: object) -> str | None:
    return None if value is None else str(value)
