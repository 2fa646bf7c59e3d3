"""Types shared by the speech recognisers (whisper, the verifier engines) and their callers.

Dependency-free on purpose: importing this module loads no model and no native library.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from appliance.errors import ApplianceError

REJECT_HALLUCINATION = "hallucination"
"""A phrase the model makes up on silence or noise ("Thank you.", "Obrigado.")."""
REJECT_REPETITION = "repetition"
"""The decoder looped ("Add milk. Add milk. Add milk.")."""
REJECT_NO_SPEECH = "no_speech"
"""The model itself says there is no speech, or there was no audio."""
REJECT_TIMEOUT = "timeout"
"""The decode was cut by its length/time bound before it finished."""
REJECT_LOW_CONFIDENCE = "low_confidence"
"""The words are too improbable to act on."""
REJECT_WEAK = "weak"
"""The verifier is unsure but not far off: its words may only confirm the very same
reading from the other engine, never act or be proposed on their own."""
REJECT_PROMPT_ECHO = "prompt_echo"
"""The text only repeats the biasing prompt."""


@dataclass(frozen=True)
class Transcript:
    """What one engine heard in one utterance."""

    text: str
    """The words; "" when nothing usable was heard."""
    engine: str
    """"whisper", "pocketsphinx", "vosk"."""
    elapsed_ms: float
    """Compute time of this transcription."""
    confidence: float | None = None
    """Engine-specific score in [0, 1] where known."""
    rejected: str | None = None
    """Why the text must not be trusted (one of the ``REJECT_*`` names, or an engine's
    own); None when it may be used."""
    alternatives: tuple[str, ...] = ()
    """Other readings the engine found almost as likely (Whisper's beam), best first;
    empty when the text was rejected."""
    details: Mapping[str, Any] = field(default_factory=dict)
    """Engine specifics (raw text, scores, settings) for logs at DEBUG and benchmarks."""

    @property
    def usable(self) -> bool:
        """True when there is text and nothing rejected it."""
        return bool(self.text) and self.rejected is None


@dataclass(frozen=True)
class Hints:
    """What the caller knows that makes the expected words likelier."""

    lang: str = "en"
    """Language code of the utterance ("en", "pt")."""
    items: tuple[str, ...] = ()
    """Items on the list and past items, to bias toward."""
    prompt: str | None = None
    """Extra free text to bias toward (an engine may ignore it)."""
    vocabulary: str | None = None
    """Words to bias toward instead of the engine's own command vocabulary (the
    answers to a yes/no question); None: the command vocabulary."""


class AsrError(ApplianceError):
    """A speech recogniser failed: model missing or broken, bad audio, decode crashed."""
