"""Numbered SQL migrations, applied at start-up under an advisory lock.

Two nodes starting at once against one database: the second waits for the lock,
then finds every migration applied and does nothing.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from importlib import resources

import psycopg

_LOGGER = logging.getLogger(__name__)
_LOCK_KEY = 0x61_70_70_6C  # "appl"
_FILE = re.compile(r"^(\d{4})_(\w+)\.sql$")


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


def available() -> list[Migration]:
    folder = resources.files("appliance.store") / "sql" / "migrations"
    found = []
    for entry in folder.iterdir():
        match = _FILE.match(entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    return sorted(found, key=lambda m: m.version)


async def migrate(conn: psycopg.AsyncConnection[object]) -> list[int]:
    """Apply the migrations this database lacks; return the versions applied."""
    applied_now: list[int] = []
    await conn.set_autocommit(True)
    await conn.execute("SELECT pg_advisory_lock(%s)", (_LOCK_KEY,))
    try:
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version integer PRIMARY KEY, name text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        cur = await conn.execute("SELECT version FROM schema_migrations")
        done = {row[0] for row in await cur.fetchall()}  # type: ignore[index]
        for migration in available():
            if migration.version in done:
                continue
            _LOGGER.info("applying migration %04d_%s", migration.version, migration.name)
            async with conn.transaction():
                # Migration files ship with the package; they are never built from input.
                await conn.execute(migration.sql)
                await conn.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                    (migration.version, migration.name),
                )
            applied_now.append(migration.version)
    finally:
        await conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))
    return applied_now
