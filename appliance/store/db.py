"""The connection pool, and the translation of psycopg errors into ours."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import psycopg
from psycopg.rows import TupleRow
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from appliance.errors import StoreError, StoreUnavailableError
from appliance.settings import DbSettings
from appliance.store.migrations import migrate

_LOGGER = logging.getLogger(__name__)

Conn = psycopg.AsyncConnection[TupleRow]


class Database:
    """An open pool on one database, migrated on open."""

    def __init__(self, url: str, settings: DbSettings) -> None:
        self._url = url
        self._settings = settings
        self.pool: AsyncConnectionPool[Conn] = AsyncConnectionPool(
            url,
            min_size=settings.pool_min,
            max_size=settings.pool_max,
            timeout=settings.connect_timeout,
            kwargs={
                "options": f"-c statement_timeout={settings.statement_timeout_ms}",
                "connect_timeout": max(1, int(settings.connect_timeout)),
            },
            check=AsyncConnectionPool.check_connection,
            open=False,
            name="appliance",
        )

    async def open(self) -> None:
        """Open the pool (waits for the first connection) and apply migrations."""
        try:
            await self.pool.open(wait=True, timeout=self._settings.connect_timeout * 2)
            async with self.pool.connection() as conn:
                try:
                    applied = await migrate(conn)
                except psycopg.OperationalError:
                    raise
                except psycopg.Error as err:  # reachable, but a migration was refused
                    hint = getattr(err.diag, "message_hint", None)
                    msg = f"database migration failed: {_describe(err)}" + (
                        f" ({hint})" if hint else ""
                    )
                    raise StoreError(msg) from err
        except (psycopg.Error, PoolTimeout) as err:
            msg = f"database not reachable: {_describe(err)}"
            raise StoreUnavailableError(msg) from err
        if applied:
            _LOGGER.info("database migrated to version %d", applied[-1])

    async def close(self) -> None:
        await self.pool.close()

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Conn]:
        """A connection inside one transaction; psycopg errors come out as ours."""
        committing = False
        try:
            async with self.pool.connection() as conn, conn.transaction():
                yield conn
                committing = True
        except PoolTimeout as err:
            msg = f"no database connection: {_describe(err)}"
            raise StoreUnavailableError(msg) from err
        except psycopg.OperationalError as err:
            msg = f"database unavailable: {_describe(err)}"
            raise StoreUnavailableError(msg, maybe_committed=committing) from err
        except psycopg.Error as err:
            msg = f"database error: {_describe(err)}"
            raise StoreError(msg) from err

    @asynccontextmanager
    async def exclusive(self, name: str) -> AsyncIterator[None]:
        """Hold the installation-wide lock ``name`` (a session advisory lock on a
        connection of its own) for the block: nodes sharing this database take
        turns. A node that dies holding it releases it with its connection."""
        try:
            async with self.pool.connection() as conn:
                await conn.set_autocommit(True)
                await conn.execute("SELECT pg_advisory_lock(hashtext(%s))", (name,))
                try:
                    yield
                finally:
                    await conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", (name,))
        except PoolTimeout as err:
            msg = f"no database connection: {_describe(err)}"
            raise StoreUnavailableError(msg) from err
        except psycopg.OperationalError as err:
            msg = f"database unavailable: {_describe(err)}"
            raise StoreUnavailableError(msg) from err
        except psycopg.Error as err:
            msg = f"database error: {_describe(err)}"
            raise StoreError(msg) from err


def _describe(err: BaseException) -> str:
    """One line that says what failed, without connection strings or passwords."""
    text = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    if "password" in text.lower() or "://" in text:
        return type(err).__name__
    return text[:200]
