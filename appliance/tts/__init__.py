"""Speech out: text normalization for speech (en, pt-BR) and Piper synthesis.

``speakable`` turns written forms (numbers, units, money, dates, times, abbreviations)
into words; ``PiperSpeaker`` splits a reply into sentences and streams int16 PCM per
sentence. Piper (and onnxruntime) are imported only with ``appliance.tts.piper``.
"""

from __future__ import annotations

from appliance.tts.errors import TtsError
from appliance.tts.normalize import speakable
from appliance.tts.sentences import split_sentences
from appliance.tts.settings import TtsSettings

__all__ = ["TtsError", "TtsSettings", "speakable", "split_sentences"]
