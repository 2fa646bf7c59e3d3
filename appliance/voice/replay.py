"""``appliance replay``: WAV files through the same pipeline as a satellite stream.

Each file is resampled to 16 kHz, cut in 64 ms chunks and fed to a voice turn (end of
speech detection included), against the configured database. Models load once for
the whole batch. One JSON object per file on stdout. Audio is fed as fast as it can be
decoded unless ``--realtime`` paces it like a satellite (for timing figures).
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from appliance.protocol.topics import Topics
from appliance.protocol.voice import CHUNK_BYTES, CHUNK_MS
from appliance.settings import Settings

OFFLINE_FINAL_MS = 10_000
OFFLINE_NO_SPEECH_MS = 60_000  # the longest VadSettings allows


def offline_verifier(settings: Settings) -> Settings:
    """``settings`` for audio fed faster than it is spoken: the verifier gets time to
    decode all of it after the last chunk, as it would have while the user spoke, with
    every warp factor however busy the machine is (no hurrying)."""
    verifier = settings.verifier.model_copy(
        update={
            "max_final_ms": OFFLINE_FINAL_MS,  # the longest VerifierSettings allows
            "hurry_behind_ms": 0,
        }
    )
    return settings.model_copy(update={"verifier": verifier})


async def replay(
    settings: Settings,
    files: Sequence[Path],
    *,
    site: str | None,
    lang: str,
    user: str,
    dry_run: bool,
    jsonl: bool,
    realtime: bool = False,
) -> int:
    from appliance.actions.service import ActionService
    from appliance.audio import AudioError
    from appliance.audio.pcm import read_wav
    from appliance.node import open_database
    from appliance.voice.engines import load_engines
    from appliance.voice.turn import VoiceTurn

    # A file is one utterance, however long the quiet before it: no giving up on
    # speech before the file ends (a satellite's stream gives up after the timeout).
    vad = settings.vad.model_copy(update={"no_speech_timeout_ms": OFFLINE_NO_SPEECH_MS})
    settings = settings.model_copy(update={"vad": vad})
    if not realtime:
        settings = offline_verifier(settings)
    engines = await asyncio.to_thread(load_engines, settings)
    failures = 0
    async with open_database(settings) as db:
        service = ActionService(db, settings, Topics(settings.mqtt.prefix))
        for path in files:
            try:
                pcm = await asyncio.to_thread(read_wav, path)
            except (AudioError, OSError) as err:  # one bad file must not stop the batch
                failures += 1
                _emit({"file": str(path), "error": str(err)}, jsonl)
                continue
            turn = VoiceTurn(
                session_id=f"replay-{uuid.uuid4().hex[:12]}",
                site=site,
                user=user,
                lang=lang,
                engines=engines,
                service=service,
                known_items=await service.known_items(user),
                dry_run=dry_run,
                log_transcripts=settings.log_transcripts,
            )
            turn.start()
            for start in range(0, len(pcm), CHUNK_BYTES):
                turn.feed(pcm[start : start + CHUNK_BYTES])
                if turn.speech_ended.is_set():
                    break
                if realtime:
                    await asyncio.sleep(CHUNK_MS / 1000)
                else:
                    await turn.settle()
            turn.end_of_stream()
            result = await turn.run(_discard)
            _emit(result.to_json(str(path)), jsonl)
    return 1 if failures else 0


async def _discard(text: str, rate: int, chunks: AsyncIterator[bytes]) -> None:
    """Synthesize the reply (so its timing counts) and drop the audio."""
    async for _ in chunks:
        pass


def _emit(obj: dict[str, Any], jsonl: bool) -> None:
    text = json.dumps(obj, ensure_ascii=False, default=str, indent=None if jsonl else 2)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
