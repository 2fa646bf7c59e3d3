"""Memory in the conversation: questions about oneself answered from memory, and the
diary of turns kept for the next session.

``Conversation.answer`` is asked for every voice turn that is not a command. When the
words ask about the speaker (``answers.is_memory_question``) it recalls their
memories (hybrid search, row-level security: only that user's), adds their recent
purchases when the question is about buying, restores the recent conversation at
that site (the diary), and lets the narrator phrase the answer (LLM behind its guard,
or the memories said back). Nothing here acts: the answer is speech only.

Every failure (embedder, database, LLM) leaves the conversation going: no memory,
then the deterministic answer.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import logging
from collections.abc import Callable, Coroutine, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from appliance.errors import ApplianceError
from appliance.memory.answers import is_memory_question, is_purchase_question, purchase_days
from appliance.memory.episodes import EpisodeDiary, episodes_block
from appliance.memory.model import Kind
from appliance.memory.recall import Recall, RecallResult, sanitize
from appliance.protocol.receipts import Receipt

if TYPE_CHECKING:
    from appliance.voice.turn import Narrator

_LOGGER = logging.getLogger(__name__)

PURCHASES_SCANNED = 30
PURCHASES_SPOKEN = 3
PROFILE_SETTLE_S = 2.0
"""A user's profile is rebuilt this long after a change to their memories (changes in
between are taken in by the same rebuild)."""


@dataclass(frozen=True)
class Answer:
    text: str
    source: str
    """"llm", or "template" (the memories said back)."""
    memories: int
    """How many memories the answer was given."""


class Conversation:
    """One per node; shared by its voice turns."""

    def __init__(self, recall: Recall, diary: EpisodeDiary | None, timezone: dt.tzinfo) -> None:
        self.recall = recall
        self.diary = diary
        self._tz = timezone
        self._tasks: set[asyncio.Task[Any]] = set()
        self._rebuilding: set[str] = set()

    async def answer(
        self,
        *,
        user: str | None,
        site: str | None,
        question: str,
        lang: str,
        narrator: Narrator,
        executor: Executor,
        budget_ms: Callable[[], float | None] | None = None,
    ) -> Answer | None:
        """The spoken answer to a question about the speaker, or None when ``question``
        is not one."""
        if not question.strip() or not is_memory_question(question, lang):
            return None
        # Independent reads, each on its own connection: at once, not one after another.
        found, bought, episodes = await asyncio.gather(
            self.recall.for_question(user, question, lang, reinforce=False),
            self._purchases(user, question, lang),
            self._episodes(user, site),
        )
        texts = [*bought, *(t for t in found.texts if t not in bought)][: self.recall.limit]
        loop = asyncio.get_running_loop()
        narration = await loop.run_in_executor(
            executor,
            functools.partial(
                narrator.answer,
                question,
                texts,
                lang,
                episodes=episodes,
                failed=found.failed,
                budget_ms=budget_ms() if budget_ms else None,
            ),
        )
        self._reinforce_later(user, found)
        _LOGGER.info(
            "memory answer from %s with %d memories (%s)",
            narration.source, len(texts), getattr(narration, "reason", None) or "guarded",
        )  # fmt: skip
        return Answer(narration.text, narration.source, len(texts))

    async def _purchases(self, user: str | None, question: str, lang: str) -> list[str]:
        """Purchase memories of the days a question about buying names, newest first
        (nothing for other questions)."""
        if not is_purchase_question(question, lang):
            return []
        first, last = purchase_days(question, lang, dt.datetime.now(self._tz).date())
        try:
            found = await self.recall.store.list_memories(
                user, kind=Kind.PURCHASE, limit=PURCHASES_SCANNED
            )
        except ApplianceError as err:
            _LOGGER.warning("purchases not recalled: %s", err)
            return []
        days = [(m, m.created_at.astimezone(self._tz).date()) for m in found]
        return [sanitize(m.text) for m, day in days if first <= day <= last][:PURCHASES_SPOKEN]

    async def _episodes(self, user: str | None, site: str | None) -> str:
        if self.diary is None:
            return ""
        now = dt.datetime.now(self._tz)
        return episodes_block(await self.diary.restore(user, site=site, now=now), now, None)

    def _reinforce_later(self, user: str | None, found: RecallResult) -> None:
        """What the answer used grows stronger, once the answer is on its way."""
        if not found.recalled:
            return
        self._spawn(self.recall.reinforce(user, found), "memory-reinforce")

    async def record(
        self,
        *,
        user: str | None,
        site: str | None,
        turn_id: str,
        question: str,
        answer: str,
        lang: str,
        asked_at: dt.datetime,
    ) -> None:
        """Keep a turn in the diary (in a task: the turn never waits for it)."""
        if self.diary is None or not question.strip():
            return
        diary = self.diary

        async def write() -> None:
            try:
                await diary.record(
                    user, site=site, turn_id=turn_id, question=question, answer=answer,
                    lang=lang, asked_at=asked_at, answered_at=dt.datetime.now(dt.UTC),
                )  # fmt: skip
            except (ApplianceError, ValueError) as err:
                _LOGGER.warning("turn %s not kept in the diary: %s", turn_id, err)

        self._spawn(write(), "memory-diary")

    def receipts(self, receipts: Sequence[Receipt]) -> None:
        """After a memory changed (``ActionService.on_receipts``): rebuild that user's
        profile once the changes settle (``PROFILE_SETTLE_S``), in a task."""
        for receipt in receipts:
            action, user = receipt.action or "", receipt.source.user
            changed = action.startswith("memory.") and receipt.status == "success"
            if changed and user and user not in self._rebuilding and not receipt.duplicate:
                self._rebuilding.add(user)
                self._spawn(self._rebuild(user), "memory-profile")

    async def _rebuild(self, user: str) -> None:
        await asyncio.sleep(PROFILE_SETTLE_S)
        self._rebuilding.discard(user)
        try:
            await self.recall.store.rebuild_profile(user)
        except ApplianceError as err:
            _LOGGER.warning("profile of %s not rebuilt (the nightly upkeep will): %s", user, err)

    def _spawn(self, work: Coroutine[Any, Any, Any], name: str) -> None:
        """Run ``work`` in a task that ``close`` waits for."""
        task = asyncio.create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        """Let writes in progress finish (bounded)."""
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=5.0)
