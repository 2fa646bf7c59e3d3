"""Voice turns said with a pause to think in the middle ("add milk and ... eggs to the
shopping list"), with and without holding such a pause, in the same process.

A pause of a second after words that stop mid-sentence ("and", "to", "of", "um") is
held (``vad.hold_silence_ms``) instead of ending the speech at ``trailing_silence_ms``;
without the hold, the turn ran on the words before the pause and the rest was lost.
Some commands pause after a finished phrase ("add a dozen ... eggs"): nothing tells
that pause from the end, and the figures say how often that costs the request.

Also reported: how many of ``voice``'s own commands, said without a pause, were held
at all (a hold on a finished request only delays its answer).
"""

from __future__ import annotations

import asyncio
from typing import Any

from bench import voice
from tests.support import speech

PAUSE_MS = 1000
PAUSED = [
    "add milk and | eggs to the shopping list",
    "add bread, butter and | cheese to the shopping list",
    "remind me to | call mom tomorrow at five pm",
    "add two liters of | milk to the shopping list",
    "put, um, | bananas on the shopping list",
    "add, uh, | oat milk to the shopping list",
    "we need milk, eggs and | bread",
    "add the dentist on friday at | three pm to my calendar",
    "take the | bread off the shopping list",
    "add a kilo of | rice to the shopping list",
    "set a reminder to | water the plants tomorrow at nine am",
    "check off the | milk",
    # a pause after a finished phrase: no word tells it from the end
    "add a dozen | eggs to the shopping list",
    "add milk | and eggs to the shopping list",
]
VOICES = ("piper", "piper_slow", "flite_slt", "flite_awb")


def _paused(say: Any) -> Any:
    """A voice that says each part of "a | b" in turn, ``PAUSE_MS`` of silence between."""

    def speak(text: str) -> bytes:
        parts = [say(p.strip()) for p in text.split("|")]
        gap = speech.silence(PAUSE_MS)
        joined = parts[0]
        for part in parts[1:]:
            joined = speech.concat(joined, gap, part)
        return joined

    return speak


def run(limit: int | None = None) -> dict[str, Any]:
    for name in VOICES:
        voice.VOICES[f"{name}_paused"] = _paused(voice.VOICES[name])
    paused = tuple(f"{name}_paused" for name in VOICES)
    held = asyncio.run(voice._run(limit, paused, ("clean",), PAUSED, ()))
    unheld = asyncio.run(
        voice._run(limit, paused, ("clean",), PAUSED, (), vad={"hold_silence_ms": 700})
    )
    plain = asyncio.run(voice._run(limit, ("piper", "flite_slt"), ("clean",)))
    return {
        "pause_ms": PAUSE_MS,
        "held": {k: held[k] for k in voice.SUMMARY},
        "not_held": {k: unheld[k] for k in voice.SUMMARY},
        "without_pauses": {
            k: plain[k] for k in ("utterances", "acceptance_rate", "wrong_actions", "held_turns")
        },
        "goals": {"wrong_actions": 0},
    }
