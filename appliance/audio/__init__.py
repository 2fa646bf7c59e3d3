"""Audio on the node: 16 kHz mono int16 PCM helpers and the end-of-speech detector.

Everything downstream of the satellites (endpointer, speech recognisers) works on one
format: little-endian signed 16-bit mono PCM at 16 kHz, as plain ``bytes``.
``appliance.audio.pcm`` converts other WAV files to it; ``appliance.audio.vad`` finds
where an utterance starts and ends.
"""

from __future__ import annotations

from appliance.errors import ApplianceError

SAMPLE_RATE = 16_000
"""Samples per second of the node's PCM."""

SAMPLE_WIDTH = 2
"""Bytes per sample (int16)."""


class AudioError(ApplianceError):
    """Audio is unusable: not a WAV file, truncated, odd byte count, unsupported format."""


__all__ = ["SAMPLE_RATE", "SAMPLE_WIDTH", "AudioError"]
