"""The narration languages."""

from __future__ import annotations

SUPPORTED_LANGUAGES: tuple[str, ...] = ("en", "pt")
"""English and Brazilian Portuguese."""


def normalize_lang(lang: str | None) -> str | None:
    """``"pt-BR"``/``"pt_br"``/``"PT"`` -> ``"pt"``; None for a language we don't narrate."""
    if not lang:
        return None
    base = lang.strip().replace("_", "-").split("-")[0].casefold()
    return base if base in SUPPORTED_LANGUAGES else None
