"""PocketSphinx verifier: the command grammar as a finite-state grammar.

English with the bundled en-us model and its dictionary; Brazilian Portuguese with the
same model, each word spelled in its phones by ``appliance.asr.pt_phones`` (no registry
package ships a Portuguese acoustic model, and a fetched Vosk model comes first).

The decoder runs the grammar's automaton (``grammar.compile_automaton``: the same
language as ``Grammar.jsgf`` but with shared suffixes, ~30x smaller than what
PocketSphinx makes of the JSGF, so it loads in about a second and decodes at
~0.2x real time). Lattice rescoring (``bestpath``) is off: it took seconds on noise.

Grammar decoding has no out-of-grammar rejection of its own, so a second decoder
runs a free phone loop (uniform, no phone language model) on the same audio. For
each word of the grammar's best path, its acoustic score is compared with the phone
loop's over the same frames: in-grammar speech scores close to the phone loop,
chatter forced into the grammar far below it. ``VerifierSettings.reject_avg_score``
(mean over the words' frames) and ``reject_word_score`` (worst word of 150 ms or more)
are the cut-offs. Defaults -24 / -50, measured on 40 Piper commands and 40 chatter
sentences, clean and with white noise at 20 and 10 dB, plus noise and babble: clean,
every correct transcript (38/40) kept and 1/40 chatter passed; over all conditions
96% of correct transcripts kept, 9/120 chatter and 0/15 noise passed. (-22 would
pass 3/120 chatter but keep only 85% of correct noisy commands.)

Voices differ in vocal tract length, and the bundled model hears some deeper voices
poorly. ``VerifierSettings.pocketsphinx_warps`` runs one such pair of decoders per
frequency warp factor (vocal tract length normalisation, ``inverse_linear``) on the same
audio, and the reading that scores best against its own phone loop is the transcript.
Measured on 24 commands said by the joe voice made deeper three ways (played at 0.85
and 0.8 of its speed, and pitched down by sox), read right (accepted or weak): warp 1.0
alone 25 of 72, with 0.8 as well 55; the joe voice kept 24 of 24, espeak-ng 13 and 12.
(1.0 with 0.7 read 65 in that probe, but over the whole voice benchmark, 6 voices
and 3 noise conditions, it was accepted 49.1% against 49.8% with 0.8: no better, within
what two runs of the same code differ by, as Piper's synthesis is random.) A factor
of 1.2 did nothing for higher voices. Each factor costs as much CPU as the first
(~0.12x real time) and ~120 MB, its search of the grammar (the first ~180 MB, with
the grammar's model, which the others share); the default is (1.0, 0.8). On a busy
CPU, a verifier ``hurry_behind_ms`` behind the speech when Whisper is done (or twice
as far at end of speech) goes on at the first factor alone: a reading at one factor
in time counts, two too late do not. A decoder's warp cannot
be changed in place (``reinit_feat``: the library keeps one warp for the whole
process, read when a filter bank is built), hence a decoder per factor.

Cepstral mean normalisation is live and carries over from one utterance to the next
(it adapts to the room and microphone), from means set for speech at a usual level
(``_CMN_INIT``); an utterance with no grammar hypothesis at all (noise, silence) leaves
it as it was. Both decoders hold the GIL while they decode (the base class feeds them
100 ms at a time) and while a grammar loads.
"""

from __future__ import annotations

import contextlib
import logging
import math
import re
import threading
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import pocketsphinx  # type: ignore[import-untyped,unused-ignore]

from appliance.actions.items import item_key
from appliance.asr.base import REJECT_LOW_CONFIDENCE, REJECT_NO_SPEECH, REJECT_WEAK, AsrError
from appliance.asr.grammar import (
    ANSWER_RULE,
    PAUSE,
    TIME_RULE,
    Automaton,
    Grammar,
    cmudict,
    cmudict_variants,
    compile_automaton,
)
from appliance.asr.verifier import (
    EXPECTS,
    PIECE_BYTES,
    REJECT_OUT_OF_GRAMMAR,
    Expect,
    Result,
    StreamingVerifier,
    VerifierSettings,
)
from appliance.audio.denoise import quiet_expanded
from appliance.audio.pcm import frame_dbfs
from appliance.audio.reverb import dereverbed, reverberant

