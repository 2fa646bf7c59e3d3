"""Narration: one short sentence about a receipt, in the user's language.

``templates`` writes a deterministic sentence for every receipt; ``guard`` checks that
a sentence (from the LLM) says what the receipt says and nothing else.
"""

from __future__ import annotations

from appliance.narration.guard import GuardResult, check
from appliance.narration.lang import SUPPORTED_LANGUAGES, normalize_lang
from appliance.narration.templates import template_sentence

__all__ = ["SUPPORTED_LANGUAGES", "GuardResult", "check", "normalize_lang", "template_sentence"]
