"""The voice turn on synthesized kitchen speech: acceptance, wrong actions, latency, memory.

Utterances: commands (shopping and agenda), chatter and near misses, said by Piper
(three speeds, and made deeper), espeak-ng (two voices) and flite (two voices made from
recordings of people), clean and with white noise
(20 dB) and babble (10 dB), and in a reverberant room (0.4 s). The truth of an utterance
is what the parser makes of its text.

- accepted: the gate decided ``act`` with exactly the commands said (what the parser
  only ever asks about, a part of the day without a time: ``confirm`` with them);
- wrong action: ``act`` with other commands, or any ``act`` on chatter, near misses,
  silence or noise;
- the same two figures for a Whisper-only pipeline (act on whatever Whisper's text
  parses to), on the same audio, in the same run;
- latency, end to end (``over_mqtt``): the node runs as its own process (``appliance
  run``: embedded PostgreSQL, every model) against a real mosquitto, and a virtual
  satellite streams each command as fast as it is spoken; the node's own milestones
  (published per turn on ``diagnostics/voice/<site>``) give end of speech to receipt
  published and to first speech audio sent, and from when the voice stopped; the
  baseline is plain ``transcribe()`` with faster-whisper's defaults on the same audio,
  in this process, in the same run; the same medians for turns with white noise
  (``in_noise``), where the verifier decodes slower;
- the node's resident memory with every model loaded, and after all the turns.

The acceptance figures come from a second pass in this process, fed faster than real
time (the verifier is then allowed to finish decoding, every warp factor of it:
``offline_verifier``: ``max_final_ms`` 10 s, ``hurry_behind_ms`` 0).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import statistics
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from appliance.protocol.voice import CHUNK_BYTES
from tests.support import speech

COMMANDS = [
    "add two liters of milk to the shopping list",
    "add a dozen eggs to the shopping list",
    "add bread to the shopping list",
    "put bananas on the shopping list",
    "add three apples to my shopping list",
    "add oat milk to the shopping list",
    "add a kilo of rice to the shopping list",
    "add coffee to the shopping list",
    "remove the eggs from the shopping list",
    "take the bread off the shopping list",
    "check off the milk",
    "add butter to the shopping list",
    "add two cans of tomatoes to the shopping list",
    "add cheese to the shopping list",
    "add dentist tomorrow at three pm to my calendar",
    "what's on my shopping list",
    "what's on my agenda tomorrow",
    "what's my next appointment",
    # said the way people talk to a kitchen assistant
    "could you please add orange juice to my shopping list",
    "we're out of coffee",
    "remind me to call mom tomorrow at five pm",
    "put two cans of beans on the list, thanks",
    "add a gallon of milk to the shopping list",
    "remind me to take out the trash tonight at eight",
    "add milk, eggs and bread to the shopping list",
    "don't forget to buy lemons",
    "add two more apples to the shopping list",
    "set a reminder to water the plants tomorrow at nine am",
]
NOT_COMMANDS = [
    "the weather is lovely today",
    "I watched a movie last night",
    "don't add milk to the shopping list",
    "can you tell me a joke",
    "my sister is coming for dinner",
]
VOICES: dict[str, Callable[[str], bytes]] = {
    "piper": lambda t: speech.piper(t, **speech.CLEAR),
    "piper_fast": lambda t: speech.piper(t, length_scale=0.85, **speech.CLEAR),
    "piper_slow": lambda t: speech.piper(t, length_scale=1.2, **speech.CLEAR),
    # pitch and formants 15% lower (a longer vocal tract), 18% slower
    "piper_deep": lambda t: speech.deeper(speech.piper(t, **speech.CLEAR), 0.85),
    "espeak_us": lambda t: speech.espeak(t, "en-us", speed=160),
    "espeak_gb_f": lambda t: speech.espeak(t, "en-gb+f3", speed=170),
    # made from recordings of people: a US woman, a Scottish man
    "flite_slt": lambda t: speech.flite(t, "slt"),
    "flite_awb": lambda t: speech.flite(t, "awb"),
}
CONDITIONS: dict[str, Callable[[bytes], bytes]] = {
    "clean": lambda pcm: pcm,
    "white20": lambda pcm: speech.add_white_noise(pcm, 20),
    "babble10": lambda pcm: speech.add_babble(pcm, 10),
    # a room: reverberation time 0.4 s, the direct sound 3 dB above the reverberation
    "reverb": lambda pcm: speech.add_reverb(pcm, 0.4, 3.0),
}


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def _discard(text: str, rate: int, chunks: AsyncIterator[bytes]) -> None:
    async for _ in chunks:
        pass


def _plain(details: Mapping[str, Any]) -> dict[str, Any]:
    """The gate's details a failure records: those a JSON file holds as they are (which
    rule decided, the reading it agreed with, its rank), for telling why a turn asked."""
    return {k: v for k, v in details.items() if isinstance(v, str | int | float | bool)}


def _keys(commands: Any) -> list[Any]:
    from appliance.voice.gate import command_key

    return [command_key(c) for c in commands]


async def hear(turn: Any, pcm: bytes) -> Any:
    """``pcm`` streamed into ``turn`` (a ``VoiceTurn``) in satellite-sized chunks up to
    its end of speech, and what the turn then did (``TurnResult``)."""
    turn.start()
    for start in range(0, len(pcm), CHUNK_BYTES):
        turn.feed(pcm[start : start + CHUNK_BYTES])
        if turn.speech_ended.is_set():
            break
        await turn.settle()
    turn.end_of_stream()
    return await turn.run(_discard)


def tally(
    counts: Counter[str],
    parse: Any,
    truth: Any,
    result: Any,
    groups: Sequence[str],
    *,
    asked: bool = False,
) -> bool:
    """Count one turn (``TurnResult``) of an utterance that means ``truth`` (commands;
    none for chatter): accepted (acted, or read, with exactly the commands said; for
    what is only ever ``asked`` about, as "remind me ... tomorrow morning" asks what
    time, asked about exactly them), wrong actions, its decision, and what Whisper
    alone would have done; each of ``groups`` ("clean", "piper/clean") has its own
    commands and accepted. True if accepted."""
    gate = result.gate
    wanted = ("confirm",) if asked else ("act", "read")
    answered = gate is not None and gate.decision in wanted
    right = bool(answered and truth and _keys(gate.commands) == _keys(truth))
    counts["utterances"] += 1
    for group in ("", *(f"/{g}" for g in groups)):
        counts[f"commands{group}"] += bool(truth)
        counts[f"accepted{group}"] += right
    counts["wrong_actions"] += bool(
        gate is not None and gate.decision == "act" and (asked or not right)
    )
    counts[f"decision_{result.decision}"] += 1
    # Whisper alone, as a one-engine pipeline would act.
    alone = parse(result.transcripts["whisper"]).commands
    counts["whisper_only_accepted"] += bool(truth and alone and _keys(alone) == _keys(truth))
    counts["whisper_only_wrong"] += bool(
        alone
        and (not truth or _keys(alone) != _keys(truth))
        and any(c.changes_state for c in alone)
    )
    return right


SUMMARY = (
    "utterances",
    "commands",
    "acceptance_rate",
    "acceptance_by",
    "wrong_actions",
    "whisper_only_acceptance_rate",
    "whisper_only_wrong_actions",
    "decisions",
    "held_turns",
    "failures",
)
"""The figures of ``_run`` that a benchmark of other utterances reports for each part."""


async def _run(
    limit: int | None,
    voices: tuple[str, ...] = tuple(VOICES),
    conditions: tuple[str, ...] = tuple(CONDITIONS),
    commands: Sequence[str] = COMMANDS,
    not_commands: Sequence[str] = NOT_COMMANDS,
    *,
    vad: Mapping[str, Any] | None = None,
    last_item: str | None = None,
) -> dict[str, Any]:
    """``vad``: end-of-speech settings changed from the defaults. ``last_item``: the item
    each turn's site last added ("make that three" is about it)."""
    from appliance.actions.service import ActionService
    from appliance.node import open_database
    from appliance.protocol.topics import Topics
    from appliance.settings import Settings
    from appliance.voice.engines import load_engines
    from appliance.voice.replay import offline_verifier
    from appliance.voice.turn import VoiceTurn

    with tempfile.TemporaryDirectory(prefix="appliance-voice-") as tmp:
        settings = offline_verifier(Settings(data_dir=Path(tmp), timezone="UTC", language="en"))
        if vad:
            settings = settings.model_copy(update={"vad": settings.vad.model_copy(update=vad)})
        rss_before = _rss_mb()
        started = time.perf_counter()
        engines = await asyncio.to_thread(load_engines, settings)
        load_s = time.perf_counter() - started
        rss_loaded = _rss_mb()
        cases = [(t, True) for t in commands] + [(t, False) for t in not_commands]
        counts: Counter[str] = Counter()
        failures: list[dict[str, Any]] = []
        async with open_database(settings) as db:
            service = ActionService(db, settings, Topics())
            n = 0
            for voice_name in voices:
                voice = VOICES[voice_name]
                for condition in conditions:
                    noisy = CONDITIONS[condition]
                    for text, is_command in cases:
                        if limit is not None and n >= limit:
                            break
                        n += 1
                        # The turn parses with its own clock: so does what was said
                        # ("tomorrow" is another day once a run crosses midnight).
                        parse = engines.parse("en", last_item)
                        said = parse(text) if is_command else None
                        truth = said.commands if said is not None else ()
                        pcm = noisy(speech.pad(voice(text), 300, 1200))
                        turn = VoiceTurn(
                            session_id=uuid.uuid4().hex[:12],
                            site="bench",
                            user="bench",
                            lang="en",
                            engines=engines,
                            service=service,
                            known_items=await service.known_items("bench"),
                            last_item=last_item,
                        )
                        result = await hear(turn, pcm)
                        counts["held_turns"] += bool(turn.held_pauses)
                        groups = (condition, f"{voice_name}/{condition}", voice_name)
                        asked = said is not None and said.ask
                        right = tally(counts, parse, truth, result, groups, asked=asked)
                        acted = result.decision in ("act", "read")
                        if (truth and not right) or (not truth and acted):
                            failures.append(
                                {
                                    "voice": voice_name,
                                    "condition": condition,
                                    "said": text,
                                    "decision": result.decision,
                                    "reason": result.gate.reason if result.gate else None,
                                    "heard": result.transcripts,
                                    "details": _plain(result.gate.details if result.gate else {}),
                                }
                            )
        rss_after = _rss_mb()

    commands = counts["commands"] or 1
    return {
        "utterances": counts["utterances"],
        "commands": counts["commands"],
        "acceptance_rate": round(counts["accepted"] / commands, 3),
        "acceptance_by": {
            key: round(counts[f"accepted/{key}"] / counts[f"commands/{key}"], 3)
            for key in [*CONDITIONS, *VOICES]
            if counts[f"commands/{key}"]
        },
        "accepted_by_voice_and_condition": {
            f"{v}/{c}": f"{counts[f'accepted/{v}/{c}']}/{counts[f'commands/{v}/{c}']}"
            for v in voices
            for c in conditions
        },
        "wrong_actions": counts["wrong_actions"],
        "whisper_only_acceptance_rate": round(counts["whisper_only_accepted"] / commands, 3),
        "whisper_only_wrong_actions": counts["whisper_only_wrong"],
        "decisions": {k[9:]: v for k, v in counts.items() if k.startswith("decision_")},
        "held_turns": counts["held_turns"],
        "models_load_s": round(load_s, 2),
        "bench_process_rss_mb": {  # the node's own figures are in over_mqtt
            "before": round(rss_before),
            "loaded": round(rss_loaded),
            "after": round(rss_after),
        },
        "failures": failures,
        "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "goals": {
            "acceptance_rate_clean": 0.95,
            "wrong_actions": 0,
            "end_of_speech_to_receipt_ms": 600,
            "end_of_speech_to_speech_ms": 1000,
            "rss_mb": 1500,
        },
    }


