"""The narrator: a receipt becomes one short sentence, from the LLM or a template.

"The model talks, the code acts": the action has already happened (or not) when the
narrator sees its receipt. The LLM only phrases it; ``guard.check`` verifies the
phrase against the receipt, and anything doubtful (guard failure, time budget spent,
an exception, the LLM disabled or still loading, an unsupported language) gives the
deterministic template sentence instead. The LLM never decides or calls anything.

``narrate`` blocks (the node runs it in an executor) and never waits for the model to
load or for a language's prompt to be evaluated: ``load`` does that, at start-up (or
in the background on first use); until it is done narrations use templates.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from appliance.llm.engine import Engine, Piece, PromptTooLongError
from appliance.llm.model import resolve_model_path
from appliance.llm.prompt import (
    chat_messages,
    completion_prefix,
    completion_query,
)
from appliance.llm.settings import LlmSettings
from appliance.llm.think import ThinkFilter
from appliance.memory.answers import (
    answer_messages,
    answer_prefix,
    answer_query,
    check_answer,
    deterministic_answer,
)
from appliance.narration.guard import check
from appliance.narration.lang import SUPPORTED_LANGUAGES, normalize_lang
from appliance.narration.templates import template_sentence
from appliance.narration.when import default_now
from appliance.protocol.receipts import ASK, EITHER_HALF, Receipt

_LOGGER = logging.getLogger(__name__)

Source = Literal["llm", "template"]
EngineFactory = Callable[[Path, LlmSettings], Engine]

MIN_BUDGET_MS = 100.0
"""Less time than this for a sentence: the template at once (the LLM would not finish)."""
TEMPLATE_ONLY_PREFIXES = ("memory.",)
"""Actions always told by their template: the few-shot prompt has no examples of
them, and their sentences repeat the user's own words."""
_SENTENCE_END = re.compile(r"(?<!\b[ap]\.m)[.!?](?=\s)|\n")
_LEADING_LABEL = re.compile(r"^\s*(?:sentence|frase)\s*:\s*", re.IGNORECASE)
_QUOTES = "\"'“”‘’«»"
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Narration:
    """What to say, and where it came from."""

    text: str
    source: Source
    reason: str | None
    """Why the template was used (None for an LLM sentence)."""
    elapsed_ms: float
    ttft_ms: float | None = None
    """Time to the LLM's first token, when it ran."""
    llm_text: str | None = None
    """The LLM's sentence, also when the guard refused it (for diagnostics)."""


class BudgetExceededError(TimeoutError):
    """The narration's time budget ran out before a sentence was complete."""

    def __init__(self, ttft_ms: float | None) -> None:
        super().__init__("narration budget exceeded")
        self.ttft_ms = ttft_ms


@dataclass(frozen=True)
class _Generated:
    text: str
    ttft_ms: float | None
    complete: bool


