"""Settings of voice sessions."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class VoiceSettings(BaseModel):
    """Voice turns from satellites."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(default=True, description="Accept voice sessions from satellites.")
    arbitration_ms: int = Field(
        default=300,
        ge=0,
        le=2000,
        description="Wake claims this close together compete; the best score wins.",
    )
    session_timeout_s: float = Field(
        default=45.0,
        gt=0,
        description="Longest a session may last, answers included (a question asked once "
        "more, each answer waited for up to confirm_timeout_s).",
    )
    confirm_timeout_s: float = Field(
        default=8.0, gt=0, description="How long a yes/no answer is waited for."
    )
    ask_again: bool = Field(
        default=True,
        description="Ask the question once more, rather than drop the proposal, when the "
        "answer asks for it ('what?') or only Whisper heard a 'yes' (the verifier heard a "
        "no, or no answer); the second answer must be a yes from both engines.",
    )
    refer_back_s: float = Field(
        default=120.0,
        ge=0,
        description="For this long after a satellite's command added or changed one item, "
        "'make that three' at that satellite is about that item (0: never; such a request "
        "must name its item).",
    )
    first_audio_target_ms: float | None = Field(
        default=1000.0,
        ge=0,
        description="The reply should start this soon after the end of speech: the LLM "
        "narrates only within what is left of it (less the speaker's own time), else the "
        "template sentence is spoken. Unset: the LLM always gets llm.budget_ms.",
    )
    heartbeat_s: float = Field(
        default=2.0,
        gt=0,
        le=30,
        description="While a session runs, the node tells its satellite it is still on it "
        "this often ('working'); a satellite that hears nothing for a while ends the turn.",
    )
    playback_timeout_s: float = Field(
        default=20.0, gt=0, description="How long the satellite's 'played' report is awaited."
    )
    announce_wait_s: float = Field(
        default=30.0,
        gt=0,
        description="How long an announcement waits for a voice turn (or another "
        "announcement) at its satellite to end; past it, it is dropped.",
    )
    site_users: dict[str, str] = Field(
        default_factory=dict, description="Satellite site -> user whose list a voice acts on."
    )
    site_languages: dict[str, str] = Field(
        default_factory=dict, description="Satellite site -> language (en or pt)."
    )