_LOGGER = logging.getLogger(__name__)

_ALT_PRONUNCIATION = re.compile(r"\(\d+\)$")
_CONFIDENCE_SCALE = 6.0  # score units per logistic unit around the threshold
_MIN_WORD_FRAMES = 15  # 150 ms
_MIN_PAUSE_FRAMES = 15  # 150 ms
_MIN_BRIEF_PAUSE_FRAMES = 8  # 80 ms
"""A pause of a list said quickly, never alone a comma (``_pauses``). At the 137 commas
of 8 lists said by the voice benchmark's voices (three runs), the decoder's pause was
60 to 330 ms, under 80 ms at 8 (flite's voices 7); between the words of a compound said
as one ("cheese pizza", "milk chocolate", "tomato soup"), where the grammar put a comma,
30 to 50 ms at 80 of 85 (espeak-ng's voices aside), up to 90 ms on Piper's deeper voice
and 150 ms once."""
_CHOICE = "choice"  # the search of a second look's choice (``Grammar.choice``)
_CMN_INIT = "50,3,-1"
"""The cepstral means a decoder starts from, until live normalisation has heard an
utterance (the library's default is 40,3,-1). The first coefficient follows the level:
an utterance's own is ~48 (flite) to ~55 (Piper) at -20 dBFS of active speech, and
rises by about 1 per dB. From 40, the first utterance after a start was misheard more
often the louder it was. Each turn from a fresh start, Piper and flite slt, 28 commands
each, accepted from 40 -> from 50: -40 dBFS 92.9% -> 91.1% (two flite items misheard),
-26 dBFS 92.9% -> 96.4%, -8 dBFS 80.4% -> 91.1%, -4 dBFS (flite clipped) 62.5% ->
69.6%; espeak-ng's two voices at their own level (-19 dBFS), 28 of 56 either way.
Decoding each utterance again from its own means, when far from those it was decoded
with, did no better and cost 2-4 s."""
_MAX_READINGS = 4
"""A second look weighs at most this many of the readings it is given (each a forced
alignment over the utterance)."""
_MAX_CHOICES = 3
"""A second look's choice is made again without the items it heard that left speech
out, at most this many times in all (``_rivals``): with the item at the end of the
sentence, the decoder can fit a short item to its first sounds and put the rest on the
closing silence ("add a jar of tea" for "add a jar of peanut butter", espeak-ng), which
is no hearing of that item. An item that covers the speech still refuses the reading."""
_MAX_UNSAID_FRAMES = 20
"""A second look takes no reading that puts silence on 200 ms of speech sounds
(``_unsaid``). Measured: readings that were said, 0-10 frames over 18 taken
second looks (espeak-ng and Piper voices, clean and white noise at 20 dB); "remind me to
take out the trash tonight" said with "at eight", 32-49 frames; without "tonight",
36-76."""
_UNSAID_BELOW_DB = 15.0
"""Speech sounds that no word of a reading covers count as left out (``_unsaid``) only
at a level near its words': a run whose median frame is this far below the median
frame of the words is the room's or the noise's, not the speaker's. Measured (frame
levels against the words', dB): words left out ("remind me to take out the trash
tonight" said with "at eight", "... tomorrow at three p.m." without "to my
calendar"), -3 to +11 on espeak-ng's voices; the reverberant tail after "we're out of
coffee" (Piper, the benchmark's room), -35 to -52, which made a command both engines
heard ask."""


def _fit(found: Mapping[str, Any] | None) -> float:
    """How well the search's own reading fits the audio, for a second look to beat
    (``avg_score``): none at all when it leaves speech out (``_MAX_UNSAID_FRAMES``).
    Its average is over the frames its words cover, and a reading that put silence
    on the words it could not fit averages better for it: espeak-ng's voices, "remove
    the eggs from the shopping list" heard as "would you the shopping list" (-3.8 over
    its words, 47 frames of speech left out) against the words said (-6.5, none left
    out)."""
    if found is None or found["unsaid_frames"] >= _MAX_UNSAID_FRAMES:
        return -math.inf
    return float(found["avg_score"])


def _rivals(chosen: str, words: str, items: Sequence[str]) -> tuple[str, ...]:
    """The item names a choice heard (``chosen``) that ``words`` does not say."""
    heard, said = f" {chosen} ", f" {' '.join(w for w in words.split() if w != PAUSE)} "
    return tuple(n for n in items if f" {n} " in heard and f" {n} " not in said)


