"""Portuguese voice turns: what the gate does with Brazilian Portuguese commands.

No registry package ships a Brazilian Portuguese Piper voice, so the speech is
espeak-ng's (two voices, its male "pt-br" and the "+f3" variant), clean and with white
noise at 20 dB: a harder voice for both engines than a person's. Whisper is the
multilingual base model; the verifier is PocketSphinx's English acoustic model with
the Portuguese words spelled in its phones (``appliance.asr.pt_phones``).

Reported as ``voice`` does: commands accepted (the gate acted, or read, with exactly
the commands said), wrong actions, and the same for Whisper alone. Without a verifier
every change was asked about: only the reads among the commands could run at once,
``accepted_without_a_verifier``.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from bench.voice import _rss_mb, hear, tally
from tests.support import speech

COMMANDS = [
    "adiciona dois litros de leite na lista de compras",
    "coloca uma dúzia de ovos na lista",
    "adiciona pão na lista de compras",
    "põe bananas na lista de compras",
    "adiciona três maçãs na minha lista",
    "coloca arroz na lista",
    "adiciona café na lista de compras",
    "tira os ovos da lista de compras",
    "remove o pão da lista",
    "acabou o café",
    "preciso comprar manteiga",
    "adiciona queijo na lista",
    "o que tem na minha lista de compras",
    "qual é o meu próximo compromisso",
    "me lembra de ligar para a mamãe amanhã às cinco da tarde",
    "adiciona dentista amanhã às três da tarde na agenda",
]
NOT_COMMANDS = [
    "não coloca leite na lista",
    "o tempo está bonito hoje",
    "minha irmã vem jantar",
    "eu assisti um filme ontem",
]
VOICES = {
    "espeak_pt_br": lambda t: speech.espeak(t, "pt-br", speed=160),
    "espeak_pt_br_f": lambda t: speech.espeak(t, "pt-br+f3", speed=160),
}
CONDITIONS = {
    "clean": lambda pcm: pcm,
    "white20": lambda pcm: speech.add_white_noise(pcm, 20),
}


async def _run() -> dict[str, Any]:
    from appliance.settings import Settings
    from appliance.voice.engines import load_engines
    from appliance.voice.replay import offline_verifier
    from appliance.voice.turn import VoiceTurn

    with tempfile.TemporaryDirectory(prefix="appliance-voice-pt-") as tmp:
        settings = offline_verifier(
            Settings(
                data_dir=Path(tmp),
                timezone="UTC",
                language="pt",
                tts={"fallback_language": "en"},  # no Portuguese Piper voice ships
            )
        )
        rss_before = _rss_mb()
        started = time.perf_counter()
        engines = await asyncio.to_thread(load_engines, settings)
        load_s = time.perf_counter() - started
        rss_loaded = _rss_mb()
        parse = engines.parse("pt")
        counts: Counter[str] = Counter()
        failures: list[dict[str, Any]] = []
        cases = [(t, True) for t in COMMANDS] + [(t, False) for t in NOT_COMMANDS]
        for voice_name, voice in VOICES.items():
            for condition, noisy in CONDITIONS.items():
                for text, is_command in cases:
                    said = parse(text) if is_command else None
                    truth = said.commands if said is not None else ()
                    pcm = noisy(speech.pad(voice(text), 300, 1200))
                    turn = VoiceTurn(
                        session_id=uuid.uuid4().hex[:12], site="bench", user="bench",
                        lang="pt", engines=engines, service=None, dry_run=True,
                    )  # fmt: skip
                    result = await hear(turn, pcm)
                    await turn.close()
                    right = tally(counts, parse, truth, result, (f"{voice_name}/{condition}",),
                                  asked=said is not None and said.ask)  # fmt: skip
                    acted = result.decision in ("act", "read")
                    counts["accepted_without_a_verifier"] += bool(
                        right and not any(c.changes_state for c in truth)
                    )
                    if (truth and not right) or (not truth and acted):
                        failures.append(
                            {
                                "voice": voice_name, "condition": condition, "said": text,
                                "decision": result.decision, "heard": result.transcripts,
                            }
                        )  # fmt: skip
        rss_after = _rss_mb()
    commands = counts["commands"] or 1
    return {
        "utterances": counts["utterances"],
        "commands": counts["commands"],
        "acceptance_rate": round(counts["accepted"] / commands, 3),
        "accepted_by_voice_and_condition": {
            f"{v}/{c}": f"{counts[f'accepted/{v}/{c}']}/{counts[f'commands/{v}/{c}']}"
            for v in VOICES
            for c in CONDITIONS
        },
        "accepted_without_a_verifier": counts["accepted_without_a_verifier"],
        "wrong_actions": counts["wrong_actions"],
        "whisper_only_acceptance_rate": round(counts["whisper_only_accepted"] / commands, 3),
        "whisper_only_wrong_actions": counts["whisper_only_wrong"],
        "decisions": {k[9:]: v for k, v in counts.items() if k.startswith("decision_")},
        "models_load_s": round(load_s, 2),
        "bench_process_rss_mb": {
            "before_models": round(rss_before),
            "models_loaded": round(rss_loaded),
            "after_run": round(rss_after),
        },
        "failures": failures,
    }


def run() -> dict[str, Any]:
    return asyncio.run(_run())
