"""The satellite audio protocol: wake claims, audio in, speech out, control.

Both the node and the satellites import this module; it depends on pydantic only.
Audio in is raw PCM, 16 kHz, 16-bit little-endian, mono, ~64 ms per chunk, QoS 0,
never retained, and flows only inside a session the node accepted. Topics are all
under ``<prefix>/satellite/<site>/`` where ``<site>`` is the satellite's MQTT user
name (the shipped ACL lets each satellite use only its own site). See
docs/mqtt-api.md, "Voice".
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

BUILTIN_WAKE_WORDS = ("hey_jarvis", "okay_nabu", "alexa", "hey_mycroft", "hey_rhasspy")
"""The wake word models a satellite ships (pyopen-wakeword). The node's parser and the
verifier's grammar take them for words before a command ("hey jarvis, add milk")."""

SAMPLE_RATE = 16_000
SAMPLE_WIDTH = 2
CHANNELS = 1
CHUNK_MS = 64
CHUNK_BYTES = SAMPLE_RATE * SAMPLE_WIDTH * CHANNELS * CHUNK_MS // 1000  # 2048

SiteName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
SessionId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{1,64}$")]


def new_session_id() -> str:
    return uuid.uuid4().hex


class _Message(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    def to_payload(self) -> bytes:
        return self.model_dump_json(exclude_none=True).encode()


# --- satellite -> node ------------------------------------------------------------
class WakeClaim(_Message):
    """A satellite heard its wake word and asks for a session."""

    session_id: SessionId
    wake_word: str = Field(max_length=64)
    score: float = Field(ge=0, le=1)
    timestamp: float = Field(default_factory=time.time, description="Epoch seconds.")
    lang: Literal["en", "pt"] | None = None

    @classmethod
    def from_payload(cls, payload: bytes) -> WakeClaim:
        return cls.model_validate_json(payload)


class AudioEnd(_Message):
    """No more audio for this session (the satellite's own end of speech or a timeout)."""

    session_id: SessionId
    reason: Literal["vad", "timeout", "button", "error"] = "vad"

    @classmethod
    def from_payload(cls, payload: bytes) -> AudioEnd:
        return cls.model_validate_json(payload)


class SatelliteEvent(_Message):
    """Playback finished, the user pressed stop, or the satellite's state changed."""

    type: Literal["played", "stop", "muted", "unmuted"]
    session_id: SessionId | None = None

    @classmethod
    def from_payload(cls, payload: bytes) -> SatelliteEvent:
        return cls.model_validate_json(payload)


# --- node -> satellite ------------------------------------------------------------
ControlType = Literal["accept", "reject", "stand_down", "speak", "listen", "stop", "end", "working"]


class Control(_Message):
    """What the node tells one satellite.

    - ``accept``: stream audio for ``session_id`` now.
    - ``reject`` / ``stand_down``: do not stream (another satellite won the wake, or busy).
    - ``speak``: speech follows on the play topic in this format (``rate``, ``text``).
    - ``listen``: open the microphone again in the same session (a yes/no answer).
    - ``stop``: stop streaming and playing at once.
    - ``end``: the turn is over.
    - ``working``: the node is still on this session (every ``voice.heartbeat_s``); a
      satellite that hears nothing from the node for a while ends the turn (the node
      that took it is gone).
    """

    type: ControlType
    session_id: SessionId
    reason: str | None = None
    rate: int | None = None
    width: int | None = None
    channels: int | None = None
    text: str | None = None

    @classmethod
    def from_payload(cls, payload: bytes) -> Control:
        return cls.model_validate_json(payload)


class PlayEnd(_Message):
    """The last speech chunk of a session was sent; ``chunks`` lets a gap be noticed."""

    session_id: SessionId
    chunks: int = Field(ge=0)

    @classmethod
    def from_payload(cls, payload: bytes) -> PlayEnd:
        return cls.model_validate_json(payload)


# --- satellite -> anyone (retained) ---------------------------------------------
class SatelliteInfo(_Message):
    """What a satellite is (retained on its ``info`` topic): the node publishes Home
    Assistant discovery for each satellite from this."""

    site: SiteName
    name: str = Field(max_length=128)
    area: str | None = Field(default=None, max_length=128)
    wake_words: tuple[str, ...] = ()
    lang: Literal["en", "pt"] | None = None
    sw_version: str | None = Field(default=None, max_length=64)

    @classmethod
    def from_payload(cls, payload: bytes) -> SatelliteInfo:
        return cls.model_validate_json(payload)


class SatelliteState(_Message):
    """A satellite's current state (retained on its ``state`` topic)."""

    muted: bool = False
    volume: int = Field(default=100, ge=0, le=100)
    listening: bool = False
    playing: bool = False

    @classmethod
    def from_payload(cls, payload: bytes) -> SatelliteState:
        return cls.model_validate_json(payload)


SET_MUTE = "mute"
"""``ON`` / ``OFF``: the microphone (wake word included) is off while muted."""
SET_VOLUME = "volume"
"""``0``-``100``: playback volume in percent."""
SET_STOP = "stop"
"""Any payload: stop streaming and playing now."""
SETTINGS = (SET_MUTE, SET_VOLUME, SET_STOP)


@dataclass(frozen=True)
class SiteTopics:
    """Topic names of one satellite site."""

    prefix: str
    site: str

    @property
    def base(self) -> str:
        return f"{self.prefix}/satellite/{self.site}"

    # satellite -> node
    @property
    def wake(self) -> str:
        return f"{self.base}/wake"

    def audio(self, session_id: str) -> str:
        return f"{self.base}/audio/{session_id}"

    def audio_end(self, session_id: str) -> str:
        return f"{self.base}/audio/{session_id}/end"

    @property
    def event(self) -> str:
        return f"{self.base}/event"

    @property
    def status(self) -> str:
        """``online`` / ``offline`` (retained; ``offline`` is the satellite's last will)."""
        return f"{self.base}/status"

    @property
    def info(self) -> str:
        """:class:`SatelliteInfo` (retained)."""
        return f"{self.base}/info"

    @property
    def state(self) -> str:
        """:class:`SatelliteState` (retained)."""
        return f"{self.base}/state"

    # Home Assistant (or anyone allowed) -> satellite
    def set(self, name: str) -> str:
        """``set/mute``, ``set/volume``, ``set/stop`` (see ``SETTINGS``)."""
        return f"{self.base}/set/{name}"

    @property
    def set_filter(self) -> str:
        return f"{self.base}/set/+"

    # node -> satellite
    @property
    def control(self) -> str:
        return f"{self.base}/control"

    def play(self, session_id: str) -> str:
        return f"{self.base}/play/{session_id}"

    def play_end(self, session_id: str) -> str:
        return f"{self.base}/play/{session_id}/end"


def satellite_filter(prefix: str) -> str:
    """What the node subscribes to for every satellite."""
    return f"{prefix}/satellite/+/#"


ParsedTopic = tuple[str, str, str | None]
"""(site, kind, session_id): kind is wake, audio, audio_end, event, control, play,
play_end, status, info, state, or set (then the third field is the setting's name)."""


def parse_topic(prefix: str, topic: str) -> ParsedTopic | None:
    """Split a satellite topic; None for anything that is not one."""
    head = f"{prefix}/satellite/"
    if not topic.startswith(head):
        return None
    parts = topic[len(head) :].split("/")
    if not parts or not parts[0]:
        return None
    site, rest = parts[0], parts[1:]
    match rest:
        case ["wake"]:
            return site, "wake", None
        case ["event"]:
            return site, "event", None
        case ["control"]:
            return site, "control", None
        case ["status"] | ["info"] | ["state"]:
            return site, rest[0], None
        case ["set", name]:
            return site, "set", name
        case ["audio", session_id]:
            return site, "audio", session_id
        case ["audio", session_id, "end"]:
            return site, "audio_end", session_id
        case ["play", session_id]:
            return site, "play", session_id
        case ["play", session_id, "end"]:
            return site, "play_end", session_id
    return None