def _same_words(chosen: str, words: str) -> bool:
    """True if a second look's choice (``Grammar.choice``) heard ``words`` (the
    grammar's words, its pause aside), an item's plural for its singular or back
    aside: the same item to the gate (``item_key``), where the grammar keeps both
    ("remove the egg from the shopping list" chosen for "... the eggs ...")."""
    said = [item_key(w) for w in words.split() if w != PAUSE]
    return [item_key(w) for w in chosen.split()] == said


def _is_filler(word: str) -> bool:
    """Silence and noise (the decoder's fillers, and the grammar's pause)."""
    return word.startswith(("<", "[", "+")) or word in ("(NULL)", PAUSE)


def _text(hypothesis: str) -> str:
    """The grammar's words, a pause written as a comma ("milk, eggs and bread")."""
    return " ".join(hypothesis.split()).replace(f" {PAUSE}", PAUSE)


def _pauses(
    segments: Sequence[tuple[str, int, int, float]], min_frames: int = _MIN_PAUSE_FRAMES
) -> tuple[tuple[str, str], ...]:
    """The words on either side of each of the grammar's pauses that was heard as one
    (``min_frames`` long at least), as ("milk", "eggs"); the decoder can also squeeze a
    pause into a few frames of no silence at all ("chocolate milk")."""
    words = [(w, end - start + 1) for w, start, end, _ in segments if w != "(NULL)"]
    out: list[tuple[str, str]] = []
    for index, (word, frames) in enumerate(words):
        if word != PAUSE or frames < min_frames:
            continue
        before = [w for w, _ in words[:index] if not _is_filler(w)]
        after = [w for w, _ in words[index + 1 :] if not _is_filler(w)]
        if before and after:
            out.append((before[-1], after[0]))
    return tuple(out)


def _config(settings: VerifierSettings, warp: float) -> pocketsphinx.Config:
    config = pocketsphinx.Config(
        hmm=pocketsphinx.get_model_path("en-us/en-us"),
        # No dictionary file: the grammar's words are added (``_dictionary``). The
        # bundled one (134k words) took 23 MB in each decoder, phone loops included.
        dict=None,
        lm=None,
        loglevel="FATAL",
        bestpath=False,
        maxhmmpf=settings.pocketsphinx_max_hmm_per_frame,
    )
    # Always explicit, 1.0 included: the warp's parameters are static variables in the
    # library (fe_warp_inverse_linear.c), which skips a parameter string equal to the
    # last one it parsed, even after a decoder without one (neutral) came between.
    config["warp_type"] = "inverse_linear"
    config["cmninit"] = _CMN_INIT
    config["warp_params"] = repr(float(warp))
    return config


_CREATE_LOCK = threading.Lock()
"""Decoders are created one at a time: the frequency warp is set through those static
variables, and the filter bank is built from them when a decoder is created."""


def _dictionary(grammar: Grammar) -> dict[str, str]:
    """Word (alternative pronunciations as "word(2)") -> phones, for every word of
    ``grammar``: the bundled dictionary's, or the grammar's own for words it lacks."""
    english = grammar.lang == "en"  # Portuguese words are the grammar's own (pt_phones)
    known, variants = (cmudict(), cmudict_variants()) if english else ({}, grammar.variants)
    entries: dict[str, str] = {}
    for word in sorted(grammar.words):
        phones = known.get(word) or grammar.pronunciations.get(word)
        if phones is None:  # the grammar keeps only words it can pronounce
            raise AsrError(f"the grammar's word {word!r} has no pronunciation")
        entries[word] = phones
        for number, other in enumerate(variants.get(word, ()), start=2):
            entries[f"{word}({number})"] = other
    return entries


def _transitions(
    automaton: Automaton,
) -> list[tuple[int, int, float, str] | tuple[int, int, float]]:
    """FSG transitions, uniform over each state's outgoing transitions."""
    degree: dict[int, int] = {}
    for source, _, _ in automaton.arcs:
        degree[source] = degree.get(source, 0) + 1
    out: list[tuple[int, int, float, str] | tuple[int, int, float]] = []
    for source, target, word in automaton.arcs:
        probability = 1.0 / degree[source]
        if word is None:
            out.append((source, target, probability))
        else:
            out.append((source, target, probability, word))
    return out


