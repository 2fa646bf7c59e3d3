"""``appliance replay``: recordings through the voice pipeline, real models and database."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

import appliance.voice.engines
from appliance.actions.service import ActionService, Request
from appliance.audio.pcm import from_float32, resample, to_float32
from appliance.audio.vad import Endpointer
from appliance.narration import check
from appliance.protocol.commands import ShoppingAdd
from appliance.protocol.receipts import Receipt, Source
from appliance.protocol.topics import Topics
from appliance.settings import Settings
from appliance.store.db import Database
from appliance.voice.engines import Engines
from appliance.voice.replay import replay
from tests.support import speech

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture
def recordings(tmp_path: Path) -> dict[str, Path]:
    """A list of three said by deterministic Piper (at 22.05 kHz: replay resamples),
    chatter, and a file that is not audio."""
    said = speech.piper("add milk, eggs and bread to the shopping list", **speech.FIXED)
    chatter = speech.piper("the weather is lovely today", **speech.FIXED)
    files = {
        "list": (
            tmp_path / "list.wav",
            speech.wav_bytes(_upsampled(speech.pad(said, 300, 900)), 22_050),
        ),
        "chatter": (tmp_path / "chatter.wav", speech.wav_bytes(speech.pad(chatter, 300, 900))),
        "garbled": (tmp_path / "garbled.wav", b"RIFF\x00\x00\x00\x00WAVEnot audio"),
    }
    for path, data in files.values():
        path.write_bytes(data)
    return {name: path for name, (path, _) in files.items()}


def _upsampled(pcm: bytes) -> bytes:
    return from_float32(resample(to_float32(pcm), 16_000, 22_050))


@pytest.fixture
def engines_loaded_once(voice_engines: Engines, monkeypatch: pytest.MonkeyPatch) -> Engines:
    """``replay`` loads the models itself: the session's, here."""
    monkeypatch.setattr(appliance.voice.engines, "load_engines", lambda _settings: voice_engines)
    return voice_engines


async def _replay(
    settings: Settings, files: list[Path], capsys: pytest.CaptureFixture[str], *, dry_run: bool
) -> tuple[int, list[dict[str, Any]]]:
    # at the pace of speech: the session's models keep the verifier's default deadline
    # (replay loading its own would give it longer to catch up with audio fed at once)
    code = await replay(
        settings, files, site="kitchen", lang="en", user="household", dry_run=dry_run,
        jsonl=True, realtime=True,
    )  # fmt: skip
    lines = capsys.readouterr().out.splitlines()
    return code, [json.loads(line) for line in lines]


async def _items(settings: Settings, database: Database) -> list[str]:
    service = ActionService(database, settings, Topics(settings.mqtt.prefix))
    return sorted(await service.known_items("household"))


async def test_replay_runs_each_file_once_and_reports_every_item(
    settings: Settings,
    database: Database,
    engines_loaded_once: Engines,
    recordings: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    files = [recordings["list"], recordings["chatter"], recordings["garbled"]]

    code, dry = await _replay(settings, files, capsys, dry_run=True)
    assert code == 1  # one file could not be read; the others ran
    assert [Path(r["file"]).name for r in dry] == ["list.wav", "chatter.wav", "garbled.wav"]
    assert dry[0]["decision"] == "act"
    assert [c["item"] for c in dry[0]["commands"]] == ["milk", "eggs", "bread"]
    assert dry[0]["intent"] == dry[0]["commands"][0]
    # what would be done and said: the receipts a real run would get, marked as rehearsed
    assert [r["status"] for r in dry[0]["receipts"]] == ["success"] * 3
    assert [r["items"][0]["name"] for r in dry[0]["receipts"]] == ["milk", "eggs", "bread"]
    assert all(r["details"]["dry_run"] for r in dry[0]["receipts"])
    assert dry[0]["receipt"] == dry[0]["receipts"][0]
    assert dry[0]["speech"]
    assert await _items(settings, database) == []  # a dry run changes nothing
    assert dry[1]["decision"] == "chat" and dry[1]["commands"] == []
    assert "error" in dry[2] and "decision" not in dry[2]

    code, done = await _replay(settings, files[:1], capsys, dry_run=False)
    assert code == 0
    (turn,) = done
    assert [r["status"] for r in turn["receipts"]] == ["success"] * 3
    assert [r["items"][0]["name"] for r in turn["receipts"]] == ["milk", "eggs", "bread"]
    assert turn["receipt"] == turn["receipts"][0]
    assert turn["speech"]
    assert not any(r["details"].get("dry_run") for r in turn["receipts"])
    assert turn["milestones_ms"]["end_of_speech"] <= turn["milestones_ms"]["gate_decision"]
    assert await _items(settings, database) == ["bread", "eggs", "milk"]


async def test_asking_whether_an_item_is_on_the_list_reads_it(
    settings: Settings,
    database: Database,
    engines_loaded_once: Engines,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    service = ActionService(database, settings, Topics(settings.mqtt.prefix))
    source = Source(kind="cli", user="household")
    await service.execute(Request(request_id="r1", source=source, command=ShoppingAdd(item="milk")))
    files = []
    for name, text in (("on", "is there any milk on the list"), ("off", "do we need coffee")):
        path = tmp_path / f"{name}.wav"
        said = speech.piper(text, **speech.FIXED)
        path.write_bytes(speech.wav_bytes(speech.pad(said, 300, 900)))
        files.append(path)

    code, (on, off) = await _replay(settings, files, capsys, dry_run=False)
    assert code == 0
    assert on["decision"] == off["decision"] == "read", (on["transcripts"], off["transcripts"])
    assert (on["receipt"]["status"], on["receipt"]["items"][0]["name"]) == ("success", "milk")
    assert (off["receipt"]["status"], off["receipt"]["reason"]) == ("not_found", "not_on_list")
    for turn in (on, off):  # told by the LLM or its template, always as the receipt says
        receipt = Receipt.model_validate(turn["receipt"])
        assert check(turn["speech"], receipt, "en").ok, turn["speech"]
    assert "milk" in on["speech"].lower() and "coffee" in off["speech"].lower()
    assert await _items(settings, database) == ["milk"]


async def test_a_long_quiet_start_is_waited_out(
    settings: Settings,
    voice_engines: Engines,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A file is one utterance: speech after more quiet than a satellite's stream waits
    for (``no_speech_timeout_ms``) is still heard, and a quiet file ends quietly."""

    def load(replay_settings: Settings) -> Engines:  # the session's models, replay's VAD
        return dataclasses.replace(
            voice_engines,
            endpointer=lambda: Endpointer(replay_settings.vad),
            release_endpointer=None,
        )

    monkeypatch.setattr(appliance.voice.engines, "load_engines", load)
    quiet_ms = settings.vad.no_speech_timeout_ms + 1000
    room = speech.white_noise(quiet_ms, dbfs=-60, seed=4)
    said = speech.piper("add milk to the shopping list", **speech.FIXED)
    late, silent = tmp_path / "late.wav", tmp_path / "silent.wav"
    late.write_bytes(speech.wav_bytes(speech.concat(room, speech.pad(said, 0, 900))))
    silent.write_bytes(speech.wav_bytes(room))

    code, (heard, nothing) = await _replay(settings, [late, silent], capsys, dry_run=True)
    assert code == 0
    assert heard["decision"] == "act", heard["transcripts"]
    assert [c["item"] for c in heard["commands"]] == ["milk"]
    assert nothing["decision"] == "none" and nothing["commands"] == []
