"""The node's one settings tree.

Sources, strongest first: command-line options, environment variables
(``APPLIANCE_`` prefix, ``__`` between sections: ``APPLIANCE_MQTT__URL``), the TOML
file (``--config`` or ``APPLIANCE_CONFIG``), then the defaults below.
``config/appliance.example.toml`` documents every key.
"""

from __future__ import annotations

import os
import re
import zoneinfo
from pathlib import Path
from typing import Any, ClassVar, Literal
from urllib.parse import parse_qsl, urlencode, urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator
from pydantic_settings import SettingsConfigDict

from appliance.asr.verifier import VerifierSettings
from appliance.asr.whisper import WhisperSettings
from appliance.audio.vad import VadSettings
from appliance.bus.limits import RateLimitSettings
from appliance.llm.settings import LlmSettings
from appliance.memory.settings import MemorySettings
from appliance.settings_sources import TomlSettings
from appliance.tts.settings import TtsSettings
from appliance.voice.settings import VoiceSettings

CONFIG_ENV = "APPLIANCE_CONFIG"


def _default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "appliance"


def _local_timezone() -> str:
    tz = os.environ.get("TZ")
    if tz and tz in zoneinfo.available_timezones():
        return tz
    try:
        link = Path("/etc/localtime").resolve()
    except OSError:
        return "UTC"
    parts = link.parts
    if "zoneinfo" in parts:
        name = "/".join(parts[parts.index("zoneinfo") + 1 :])
        if name in zoneinfo.available_timezones():
            return name
    return "UTC"


class MqttSettings(BaseModel):
    """The MQTT broker the node talks to."""

    model_config = ConfigDict(extra="forbid")

    url: str | None = Field(
        default=None,
        description="Broker URL (mqtt://host:1883 or mqtts://host:8883). Unset: the node "
        "starts its own embedded broker on embedded_host:embedded_port.",
    )
    username: str | None = Field(default=None, description="Broker user name.")
    password: SecretStr | None = Field(default=None, description="Broker password.")
    ca_file: Path | None = Field(default=None, description="CA certificate for mqtts:// URLs.")
    client_id: str | None = Field(
        default=None,
        description="MQTT client id; default 'appliance-<node_id>'. It keeps a persistent "
        "session, so commands sent while the node is away wait at the broker.",
    )
    prefix: str = Field(default="appliance", description="Topic prefix of the node's API.")
    keepalive: int = Field(default=30, ge=5, le=3600, description="Keepalive in seconds.")
    shared_group: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9_-]{1,64}$",
        description="Several nodes on one broker and database: the MQTT shared-subscription "
        "group they split commands in (mosquitto; not the embedded broker). Each node needs "
        "its own node_id. Unset: this node is the only one.",
    )
    max_payload_bytes: int = Field(
        default=16_384, ge=256, description="Larger command payloads are rejected unread."
    )
    embedded_host: str = Field(
        default="127.0.0.1", description="Bind address of the embedded broker."
    )
    embedded_port: int = Field(default=1883, ge=0, le=65535, description="Embedded broker port.")
    reconnect_max_seconds: float = Field(
        default=30.0, gt=0, description="Longest wait between reconnection attempts."
    )

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in {"mqtt", "mqtts", "tcp", "ssl"} or not parts.hostname:
            msg = "mqtt.url must look like mqtt://host:1883 or mqtts://host:8883"
            raise ValueError(msg)
        if parts.username or parts.password:
            msg = "mqtt.url must not hold credentials: set mqtt.username and mqtt.password"
            raise ValueError(msg)
        return value


class DbSettings(BaseModel):
    """PostgreSQL (with the pgvector extension)."""

    model_config = ConfigDict(extra="forbid")

    url: SecretStr | None = Field(
        default=None,
        description="libpq URL (postgresql://user:pass@host/db). Unset: the node starts its "
        "own embedded PostgreSQL in <data_dir>/postgres.",
    )
    pool_min: int = Field(default=1, ge=1, description="Connections kept open.")
    pool_max: int = Field(default=4, ge=1, description="Most connections at once.")
    connect_timeout: float = Field(default=5.0, gt=0, description="Seconds to get a connection.")
    statement_timeout_ms: int = Field(
        default=5_000, ge=0, description="Server-side limit on any one statement."
    )


class HomeAssistantSettings(BaseModel):
    """Home Assistant MQTT discovery."""

    model_config = ConfigDict(extra="forbid")

    discovery: bool = Field(default=True, description="Publish MQTT discovery configs.")
    device_name: str = Field(default="Appliance", description="Device name shown in HA.")
    device_id: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9_-]{1,64}$",
        description="Home Assistant device id of the installation. Unset: node_id. Nodes "
        "sharing a broker and a database set the same device_id and different node_ids.",
    )