class _Reading(NamedTuple):
    """What one decoder pair made of an utterance."""

    text: str  # "" without a complete sentence of the grammar
    scores: dict[str, Any]
    partial: bool  # words were on their way when the utterance ended


class _Channel:
    """One frequency warp: the grammar decoder and its phone loop."""

    def __init__(self, settings: VerifierSettings, warp: float) -> None:
        self.warp = warp
        with _CREATE_LOCK:
            self.decoder = pocketsphinx.Decoder(_config(settings, warp))
            self.phones = pocketsphinx.Decoder(_config(settings, warp))
        self.phones.add_allphone_file("phones", None)
        self.phones.activate_search("phones")
        self.logmath = self.decoder.get_logmath()
        self.cmn: tuple[str, str] | None = None

    def add_words(self, dictionary: Mapping[str, str]) -> None:
        """The words of ``dictionary`` the decoder does not know yet."""
        new_words = [(w, p) for w, p in dictionary.items() if self.decoder.lookup_word(w) is None]
        for index, (word, phones) in enumerate(new_words):
            self.decoder.add_word(word, phones, index == len(new_words) - 1)

    def swap(self, old: str | None, stays: str, name: str, fsg: Any) -> None:
        """Search ``old`` (if any) removed, ``stays`` active while it goes (the active
        search cannot go), then ``fsg`` (``pocketsphinx.FsgModel``) added as ``name``."""
        if old is not None:
            self.decoder.activate_search(stays)
            self.decoder.remove_search(old)
        self.decoder.add_fsg(name, fsg)

    def begin(self, search: str) -> None:
        self.decoder.activate_search(search)
        self.cmn = (self.decoder.get_cmn(False), self.phones.get_cmn(False))
        self.decoder.start_utt()
        self.phones.start_utt()

    def feed(self, pcm: bytes) -> None:
        self.decoder.process_raw(pcm)
        self.phones.process_raw(pcm)

    def discard(self) -> None:
        for decoder in (self.decoder, self.phones):
            with contextlib.suppress(RuntimeError):  # no utterance was running
                decoder.end_utt()

    def end(self, levels: np.ndarray) -> _Reading:
        """The best path and its scores (``words`` 0 when there is none); ``levels``:
        the utterance's 10 ms frames' (``frame_dbfs``), as the decoders had it."""
        partial = self.decoder.hyp()  # best path so far, complete sentence or not
        heard_some = partial is not None and bool(partial.hypstr.split())
        self.decoder.end_utt()
        self.phones.end_utt()
        hypothesis = self.decoder.hyp()
        if hypothesis is None or not hypothesis.hypstr.strip():
            return _Reading("", {"words": 0}, heard_some)
        segments = [
            (_ALT_PRONUNCIATION.sub("", s.word), s.start_frame, s.end_frame, s.ascore)
            for s in self.decoder.seg()
        ]
        speech = self._speech_sounds()
        scores = {
            **self.scores(segments),
            "pauses": _pauses(segments),
            "brief_pauses": _pauses(segments, _MIN_BRIEF_PAUSE_FRAMES),
            "unsaid_frames": _unsaid(segments, speech, levels),
            "word_levels": _word_levels(segments, levels),
        }
        return _Reading(_text(hypothesis.hypstr), scores, heard_some)

    def weigh(
        self, pcm: bytes, readings: Sequence[str], levels: np.ndarray
    ) -> list[dict[str, Any] | None]:
        """Each of ``readings`` (grammar words) forced onto ``pcm``, scored against the
        phone loop as a decoded reading is (``scores``, with its ``pauses``); None for
        one that cannot be aligned; ``levels``: ``pcm``'s 10 ms frames' (``frame_dbfs``).
        All start from the cepstral means the utterance left, which are kept for the
        next one."""
        saved = (self.decoder.get_cmn(False), self.phones.get_cmn(False))
        try:
            _decode(self.phones, pcm)
            speech = self._speech_sounds()
            weighed: list[dict[str, Any] | None] = []
            for reading in readings:
                self.decoder.set_cmn(saved[0])
                try:
                    self.decoder.set_align_text(reading)
                    _decode(self.decoder, pcm)
                except RuntimeError:
                    weighed.append(None)
                    continue
                segments = [
                    (_ALT_PRONUNCIATION.sub("", s.word), s.start_frame, s.end_frame, s.ascore)
                    for s in self.decoder.seg() or ()  # none: it did not fit at all
                ]
                weighed.append(
                    {
                        **self.scores(segments),
                        "pauses": _pauses(segments),
                        "brief_pauses": _pauses(segments, _MIN_BRIEF_PAUSE_FRAMES),
                        "unsaid_frames": _unsaid(segments, speech, levels),
                    }
                    if segments
                    else None
                )
            return weighed
        finally:
            self.decoder.set_cmn(saved[0])
            self.phones.set_cmn(saved[1])

    def _speech_sounds(self) -> np.ndarray:
        """Per frame, whether the phone loop heard a speech sound (not silence)."""
        speech = np.zeros(self.phones.n_frames() + 1, dtype=bool)
        for phone in self.phones.seg() or ():
            if not _is_filler(phone.word) and phone.word != "SIL":
                speech[phone.start_frame : phone.end_frame + 1] = True
        return speech

    def choose(
        self, pcm: bytes, automaton: Automaton, back_to: str, levels: np.ndarray
    ) -> tuple[str, int]:
        """What the decoder hears in ``pcm`` with ``automaton`` as its grammar (its
        words, fillers left out), and the speech sounds it leaves out (``_unsaid``;
        the phone loop's of ``pcm``, which ``weigh`` has just decoded; ``levels``: its
        frames'), from the cepstral means the utterance left, which are kept;
        ``back_to`` is the search active afterwards."""
        saved = self.decoder.get_cmn(False)
        fsg = self.decoder.create_fsg(
            _CHOICE, automaton.start, automaton.final, _transitions(automaton)
        )
        self.decoder.add_fsg(_CHOICE, fsg)
        try:
            self.decoder.activate_search(_CHOICE)
            _decode(self.decoder, pcm)
            segments = [
                (_ALT_PRONUNCIATION.sub("", s.word), s.start_frame, s.end_frame, s.ascore)
                for s in self.decoder.seg() or ()
            ]
            heard = " ".join(w for w, *_ in segments if not _is_filler(w))
            return heard, _unsaid(segments, self._speech_sounds(), levels)
        finally:
            self.decoder.set_cmn(saved)
            self.decoder.activate_search(back_to)
            self.decoder.remove_search(_CHOICE)

    def restore_cmn(self) -> None:
        """Undo this utterance's update of the cepstral means (live CMN)."""
        if self.cmn is not None:
            self.decoder.set_cmn(self.cmn[0])
            self.phones.set_cmn(self.cmn[1])

    def scores(self, segments: Sequence[tuple[str, int, int, float]]) -> dict[str, Any]:
        """Grammar path vs free phone loop, per frame, over the non-filler words.

        Short words (under ``_MIN_WORD_FRAMES``) count in the mean but not as the worst
        word: their boundaries match the phone loop's too poorly.
        """
        log = self.logmath.log
        loop = np.zeros(self.decoder.n_frames() + 1)
        for phone in self.phones.seg() or ():
            length = phone.end_frame - phone.start_frame + 1
            if length > 0:
                loop[phone.start_frame : phone.end_frame + 1] = log(phone.ascore) / length
        total_frames = 0
        total = 0.0
        per_word: list[tuple[int, float]] = []
        for word, start, end, ascore in segments:
            length = end - start + 1
            if _is_filler(word) or length <= 0:
                continue
            difference = log(ascore) - float(loop[start : end + 1].sum())
            total += difference
            total_frames += length
            per_word.append((length, round(difference / length, 1)))
        if not per_word:
            return {"words": 0, "avg_score": -math.inf, "min_word_score": -math.inf}
        long_words = [score for length, score in per_word if length >= _MIN_WORD_FRAMES]
        return {
            "words": len(per_word),
            "avg_score": total / total_frames,
            "min_word_score": min(long_words, default=0.0),
            "word_scores": per_word,
        }


