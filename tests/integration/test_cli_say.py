"""`appliance say`: a typed request through the parser, against a real database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from appliance import cli

pytestmark = pytest.mark.integration


def test_say_asks_about_a_guess_and_runs_a_clear_request(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("APPLIANCE_DB__URL", db_url)
    monkeypatch.delenv("APPLIANCE_CONFIG", raising=False)

    def say(text: str) -> tuple[int, dict[str, object]]:
        code = cli.main(["--data-dir", str(tmp_path / "data"), "say", "--json", text])
        return code, json.loads(capsys.readouterr().out.splitlines()[-1])

    code, asked = say("add dentist on friday")
    assert code != 0  # nothing was done
    assert (asked["action"], asked["status"]) == ("agenda.add", "needs_confirmation")
    code, done = say("add dentist on friday to my calendar")
    assert (code, done["action"], done["status"]) == (0, "agenda.add", "success")
