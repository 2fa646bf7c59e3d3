"""A thin, typed layer over ``llama_cpp.Llama``: load, pick the prompt mode, stream text.

Prompt processing is the slow part on a small CPU (a few hundred tokens take
seconds), so the fixed few-shot prefix of each language is evaluated once
(``warm``) and its KV state kept: llama.cpp reuses the longest common prefix of
consecutive prompts, and when the language changes the saved state of the other
prefix is loaded back (a few milliseconds) instead of evaluating it again.
"""

from __future__ import annotations

import ctypes
import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast

from appliance.llm.settings import LlmSettings

_LOGGER = logging.getLogger(__name__)

CHAT_TEMPLATE_KEY = "tokenizer.chat_template"


class LlamaLike(Protocol):
    """The part of ``llama_cpp.Llama`` the narrator uses (fakes implement it in tests)."""

    metadata: dict[str, str]

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]: ...

    def create_completion(
        self,
        prompt: str,
        *,
        max_tokens: int | None = ...,
        temperature: float = ...,
        stop: str | list[str] | None = ...,
        stream: bool = ...,
        seed: int | None = ...,
    ) -> Any: ...

    def create_chat_completion(
        self,
        messages: Any,
        *,
        max_tokens: int | None = ...,
        temperature: float = ...,
        stop: str | list[str] | None = ...,
        stream: bool = ...,
        seed: int | None = ...,
    ) -> Any: ...


class PromptTooLongError(ValueError):
    """The prompt and the reply would not fit the model's context window."""


@dataclass(frozen=True)
class Piece:
    """One streamed piece of generated text."""

    text: str
    finish_reason: str | None = None


def _load_llama(path: Path, settings: LlmSettings) -> LlamaLike:
    from llama_cpp import Llama

    llm = Llama(
        model_path=str(path),
        n_ctx=settings.n_ctx,
        n_threads=settings.n_threads,
        n_threads_batch=settings.n_threads,
        seed=settings.seed,
        verbose=False,
    )
    return cast(LlamaLike, llm)


class _PrefixStates:
    """Saved KV states of fixed prompt prefixes (real ``llama_cpp.Llama`` only)."""

    def __init__(self, llm: Any) -> None:
        import llama_cpp

        self._lib: Any = llama_cpp
        self._llm = llm
        self._states: dict[str, tuple[list[int], Any, int]] = {}

    def save(self, prefix: str, tokens: list[int]) -> None:
        lib, ctx = self._lib, self._llm.ctx
        size = int(lib.llama_state_seq_get_size(ctx, 0))
        buffer = (ctypes.c_uint8 * size)()
        written = int(lib.llama_state_seq_get_data(ctx, buffer, size, 0))
        # Kept as the ctypes buffer itself and handed to llama.cpp as is on every
        # restore: a fresh multi-megabyte copy per narration fragmented the heap
        # (resident memory grew ~3 MB per narration until it plateaued).
        self._states[prefix] = (tokens, buffer, written)

    def has(self, prefix: str) -> bool:
        return prefix in self._states

    def current(self, prefix: str) -> bool:
        """Whether the context already starts with this prefix."""
        tokens = self._states[prefix][0]
        llm = self._llm
        return bool(llm.n_tokens >= len(tokens) and list(llm.input_ids[: len(tokens)]) == tokens)

    def restore(self, prefix: str) -> bool:
        tokens, buffer, size = self._states[prefix]
        lib, llm = self._lib, self._llm
        llm.reset()
        memory = lib.llama_get_memory(llm.ctx)
        if memory is not None:
            lib.llama_memory_clear(memory, True)
        if int(lib.llama_state_seq_set_data(llm.ctx, buffer, size, 0)) == 0:
            llm.reset()
            return False
        llm.input_ids[: len(tokens)] = tokens
        llm.n_tokens = len(tokens)
        return True


class Engine:
    """One loaded model. Not thread-safe: the narrator serializes calls."""

    def __init__(self, llm: LlamaLike, settings: LlmSettings) -> None:
        self._llm = llm
        self._settings = settings
        self.chat = self._use_chat(llm.metadata, settings)
        self._states: _PrefixStates | None = None
        if type(llm).__module__.startswith("llama_cpp"):
            self._states = _PrefixStates(llm)

    @classmethod
    def load(cls, path: Path, settings: LlmSettings) -> Engine:
        _LOGGER.info("loading narrator model %s", path)
        return cls(_load_llama(path, settings), settings)

    @staticmethod
    def _use_chat(metadata: Mapping[str, str], settings: LlmSettings) -> bool:
        if settings.chat_template == "auto":
            return bool(metadata.get(CHAT_TEMPLATE_KEY))
        return settings.chat_template == "chat"

    def warm(self, prefix: str) -> None:
        """Evaluate a prompt prefix now and keep its state for later prompts."""
        if self.chat:
            return
        if self._states is None:
            self._complete(prefix, max_tokens=1)
            return
        llm: Any = self._llm
        tokens = list(llm.tokenize(prefix.encode()))
        llm.reset()
        llm.eval(tokens)
        self._states.save(prefix, tokens)

    def _complete(self, prompt: str, *, max_tokens: int) -> None:
        for _ in self._llm.create_completion(
            prompt, max_tokens=max_tokens, temperature=0.0, stream=True
        ):
            pass

    def _prepare(self, prefix: str) -> None:
        states = self._states
        if states is None or not states.has(prefix) or states.current(prefix):
            return
        if not states.restore(prefix):
            _LOGGER.warning("could not restore a saved prompt state; evaluating it again")

    def complete(self, prefix: str, query: str, *, stop: Sequence[str]) -> Iterator[Piece]:
        """Stream a completion of ``prefix + query``.

        Raises ``PromptTooLongError`` (before any work) when the prompt and the reply
        would not fit the context window.
        """
        prompt = prefix + query
        size = len(self._llm.tokenize(prompt.encode()))
        if size + self._settings.max_tokens > self._settings.n_ctx:
            msg = f"prompt of {size} tokens + {self._settings.max_tokens} > n_ctx"
            raise PromptTooLongError(msg)
        return self._stream_completion(prefix, prompt, stop)

    def _stream_completion(self, prefix: str, prompt: str, stop: Sequence[str]) -> Iterator[Piece]:
        self._prepare(prefix)
        stream = self._llm.create_completion(
            prompt,
            max_tokens=self._settings.max_tokens,
            temperature=self._settings.temperature,
            stop=list(stop),
            stream=True,
            seed=self._settings.seed,
        )
        try:
            for chunk in stream:
                choice = chunk["choices"][0]
                yield Piece(choice.get("text") or "", choice.get("finish_reason"))
        finally:
            _close(stream)

    def chat_complete(self, messages: list[dict[str, str]]) -> Iterator[Piece]:
        """Stream a chat completion."""
        stream = self._llm.create_chat_completion(
            messages,
            max_tokens=self._settings.max_tokens,
            temperature=self._settings.temperature,
            stream=True,
            seed=self._settings.seed,
        )
        try:
            for chunk in stream:
                choice = chunk["choices"][0]
                delta = choice.get("delta") or {}
                yield Piece(delta.get("content") or "", choice.get("finish_reason"))
        finally:
            _close(stream)


def _close(stream: Any) -> None:
    """Stop llama.cpp generating (a stream abandoned early is a generator to close)."""
    close = getattr(stream, "close", None)
    if close is not None:
        close()