def _unsaid(
    segments: Sequence[tuple[str, int, int, float]], speech: np.ndarray, levels: np.ndarray
) -> int:
    """The longest run of frames a reading puts silence on while the phone loop hears
    speech sounds there (``speech``, per frame): words the reading leaves out ("...
    tonight" for "... tonight at eight" puts "tonight" on "at eight", silence on
    "tonight"). A run far quieter than the reading's words (``_UNSAID_BELOW_DB``;
    ``levels``: each frame's, in dB) is a reverberant tail or the noise, and counts
    for nothing."""
    words = [levels[start : end + 1] for word, start, end, _ in segments if not _is_filler(word)]
    spoken = np.concatenate(words) if words else np.empty(0)
    floor = float(np.median(spoken)) - _UNSAID_BELOW_DB if spoken.size else -math.inf
    longest = 0
    for word, start, end, _ in segments:
        if not _is_filler(word):
            continue
        run: list[int] = []
        for frame in range(start, end + 2):  # one past the end closes the last run
            if frame <= end and frame < len(speech) and speech[frame]:
                run.append(frame)
                continue
            if len(run) > longest and float(np.median(np.take(levels, run, mode="clip"))) >= floor:
                longest = len(run)
            run = []
    return longest


def _word_levels(
    segments: Sequence[tuple[str, int, int, float]], levels: np.ndarray
) -> tuple[tuple[str, float], ...]:
    """Each word of a reading (fillers left out), and the level of its frames (their
    median) against that of all its words' frames, in dB: a word the grammar took
    from a talker behind the speaker is far quieter than the speaker's words."""
    words = [(w, levels[start : end + 1]) for w, start, end, _ in segments if not _is_filler(w)]
    words = [(w, frames) for w, frames in words if frames.size]
    if not words:
        return ()
    median = float(np.median(np.concatenate([frames for _, frames in words])))
    return tuple((w, round(float(np.median(frames)) - median, 1)) for w, frames in words)


