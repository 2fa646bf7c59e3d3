"""The satellite's own small settings tree.

Sources, strongest first: command-line options, environment variables
(``SATELLITE_`` prefix, ``__`` between sections: ``SATELLITE_MQTT__URL``), the TOML
file (``--config`` or ``SATELLITE_CONFIG``), then the defaults below.
``config/satellite.example.toml`` documents every key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator
from pydantic_settings import SettingsConfigDict

from appliance.protocol.voice import BUILTIN_WAKE_WORDS
from appliance.settings_sources import TomlSettings

CONFIG_ENV = "SATELLITE_CONFIG"


class MqttSettings(BaseModel):
    """The broker the node listens on."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(default="mqtt://127.0.0.1:1883", description="mqtt://host:port or mqtts://")
    username: str | None = Field(
        default=None,
        description="Broker user; the shipped ACL expects the site name. Default: the site.",
    )
    password: SecretStr | None = Field(default=None, description="Broker password.")
    ca_file: Path | None = Field(default=None, description="CA certificate for mqtts:// URLs.")
    prefix: str = Field(default="appliance", description="Topic prefix of the node's API.")
    keepalive: int = Field(default=15, ge=5, le=3600, description="Keepalive in seconds.")
    reconnect_max_seconds: float = Field(
        default=30.0, gt=0, description="Longest wait between reconnection attempts."
    )

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in {"mqtt", "mqtts", "tcp", "ssl"} or not parts.hostname:
            msg = "mqtt.url must look like mqtt://host:1883 or mqtts://host:8883"
            raise ValueError(msg)
        if parts.username or parts.password:
            msg = "mqtt.url must not hold credentials: set mqtt.username and mqtt.password"
            raise ValueError(msg)
        return value


class WakeSettings(BaseModel):
    """Local wake word detection (openWakeWord models)."""

    model_config = ConfigDict(extra="forbid")

    models: list[str] = Field(
        default_factory=lambda: ["hey_jarvis"],
        min_length=1,
        description=f"Built-in names ({', '.join(BUILTIN_WAKE_WORDS)}) or paths to .tflite files.",
    )
    threshold: float = Field(
        default=0.5, gt=0, lt=1, description="Probability a frame must reach to count."
    )
    trigger_level: int = Field(
        default=1, ge=1, le=20, description="Frames in a row at or above the threshold."
    )
    refractory_s: float = Field(
        default=2.0, ge=0, description="After a wake, the same model stays quiet this long."
    )
    preroll_ms: int = Field(
        default=320,
        ge=0,
        le=2_000,
        description="Audio from just before the wake fired that goes with the command "
        "(in 64 ms chunks): the model fires a little after the phrase, and a command said "
        "in one breath ('hey jarvis add eggs') has begun by then. 0: none.",
    )
    quiet_gate: bool = Field(
        default=True,
        description="Do not re-run the wake model's embedding over a second of audio "
        "below quiet_dbfs (the same result, a tenth of the CPU in a quiet room).",
    )
    quiet_dbfs: float = Field(
        default=-60.0, le=0, description="Level (RMS, dBFS) under which audio is quiet."
    )
    speech_gate: bool = Field(
        default=True,
        description="Nor over a second with no voice in it by Silero VAD at a lenient "
        "threshold (steady noise: a fridge, a fan); the wake model's context is "
        "recomputed when voice comes, so it scores exactly what it would have.",
    )

    @field_validator("models")
    @classmethod
    def _check_models(cls, value: list[str]) -> list[str]:
        for model in value:
            if model not in BUILTIN_WAKE_WORDS and not model.endswith(".tflite"):
                msg = f"unknown wake word {model!r}: use a built-in name or a .tflite path"
                raise ValueError(msg)
        return value


