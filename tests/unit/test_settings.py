"""Settings sources and their order, validation errors, and secret redaction."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from appliance.cli import EXIT_CONFIG, EXIT_OK, main
from appliance.settings import CONFIG_ENV, Settings, load_settings, redacted

DB_SECRET = "db-s3cret-Pw"
MQTT_SECRET = "mqtt-s3cret-Pw"
MASK = "**********"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(os.environ):
        if name.startswith("APPLIANCE_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))


def write_toml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "appliance.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def toml_file(tmp_path: Path) -> Path:
    return write_toml(
        tmp_path,
        f"""
data_dir = "{tmp_path / "from-toml"}"
log_level = "WARNING"

[mqtt]
url = "mqtt://toml-broker:1883"
username = "toml-user"
prefix = "toml-prefix"

[db]
url = "postgresql://toml:toml@toml-db/appliance"
pool_max = 7
""",
    )


def error_text(err: pytest.ExceptionInfo[ValidationError]) -> str:
    return str(err.value)


# --- sources and their order -----------------------------------------------------


def test_toml_values_are_used(toml_file: Path, tmp_path: Path) -> None:
    settings = load_settings(toml_file)
    assert settings.data_dir == tmp_path / "from-toml"
    assert settings.log_level == "WARNING"
    assert settings.mqtt.url == "mqtt://toml-broker:1883"
    assert settings.mqtt.prefix == "toml-prefix"
    assert settings.db.pool_max == 7


def test_env_overrides_toml(toml_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APPLIANCE_MQTT__URL", "mqtts://env-broker:8883")
    monkeypatch.setenv("APPLIANCE_DB__URL", "postgresql://env:env@env-db/appliance")
    monkeypatch.setenv("APPLIANCE_LOG_LEVEL", "ERROR")
    settings = load_settings(toml_file)
    assert settings.mqtt.url == "mqtts://env-broker:8883"
    assert settings.db.url is not None
    assert settings.db.url.get_secret_value() == "postgresql://env:env@env-db/appliance"
    assert settings.log_level == "ERROR"
    # The rest of each section still comes from the file.
    assert settings.mqtt.username == "toml-user"
    assert settings.mqtt.prefix == "toml-prefix"
    assert settings.db.pool_max == 7


def test_env_secrets_are_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APPLIANCE_MQTT__PASSWORD", MQTT_SECRET)
    settings = load_settings()
    assert settings.mqtt.password is not None
    assert settings.mqtt.password.get_secret_value() == MQTT_SECRET
    assert MQTT_SECRET not in repr(settings)
    assert MQTT_SECRET not in str(settings.mqtt)


def test_command_line_overrides_env_and_toml(
    toml_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("APPLIANCE_DATA_DIR", str(tmp_path / "from-env"))
    monkeypatch.setenv("APPLIANCE_LOG_LEVEL", "ERROR")
    settings = load_settings(toml_file, data_dir=tmp_path / "from-cli", log_level="DEBUG")
    assert settings.data_dir == tmp_path / "from-cli"
    assert settings.log_level == "DEBUG"


def test_absent_command_line_options_do_not_override(
    toml_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("APPLIANCE_DATA_DIR", str(tmp_path / "from-env"))
    settings = load_settings(toml_file, data_dir=None, log_level=None)
    assert settings.data_dir == tmp_path / "from-env"
    assert settings.log_level == "WARNING"


def test_config_file_from_env(toml_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CONFIG_ENV, str(toml_file))
    assert load_settings().mqtt.url == "mqtt://toml-broker:1883"


def test_config_option_beats_config_env(
    toml_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other.toml"
    other.write_text('[mqtt]\nurl = "mqtt://other-broker"\n', encoding="utf-8")
    monkeypatch.setenv(CONFIG_ENV, str(toml_file))
    assert load_settings(other).mqtt.url == "mqtt://other-broker"


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="config file not found"):
        load_settings(tmp_path / "nope.toml")


def test_defaults_without_any_source(tmp_path: Path) -> None:
    settings = load_settings()
    assert settings.data_dir == tmp_path / "xdg" / "appliance"
    assert settings.mqtt.url is None
    assert settings.db.url is None
    assert settings.node_id == "appliance"


# --- invalid values ----------------------------------------------------------------


@pytest.mark.parametrize(
    "url", ["http://broker:1883", "broker:1883", "mqtt://", "mqtt:///appliance"]
)
def test_bad_mqtt_url_from_toml(tmp_path: Path, url: str) -> None:
    path = write_toml(tmp_path, f'[mqtt]\nurl = "{url}"\n')
    with pytest.raises(ValidationError) as err:
        load_settings(path)
    assert err.value.errors()[0]["loc"] == ("mqtt", "url")
    assert "mqtt.url must look like mqtt://host:1883 or mqtts://host:8883" in error_text(err)


def test_bad_mqtt_url_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APPLIANCE_MQTT__URL", "broker.lan")
    with pytest.raises(ValidationError, match=r"mqtt\.url must look like"):
        load_settings()


@pytest.mark.parametrize("url", ["mqtt://broker", "tcp://10.0.0.2:1883", "mqtts://b:8883"])
def test_good_mqtt_urls(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    monkeypatch.setenv("APPLIANCE_MQTT__URL", url)
    assert load_settings().mqtt.url == url


def test_unknown_timezone(tmp_path: Path) -> None:
    path = write_toml(tmp_path, 'timezone = "Mars/Olympus_Mons"\n')
    with pytest.raises(ValidationError) as err:
        load_settings(path)
    assert err.value.errors()[0]["loc"] == ("timezone",)
    assert "unknown time zone 'Mars/Olympus_Mons'" in error_text(err)


def test_known_timezone_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APPLIANCE_TIMEZONE", "America/Sao_Paulo")
    settings = load_settings()
    assert settings.timezone == "America/Sao_Paulo"
    assert settings.tz.key == "America/Sao_Paulo"


def test_unknown_key(tmp_path: Path) -> None:
    path = write_toml(tmp_path, 'log_levle = "DEBUG"\n')
    with pytest.raises(ValidationError) as err:
        load_settings(path)
    (error,) = err.value.errors()
    assert error["type"] == "extra_forbidden"
    assert error["loc"] == ("log_levle",)


@pytest.mark.parametrize("section", ["mqtt", "db", "homeassistant", "actions"])
def test_unknown_key_in_a_section(tmp_path: Path, section: str) -> None:
    path = write_toml(tmp_path, f'[{section}]\npasword = "x"\n')
    with pytest.raises(ValidationError) as err:
        load_settings(path)
    (error,) = err.value.errors()
    assert error["type"] == "extra_forbidden"
    assert error["loc"] == (section, "pasword")


@pytest.mark.parametrize(
    ("env", "value", "loc"),
    [
        ("APPLIANCE_MQTT__KEEPALIVE", "1", ("mqtt", "keepalive")),
        ("APPLIANCE_MQTT__EMBEDDED_PORT", "70000", ("mqtt", "embedded_port")),
        ("APPLIANCE_ACTIONS__BATCH_MAX", "0", ("actions", "batch_max")),
        ("APPLIANCE_NODE_ID", "kitchen node", ("node_id",)),
        ("APPLIANCE_LANGUAGE", "de", ("language",)),
        ("APPLIANCE_LOG_LEVEL", "verbose", ("log_level",)),
    ],
)
def test_out_of_range_values(
    monkeypatch: pytest.MonkeyPatch, env: str, value: str, loc: tuple[str, ...]
) -> None:
    monkeypatch.setenv(env, value)
    with pytest.raises(ValidationError) as err:
        load_settings()
    assert err.value.errors()[0]["loc"] == loc


def test_cli_reports_invalid_settings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_toml(tmp_path, 'timezone = "Nowhere/Town"\n')
    assert main(["--config", str(path), "config", "show"]) == EXIT_CONFIG
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("appliance: invalid settings:")
    assert "unknown time zone 'Nowhere/Town'" in err


def test_cli_reports_a_missing_config_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--config", str(tmp_path / "nope.toml"), "config", "show"]) == EXIT_CONFIG
    assert "config file not found" in capsys.readouterr().err


# --- secrets -----------------------------------------------------------------------


def secret_settings() -> Settings:
    return Settings(
        db={"url": f"postgresql://appliance:{DB_SECRET}@db.lan:5432/appliance"},
        mqtt={"url": "mqtts://broker.lan:8883", "username": "appliance",
              "password": MQTT_SECRET},
    )  # fmt: skip


def test_redacted_hides_secrets() -> None:
    data = redacted(secret_settings())
    text = json.dumps(data)
    assert DB_SECRET not in text
    assert MQTT_SECRET not in text
    assert data["db"]["url"] == f"postgresql://appliance:{MASK}@db.lan:5432/appliance"
    assert data["mqtt"]["password"] == MASK
    # Everything else stays readable.
    assert data["mqtt"]["url"] == "mqtts://broker.lan:8883"
    assert data["mqtt"]["username"] == "appliance"


@pytest.mark.parametrize("password", ["p@ss:word", "p%40ss", "appliance", "db.lan", "5432"])
def test_redacted_db_url_with_awkward_passwords(password: str) -> None:
    settings = Settings(db={"url": f"postgresql://appliance:{password}@db.lan:5432/appliance"})
    url = redacted(settings)["db"]["url"]
    assert url == f"postgresql://appliance:{MASK}@db.lan:5432/appliance"


def test_redacted_db_url_without_password() -> None:
    settings = Settings(db={"url": "postgresql://appliance@db.lan/appliance"})
    assert redacted(settings)["db"]["url"] == "postgresql://appliance@db.lan/appliance"


def test_redacted_without_secrets() -> None:
    data = redacted(Settings())
    assert data["db"]["url"] is None
    assert data["mqtt"]["password"] is None


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql://appliance@db.lan/appliance?password={DB_SECRET}",
        f"postgresql://appliance@db.lan/appliance?sslmode=require&PASSWORD={DB_SECRET}",
        f"host=db.lan dbname=appliance user=appliance password={DB_SECRET}",
        f"host=db.lan password = '{DB_SECRET} x' dbname=appliance",
    ],
)
def test_redacted_db_password_in_parameters(url: str) -> None:
    shown = redacted(Settings(db={"url": url}))["db"]["url"]
    assert DB_SECRET not in shown
    assert MASK in shown
    assert "db.lan" in shown


def test_redacted_keeps_other_url_parameters() -> None:
    url = "postgresql://appliance:pw@db.lan/appliance?sslmode=verify-full&sslrootcert=/etc/ca.crt"
    shown = redacted(Settings(db={"url": url}))["db"]["url"]
    assert shown == (
        f"postgresql://appliance:{MASK}@db.lan/appliance?sslmode=verify-full&sslrootcert=/etc/ca.crt"
    )


def test_mqtt_url_with_credentials_is_refused() -> None:
    with pytest.raises(ValidationError, match=r"mqtt\.url must not hold credentials") as err:
        Settings(mqtt={"url": f"mqtt://appliance:{MQTT_SECRET}@broker.lan"})
    assert err.value.errors()[0]["loc"] == ("mqtt", "url")


def test_config_show_prints_json_without_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_toml(
        tmp_path,
        f'node_id = "kitchen"\n[mqtt]\nurl = "mqtt://broker.lan"\npassword = "{MQTT_SECRET}"\n',
    )
    monkeypatch.setenv(CONFIG_ENV, str(path))
    monkeypatch.setenv("APPLIANCE_DB__URL", f"postgresql://appliance:{DB_SECRET}@db.lan/app")
    assert main(["config", "show"]) == EXIT_OK
    out, err = capsys.readouterr()
    assert DB_SECRET not in out + err
    assert MQTT_SECRET not in out + err
    shown = json.loads(out)
    assert shown["node_id"] == "kitchen"
    assert shown["mqtt"]["url"] == "mqtt://broker.lan"
    assert shown["mqtt"]["password"] == MASK
    assert shown["db"]["url"] == f"postgresql://appliance:{MASK}@db.lan/app"
    assert set(shown) == set(Settings.model_fields)


def test_config_show_applies_command_line_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("APPLIANCE_DATA_DIR", str(tmp_path / "from-env"))
    monkeypatch.setenv("APPLIANCE_LOG_LEVEL", "ERROR")
    argv = ["--data-dir", str(tmp_path / "from-cli"), "--log-level", "DEBUG", "config", "show"]
    assert main(argv) == EXIT_OK
    shown = json.loads(capsys.readouterr().out)
    assert shown["data_dir"] == str(tmp_path / "from-cli")
    assert shown["log_level"] == "DEBUG"


def test_a_shared_group_needs_an_external_broker_and_database() -> None:
    with pytest.raises(ValidationError, match="external broker and database"):
        Settings(mqtt={"shared_group": "appliance"})
    with pytest.raises(ValidationError, match="external broker and database"):
        Settings(mqtt={"shared_group": "appliance", "url": "mqtt://broker:1883"})
    both = Settings(
        mqtt={"shared_group": "appliance", "url": "mqtt://broker:1883"},
        db={"url": "postgresql://appliance@db/appliance"},
    )
    assert both.mqtt.shared_group == "appliance"
