"""The local LLM, used only to phrase receipts (see ``narrator``)."""

from __future__ import annotations

from appliance.llm.narrator import Narration, Narrator
from appliance.llm.settings import LlmSettings
from appliance.llm.think import ThinkFilter, filter_stream, strip_think

__all__ = ["LlmSettings", "Narration", "Narrator", "ThinkFilter", "filter_stream", "strip_think"]
