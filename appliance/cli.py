"""The ``appliance`` command: run the node, inspect its settings, act on typed text."""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from appliance import __version__
from appliance.errors import ApplianceError
from appliance.logs import setup_logging
from appliance.memory.cli import add_memory_commands, run_memory_command
from appliance.models.cli import add_models_commands, run_models_command
from appliance.settings import Settings, load_settings, redacted
from appliance.settings_sources import describe_invalid

EXIT_OK = 0
EXIT_NOT_DONE = 1
EXIT_NOT_UNDERSTOOD = 2
EXIT_CONFIG = 3
EXIT_FAILED = 4


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="appliance", description=__doc__)
    parser.add_argument("--version", action="version", version=f"appliance {__version__}")
    parser.add_argument("--config", type=Path, help="TOML settings file (APPLIANCE_CONFIG)")
    parser.add_argument(
        "--data-dir", type=Path, help="embedded database, state and logs (APPLIANCE_DATA_DIR)"
    )
    parser.add_argument("--log-level", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    commands = parser.add_subparsers(dest="command")

    commands.add_parser("run", help="start the node (the default)")

    config = commands.add_parser("config", help="settings")
    config_commands = config.add_subparsers(dest="config_command", required=True)
    config_commands.add_parser("show", help="print the effective settings, secrets redacted")

    say = commands.add_parser("say", help="run a typed command, as a voice turn would")
    say.add_argument("text", help='e.g. "add two liters of milk to the shopping list"')
    say.add_argument("--lang", choices=["en", "pt"], help="language of the text")
    say.add_argument("--user", help="user the command acts for")
    say.add_argument("--request-id", help="idempotency key; repeating it changes nothing")
    say.add_argument("--json", action="store_true", help="print the receipt JSON")

    commands.add_parser("migrate", help="apply database migrations and exit")

    replay = commands.add_parser("replay", help="run WAV files through the voice pipeline")
    replay.add_argument("files", nargs="+", type=Path, help="WAV files, any rate")
    replay.add_argument("--site", help="the satellite site the audio comes from")
    replay.add_argument("--lang", choices=["en", "pt"], help="language spoken")
    replay.add_argument("--user", help="user the commands act for")
    replay.add_argument(
        "--dry-run",
        action="store_true",
        help="change nothing: the actions run in a transaction that is rolled back, so "
        "the receipts and the speech are a real run's (receipt details: dry_run)",
    )
    replay.add_argument("--jsonl", action="store_true", help="one compact JSON line per file")
    replay.add_argument(
        "--realtime", action="store_true", help="feed audio at the speed it was spoken"
    )
    add_models_commands(commands)
    add_memory_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = load_settings(args.config, data_dir=args.data_dir, log_level=args.log_level)
    except ValidationError as err:
        print(f"appliance: invalid settings: {describe_invalid(err)}", file=sys.stderr)
        return EXIT_CONFIG
    except (FileNotFoundError, ValueError) as err:
        print(f"appliance: invalid settings: {err}", file=sys.stderr)
        return EXIT_CONFIG
    command = args.command or "run"
    if command == "config":
        print(json.dumps(redacted(settings), indent=2))
        return EXIT_OK
    setup_logging(settings.log_level, settings.data_dir if command == "run" else None)
    if command == "models":
        return run_models_command(args, settings.data_dir)
    if command == "memory":
        return run_memory_command(args, settings)
    try:
        if command == "run":
            return asyncio.run(_run(settings))
        if command == "migrate":
            return asyncio.run(_migrate(settings))
        if command == "replay":
            from appliance.voice.replay import replay

            return asyncio.run(
                replay(
                    settings,
                    args.files,
                    site=args.site,
                    lang=args.lang or settings.language,
                    user=args.user or settings.default_user,
                    dry_run=args.dry_run,
                    jsonl=args.jsonl,
                    realtime=args.realtime,
                )
            )
        return asyncio.run(_say(settings, args))
    except KeyboardInterrupt:
        return EXIT_OK
    except (ApplianceError, BaseExceptionGroup) as err:
        # A task of the node's task group fails as a group: say why all the same.
        errors = _leaves(err) if isinstance(err, BaseExceptionGroup) else [err]
        if not all(isinstance(e, ApplianceError) for e in errors):
            raise
        for error in errors:
            print(f"appliance: {error}", file=sys.stderr)
        return EXIT_FAILED


async def _run(settings: Settings) -> int:
    from appliance import malloc
    from appliance.node import Node

    malloc.tune()  # before the models allocate anything
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await Node(settings).run(stop)
    return EXIT_OK


async def _migrate(settings: Settings) -> int:
    from appliance.node import open_database

    async with open_database(settings):
        pass
    print("database is up to date")
    return EXIT_OK


async def _say(settings: Settings, args: argparse.Namespace) -> int:
    from appliance.actions.service import ActionService, Request, new_request_id
    from appliance.node import load_parser, open_database
    from appliance.protocol.receipts import Source
    from appliance.protocol.topics import Topics

    lang = args.lang or settings.language
    parser = await asyncio.to_thread(load_parser, settings)
    result = parser.parse(args.text, lang=lang)
    commands = tuple(getattr(result, "commands", ()) or ()) or (
        (result.command,) if result.command is not None else ()
    )
    if not commands:
        reason = result.reason or "not_understood"
        if args.json:
            print(json.dumps({"status": "not_understood", "reason": reason, "text": args.text}))
        else:
            print(f"Not understood ({reason}): nothing was changed.")
        return EXIT_NOT_UNDERSTOOD
    source = Source(kind="cli", user=args.user or settings.default_user, site=None)
    base = args.request_id or new_request_id()
    if result.ask:  # the parser only guessed what it means: a question, nothing run
        details = {"text": args.text, **result.question()}
        requests = [Request.proposing(base, source, commands, details)]
    else:
        requests = [
            Request(
                request_id=base if i == 1 else f"{base}.{i}",
                source=source,
                command=command,
                details={"text": args.text},
            )
            for i, command in enumerate(commands, start=1)
        ]
    async with open_database(settings) as db:
        service = ActionService(db, settings, Topics(settings.mqtt.prefix))
        results = await service.execute_batch(requests)
    for res in results:
        receipt = res.receipt
        print(receipt.model_dump_json() if args.json else describe(receipt.to_json_obj()))
    statuses = {r.receipt.status for r in results}
    return EXIT_OK if statuses <= {"success", "no_change"} else EXIT_NOT_DONE


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    found: list[BaseException] = []
    for exc in group.exceptions:
        found.extend(_leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return found


def describe(receipt: dict[str, Any]) -> str:
    """A one-line human summary of a receipt (English; narration comes later)."""
    parts = [f"{receipt['action']}: {receipt['status']}"]
    if receipt.get("reason"):
        parts.append(f"({receipt['reason']})")
    things = []
    for item in receipt.get("items", []):
        amount = ""
        if item.get("quantity") is not None:
            amount = f"{item['quantity']:g} " + (f"{item['unit']} " if item.get("unit") else "")
        mark = " [done]" if item.get("completed") else ""
        things.append(f"{amount}{item['name']}{mark}")
    for event in receipt.get("events", []):
        where = f" at {event['location']}" if event.get("location") else ""
        things.append(f"{event['title']} {event['start']}{where}")
    if things:
        parts.append("- " + ", ".join(things))
    if receipt.get("duplicate"):
        parts.append("(repeated request: nothing changed)")
    return " ".join(parts)


if __name__ == "__main__":
    sys.exit(main())
