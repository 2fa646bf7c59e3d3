"""config/appliance.example.toml (the node) and config/satellite.example.toml (a room
satellite) document every setting, and load.

Keys count whether they are set (``key = value``) or commented out (``# key = value``);
a commented-out assignment must itself be valid TOML and a valid value for its field.
A setting added to ``appliance/settings.py`` or ``satellites/settings.py`` without an
entry (and its description) in its example fails here.
"""

from __future__ import annotations

import os
import re
import tomllib
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError
from pydantic_settings import BaseSettings

from appliance.settings import Settings, load_settings
from satellites.settings import SatelliteSettings
from satellites.settings import load_settings as load_satellite_settings

CONFIG = Path(__file__).resolve().parents[2] / "config"
EXAMPLE = CONFIG / "appliance.example.toml"


@dataclass(frozen=True)
class Example:
    path: Path
    settings: type[BaseSettings]
    load: Callable[..., BaseSettings]
    env: str


NODE = Example(EXAMPLE, Settings, load_settings, "APPLIANCE_")
SATELLITE = Example(
    CONFIG / "satellite.example.toml", SatelliteSettings, load_satellite_settings, "SATELLITE_"
)


@pytest.fixture(params=[NODE, SATELLITE], ids=["node", "satellite"])
def example(request: pytest.FixtureRequest) -> Example:
    found: Example = request.param
    return found


_TABLE = re.compile(r"^\[([A-Za-z0-9_.]+)\]\s*(?:#.*)?$")
_COMMENTED_KEY = re.compile(r"^#\s*([A-Za-z_][A-Za-z0-9_]*)\s*=")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(os.environ):
        if name.startswith(("APPLIANCE_", "SATELLITE_")):
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


def active_keys(path: Path = EXAMPLE) -> dict[str, Any]:
    with path.open("rb") as handle:
        return _flatten(tomllib.load(handle))


def commented_assignments(path: Path = EXAMPLE) -> list[tuple[int, str, Any]]:
    """``(line number, dotted key, value)`` of every ``# key = value`` line."""
    found: list[tuple[int, str, Any]] = []
    table = ""
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
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


def comment_text(path: Path = EXAMPLE) -> str:
    """All comment text of the example, whitespace collapsed (descriptions wrap)."""
    parts = [
        line.strip().lstrip("#").strip()
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip().startswith("#")
    ]
    return " ".join(" ".join(parts).split())


def documented_keys(path: Path = EXAMPLE) -> set[str]:
    return set(active_keys(path)) | {key for _, key, _ in commented_assignments(path)}


def test_the_walk_finds_nested_settings() -> None:
    leaves = settings_leaves()
    assert {"data_dir", "mqtt.url", "mqtt.password", "db.url", "actions.batch_max"} <= set(leaves)
    assert "mqtt" not in leaves
    assert all(not key.startswith("config_file") for key in leaves)


def test_every_setting_is_documented(example: Example) -> None:
    missing = sorted(set(settings_leaves(example.settings)) - documented_keys(example.path))
    assert not missing, f"settings missing from {example.path.name}: {missing}"


def test_no_unknown_keys_are_documented(example: Example) -> None:
    unknown = sorted(documented_keys(example.path) - set(settings_leaves(example.settings)))
    assert not unknown, f"{example.path.name} documents keys that are not settings: {unknown}"


def test_every_description_is_in_the_comments(example: Example) -> None:
    text = comment_text(example.path)
    undocumented = []
    for key, (model, name) in settings_leaves(example.settings).items():
        description = model.model_fields[name].description
        assert description, f"{key} has no description"
        if " ".join(description.split()) not in text:
            undocumented.append(key)
    assert not undocumented, f"descriptions not copied into {example.path.name}: {undocumented}"


def test_active_values_are_the_defaults(example: Example) -> None:
    """What the example sets equals what an empty configuration gives."""
    defaults = _flatten(example.settings().model_dump(mode="json"))
    for key, value in active_keys(example.path).items():
        assert value == defaults[key], f"{key} = {value!r} but the default is {defaults[key]!r}"


def test_unset_and_computed_settings_are_commented_out(example: Example) -> None:
    active = active_keys(example.path)
    for key, (model, name) in settings_leaves(example.settings).items():
        field = model.model_fields[name]
        if field.default_factory is not None or field.default is None:
            assert key not in active, f"{key} has no fixed default: comment it out"


def test_commented_values_are_valid(example: Example) -> None:
    leaves = settings_leaves(example.settings)
    for number, key, value in commented_assignments(example.path):
        model, name = leaves[key]
        try:
            model.model_validate({name: value})
        except ValidationError as err:
            pytest.fail(f"line {number}: {key} = {value!r} is not a valid value: {err}")


def test_defaults_shown_are_the_defaults(example: Example) -> None:
    """A commented value said to be the built-in one ("Default: ... shown here") is."""
    lines = example.path.read_text(encoding="utf-8").splitlines()
    defaults = _flatten(example.settings().model_dump(mode="json"))
    shown = [
        (number, key, value)
        for number, key, value in commented_assignments(example.path)
        if "shown here" in lines[number - 2]
    ]
    assert shown or example.path.name != "appliance.example.toml"
    for number, key, value in shown:
        default = {k[len(key) + 1 :]: v for k, v in defaults.items() if k.startswith(key + ".")}
        assert value == defaults.get(key, default), f"line {number}: {key} is not the default"


def test_the_example_loads() -> None:
    settings = load_settings(EXAMPLE)
    assert settings.model_dump(mode="json") == Settings().model_dump(mode="json")
    assert settings.mqtt.url is None
    assert settings.db.url is None


def test_the_example_loads_through_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APPLIANCE_CONFIG", str(EXAMPLE))
    assert load_settings().mqtt.prefix == "appliance"


def test_the_satellite_example_loads() -> None:
    settings = load_satellite_settings(SATELLITE.path)
    assert settings.model_dump(mode="json") == SatelliteSettings().model_dump(mode="json")
