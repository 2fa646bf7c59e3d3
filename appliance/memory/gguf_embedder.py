"""An optional embedder: a GGUF embedding model through llama-cpp-python.

For a model the household fetched (``appliance models fetch``), e.g.
nomic-embed-text v1.5 (768-d), which wants ``"search_query: "`` /
``"search_document: "`` in front of the text (``memory.gguf_*_prefix``). Its gate
thresholds are not measured here: the defaults below are the figures the issue gave
for another model; measure yours on ``tests/data/memory_pairs.jsonl`` and set
``memory.duplicate_similarity`` and ``memory.conflict_similarity``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from appliance.memory.embedder import Thresholds, Vector
from appliance.memory.errors import EmbeddingError

THRESHOLDS = Thresholds(duplicate=0.92, conflict=0.75)


class GgufEmbedder:
    """Mean-pooled, L2-normalised embeddings of a GGUF model."""

    def __init__(
        self,
        path: Path,
        *,
        threads: int = 1,
        query_prefix: str = "search_query: ",
        passage_prefix: str = "search_document: ",
        n_ctx: int = 1024,
    ) -> None:
        if not path.is_file():
            msg = f"GGUF embedding model not found: {path}"
            raise EmbeddingError(msg)
        try:
            from llama_cpp import LLAMA_POOLING_TYPE_MEAN, Llama

            self._llm: Any = Llama(
                model_path=str(path),
                embedding=True,
                pooling_type=LLAMA_POOLING_TYPE_MEAN,
                n_ctx=n_ctx,
                n_batch=n_ctx,
                n_ubatch=n_ctx,
                n_threads=threads,
                verbose=False,
            )
        except (ImportError, OSError, RuntimeError, ValueError) as err:
            msg = f"cannot load the GGUF embedding model {path.name}: {err}"
            raise EmbeddingError(msg) from err
        self._name = f"gguf/{path.stem}"
        self._dimension = int(self._llm.n_embd())
        self._query_prefix = query_prefix
        self._passage_prefix = passage_prefix

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
        return self._embed([self._passage_prefix + t for t in texts])

    def embed_query(self, text: str) -> Vector:
        found: Vector = self._embed([self._query_prefix + text])[0]
        return found

    def _embed(self, texts: list[str]) -> Vector:
        rows = np.asarray(self._llm.embed(texts), dtype=np.float32)
        if rows.ndim != 2:  # one pooled vector per text
            msg = f"{self._name}: the model gave no pooled embeddings"
            raise EmbeddingError(msg)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        normalised: Vector = rows / np.maximum(norms, 1e-12)
        return normalised
