"""What a command said once costs the user: done at once, done after one "yes", or not
done, with the question and its answer heard through the same pipeline as the node's.

``voice`` counts a turn accepted only when it acts at once; a turn the two engines
do not agree on asks instead ("Did you want to add butter?"). Here the user answers
as a person would: "yes" (in one of several phrasings) when the question proposes
exactly what was said, "no" when it proposes anything else. The answer is said in
the same voice and noise, heard by an answer turn (both engines, the answer grammar)
and combined as the node does (``voice.answers.heard_answer``: both must say yes).

- ``at_once``: acted on exactly what was said;
- ``after_yes``: asked exactly what was said, and the "yes" was heard;
- ``after_again``: as ``after_yes``, but only Whisper heard the first "yes" (or heard
  it as "what?"), so the node asked once more (``voice.ask_again``), and the second
  "yes" (the next phrasing) was heard by both;
- ``yes_lost``: asked exactly what was said, the "yes" not heard (nothing done);
- ``asked_otherwise``: asked something else, answered "no";
- ``not_done``: neither acted nor asked (refused, taken for chatter, nothing heard);
- ``time_asked``: asked what time (the answer would be a time, not a yes);
- ``wrong_actions``: acted at once on anything else, or a "no" taken for a yes (a
  "no" Whisper took for a yes is asked once more and answered "no" again).

Conditions: clean, white noise at 20 dB, babble (six talkers) at 20 dB (a radio or
people talking across the kitchen), and a reverberant room (0.4 s).
"""

from __future__ import annotations

import asyncio
import itertools
import tempfile
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import voice
from tests.support import speech

VOICES = ("piper", "piper_deep", "espeak_us", "flite_slt")
CONDITIONS: dict[str, Callable[[bytes], bytes]] = {
    "clean": voice.CONDITIONS["clean"],
    "white20": voice.CONDITIONS["white20"],
    "babble20": lambda pcm: speech.add_babble(pcm, 20),
    "reverb": voice.CONDITIONS["reverb"],
}
YES = ("yes", "yes please", "yeah", "sure", "yes, go ahead", "that's right")
NO = ("no", "no thanks", "nope", "no, that's wrong")
OUTCOMES = (
    "at_once",
    "after_yes",
    "after_again",
    "yes_lost",
    "asked_otherwise",
    "not_done",
    "time_asked",
)


