"""Moving every memory's embedding to another model (``appliance memory reindex``).

An HNSW index needs one fixed dimension, and vectors of two models cannot be
compared, so a model change re-embeds everything, with the old vectors in service
until the new ones are complete:

1. ``memory_index`` names the target (``next_model``, ``next_dimension``) and an empty
   column ``memories.embedding_next vector(<new dimension>)`` is added.
2. Each user's memories are embedded in batches; each batch commits on its own
   (``embedding_next`` set), so an interrupted run loses one batch at most, and the
   next run for the same model carries on where it stopped. Searches and writes keep
   using the old column meanwhile; memories written meanwhile are picked up.
3. One transaction swaps: it locks ``memory_index`` and the table, embeds whatever is
   still missing, drops the old column and its index, renames ``embedding_next`` to
   ``embedding`` (NOT NULL, so a missed row fails the swap instead of passing
   unnoticed), rebuilds the HNSW index and records the new model. Interrupted, it
   rolls back to the state after step 2.

The node must then run with the same ``memory.embedder``: until it does, its writes
and vector searches stop with ``MemoryIndexMismatchError`` (reading, listing and
deleting work on).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from appliance.memory import repository as repo
from appliance.memory.embedder import Embeddings
from appliance.memory.errors import MemoryStoreError
from appliance.memory.model import ReindexReport
from appliance.store.db import Database

_LOGGER = logging.getLogger(__name__)


async def reindex(
    db: Database,
    embeddings: Embeddings,
    *,
    batch_size: int,
    force: bool = False,
    progress: Callable[[int], None] | None = None,
) -> ReindexReport:
    """Re-embed every memory of every user with ``embeddings``; safe to interrupt."""
    started = time.monotonic()
    model, dimension = embeddings.name, embeddings.dimension
    async with db.transaction() as conn:
        state = await repo.index_state(conn, lock="update")
        previous = state.model
        current = state.model == model and state.dimension == dimension
        pending = state.next_model == model and state.next_dimension == dimension
        if current and not force:
            if state.next_model is not None:
                await repo.cancel_reindex(conn)  # a run towards another model: abandoned
            return ReindexReport(model, dimension, 0, swapped=False, previous=previous)
        if not pending:
            await repo.prepare_next_column(conn, model, dimension)
    _LOGGER.info("reindexing memories from %s to %s (%d-d)", previous, model, dimension)

    embedded = 0
    async with db.transaction() as conn:
        users = [user_id for user_id, _ in await repo.all_users(conn)]
    for user_id in users:
        while True:
            async with db.transaction() as conn:
                await repo.enter_scope(conn, user_id)
                rows = await repo.pending_embeddings(conn, user_id, batch_size)
            if not rows:
                break
            vectors = await embeddings.passages([text for _, text in rows])
            async with db.transaction() as conn:
                await repo.enter_scope(conn, user_id)
                await repo.set_next_embeddings(conn, user_id, [i for i, _ in rows], vectors)
            embedded += len(rows)
            if progress is not None:
                progress(embedded)

    async with db.transaction() as conn:
        await repo.no_statement_timeout(conn)
        state = await repo.index_state(conn, lock="update")
        if state.next_model != model or state.next_dimension != dimension:
            msg = f"another reindex (to {state.next_model}) started meanwhile: run it again"
            raise MemoryStoreError(msg)
        await repo.lock_memories(conn)
        for user_id, _name in await repo.all_users(conn):
            await repo.enter_scope(conn, user_id)
            while rows := await repo.pending_embeddings(conn, user_id, batch_size):
                vectors = await embeddings.passages([text for _, text in rows])
                await repo.set_next_embeddings(conn, user_id, [i for i, _ in rows], vectors)
                embedded += len(rows)
            await repo.set_row_model(conn, user_id, model, dimension)
            await repo.leave_scope(conn)
        await repo.swap_embedding_column(conn, model, dimension)
    seconds = time.monotonic() - started
    _LOGGER.info("reindexed memories with %s: %d embedded in %.1f s", model, embedded, seconds)
    return ReindexReport(
        model, dimension, embedded, swapped=True, previous=previous, seconds=seconds
    )