def _chosen(
    grammar: Grammar,
    channel: _Channel,
    words: str,
    items: Sequence[str],
    *,
    heard: bytes,
    levels: np.ndarray,
    back_to: str,
) -> bool:
    """True if ``channel``'s decoder hears the items, amounts, days and times of
    ``words`` in ``heard`` (``levels``: its frames'), the rest as it is, among all of
    their kinds (``Grammar.choice``), made again without the items it heard that left
    speech out (``_MAX_CHOICES``); ``back_to``: the search active afterwards."""
    without: set[str] = set()
    for _ in range(_MAX_CHOICES):
        choice = grammar.choice(words, items, without)
        if choice is None:
            return False
        chosen, unsaid = channel.choose(heard, choice, back_to, levels)
        if _same_words(chosen, words):
            return True
        _LOGGER.debug("pocketsphinx: second look chose %r over %r", chosen, words)
        rivals = _rivals(chosen, words, grammar.items) if unsaid >= _MAX_UNSAID_FRAMES else ()
        if not rivals:
            return False
        without.update(rivals)  # they fit part of the speech and left the rest out
    return False


def _decode(decoder: pocketsphinx.Decoder, pcm: bytes) -> None:
    """One whole utterance through ``decoder``'s active search."""
    decoder.start_utt()
    for offset in range(0, len(pcm), PIECE_BYTES):
        decoder.process_raw(pcm[offset : offset + PIECE_BYTES])
    decoder.end_utt()


