"""The optional GGUF embedder, on a real GGUF file through llama-cpp-python.

No GGUF *embedding* model ships in a registry package, so the narrator's Gemma 3 270M
stands in: it checks the adapter (loading, mean pooling, normalisation, prefixes,
dimension), not the quality of its vectors.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from appliance.llm.model import ensure_default_model
from appliance.memory.embedder import load_embedder
from appliance.memory.errors import EmbeddingError
from appliance.memory.gguf_embedder import GgufEmbedder
from appliance.memory.settings import MemorySettings

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def gguf(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield ensure_default_model(tmp_path_factory.mktemp("gguf"))


def test_a_gguf_model_embeds_normalised_vectors_of_its_own_dimension(gguf: Path) -> None:
    settings = MemorySettings(embedder="gguf", gguf_path=gguf, gguf_query_prefix="query: ",
                              gguf_passage_prefix="passage: ")  # fmt: skip
    embedder = load_embedder(settings)
    assert isinstance(embedder, GgufEmbedder)
    assert embedder.name == "gguf/gemma3-270m-q4_k_m" and embedder.dimension == 640
    stored = embedder.embed_passages(["I like coffee", "The car needs new tires"])
    assert stored.shape == (2, 640) and stored.dtype == np.float32
    assert np.allclose(np.linalg.norm(stored, axis=1), 1.0, atol=1e-5)
    query = embedder.embed_query("I like coffee")
    assert query.shape == (640,)
    assert float(query @ stored[0]) < 0.999  # the query prefix made it another text
    assert float(query @ stored[0]) > float(query @ stored[1])


def test_a_missing_gguf_file_is_an_embedding_error(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match="not found"):
        GgufEmbedder(tmp_path / "nomic-embed-text.gguf")
