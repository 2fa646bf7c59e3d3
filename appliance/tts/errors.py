"""The text-to-speech subsystem's error."""

from __future__ import annotations

from appliance.errors import ApplianceError


class TtsError(ApplianceError):
    """Speech cannot be made: no voice for the language, a voice that fails to load or run."""