class Narrator:
    """Turns receipts into sentences; one instance per node, shared by all sessions."""

    def __init__(
        self,
        settings: LlmSettings,
        data_dir: Path,
        *,
        engine_factory: EngineFactory | None = None,
        clock: Callable[[], float] = time.monotonic,
        timezone: dt.tzinfo | None = None,
    ) -> None:
        """``timezone``: the household's zone, for "today"/"tomorrow" (default: the
        machine's); a narration's ``now`` overrides it."""
        self.settings = settings
        self._timezone = timezone
        self._data_dir = data_dir
        self._engine_factory = engine_factory or Engine.load
        self._clock = clock
        self._engine: Engine | None = None
        self._load_error: str | None = None
        self._lock = threading.Lock()  # one generation at a time
        self._load_lock = threading.Lock()
        self._loader: threading.Thread | None = None
        self._warmed: set[str] = set()

    # --- loading -------------------------------------------------------------------
    @property
    def ready(self) -> bool:
        return self._engine is not None

    def load(self, languages: tuple[str, ...] = SUPPORTED_LANGUAGES) -> bool:
        """Load the model and warm the prompt of each language (blocking, idempotent).

        Returns whether the LLM is usable; a failure is logged and remembered, and
        narrations then use templates.
        """
        if not self.settings.enabled:
            return False
        with self._load_lock:
            if self._engine is None and self._load_error is None:
                try:
                    path = resolve_model_path(self.settings.model_path, self._data_dir)
                    self._engine = self._engine_factory(path, self.settings)
                except Exception as exc:  # noqa: BLE001 - any loader failure means templates
                    self._load_error = f"{type(exc).__name__}: {exc}"
                    _LOGGER.warning("narrator LLM unavailable, using templates: %s", exc)
            engine = self._engine
        if engine is None:
            return False
        for lang in languages:
            self._warm(engine, lang)
        return True

    def _warm(self, engine: Engine, lang: str) -> None:
        with self._lock:
            if lang in self._warmed:
                return
            started = self._clock()
            try:
                engine.warm(completion_prefix(lang))
                engine.warm(answer_prefix(lang))
            except Exception:
                _LOGGER.warning("could not warm the %s prompt", lang, exc_info=True)
            else:
                _LOGGER.info("narrator prompt (%s) ready in %.1f s", lang, self._clock() - started)
            self._warmed.add(lang)

    def load_in_background(self, languages: tuple[str, ...] = SUPPORTED_LANGUAGES) -> None:
        """Run ``load`` in a daemon thread, unless one is already running."""
        if not self.settings.enabled:
            return
        with self._load_lock:
            if self._loader is not None and self._loader.is_alive():
                return
            self._loader = threading.Thread(
                target=self.load, args=(languages,), name="narrator-load", daemon=True
            )
            self._loader.start()

    # --- narration -----------------------------------------------------------------
    def narrate(
        self,
        receipt: Receipt,
        lang: str,
        *,
        now: dt.datetime | None = None,
        budget_ms: float | None = None,
    ) -> Narration:
        """One sentence for ``receipt`` in ``lang`` (blocking; bounded by ``budget_ms``,
        default ``llm.budget_ms``; too little for the LLM: the template at once)."""
        start = self._clock()
        now = now or (dt.datetime.now(self._timezone) if self._timezone else default_now())
        code = normalize_lang(lang)

        def template(
            reason: str, ttft: float | None = None, llm_text: str | None = None
        ) -> Narration:
            return self._template(
                receipt, code, now, start=start, reason=reason, ttft=ttft, llm_text=llm_text
            )

        skip = self._skip_reason(code)
        if receipt.action is not None and receipt.action.startswith(TEMPLATE_ONLY_PREFIXES):
            skip = skip or "template_only"
        if receipt.details.get(ASK) is not None:
            # a question for more than a yes ("What time...?"): the few-shot prompt
            # only asks yes/no questions
            skip = skip or "template_only"
        if receipt.details.get(EITHER_HALF):
            # "move dinner to 8": a model would say "8 AM", a half the move may not take
            skip = skip or "template_only"
        if code is None:
            return template(skip or "unsupported_language")

        def pieces(engine: Engine) -> Iterator[Piece]:
            return self._pieces(engine, receipt, code, now)

        def guard(text: str) -> list[str]:
            return check(text, receipt, code, now=now).problems

        return self._sentence(start, skip, pieces, guard, template, budget_ms=budget_ms)

    def answer(
        self,
        question: str,
        memories: Sequence[str],
        lang: str,
        *,
        episodes: str = "",
        failed: bool = False,
        budget_ms: float | None = None,
    ) -> Narration:
        """Answer a question about the speaker from their recalled ``memories``
        (blocking, within the same budget as a narration).

        The LLM phrases it only when something was recalled, and its sentence is kept
        only if ``check_answer`` finds nothing in it that the memories or the question
        do not say; otherwise the memories are said back as they are.
        """
        start = self._clock()
        code = normalize_lang(lang) or "en"

        def fallback(reason: str, ttft: float | None = None, text: str | None = None) -> Narration:
            said = deterministic_answer(memories, code, question=question, failed=failed)
            elapsed = (self._clock() - start) * 1000
            _LOGGER.debug("memory answer from the memories themselves (%s)", reason)
            return Narration(said, "template", reason, elapsed, ttft, text)

        if not memories:
            return fallback("nothing_recalled")

        def pieces(engine: Engine) -> Iterator[Piece]:
            if engine.chat:
                return engine.chat_complete(answer_messages(question, memories, code, episodes))
            query = answer_query(question, memories, code, episodes)
            return engine.complete(answer_prefix(code), query, stop=["\n"])

        def guard(text: str) -> list[str]:
            return list(check_answer(text, question, memories, code).problems)

        skip = self._skip_reason(code)
        return self._sentence(start, skip, pieces, guard, fallback, budget_ms=budget_ms)

    def _sentence(
        self,
        start: float,
        skip: str | None,
        pieces: Callable[[Engine], Iterator[Piece]],
        guard: Callable[[str], list[str]],
        instead: Callable[[str, float | None, str | None], Narration],
        *,
        budget_ms: float | None = None,
    ) -> Narration:
        """The LLM's sentence if it comes complete within the budget and ``guard``
        finds no problem in it; otherwise ``instead(reason, ttft, llm_text)``."""
        engine = self._engine
        budget = float(self.settings.budget_ms)
        if budget_ms is not None:  # the caller's time left, never more than the setting
            budget = min(budget, budget_ms)
        if budget < MIN_BUDGET_MS:
            skip = skip or "no_time"
        if skip is not None or engine is None:
            return instead(skip or "loading", None, None)
        deadline = start + budget / 1000
        if not self._lock.acquire(timeout=max(0.0, deadline - self._clock())):
            return instead("busy", None, None)
        try:
            generated = self._generate(pieces(engine), start=start, deadline=deadline)
        except BudgetExceededError as exc:
            return instead("timeout", exc.ttft_ms, None)
        except PromptTooLongError:
            return instead("prompt_too_long", None, None)
        except Exception as exc:  # the LLM must never break a turn
            _LOGGER.warning("narrator LLM failed: %s", exc, exc_info=True)
            return instead(f"error: {type(exc).__name__}", None, None)
        finally:
            self._lock.release()
        text = generated.text
        if not text:
            return instead("empty", generated.ttft_ms, None)
        if not generated.complete:
            return instead("incomplete", generated.ttft_ms, text)
        problems = guard(text)
        if problems:
            return instead("guard: " + "; ".join(problems), generated.ttft_ms, text)
        elapsed = (self._clock() - start) * 1000
        return Narration(text, "llm", None, elapsed, generated.ttft_ms, text)

    def _skip_reason(self, code: str | None) -> str | None:
        """Why the LLM cannot narrate now (None: it can)."""
        if not self.settings.enabled:
            return "disabled"
        if code is None:
            return "unsupported_language"
        if self._engine is None:
            if self._load_error is not None:
                return f"unavailable: {self._load_error}"
            self.load_in_background()
            return "loading"
        if code not in self._warmed:
            self.load_in_background((code,))
            return "warming"
        return None

    def _template(
        self,
        receipt: Receipt,
        code: str | None,
        now: dt.datetime,
        *,
        start: float,
        reason: str,
        ttft: float | None,
        llm_text: str | None,
    ) -> Narration:
        text = template_sentence(receipt, code or "en", now=now)
        elapsed = (self._clock() - start) * 1000
        _LOGGER.debug("narration from template (%s): %r", reason, text)
        return Narration(text, "template", reason, elapsed, ttft, llm_text)

    def _pieces(
        self, engine: Engine, receipt: Receipt, lang: str, now: dt.datetime
    ) -> Iterator[Piece]:
        if engine.chat:
            return engine.chat_complete(chat_messages(receipt, lang, now))
        return engine.complete(
            completion_prefix(lang), completion_query(receipt, lang, now), stop=["\n"]
        )

    def _generate(self, pieces: Iterator[Piece], *, start: float, deadline: float) -> _Generated:
        think = ThinkFilter()
        visible = ""
        ttft: float | None = None
        finish: str | None = None
        try:
            for piece in pieces:
                if ttft is None:
                    ttft = (self._clock() - start) * 1000
                visible += think.feed(piece.text)
                finish = piece.finish_reason or finish
                sentence = first_sentence(visible)
                if sentence is not None:
                    return _Generated(clean(sentence), ttft, complete=True)
                if self._clock() > deadline:
                    raise BudgetExceededError(ttft)
        finally:
            close = getattr(pieces, "close", None)
            if close is not None:
                close()
        if self._clock() > deadline:
            raise BudgetExceededError(ttft)
        visible += think.flush()
        text = clean(visible)
        return _Generated(text, ttft, complete=finish != "length" and not think.inside)


def first_sentence(text: str) -> str | None:
    """The text up to its first sentence end (". " or a newline), if there is one yet."""
    stripped = text.lstrip()
    found = _SENTENCE_END.search(stripped)
    if found is None:
        return None
    return stripped[: found.end()].strip() if found.group() != "\n" else stripped[: found.start()]


def clean(text: str) -> str:
    """Trim a generated sentence: labels, quotes, spaces."""
    text = _LEADING_LABEL.sub("", text.strip())
    return _SPACES.sub(" ", text).strip().strip(_QUOTES).strip()
