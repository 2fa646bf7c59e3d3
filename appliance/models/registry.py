"""What is installed under ``<data_dir>/models``, and is it still intact.

The node asks :func:`find` ("is there a Vosk model for pt?") and loads the path it
gets; nothing here touches the network.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from appliance.models import manifest
from appliance.models.download import file_sha256
from appliance.models.fetch import models_dir
from appliance.models.manifest import InstalledModel

logger = logging.getLogger(__name__)

__all__ = ["InstalledModel", "VerifyResult", "find", "installed", "verify"]


@dataclass(frozen=True)
class VerifyResult:
    name: str
    path: Path
    files: int  # files checked
    problems: tuple[str, ...]  # empty when intact

    @property
    def ok(self) -> bool:
        return not self.problems


def installed(data_dir: Path) -> list[InstalledModel]:
    """Every model the manifest records, by name."""
    models = manifest.load(models_dir(data_dir))
    return [models[name] for name in sorted(models)]


def find(data_dir: Path, kind: str, lang: str | None = None) -> Path | None:
    """The path of an installed model of ``kind`` for ``lang``, or None.

    ``lang`` matches by language first: asking for "pt" finds "pt" and "pt-BR";
    asking for "pt-BR" prefers "pt-BR", then a plain "pt". Among equals the most
    recently fetched wins. ``lang`` None takes any language. Models whose files are
    gone are skipped.
    """
    best: tuple[int, str, Path] | None = None
    for model in installed(data_dir):
        if model.kind != kind:
            continue
        score = _language_score(lang, model.language)
        if score == 0 or not model.path.exists():
            continue
        candidate = (score, model.fetched_at, model.path)
        if best is None or candidate[:2] > best[:2]:
            best = candidate
    return None if best is None else best[2]


def verify(data_dir: Path, names: list[str] | None = None) -> list[VerifyResult]:
    """Re-hash the installed files of each model (or of ``names``) against the manifest."""
    models = {m.name: m for m in installed(data_dir)}
    results = []
    for name in names if names else sorted(models):
        model = models.get(name)
        if model is None:
            path = models_dir(data_dir) / name
            results.append(VerifyResult(name, path, 0, ("not installed (not in the manifest)",)))
            continue
        results.append(_verify_one(model))
    return results


def _verify_one(model: InstalledModel) -> VerifyResult:
    if not model.root.is_dir():
        return VerifyResult(model.name, model.root, 0, (f"folder {model.root} is missing",))
    problems = []
    if not model.path.exists():
        problems.append(f"the model itself ({model.path}) is missing")
    for rel, expected in model.files.items():
        path = model.root / rel
        if not path.is_file():
            problems.append(f"missing: {rel}")
        elif file_sha256(path) != expected:
            problems.append(f"changed: {rel} (sha256 differs from the manifest)")
    if problems:
        logger.info("model %s failed verification: %s", model.name, "; ".join(problems))
    return VerifyResult(model.name, model.root, len(model.files), tuple(problems))


def _language_score(wanted: str | None, have: str | None) -> int:
    """3 exact, 2 same language more specific, 1 same language more generic, 0 no."""
    if wanted is None:
        return 3
    if have is None:
        return 0
    want, got = _norm(wanted), _norm(have)
    if want == got:
        return 3
    if want.split("-")[0] != got.split("-")[0]:
        return 0
    if "-" not in want:
        return 2  # asked "pt", have "pt-BR"
    return 1 if "-" not in got else 0  # asked "pt-BR", have "pt" (but not "pt-PT")


def _norm(tag: str) -> str:
    return tag.strip().replace("_", "-").lower()
