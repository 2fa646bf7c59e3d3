"""Models a household may want, as data: where they come from and what they are.

None of these is downloaded unless someone runs ``appliance models fetch NAME``.
A ``sha256`` of ``None`` means we do not know the published checksum for sure, so
``models fetch`` refuses the entry until the user passes ``--sha256`` (one per file):
a download is never installed unchecked, and a checksum is never made up here.
Adding a model is adding one ``CatalogEntry``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from appliance.models.unpack import ArchiveType

Kind = Literal["vosk", "piper", "whisper", "gguf"]
KINDS: tuple[Kind, ...] = get_args(Kind)

_VOSK = "https://alphacephei.com/vosk/models"
# A tag, not "main": the files behind these URLs do not change under a given hash.
_PIPER = "https://huggingface.co/rhasspy/piper-voices/resolve/v1.0.0"


@dataclass(frozen=True)
class RemoteFile:
    url: str
    sha256: str | None = None  # None: the user must supply it (--sha256)
    archive: ArchiveType | None = None  # None: a plain file, installed as is


@dataclass(frozen=True)
class CatalogEntry:
    name: str  # also the folder name under <data_dir>/models
    kind: Kind
    language: str  # BCP 47: "en-US", "pt", "pt-BR"
    files: tuple[RemoteFile, ...]
    # What is the model: a folder inside the archive (it becomes the installed folder
    # itself) or a file among the installed ones (the path engines are given).
    inside: str | None
    approx_mb: int  # for `models list` only
    licence: str
    checksum_hint: str = ""  # where a user can find the sha256 to pass

    @property
    def needs_sha256(self) -> bool:
        return any(f.sha256 is None for f in self.files)


_VOSK_HINT = (
    "Use a sha256 you trust for this archive: one recorded by whoever prepared this "
    "household's models, or `sha256sum` of a copy you have verified."
)
_HF_HINT = (
    "Hugging Face shows the SHA256 of large files on each file's page in "
    "rhasspy/piper-voices (tag v1.0.0, 'Git LFS details')."
)

CATALOG: tuple[CatalogEntry, ...] = (
    CatalogEntry(
        name="vosk-model-small-en-us-0.15",
        kind="vosk",
        language="en-US",
        files=(RemoteFile(f"{_VOSK}/vosk-model-small-en-us-0.15.zip", archive="zip"),),
        inside="vosk-model-small-en-us-0.15",
        approx_mb=40,
        licence="Apache-2.0 (Alpha Cephei)",
        checksum_hint=_VOSK_HINT,
    ),
    CatalogEntry(
        name="vosk-model-small-pt-0.3",
        kind="vosk",
        language="pt",
        files=(RemoteFile(f"{_VOSK}/vosk-model-small-pt-0.3.zip", archive="zip"),),
        inside="vosk-model-small-pt-0.3",
        approx_mb=31,
        licence="Apache-2.0 (Alpha Cephei)",
        checksum_hint=_VOSK_HINT,
    ),
    CatalogEntry(
        name="pt_BR-faber-medium",
        kind="piper",
        language="pt-BR",
        files=(
            RemoteFile(f"{_PIPER}/pt/pt_BR/faber/medium/pt_BR-faber-medium.onnx"),
            RemoteFile(f"{_PIPER}/pt/pt_BR/faber/medium/pt_BR-faber-medium.onnx.json"),
        ),
        inside="pt_BR-faber-medium.onnx",
        approx_mb=63,
        licence="see MODEL_CARD in pt/pt_BR/faber/medium of rhasspy/piper-voices",
        checksum_hint=_HF_HINT,
    ),
)


def get(name: str) -> CatalogEntry | None:
    for entry in CATALOG:
        if entry.name == name:
            return entry
    return None
