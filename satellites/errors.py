"""The satellite's exceptions: one root, one subclass per subsystem."""

from __future__ import annotations


class SatelliteError(Exception):
    """Root of every error the satellite raises on purpose."""


class AudioError(SatelliteError):
    """A device, file or model for sound could not be opened or used."""
