"""appliance: a headless, CPU-only home voice assistant for Home Assistant users."""

__version__ = "0.1.0"