class PocketSphinxVerifier(StreamingVerifier):
    """Grammar decoding (English, or Portuguese in English phones) with phone-loop
    rejection, at one or more frequency warps; one instance per language."""

    engine = "pocketsphinx"

    def __init__(self, grammar: Grammar, settings: VerifierSettings | None = None) -> None:
        if grammar.lang not in ("en", "pt"):
            raise AsrError(f"PocketSphinx verifies English and Portuguese, not {grammar.lang!r}")
        self._ps_settings = settings or VerifierSettings()
        try:
            self._channels = [
                _Channel(self._ps_settings, warp) for warp in self._ps_settings.pocketsphinx_warps
            ]
        except (RuntimeError, ValueError) as err:
            raise AsrError(f"PocketSphinx failed to start: {err}") from err
        self._searches: tuple[str, ...] | None = None
        self._grammar_key = ""
        self._grammar: Grammar | None = None
        self._heard = bytearray()  # this utterance's audio, as the decoders had it
        self._found: tuple[str, float] | None = None  # the last reading and its warp
        self._live = self._channels  # the channels that hear this utterance
        super().__init__(grammar.lang, self._ps_settings)
        try:  # at once: a broken grammar fails here, not at the first utterance
            self._call_on_worker(lambda: self._load(grammar))
        except AsrError:
            self.close()
            raise

    # -- grammar ---------------------------------------------------------------------

    def _engine_set_grammar(self, grammar: Grammar) -> None:
        if grammar.key != self._grammar_key:
            self._load(grammar)

    def _load(self, grammar: Grammar) -> None:
        names = tuple(f"{kind[0]}{grammar.key}" for kind in EXPECTS)
        dictionary = _dictionary(grammar)
        automata = [
            (name, compile_automaton(grammar.rules, rule))
            for name, rule in zip(names, ("utterance", ANSWER_RULE, TIME_RULE), strict=True)
        ]
        old, self._searches = self._searches or (), None  # none usable until loaded
        try:
            for channel in self._channels:
                channel.add_words(dictionary)
            # Sentences first, then answers and times; each old search goes before its
            # successor is built: the sentences of a grammar take ~120 MB in each
            # decoder, and two at once during a swap were the node's peak of memory.
            for index, (name, automaton) in enumerate(automata):
                gone = old[index] if index < len(old) else None
                stays = old[index + 1] if index + 1 < len(old) else automata[0][0]
                # One model of the automaton for every channel: each decoder's search
                # only reads it (fillers and alternative pronunciations are added
                # once, the dictionaries being the same); its own copy took ~50 MB.
                fsg = self._channels[0].decoder.create_fsg(
                    name, automaton.start, automaton.final, _transitions(automaton)
                )
                for channel in self._channels:
                    channel.swap(gone, stays, name, fsg)
                    if index == 0:
                        channel.decoder.activate_search(name)
        except (RuntimeError, ValueError) as err:
            raise AsrError(f"PocketSphinx rejected the grammar: {err}") from err
        self._searches = names
        self._grammar_key = grammar.key
        self._grammar = grammar
        _LOGGER.debug("pocketsphinx: grammar %s loaded", grammar.key)

    # -- decoding --------------------------------------------------------------------

    def _engine_begin(self, expect: Expect) -> None:
        if self._searches is None:
            raise AsrError("no grammar loaded")
        for channel in self._channels:
            channel.begin(self._searches[EXPECTS.index(expect)])
        self._live = self._channels
        self._heard = bytearray()
        self._found = None

    def _engine_feed(self, pcm: bytes) -> None:
        if self._hurry and len(self._live) > 1:
            for channel in self._live[1:]:
                channel.discard()
            self._live = self._live[:1]
            _LOGGER.debug(  # the hurry itself is logged (INFO) by the caller's side
                "pocketsphinx: behind the speech: warp %s alone for the rest of the utterance",
                self._live[0].warp,
            )
        for channel in self._live:
            channel.feed(pcm)
        self._heard += pcm

    def _engine_discard(self) -> None:
        for channel in self._channels:
            channel.discard()

    def _engine_end(self) -> Result:
        frames = self._channels[0].decoder.n_frames()
        readings: list[tuple[float, _Reading]] = []
        out_of_grammar = False
        shed = len(self._live) < len(self._channels)
        levels = frame_dbfs(bytes(self._heard))  # once, for every warp's reading
        for channel in self._live:
            reading = channel.end(levels)
            if reading.scores["words"]:
                readings.append((channel.warp, reading))
                continue
            channel.restore_cmn()  # noise must not shift the normalisation of speech
            out_of_grammar = out_of_grammar or (not reading.text and reading.partial)
        if not readings:
            rejected: str | None = REJECT_OUT_OF_GRAMMAR if out_of_grammar else REJECT_NO_SPEECH
            return Result("", rejected=rejected, details={"frames": frames, "shed": shed})
        warp, (text, scores, _) = max(readings, key=lambda kept: kept[1].scores["avg_score"])
        self._found = (text, warp)
        details = {"frames": frames, "warp": warp, "shed": shed, **scores}
        settings = self._ps_settings
        confidence = 1.0 / (
            1.0 + math.exp(-(scores["avg_score"] - settings.reject_avg_score) / _CONFIDENCE_SCALE)
        )
        return Result(text, confidence=confidence, rejected=self._doubt(scores), details=details)

    def _doubt(self, scores: Mapping[str, Any]) -> str | None:
        """Why a reading with these scores is not sure (``REJECT_WEAK``: may only
        confirm), or None."""
        settings = self._ps_settings
        if (
            scores["avg_score"] < settings.weak_avg_score
            or scores["min_word_score"] < settings.weak_word_score
        ):
            return REJECT_LOW_CONFIDENCE
        if (
            scores["avg_score"] < settings.reject_avg_score
            or scores["min_word_score"] < settings.reject_word_score
        ):
            return REJECT_WEAK
        return None

    def _engine_reconsider(self, readings: Sequence[str], items: Sequence[str]) -> Result | None:
        """Of ``readings`` (another engine's, in the words it wrote or mended, all of
        one meaning), those that are sentences of the grammar, each forced onto the last
        utterance and weighed against the phone loop, with the reading the search found
        weighed the same way: the one that fits best of those that leave no speech out
        (``_MAX_UNSAID_FRAMES``: "put two cans of beans on the list" when "thanks" was
        said after it) is the transcript when it is sure by the same cut-offs and fits
        the audio better than the found one did (unless that one leaves speech out:
        ``_fit``). The search prunes its paths to keep up
        with speech, and can lose the one that was said (a deeper or synthetic voice;
        "tick a couple cotton swabs" for "take the milk off my list"); a forced
        alignment cannot.

        And then, with the rest of the sentence as that reading has it, each of ``items``
        must be the item the decoder hears there among every item it knows (its
        plural or singular alike: ``_same_words``), and each word of an amount or a
        day the one it hears among those of its kind (``Grammar.choice``): a reading
        that fits well can still name a near-homophone ("tea" for "cheese"), and only
        a choice tells them apart.

        With people talking behind the speaker (unsteady noise before the speech), what
        is far quieter than the words is turned down first (``quiet_expanded``): their
        words around the speaker's no longer count as speech a reading leaves out, nor
        fit the search's reading of them. Under babble of six talkers 10 dB below the
        voice (28 commands, 8 voices), 42 of 224 turns were accepted against 17 (23
        second looks took Whisper's reading, against 1), no wrong action either way."""
        grammar = self._grammar
        sentences = (grammar.sentence_of(r) for r in readings) if grammar is not None else ()
        said = [w for w in dict.fromkeys(sentences) if w is not None][:_MAX_READINGS]
        if grammar is None or self._searches is None or not said or not self._heard:
            return None
        found_text, warp = self._found or ("", None)
        found = found_text.replace(PAUSE, f" {PAUSE}")
        channels = [c for c in self._live if warp is None or c.warp == warp]
        best: tuple[dict[str, Any], dict[str, Any] | None, str] | None = None
        heard = bytes(self._heard)
        echoes = False
        if self._ended_talkers:  # talkers between and around the words fade
            heard = quiet_expanded(heard)
        elif echoes := reverberant(heard):  # the room's tail between the words fades
            heard = dereverbed(heard)
        levels = frame_dbfs(heard)
        for channel in channels:
            weighed = channel.weigh(heard, [*said, found] if found else said, levels)
            own = next((m for m in weighed[len(said) :] if m and m["words"]), None)
            for words, theirs in zip(said, weighed, strict=False):
                if not theirs or not theirs["words"]:
                    continue
                if theirs["unsaid_frames"] >= _MAX_UNSAID_FRAMES:
                    continue  # it leaves words out
                if best is None or theirs["avg_score"] > best[0]["avg_score"]:
                    best = ({**theirs, "warp": channel.warp}, own, words)
        if best is None:
            return None
        scores, own, words = best
        if self._doubt(scores) is not None or not scores["avg_score"] > _fit(own):
            return None
        details = {
            **scores,
            "found": found_text,
            "found_avg_score": None if own is None else own["avg_score"],
            "found_unsaid_frames": None if own is None else own["unsaid_frames"],
            "reverberant": echoes,
        }
        channel = next(c for c in self._channels if c.warp == scores["warp"])
        back_to = self._searches[0]
        if not _chosen(grammar, channel, words, items, heard=heard, levels=levels, back_to=back_to):
            return None
        return Result(_text(words), confidence=None, details=details)
