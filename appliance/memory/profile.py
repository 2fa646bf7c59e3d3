"""A user's consolidated profile: the strongest active memories, in a bounded text.

Memories are taken by importance x strength (strongest first) and written one per
line, ``- (kind) text``, until the next line would pass the size limit. The text is
what a recall step can put in front of a language model; its ids say where it came
from.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from appliance.memory.model import Kind


@dataclass(frozen=True)
class ProfileText:
    text: str
    memory_ids: tuple[int, ...]


def build_profile(
    candidates: Iterable[tuple[int, Kind, str, int, float]], max_chars: int
) -> ProfileText:
    """``candidates`` are ``(id, kind, text, importance, strength)``, strongest first."""
    lines: list[str] = []
    ids: list[int] = []
    size = 0
    for memory_id, kind, text, _importance, strength in candidates:
        if strength <= 0:
            continue
        line = f"- ({kind.value}) {text}"
        needed = len(line) + (1 if lines else 0)
        if size + needed > max_chars:
            continue  # a shorter, weaker one may still fit
        lines.append(line)
        ids.append(memory_id)
        size += needed
    return ProfileText("\n".join(lines), tuple(ids))