def _proc_mb(pid: int, key: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def _over_mqtt(texts: list[tuple[str, str, str]]) -> dict[str, Any]:
    """End-to-end latency and memory of a node process, one virtual satellite.

    ``texts``: (voice, condition, text). The headline medians are over the clean
    turns; ``in_noise`` gives them for the others (the verifier hears those through
    RNNoise, and decodes them slower)."""
    import json
    import signal

    from appliance.asr.whisper import WhisperEngine
    from bench.commands import start_node
    from tests.support.client import ha_client
    from tests.support.mosquitto import Mosquitto
    from tests.support.satellite import satellite

    with tempfile.TemporaryDirectory(prefix="appliance-voice-mqtt-") as tmp:
        broker = Mosquitto(Path(tmp) / "mosquitto")
        broker.start()
        node, _ = start_node(Path(tmp) / "node", broker)
        reports: list[dict[str, Any]] = []
        rss: dict[str, float] = {}
        try:
            async with ha_client(broker) as ha, satellite(broker) as sat:
                await ha.client.subscribe("appliance/diagnostics/voice/+", qos=1)
                waited = time.perf_counter()
                for voice_name, condition, text in texts:
                    pcm = CONDITIONS[condition](speech.pad(VOICES[voice_name](text), 300, 1500))
                    while True:  # the node refuses claims ('loading') until its models are in
                        sat.controls.clear()
                        session_id = await sat.claim()
                        first = await sat.wait_any(("accept", "reject"))
                        if first.type == "accept":
                            break
                        await asyncio.sleep(0.5)
                    if not rss:
                        rss["loaded"] = _proc_mb(node.pid, "VmRSS")
                        rss["models_ready_s"] = round(time.perf_counter() - waited, 1)
                    await sat.stream(session_id, pcm)
                    await sat.wait("end", timeout=60)

                    def diagnostics() -> list[dict[str, Any]]:
                        return [
                            json.loads(p)
                            for t, p in ha.messages
                            if t.startswith("appliance/diagnostics/voice/")
                        ]

                    await ha.wait_for(
                        lambda sid=session_id: any(r["session_id"] == sid for r in diagnostics())
                    )
                    report = next(r for r in diagnostics() if r["session_id"] == session_id)
                    reports.append(
                        {"voice": voice_name, "condition": condition, "said": text, **report}
                    )
            rss["after"] = _proc_mb(node.pid, "VmRSS")
            rss["peak"] = _proc_mb(node.pid, "VmHWM")
        finally:
            node.send_signal(signal.SIGTERM)
            node.wait(30)
            broker.stop()
    # the baseline: plain faster-whisper on the same audio (pre- and post-roll as the node's)
    whisper = WhisperEngine()
    whisper.load("en")
    plain: list[float] = []
    for voice_name, condition, text in texts:
        if condition != "clean":
            continue
        pcm = speech.pad(VOICES[voice_name](text), 300, 300)
        started = time.perf_counter()
        whisper.plain_transcribe(pcm, "en")
        plain.append((time.perf_counter() - started) * 1000)

    def between(start: str, end: str, condition: str = "clean") -> list[float]:
        out = []
        for r in reports:
            marks = r["milestones_ms"]
            if r["condition"] != condition:
                continue
            if start in marks and end in marks:
                out.append(marks[end] - marks[start])
        return out

    def med(values: list[float]) -> float | None:
        return round(statistics.median(values), 1) if values else None

    eos_pub = between("end_of_speech", "receipt_published")
    plain_med = statistics.median(plain)
    noisy = sorted({r["condition"] for r in reports} - {"clean"})
    return {
        "turns": len(reports),
        "decisions": dict(Counter(r["decision"] for r in reports)),
        "latency_ms_median": {
            "end_of_speech_to_whisper_ready": med(between("end_of_speech", "whisper_ready")),
            "end_of_speech_to_gate": med(between("end_of_speech", "gate_decision")),
            "end_of_speech_to_receipt_committed": med(
                between("end_of_speech", "receipt_committed")
            ),
            "end_of_speech_to_receipt_published": med(eos_pub),
            "end_of_speech_to_first_speech_audio_sent": med(
                between("end_of_speech", "first_speech_audio_sent")
            ),
            "voice_stopped_to_receipt_published": med(
                between("speech_stopped", "receipt_published")
            ),
            "voice_stopped_to_first_speech_audio_sent": med(
                between("speech_stopped", "first_speech_audio_sent")
            ),
            "end_of_speech_to_verifier_ready": med(between("end_of_speech", "verifier_ready")),
            "wake_claim_to_accepted": med(between("wake_claim", "accepted")),
            "plain_faster_whisper_defaults_transcribe": round(plain_med, 1),
        },
        "in_noise": {
            condition: {
                "turns": sum(r["condition"] == condition for r in reports),
                "end_of_speech_to_verifier_ready": med(
                    between("end_of_speech", "verifier_ready", condition)
                ),
                "end_of_speech_to_whisper_ready": med(
                    between("end_of_speech", "whisper_ready", condition)
                ),
                "end_of_speech_to_receipt_published": med(
                    between("end_of_speech", "receipt_published", condition)
                ),
                "end_of_speech_to_first_speech_audio_sent": med(
                    between("end_of_speech", "first_speech_audio_sent", condition)
                ),
            }
            for condition in noisy
        },
        "ratio_end_of_speech_to_receipt_vs_plain_transcribe": (
            round(statistics.median(eos_pub) / plain_med, 2) if eos_pub else None
        ),
        "node_rss_mb": {k: round(v) if k != "models_ready_s" else v for k, v in rss.items()},
        "trailing_silence_ms": 700,
        "turns_ms": [
            {
                "said": f"{r['voice']} ({r['condition']}): {r['said']}",
                "decision": r["decision"],
                **{
                    k: round(v - r["milestones_ms"].get("end_of_speech", 0))
                    for k, v in r["milestones_ms"].items()
                    if k not in ("wake_claim", "speech_start")
                },
            }
            for r in reports
        ],
    }


def run(limit: int | None = None) -> dict[str, Any]:
    latency_texts = [
        *(("piper", "clean", t) for t in COMMANDS),
        *(("espeak_us", "clean", t) for t in COMMANDS[:8]),
        *(("piper", "white20", t) for t in COMMANDS[:14]),
    ]
    if limit is not None:
        latency_texts = latency_texts[: max(1, limit // 4)]
    over_mqtt = asyncio.run(_over_mqtt(latency_texts))
    figures = asyncio.run(_run(limit))
    return {"over_mqtt": over_mqtt, **figures}
