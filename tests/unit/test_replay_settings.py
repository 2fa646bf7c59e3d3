"""The verifier settings for audio fed faster than it is spoken (replay, benchmarks)."""

from __future__ import annotations

from pathlib import Path

from appliance.settings import Settings
from appliance.voice.replay import OFFLINE_FINAL_MS, offline_verifier


def test_offline_verifier_waits_for_all_the_audio_and_never_hurries(tmp_path: Path) -> None:
    live = Settings(data_dir=tmp_path, verifier={"max_final_ms": 400, "hurry_behind_ms": 500})

    offline = offline_verifier(live)

    assert offline.verifier.max_final_ms == OFFLINE_FINAL_MS
    assert offline.verifier.hurry_behind_ms == 0
    # Nothing else changes, and the settings given are left as they were.
    assert offline.verifier.patient_final_ms == live.verifier.patient_final_ms
    assert offline.data_dir == live.data_dir
    assert live.verifier.max_final_ms == 400
    assert live.verifier.hurry_behind_ms == 500