class AudioSettings(BaseModel):
    """Microphone, speaker and what happens to the sound in between."""

    model_config = ConfigDict(extra="forbid")

    input_device: str | int | None = Field(
        default=None, description="Capture device: index, or a part of its name. None: default."
    )
    output_device: str | int | None = Field(
        default=None, description="Playback device: index, or a part of its name."
    )
    volume: int = Field(default=100, ge=0, le=100, description="Playback volume, percent.")
    noise_suppression: int = Field(
        default=0,
        ge=0,
        le=4,
        description="webrtc noise suppression level (0 off, 4 strongest); needs the "
        "'webrtc-noise-gain' package (in the satellite extra).",
    )
    auto_gain_dbfs: int = Field(
        default=0,
        ge=0,
        le=31,
        description="webrtc automatic gain target in dBFS below full scale (0 off).",
    )
    chimes: bool = Field(default=True, description="Play a chime at the wake and at the end.")
    wake_chime: Path | None = Field(
        default=None, description="WAV file for the wake chime; None: a built-in tone."
    )
    done_chime: Path | None = Field(
        default=None, description="WAV file for the done chime; None: a built-in tone."
    )


class StreamSettings(BaseModel):
    """How long a turn's audio may go on, as the satellite sees it."""

    model_config = ConfigDict(extra="forbid")

    local_vad: bool = Field(
        default=True,
        description="End the stream here after trailing silence (Silero VAD), even if the "
        "node is slow to say so.",
    )
    trailing_silence_ms: int = Field(
        default=2_000,
        ge=200,
        description="Silence after speech that ends the stream locally; longer than the "
        "node's own, which normally decides first (its vad.hold_silence_ms included: a "
        "pause after 'add milk and ...').",
    )
    no_speech_timeout_s: float = Field(
        default=6.0, gt=0, description="No speech at all after the wake: end the stream."
    )
    max_stream_s: float = Field(default=15.0, gt=0, description="Longest stream of one turn.")
    accept_timeout_s: float = Field(
        default=3.0, gt=0, description="Seconds to wait for the node to accept a wake claim."
    )
    turn_timeout_s: float = Field(
        default=60.0, gt=0, description="A turn the node never ends is dropped after this."
    )
    node_silence_s: float = Field(
        default=8.0,
        gt=0,
        description="After the node accepted a turn, it says something at least every "
        "couple of seconds ('working'); silence this long means it is gone: the turn ends.",
    )
    queue_chunks: int = Field(
        default=256,
        ge=16,
        description="Audio chunks (64 ms each) held while the broker is slow; beyond "
        "that the turn is ended rather than growing without limit.",
    )


class SatelliteSettings(TomlSettings):
    """Root of a satellite's settings."""

    model_config = SettingsConfigDict(
        env_prefix="SATELLITE_",
        env_nested_delimiter="__",
        extra="forbid",
        validate_default=True,
    )
    config_env: ClassVar[str] = CONFIG_ENV

    site: str = Field(
        default="satellite",
        pattern=r"^[A-Za-z0-9_-]{1,64}$",
        description="Site id: the MQTT user name the ACL expects and the topic segment.",
    )
    name: str | None = Field(default=None, description="Name shown in Home Assistant.")
    area: str | None = Field(default=None, description="Home Assistant area ('Kitchen').")
    lang: Literal["en", "pt"] | None = Field(
        default=None, description="Language spoken here; None: the node's default."
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default="INFO", description="Log level."
    )
    mqtt: MqttSettings = Field(default_factory=MqttSettings)
    wake: WakeSettings = Field(default_factory=WakeSettings)
    audio: AudioSettings = Field(default_factory=AudioSettings)
    stream: StreamSettings = Field(default_factory=StreamSettings)

    @property
    def display_name(self) -> str:
        return self.name or self.site.replace("_", " ").replace("-", " ").title()


def load_settings(config_file: Path | None = None, **overrides: Any) -> SatelliteSettings:
    """Build the settings from all sources; ``overrides`` win (command-line options)."""
    return SatelliteSettings.load(config_file, **overrides)
