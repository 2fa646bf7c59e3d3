"""The episodes diary: a user's recent conversation turns, per site, for the next one.

``EpisodeDiary.record`` writes a turn as two entries (the user's question and the
assistant's answer, sharing a ``turn_id``) in one transaction; ``restore`` gives back
the newest entries of one user at one site within ``memory.episode_window_hours``,
bounded by ``episode_max_count`` entries and ``episode_max_chars`` characters, in
chronological order; ``purge`` deletes what is older than
``episode_retention_days``. ``episodes_block`` renders entries for the LLM's prompt,
each text ``sanitize``d: untrusted data, like memories.

Entries live in ``episodes`` (migration 0005), kept apart per user by row-level
security exactly as memories are: every query runs as ``appliance_memory`` with the
user's id in ``appliance.user`` (``repository.enter_scope``). Without a user nothing
is written or restored. ``restore`` never raises for the database: the conversation
goes on without the diary (one warning in the log).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from appliance.actions.service import DEFAULT_HOUSEHOLD
from appliance.errors import StoreError
from appliance.memory import repository as repo
from appliance.memory.gate import clean_text
from appliance.memory.recall import sanitize
from appliance.memory.settings import MemorySettings
from appliance.store.db import Database
from appliance.store.queries import queries

_LOGGER = logging.getLogger(__name__)
_Q = queries("episodes")

Role = Literal["user", "assistant"]
USER: Role = "user"
ASSISTANT: Role = "assistant"

ID_MAX_CHARS = 200
"""A turn id or a site name, at most (the table's limit)."""
LANG_MAX_CHARS = 35
TEXT_LIMIT = 2000
"""The table's limit on an entry's text (``episode_text_max_chars`` is at most this)."""
_LABELS: dict[str, dict[Role, str]] = {
    "en": {USER: "user", ASSISTANT: "assistant"},
    "pt": {USER: "usuário", ASSISTANT: "assistente"},
}


@dataclass(frozen=True)
class Episode:
    """One diary entry: what the user asked or what the assistant answered."""

    role: Role
    text: str
    at: dt.datetime
    lang: str
    turn_id: str
    site: str | None


def _user_name(user: str | None) -> str | None:
    return user.strip() if user is not None and user.strip() else None


def _trim(text: str, max_chars: int) -> str:
    """Control characters and runs of white space as one space, cut to ``max_chars``."""
    clean = clean_text(text)
    if len(clean) > max_chars:
        clean = clean[: max_chars - 1].rstrip() + "…"
    return clean


def _aware(value: dt.datetime, name: str) -> dt.datetime:
    if value.tzinfo is None or value.utcoffset() is None:
        msg = f"{name} must be timezone-aware, not {value!r}"
        raise ValueError(msg)
    return value


def _site(site: str | None) -> str | None:
    """A site's name, stripped; blank counts as none."""
    if site is None or not site.strip():
        return None
    return site.strip()[:ID_MAX_CHARS]


def bound(episodes: Sequence[Episode], max_count: int, max_chars: int) -> list[Episode]:
    """The newest entries of ``episodes`` (chronological) within ``max_count`` entries
    and ``max_chars`` characters, in chronological order; then every answer whose
    question (same ``turn_id``) was not kept is dropped as well."""
    kept: list[Episode] = []
    used = 0
    for episode in reversed(episodes):
        if len(kept) == max_count or used + len(episode.text) > max_chars:
            break
        kept.append(episode)
        used += len(episode.text)
    kept.reverse()
    asked = {e.turn_id for e in kept if e.role == USER}
    return [e for e in kept if e.role == USER or e.turn_id in asked]


def episodes_block(episodes: Sequence[Episode], now: dt.datetime, lang: str | None) -> str:
    """The entries for a prompt, one line each: ``[14:02] user: ...`` (in Portuguese
    ``usuário`` / ``assistente``), the time in ``now``'s time zone, every text
    ``sanitize``d (one line, no delimiter look-alikes). No entries: ``""``."""
    zone = _aware(now, "now").tzinfo
    labels = _LABELS["pt" if (lang or "").lower().startswith("pt") else "en"]
    lines = []
    for episode in episodes:
        text = sanitize(episode.text, TEXT_LIMIT)
        if text:
            lines.append(f"[{episode.at.astimezone(zone):%H:%M}] {labels[episode.role]}: {text}")
    return "\n".join(lines)


class EpisodeDiary:
    """Recent conversation turns per user and site in PostgreSQL, under row-level
    security (the ``episodes`` table)."""

    def __init__(
        self, db: Database, settings: MemorySettings, *, household: str = DEFAULT_HOUSEHOLD
    ) -> None:
        self._db = db
        self.settings = settings
        self._users = repo.UserIds(household)

    async def record(
        self,
        user: str | None,
        *,
        site: str | None,
        turn_id: str,
        question: str,
        answer: str,
        lang: str,
        asked_at: dt.datetime,
        answered_at: dt.datetime,
    ) -> None:
        """Write one turn: the question and, unless it is empty, the answer, in one
        transaction (a new user is created). Texts are cut to
        ``episode_text_max_chars``. No user, or no question: nothing is written.

        Raises ``StoreError`` (``StoreUnavailableError``) when the database fails;
        nothing is written then.
        """
        name = _user_name(user)
        turn = turn_id.strip()[:ID_MAX_CHARS]
        if not turn:
            msg = "a diary entry needs a turn id"
            raise ValueError(msg)
        limit = self.settings.episode_text_max_chars
        entries = [(USER, _trim(question, limit), _aware(asked_at, "asked_at"))]
        reply = _trim(answer, limit)
        if reply:
            entries.append((ASSISTANT, reply, _aware(answered_at, "answered_at")))
        if name is None:
            _LOGGER.debug("turn %s: no user, not written to the diary", turn)
            return
        if not entries[0][1]:
            _LOGGER.debug("turn %s: no question, not written to the diary", turn)
            return
        async with self._db.transaction() as conn:
            user_id = await self._users.ensure(conn, name)
            await repo.enter_scope(conn, user_id)
            await conn.execute(
                _Q["insert_turn"],
                {"user_id": user_id, "site": _site(site), "turn_id": turn,
                 "lang": (lang or "").strip()[:LANG_MAX_CHARS],
                 "roles": [e[0] for e in entries], "texts": [e[1] for e in entries],
                 "ats": [e[2] for e in entries]},
            )  # fmt: skip

    async def restore(
        self, user: str | None, *, site: str | None, now: dt.datetime | None = None
    ) -> list[Episode]:
        """The user's entries at ``site`` (None: those without a site) of the last
        ``episode_window_hours`` before ``now``, oldest first: the newest that fit
        ``episode_max_count`` and ``episode_max_chars``, without answers whose question
        did not fit. No user, an unknown user, or a database failure (logged): ``[]``.
        """
        name = _user_name(user)
        if name is None:
            return []
        now = _aware(now, "now") if now is not None else dt.datetime.now(dt.UTC)
        since = now - dt.timedelta(hours=self.settings.episode_window_hours)
        try:
            async with self._db.transaction() as conn:
                user_id = await self._users.find(conn, name)
                if user_id is None:
                    return []
                await repo.enter_scope(conn, user_id)
                cur = await conn.execute(
                    _Q["recent"],
                    {"user_id": user_id, "site": _site(site), "since": since, "now": now,
                     "limit": self.settings.episode_max_count},
                )  # fmt: skip
                rows = await cur.fetchall()
        except StoreError as err:
            _LOGGER.warning("conversation diary not restored (going on without it): %s", err)
            return []
        found = [Episode(r[0], r[1], r[2], r[3], r[4], r[5]) for r in reversed(rows)]
        return bound(found, self.settings.episode_max_count, self.settings.episode_max_chars)

    async def purge(self, now: dt.datetime | None = None) -> int:
        """Delete every user's entries older than ``episode_retention_days`` before
        ``now``, one transaction per user; how many were deleted. Raises
        ``StoreError`` when the database fails (users done before stay done)."""
        now = _aware(now, "now") if now is not None else dt.datetime.now(dt.UTC)
        before = now - dt.timedelta(days=self.settings.episode_retention_days)
        async with self._db.transaction() as conn:
            users = await repo.all_users(conn)
        deleted = 0
        for user_id, _name in users:
            async with self._db.transaction() as conn:
                await repo.enter_scope(conn, user_id)
                cur = await conn.execute(_Q["purge"], {"user_id": user_id, "before": before})
                deleted += cur.rowcount
        _LOGGER.info("conversation diary: %d entries of %d users purged", deleted, len(users))
        return deleted