async def _run(limit: int | None) -> dict[str, Any]:
    from appliance.actions.service import ActionService
    from appliance.asr.verifier import Expect
    from appliance.node import open_database
    from appliance.protocol.receipts import ASK, ASK_TIME
    from appliance.protocol.topics import Topics
    from appliance.settings import Settings
    from appliance.voice.answers import ask_again, heard_answer
    from appliance.voice.engines import load_engines
    from appliance.voice.replay import offline_verifier
    from appliance.voice.turn import VoiceTurn

    yes, no = itertools.cycle(YES), itertools.cycle(NO)
    counts: Counter[str] = Counter()
    samples: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="appliance-confirm-") as tmp:
        settings = offline_verifier(Settings(data_dir=Path(tmp), timezone="UTC", language="en"))
        engines = await asyncio.to_thread(load_engines, settings)
        async with open_database(settings) as db:
            service = ActionService(db, settings, Topics())

            async def turn(expect: Expect) -> VoiceTurn:
                # a command is heard with the list's items, as the node and bench voice hear it
                command = expect == "command"
                return VoiceTurn(
                    session_id=uuid.uuid4().hex[:12],
                    site="bench",
                    user="bench",
                    lang="en",
                    engines=engines,
                    service=service if command else None,
                    known_items=await service.known_items("bench") if command else (),
                    expect=expect,
                )

            async def hear_answer(
                said: bytes, noisy: Callable[[bytes], bytes]
            ) -> tuple[str | None, bool]:
                """The answer heard as the node hears it, and whether the node would
                ask once more (``voice.answers.ask_again``)."""
                heard_turn = await turn("answer")
                heard = await voice.hear(heard_turn, noisy(speech.pad(said, 300, 1200)))
                has_verifier = heard_turn.has_verifier
                return (
                    heard_answer(heard.transcripts, "en", have_verifier=has_verifier),
                    ask_again(heard.transcripts, "en", have_verifier=has_verifier) is not None,
                )

            cases = itertools.product(VOICES, CONDITIONS, voice.COMMANDS)
            for voice_name, condition, text in itertools.islice(cases, limit):
                say = voice.VOICES[voice_name]
                noisy = CONDITIONS[condition]
                parse = engines.parse("en")
                said = parse(text)
                truth = voice._keys(said.commands)
                wanted = ("confirm",) if said.ask else ("act", "read")
                result = await voice.hear(
                    await turn("command"), noisy(speech.pad(say(text), 300, 1200))
                )
                gate = result.gate
                proposed = voice._keys(gate.commands) if gate is not None else []
                answer: str | None = None
                reply: str | None = None
                if gate is not None and gate.decision in wanted and proposed == truth:
                    outcome = "at_once"
                elif gate is not None and gate.decision == "act":
                    outcome = "wrong_action"
                elif gate is not None and gate.decision == "confirm":
                    if gate.details.get(ASK) == ASK_TIME:
                        outcome = "time_asked"
                    else:
                        replies = yes if proposed == truth else no
                        said = [next(replies)]
                        answer, again = await hear_answer(say(said[0]), noisy)
                        if again:  # only Whisper heard a yes, or heard "what?": asked again
                            said.append(next(replies))
                            answer, _ = await hear_answer(say(said[1]), noisy)
                        reply = " / ".join(said)
                        if proposed == truth and answer == "yes":
                            outcome = "after_again" if again else "after_yes"
                        elif proposed == truth:
                            outcome = "yes_lost"
                        else:
                            outcome = "wrong_action" if answer == "yes" else "asked_otherwise"
                else:
                    outcome = "not_done"
                for group in ("", f"/{condition}", f"/{voice_name}/{condition}"):
                    counts[f"commands{group}"] += 1
                    counts[f"{outcome}{group}"] += 1
                if outcome not in ("at_once", "after_yes", "after_again"):
                    samples.append(
                        {
                            "voice": voice_name,
                            "condition": condition,
                            "said": text,
                            "outcome": outcome,
                            "heard": result.transcripts,
                            "reply": reply,
                            "answer": answer,
                        }
                    )

    def share(group: str) -> dict[str, float]:
        total = counts[f"commands{group}"] or 1
        return {k: round(counts[f"{k}{group}"] / total, 3) for k in OUTCOMES}

    return {
        "commands": counts["commands"],
        "done_at_once_rate": round(counts["at_once"] / (counts["commands"] or 1), 3),
        "done_within_one_yes_rate": round(
            (counts["at_once"] + counts["after_yes"]) / (counts["commands"] or 1), 3
        ),
        "done_after_asking_again_rate": round(
            (counts["at_once"] + counts["after_yes"] + counts["after_again"])
            / (counts["commands"] or 1),
            3,
        ),
        "wrong_actions": counts["wrong_action"],
        "outcomes": share(""),
        "by_condition": {
            c: {
                "commands": counts[f"commands/{c}"],
                "done_at_once": counts[f"at_once/{c}"],
                "done_within_one_yes": counts[f"at_once/{c}"] + counts[f"after_yes/{c}"],
                "done_after_asking_again": counts[f"at_once/{c}"]
                + counts[f"after_yes/{c}"]
                + counts[f"after_again/{c}"],
                **share(f"/{c}"),
            }
            for c in CONDITIONS
        },
        "within_one_yes_by_voice_and_condition": {
            f"{v}/{c}": f"{counts[f'at_once/{v}/{c}'] + counts[f'after_yes/{v}/{c}']}"
            f"/{counts[f'commands/{v}/{c}']}"
            for v in VOICES
            for c in CONDITIONS
        },
        "not_done": samples,
        "goals": {"wrong_actions": 0},
    }


def run(limit: int | None = None) -> dict[str, Any]:
    return asyncio.run(_run(limit))
