"""``appliance memory add|list|delete|search|profile|maintain|reindex``.

``add_memory_commands(subparsers)`` adds the ``memory`` command to the top-level
parser; ``run_memory_command(args, settings)`` runs it and returns the exit status
(0 done, 1 not done: rejected, not found, bad input; 4 failed). Messages for the
person at the keyboard go to stderr as ``appliance: ...``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from appliance.errors import ApplianceError
from appliance.memory.errors import MemoryInputError
from appliance.memory.model import IMPORTANCE_MAX, IMPORTANCE_MIN, Kind, Memory, MemorySource

if TYPE_CHECKING:
    from appliance.memory.store import MemoryStore
    from appliance.settings import Settings

EXIT_OK = 0
EXIT_NOT_DONE = 1
EXIT_FAILED = 4  # same as appliance.cli.EXIT_FAILED

_KINDS = [k.value for k in Kind]


def add_memory_commands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    memory = subparsers.add_parser(
        "memory",
        help="per-user memories: add, list, delete, search, maintain, reindex",
        description="Memories the assistant keeps per user (see docs/memory.md).",
    )
    commands = memory.add_subparsers(dest="memory_command", required=True)

    add = commands.add_parser("add", help="add a memory through the commit gate")
    add.add_argument("text", help='e.g. "I am allergic to peanuts"')
    add.add_argument("--user", required=True, help="whose memory it is")
    add.add_argument("--kind", required=True, choices=_KINDS)
    add.add_argument(
        "--importance",
        type=int,
        default=5,
        help=f"{IMPORTANCE_MIN} (trivia) to {IMPORTANCE_MAX} (never forget); default 5",
    )
    add.add_argument(
        "--source", default=MemorySource.MANUAL.value, choices=[s.value for s in MemorySource]
    )
    add.add_argument("--source-ref", help="what it came from (a request or receipt id)")
    add.add_argument("--json", action="store_true", help="print the result as JSON")

    edit = commands.add_parser(
        "edit", help="new text (through the gate; the old one kept as history) or importance"
    )
    edit.add_argument("id", type=int)
    edit.add_argument("--user", required=True, help="whose memory it is")
    edit.add_argument("--text", help="the new text")
    edit.add_argument("--importance", type=int, help=f"{IMPORTANCE_MIN} to {IMPORTANCE_MAX}")

    listing = commands.add_parser("list", help="a user's memories, newest first")
    listing.add_argument("--user", required=True)
    listing.add_argument("--kind", choices=_KINDS)
    listing.add_argument("--all", action="store_true", help="superseded memories (history) too")
    listing.add_argument("--limit", type=int, default=100)
    listing.add_argument("--json", action="store_true", help="one JSON object per line")

    delete = commands.add_parser("delete", help="delete one memory for good")
    delete.add_argument("id", type=int)
    delete.add_argument("--user", required=True)

    search = commands.add_parser(
        "search", help="find a user's memories by meaning and by words (does not reinforce)"
    )
    search.add_argument("text")
    search.add_argument("--user", required=True)
    search.add_argument("--limit", type=int, default=5)
    search.add_argument(
        "--max-distance", type=float, default=0.2, help="cosine distance, 0 to 2; default 0.2"
    )

    profile = commands.add_parser("profile", help="a user's consolidated profile")
    profile.add_argument("--user", required=True)
    profile.add_argument("--rebuild", action="store_true", help="rebuild it first")

    commands.add_parser(
        "maintain", help="decay every memory's strength to now and rebuild the profiles"
    )

    reindex = commands.add_parser(
        "reindex",
        help="re-embed every memory with the configured memory.embedder",
        description="Re-embeds every memory in batches with memory.embedder and swaps the "
        "vector column and its index in one transaction. Safe to interrupt: run it again "
        "to carry on.",
    )
    reindex.add_argument("--batch", type=int, help="memories per transaction")
    reindex.add_argument(
        "--force", action="store_true", help="re-embed even if the model has not changed"
    )


def run_memory_command(args: argparse.Namespace, settings: Settings) -> int:
    try:
        return asyncio.run(_run(args, settings))
    except MemoryInputError as err:
        sys.stderr.write(f"appliance: {err}\n")
        return EXIT_NOT_DONE
    except ApplianceError as err:
        sys.stderr.write(f"appliance: {err}\n")
        return EXIT_FAILED
    except KeyboardInterrupt:
        sys.stderr.write("\nappliance: interrupted\n")
        return EXIT_FAILED


async def _run(args: argparse.Namespace, settings: Settings) -> int:
    from appliance.memory.embedder import open_embeddings
    from appliance.memory.store import MemoryStore
    from appliance.node import open_database

    handler = _HANDLERS[args.memory_command]
    async with open_database(settings) as db:
        embeddings = await open_embeddings(settings.memory)
        try:
            return await handler(MemoryStore(db, embeddings, settings.memory), args)
        finally:
            await embeddings.aclose()


def _line(memory: Memory) -> str:
    mark = f" [superseded by #{memory.superseded_by}]" if not memory.active else ""
    return (
        f"#{memory.id} {memory.kind.value} i={memory.importance} s={memory.strength:.3f} "
        f"{memory.created_at:%Y-%m-%d}  {memory.text}{mark}"
    )


async def _add(store: MemoryStore, args: argparse.Namespace) -> int:
    result = await store.add(
        args.user,
        args.text,
        kind=args.kind,
        importance=args.importance,
        source=args.source,
        source_ref=args.source_ref,
    )
    print(json.dumps(result.to_payload()) if args.json else result.describe())
    return EXIT_OK if result.written else EXIT_NOT_DONE


async def _edit(store: MemoryStore, args: argparse.Namespace) -> int:
    if args.text is None and args.importance is None:
        sys.stderr.write("appliance: nothing to change: give --text and/or --importance\n")
        return EXIT_NOT_DONE
    edit = await store.edit(args.user, args.id, text=args.text, importance=args.importance)
    if not edit.found:
        sys.stderr.write(f"appliance: {args.user} has no active memory #{args.id}\n")
        return EXIT_NOT_DONE
    if edit.result is not None:
        print(edit.result.describe())
        return EXIT_OK if edit.result.written else EXIT_NOT_DONE
    print(f"#{args.id} importance {edit.importance}" if edit.importance else "nothing changed")
    return EXIT_OK


async def _list(store: MemoryStore, args: argparse.Namespace) -> int:
    found = await store.list_memories(
        args.user, kind=args.kind, include_superseded=args.all, limit=args.limit
    )
    for memory in found:
        print(json.dumps(memory.to_payload(), ensure_ascii=False) if args.json else _line(memory))
    if not found and not args.json:
        sys.stderr.write(f"appliance: no memories of {args.user}\n")
    return EXIT_OK


async def _delete(store: MemoryStore, args: argparse.Namespace) -> int:
    if await store.delete(args.user, args.id):
        print(f"deleted #{args.id}")
        return EXIT_OK
    sys.stderr.write(f"appliance: {args.user} has no memory #{args.id}\n")
    return EXIT_NOT_DONE


async def _search(store: MemoryStore, args: argparse.Namespace) -> int:
    query = await store.embeddings.query(args.text)
    near = await store.search_vector(args.user, query, args.max_distance, args.limit)
    words = await store.search_terms(args.user, args.text, args.limit)
    for hit in near:
        print(f"vector d={hit.distance:.3f}  {_line(hit.memory)}")
    for term in words:
        print(f"terms  r={term.rank:.3f}  {_line(term.memory)}")
    return EXIT_OK if near or words else EXIT_NOT_DONE


async def _profile(store: MemoryStore, args: argparse.Namespace) -> int:
    found = await (store.rebuild_profile(args.user) if args.rebuild else store.profile(args.user))
    if found is None:
        sys.stderr.write(f"appliance: no profile of {args.user} yet (--rebuild builds one)\n")
        return EXIT_NOT_DONE
    print(found.text)
    return EXIT_OK


async def _maintain(store: MemoryStore, _args: argparse.Namespace) -> int:
    from appliance.memory.episodes import EpisodeDiary

    report = await store.maintain()
    purged = await EpisodeDiary(store.db, store.settings).purge()
    print(
        f"decayed {report.decayed} memories of {report.users} users; "
        f"rebuilt {report.profiles} profiles; purged {purged} diary entries"
    )
    return EXIT_OK


async def _reindex(store: MemoryStore, args: argparse.Namespace) -> int:
    def progress(done: int) -> None:
        sys.stderr.write(f"\rre-embedded {done} memories")
        sys.stderr.flush()

    report = await store.reindex(batch_size=args.batch, force=args.force, progress=progress)
    if report.embedded:
        sys.stderr.write("\n")
    if not report.swapped:
        print(f"memories are already embedded with {report.model} ({report.dimension}-d)")
    else:
        print(
            f"reindexed with {report.model} ({report.dimension}-d, was {report.previous}): "
            f"{report.embedded} memories embedded in {report.seconds:.1f} s"
        )
    return EXIT_OK


_HANDLERS: dict[str, Callable[[MemoryStore, argparse.Namespace], Awaitable[int]]] = {
    "add": _add,
    "edit": _edit,
    "list": _list,
    "delete": _delete,
    "search": _search,
    "profile": _profile,
    "maintain": _maintain,
    "reindex": _reindex,
}
