"""config/appliance.example.toml documents every setting, and loads.

Keys count whether they are set (``key = value``) or commented out (``# key = value``);
a commented-out assignment must itself be valid TOML and a valid value for its field.
A setting added to ``appliance/settings.py`` without an entry (and its description)
in the example fails here.
"""

from __future__ import annotations

import os
import re
import tomllib
import typing
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from appliance.settings import Settings, load_settings

EXAMPLE = Path(__file__).resolve().parents[2] / "config" / "appliance.example.toml"

_TABLE = re.compile(r"^\[([A-Za-z0-9_.]+)\]\s*(?:#.*)?$")
_COMMENTED_KEY = re.compile(r"^#\s*([A-Za-z_][A-Za-z0-9_]*)\s*=")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(os.environ):
        if name.startswith("APPLIANCE_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))


def _section_model(annotation: Any) -> type[BaseModel] | None:
    """The settings section an annotation holds (``X``, ``X | None``), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _section_model(arg)
        if found is not None:
            return found
    return None


def settings_leaves(
    model: type[BaseModel] = Settings, prefix: str = ""
) -> dict[str, tuple[type[BaseModel], str]]:
    """Every leaf setting as ``dotted.key -> (model, field name)``, sections walked."""
    leaves: dict[str, tuple[type[BaseModel], str]] = {}
    for name, field in model.model_fields.items():
        section = _section_model(field.annotation)
        if section is not None:
            leaves.update(settings_leaves(section, f"{prefix}{name}."))
        else:
            leaves[f"{prefix}{name}"] = (model, name)
    return leaves


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def active_keys() -> dict[str, Any]:
    with EXAMPLE.open("rb") as handle:
        return _flatten(tomllib.load(handle))


def commented_assignments() -> list[tuple[int, str, Any]]:
    """``(line number, dotted key, value)`` of every ``# key = value`` line."""
    found: list[tuple[int, str, Any]] = []
    table = ""
    for number, raw in enumerate(EXAMPLE.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        header = _TABLE.match(line)
        if header:
            table = header[1] + "."
            continue
        match = _COMMENTED_KEY.match(line)
        if not match:
            continue
        body = line.lstrip("#").strip()
        try:
            parsed = tomllib.loads(body)
        except tomllib.TOMLDecodeError as err:
            pytest.fail(f"line {number}: commented-out key is not valid TOML: {body!r} ({err})")
        ((key, value),) = parsed.items()
        found.append((number, f"{table}{key}", value))
    return found


def comment_text() -> str:
    """All comment text of the example, whitespace collapsed (descriptions wrap)."""
    parts = [
        line.strip().lstrip("#").strip()
        for line in EXAMPLE.read_text(encoding="utf-8").splitlines()
        if line.strip().startswith("#")
    ]
    return " ".join(" ".join(parts).split())


def documented_keys() -> set[str]:
    return set(active_keys()) | {key for _, key, _ in commented_assignments()}


def test_the_walk_finds_nested_settings() -> None:
    leaves = settings_leaves()
    assert {"data_dir", "mqtt.url", "mqtt.password", "db.url", "actions.batch_max"} <= set(leaves)
    assert "mqtt" not in leaves
    assert all(not key.startswith("config_file") for key in leaves)


def test_every_setting_is_documented() -> None:
    missing = sorted(set(settings_leaves()) - documented_keys())
    assert not missing, f"settings missing from {EXAMPLE.name}: {missing}"


def test_no_unknown_keys_are_documented() -> None:
    unknown = sorted(documented_keys() - set(settings_leaves()))
    assert not unknown, f"{EXAMPLE.name} documents keys that are not settings: {unknown}"


def test_every_description_is_in_the_comments() -> None:
    text = comment_text()
    undocumented = []
    for key, (model, name) in settings_leaves().items():
        description = model.model_fields[name].description
        assert description, f"{key} has no description in appliance/settings.py"
        if " ".join(description.split()) not in text:
            undocumented.append(key)
    assert not undocumented, f"descriptions not copied into {EXAMPLE.name}: {undocumented}"


def test_active_values_are_the_defaults() -> None:
    """What the example sets equals what an empty configuration gives."""
    defaults = _flatten(Settings().model_dump(mode="json"))
    for key, value in active_keys().items():
        assert value == defaults[key], f"{key} = {value!r} but the default is {defaults[key]!r}"


def test_unset_and_computed_settings_are_commented_out() -> None:
    active = active_keys()
    for key, (model, name) in settings_leaves().items():
        field = model.model_fields[name]
        if field.default_factory is not None or field.default is None:
            assert key not in active, f"{key} has no fixed default: comment it out"


def test_commented_values_are_valid() -> None:
    leaves = settings_leaves()
    for number, key, value in commented_assignments():
        model, name = leaves[key]
        try:
            model.model_validate({name: value})
        except ValidationError as err:
            pytest.fail(f"line {number}: {key} = {value!r} is not a valid value: {err}")


def test_the_example_loads() -> None:
    settings = load_settings(EXAMPLE)
    assert settings.model_dump(mode="json") == Settings().model_dump(mode="json")
    assert settings.mqtt.url is None
    assert settings.db.url is None


def test_the_example_loads_through_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APPLIANCE_CONFIG", str(EXAMPLE))
    assert load_settings().mqtt.prefix == "appliance"
