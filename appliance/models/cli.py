"""``appliance models fetch|list|verify``: the lead wires these into ``appliance.cli``.

``add_models_commands(subparsers)`` adds the ``models`` subcommand to the top-level
parser; ``run_models_command(args, data_dir)`` runs it and returns the exit status.
Errors are reported here (one ``appliance: ...`` message on stderr), so the caller
only dispatches.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path, PurePosixPath
from typing import TextIO
from urllib.parse import unquote, urlsplit

from appliance.models import catalog, registry
from appliance.models.catalog import KINDS
from appliance.models.download import DEFAULT_TIMEOUT
from appliance.models.errors import ModelFetchError
from appliance.models.fetch import FileSpec, archive_of, fetch_entry, install, models_dir
from appliance.models.progress import human_bytes

EXIT_OK = 0
EXIT_PROBLEMS = 1  # verify found damaged or missing models
EXIT_FAILED = 4  # same as appliance.cli.EXIT_FAILED
EXIT_INTERRUPTED = 130

_ADHOC_ONLY = ("kind", "model_lang", "archive", "inside")


def add_models_commands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    models = subparsers.add_parser(
        "models",
        help="speech and language models: fetch, list, verify",
        description="Models beyond the defaults, fetched on purpose and checked by sha256.",
    )
    commands = models.add_subparsers(dest="models_command", required=True)

    fetch = commands.add_parser(
        "fetch",
        help="download, check and install a model",
        description=(
            "Fetch a catalog model by NAME, or any model with --url URL --sha256 HEX. "
            "An interrupted download resumes when the same command runs again."
        ),
    )
    fetch.add_argument("model", nargs="?", metavar="NAME", help="a name from `models list`")
    fetch.add_argument(
        "--url",
        dest="urls",
        action="append",
        default=[],
        metavar="URL",
        help="http(s):// or file:// URL (repeat per file); with NAME it replaces the "
        "catalog's URL, e.g. a copy on a USB stick",
    )
    fetch.add_argument(
        "--sha256",
        dest="sha256s",
        action="append",
        default=[],
        metavar="HEX",
        help="expected sha256 of the downloaded file (repeat per file, same order)",
    )
    fetch.add_argument(
        "--name",
        dest="install_name",
        metavar="NAME",
        help="folder name under <data-dir>/models (default: NAME, or from the URL)",
    )
    fetch.add_argument("--kind", choices=KINDS, help="what engine loads it (guessed if not given)")
    fetch.add_argument(
        "--lang", dest="model_lang", metavar="LANG", help="language of the model, e.g. pt-BR"
    )
    fetch.add_argument(
        "--archive",
        choices=["zip", "tar.gz", "none"],
        help="how to unpack the download (default: from the URL's ending)",
    )
    fetch.add_argument(
        "--inside",
        metavar="PATH",
        help="the model inside the download: a folder of the archive, or a file",
    )
    fetch.add_argument("--force", action="store_true", help="replace an installed model")
    fetch.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"seconds to wait for the server (default {DEFAULT_TIMEOUT:g})",
    )
    fetch.add_argument(
        "--no-progress", dest="progress", action="store_false", help="no progress bar"
    )

    commands.add_parser("list", help="catalog models and installed ones")

    verify = commands.add_parser("verify", help="re-hash installed models against the manifest")
    verify.add_argument("names", nargs="*", metavar="NAME", help="only these (default: all)")


def run_models_command(args: argparse.Namespace, data_dir: Path) -> int:
    try:
        if args.models_command == "fetch":
            return _fetch(args, data_dir, sys.stdout)
        if args.models_command == "list":
            return _list(data_dir, sys.stdout)
        return _verify(args, data_dir, sys.stdout)
    except ModelFetchError as err:
        sys.stderr.write(f"appliance: {err}\n")
        return EXIT_FAILED
    except KeyboardInterrupt:
        sys.stderr.write("\nappliance: interrupted; run the same command again to resume\n")
        return EXIT_INTERRUPTED


def _fetch(args: argparse.Namespace, data_dir: Path, out: TextIO) -> int:
    dest = models_dir(data_dir)
    common = {"progress": args.progress, "timeout": args.timeout, "force": args.force}
    entry = catalog.get(args.model) if args.model else None
    if entry is not None:
        given = [f"--{opt.removeprefix('model_')}" for opt in _ADHOC_ONLY if getattr(args, opt)]
        if given:
            raise ModelFetchError(
                f"{', '.join(given)} cannot be used with a catalog model ({entry.name}); "
                "the catalog says what it is"
            )
        path = fetch_entry(
            entry,
            dest,
            sha256s=args.sha256s,
            urls=args.urls,
            name=args.install_name,
            **common,
        )
        name = args.install_name or entry.name
    else:
        name, path = _fetch_url(args, dest, common)
    out.write(f"installed {name} at {path}\n")
    return EXIT_OK


def _fetch_url(
    args: argparse.Namespace, dest: Path, common: dict[str, bool | float]
) -> tuple[str, Path]:
    if not args.urls:
        if args.model:
            raise ModelFetchError(
                f"{args.model!r} is not in the catalog (see `appliance models list`); "
                "to fetch another model give --url URL --sha256 HEX"
            )
        raise ModelFetchError("give a catalog NAME, or --url URL --sha256 HEX")
    if len(args.sha256s) != len(args.urls):
        raise ModelFetchError(
            "give one --sha256 per --url: a model is never installed without its checksum"
        )
    name = args.install_name or args.model or _name_from_url(args.urls[0])
    specs = [
        FileSpec(url=url, sha256=digest, archive=archive_of(url, args.archive))
        for url, digest in zip(args.urls, args.sha256s, strict=True)
    ]
    path = install(
        specs,
        dest,
        name=name,
        kind=args.kind,
        language=args.model_lang,
        inside=args.inside,
        progress=bool(common["progress"]),
        timeout=float(common["timeout"]),
        force=bool(common["force"]),
    )
    return name, path


def _name_from_url(url: str) -> str:
    name = PurePosixPath(unquote(urlsplit(url).path)).name
    for suffix in (".tar.gz", ".tgz", ".zip"):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return PurePosixPath(name).stem or name


def _list(data_dir: Path, out: TextIO) -> int:
    installed = registry.installed(data_dir)
    names = {m.name for m in installed}
    out.write("Catalog (appliance models fetch NAME):\n")
    rows: list[tuple[str, ...]] = [("NAME", "KIND", "LANGUAGE", "SIZE", "STATUS")]
    for entry in catalog.CATALOG:
        if entry.name in names:
            status = "installed"
        elif entry.needs_sha256:
            status = f"needs --sha256 ({len(entry.files)}x)"
        else:
            status = "available"
        rows.append((entry.name, entry.kind, entry.language, f"~{entry.approx_mb} MB", status))
    _table(out, rows)
    for entry in catalog.CATALOG:
        out.write(f"  {entry.name}: licence {entry.licence}\n")
    out.write(f"\nInstalled in {models_dir(data_dir)}:\n")
    if not installed:
        out.write("  (none)\n")
        return EXIT_OK
    rows = [("NAME", "KIND", "LANGUAGE", "SIZE", "FETCHED", "PATH")]
    rows += [
        (
            m.name,
            m.kind or "?",
            m.language or "?",
            human_bytes(m.size),
            m.fetched_at,
            str(m.path),
        )
        for m in installed
    ]
    _table(out, rows)
    return EXIT_OK


def _verify(args: argparse.Namespace, data_dir: Path, out: TextIO) -> int:
    results = registry.verify(data_dir, list(args.names) or None)
    if not results:
        out.write("no models installed\n")
        return EXIT_OK
    for result in results:
        if result.ok:
            files = "1 file" if result.files == 1 else f"{result.files} files"
            out.write(f"ok      {result.name} ({files})\n")
            continue
        out.write(f"FAILED  {result.name}\n")
        for problem in result.problems:
            out.write(f"          {problem}\n")
    if all(r.ok for r in results):
        return EXIT_OK
    out.write("fetch damaged models again with: appliance models fetch NAME --force ...\n")
    return EXIT_PROBLEMS


def _table(out: TextIO, rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        out.write("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        out.write("\n")
