"""The ``satellite`` command: one room's microphone and speaker for the appliance node.

``satellite --site kitchen --broker mqtt://node:1883`` listens on the default sound
devices. ``satellite --input command.wav --output reply.wav`` is a virtual satellite:
the wake word is heard in the file, the reply is written to the other file, and it
exits after one turn.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from appliance import __version__
from appliance.logs import setup_logging
from appliance.settings_sources import describe_invalid
from satellites.errors import SatelliteError
from satellites.settings import SatelliteSettings, load_settings

EXIT_OK = 0
EXIT_NO_TURN = 1
"""The input ended without a wake word, or the node did not answer the turn."""
EXIT_CONFIG = 2
EXIT_FAILED = 3


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="satellite",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"satellite {__version__}")
    parser.add_argument("--config", type=Path, help="TOML settings file (SATELLITE_CONFIG)")
    parser.add_argument("--site", help="site id, also the MQTT user name (SATELLITE_SITE)")
    parser.add_argument("--name", help="name shown in Home Assistant")
    parser.add_argument("--area", help="Home Assistant area")
    parser.add_argument("--lang", choices=["en", "pt"], help="language spoken here")
    parser.add_argument("--broker", help="mqtt://host:1883 or mqtts://host:8883")
    parser.add_argument("--username", help="MQTT user (default: the site); password: "
                        "SATELLITE_MQTT__PASSWORD or the config file")  # fmt: skip
    parser.add_argument("--prefix", help="topic prefix of the node (default appliance)")
    parser.add_argument("--wake-word", action="append", dest="wake_words",
                        help="built-in name or .tflite path; repeat for several")  # fmt: skip
    parser.add_argument("--threshold", type=float, help="wake word threshold (0-1)")
    parser.add_argument("--input", type=Path, help="read a WAV file instead of a microphone")
    parser.add_argument("--output", type=Path, help="write what is played to a WAV file")
    parser.add_argument("--fast", action="store_true",
                        help="with --input: read the file as fast as it goes")  # fmt: skip
    parser.add_argument("--input-device", help="microphone: index or part of its name")
    parser.add_argument("--output-device", help="speaker: index or part of its name")
    parser.add_argument("--no-chimes", action="store_true", help="no wake and done chimes")
    parser.add_argument("--list-devices", action="store_true", help="list sound devices, exit")
    parser.add_argument("--log-level", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    return parser


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    overrides: dict[str, Any] = {
        "site": args.site,
        "name": args.name,
        "area": args.area,
        "lang": args.lang,
        "log_level": args.log_level,
    }
    return {k: v for k, v in overrides.items() if v is not None}


def _apply(settings: SatelliteSettings, args: argparse.Namespace) -> SatelliteSettings:
    mqtt: dict[str, Any] = {}
    if args.broker:
        mqtt["url"] = args.broker
    if args.username:
        mqtt["username"] = args.username
    if args.prefix:
        mqtt["prefix"] = args.prefix
    wake: dict[str, Any] = {}
    if args.wake_words:
        wake["models"] = args.wake_words
    if args.threshold is not None:
        wake["threshold"] = args.threshold
    audio: dict[str, Any] = {}
    if args.input_device is not None:
        audio["input_device"] = args.input_device
    if args.output_device is not None:
        audio["output_device"] = args.output_device
    if args.no_chimes:
        audio["chimes"] = False
    data = settings.model_dump()
    for section, values in (("mqtt", mqtt), ("wake", wake), ("audio", audio)):
        data[section].update(values)
    return SatelliteSettings.model_validate(data)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.list_devices:
        from satellites.audio import list_devices

        for index, name, inputs, outputs in list_devices():
            print(f"{index}: {name} (in {inputs}, out {outputs})")
        return EXIT_OK
    try:
        settings = _apply(load_settings(args.config, **_overrides(args)), args)
    except ValidationError as err:
        print(f"satellite: invalid settings: {describe_invalid(err)}", file=sys.stderr)
        return EXIT_CONFIG
    except (FileNotFoundError, ValueError) as err:
        print(f"satellite: invalid settings: {err}", file=sys.stderr)
        return EXIT_CONFIG
    setup_logging(settings.log_level)
    try:
        return asyncio.run(_run(settings, args))
    except SatelliteError as err:
        print(f"satellite: {err}", file=sys.stderr)
        return EXIT_FAILED


async def _run(settings: SatelliteSettings, args: argparse.Namespace) -> int:
    from satellites.audio import (
        AudioInput,
        AudioOutput,
        PyAudioInput,
        PyAudioOutput,
        WavInput,
        WavOutput,
    )
    from satellites.client import Satellite

    audio_in: AudioInput = (
        WavInput(args.input, realtime=not args.fast)
        if args.input
        else PyAudioInput(settings.audio.input_device)
    )
    audio_out: AudioOutput = (
        WavOutput(args.output) if args.output else PyAudioOutput(settings.audio.output_device)
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    satellite = Satellite(settings, audio_in, audio_out, once=args.input is not None)
    try:
        turns = await satellite.run(stop)
    finally:
        audio_out.close()
    if args.input is None:
        return EXIT_OK
    if not turns:
        print("satellite: no wake word heard in the input", file=sys.stderr)
        return EXIT_NO_TURN
    turn = turns[-1]
    said = " / ".join(t for t in turn.spoken if t)
    reason = f" ({turn.reason})" if turn.reason else ""
    print(f"turn {turn.session_id}: {turn.outcome}{reason}" + (f": {said}" if said else ""))
    if turn.outcome == "rejected" and turn.reason == "loading":
        print("satellite: the node is still loading its models; try again shortly",
              file=sys.stderr)  # fmt: skip
    elif turn.outcome == "no_answer":
        print("satellite: no node answered the wake claim (is `appliance run` up, with "
              "voice on, on this broker and prefix?)", file=sys.stderr)  # fmt: skip
    return EXIT_OK if turn.outcome in {"ended", "stood_down"} else EXIT_NO_TURN


if __name__ == "__main__":
    sys.exit(main())
