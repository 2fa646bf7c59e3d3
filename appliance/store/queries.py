"""Named SQL queries, loaded once from ``sql/queries/*.sql``.

A file holds queries headed ``-- name: <name>``; parameters are psycopg named
placeholders (``%(name)s``), always bound, never formatted into the text.
"""

from __future__ import annotations

import functools
import re
from importlib import resources
from typing import LiteralString, cast

_HEADER = re.compile(r"^-- name: (\w+)\s*$", re.MULTILINE)


@functools.cache
def queries(module: str) -> dict[str, LiteralString]:
    """All queries of ``sql/queries/<module>.sql`` by name."""
    text = (resources.files("appliance.store") / "sql" / "queries" / f"{module}.sql").read_text(
        encoding="utf-8"
    )
    parts = _HEADER.split(text)
    found: dict[str, LiteralString] = {}
    for name, body in zip(parts[1::2], parts[2::2], strict=True):
        # Query text comes from files shipped with the package, never from input.
        found[name] = cast(LiteralString, body.strip().rstrip(";"))
    return found