class ActionSettings(BaseModel):
    """How commands are executed."""

    model_config = ConfigDict(extra="forbid")

    batch_max: int = Field(
        default=64,
        ge=1,
        le=1000,
        description="Most queued commands committed in one database transaction. Each "
        "command still runs in its own savepoint: one failure never touches the others.",
    )
    default_list: str = Field(default="shopping", description="Name of the shopping list.")
    state_debounce_ms: int = Field(
        default=100, ge=0, description="Retained state topics are republished at most this often."
    )
    state_upcoming_days: int = Field(
        default=7, ge=1, description="Days of agenda events in the retained agenda state."
    )


class Settings(TomlSettings):
    """Root of the node's settings."""

    model_config = SettingsConfigDict(
        env_prefix="APPLIANCE_",
        env_nested_delimiter="__",
        extra="forbid",
        validate_default=True,
    )
    config_env: ClassVar[str] = CONFIG_ENV

    data_dir: Path = Field(
        default_factory=_default_data_dir,
        description="Embedded database, logs and state. Two nodes never share one.",
    )
    node_id: str = Field(
        default="appliance",
        pattern=r"^[A-Za-z0-9_-]{1,64}$",
        description="This node's id: MQTT client id and Home Assistant device id.",
    )
    timezone: str = Field(
        default_factory=_local_timezone, description="IANA zone for dates ('tomorrow at 3')."
    )
    language: Literal["en", "pt"] = Field(default="en", description="Default language.")
    default_user: str = Field(
        default="household", description="User a command acts for when it names none."
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default="INFO", description="Log level."
    )
    log_transcripts: bool = Field(
        default=False, description="Log command texts in full (they may be private)."
    )
    mqtt: MqttSettings = Field(default_factory=MqttSettings)
    db: DbSettings = Field(default_factory=DbSettings)
    homeassistant: HomeAssistantSettings = Field(default_factory=HomeAssistantSettings)
    actions: ActionSettings = Field(default_factory=ActionSettings)
    voice: VoiceSettings = Field(default_factory=VoiceSettings)
    vad: VadSettings = Field(default_factory=VadSettings)
    whisper: WhisperSettings = Field(default_factory=WhisperSettings)
    verifier: VerifierSettings = Field(default_factory=VerifierSettings)
    llm: LlmSettings = Field(default_factory=LlmSettings)
    tts: TtsSettings = Field(default_factory=TtsSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    rate_limits: RateLimitSettings = Field(default_factory=RateLimitSettings)

    @field_validator("timezone")
    @classmethod
    def _check_zone(cls, value: str) -> str:
        try:
            zoneinfo.ZoneInfo(value)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError) as err:
            msg = f"unknown time zone {value!r}"
            raise ValueError(msg) from err
        return value

    @model_validator(mode="after")
    def _check_shared(self) -> Settings:
        if self.mqtt.shared_group is not None and (self.mqtt.url is None or self.db.url is None):
            msg = (
                "mqtt.shared_group needs an external broker and database (mqtt.url, db.url): "
                "the embedded ones belong to one node"
            )
            raise ValueError(msg)
        return self

    @property
    def tz(self) -> zoneinfo.ZoneInfo:
        return zoneinfo.ZoneInfo(self.timezone)


def load_settings(config_file: Path | None = None, **overrides: Any) -> Settings:
    """Build the settings from all sources; ``overrides`` win (command-line options)."""
    return Settings.load(config_file, **overrides)


def redacted(settings: Settings) -> dict[str, Any]:
    """The effective settings as plain data, secrets shown as ``**********``."""
    data: dict[str, Any] = settings.model_dump(mode="json")
    if settings.db.url is not None:
        data["db"]["url"] = _redact_url(settings.db.url.get_secret_value())
    return data


_MASK = "**********"
_KEYWORD_PASSWORD = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)


def _redact_url(dsn: str) -> str:
    """A libpq URL or key=value string with every password masked."""
    if "://" not in dsn:
        return _KEYWORD_PASSWORD.sub(lambda m: m.group(1) + _MASK, dsn)
    parts = urlsplit(dsn)
    netloc = parts.netloc
    if parts.password is not None:
        netloc = netloc.replace(f":{parts.password}@", f":{_MASK}@")
    query = urlencode(
        [(k, _MASK if k.lower() == "password" else v) for k, v in parse_qsl(parts.query)],
        safe="*/",
    )
    return parts._replace(netloc=netloc, query=query).geturl()
