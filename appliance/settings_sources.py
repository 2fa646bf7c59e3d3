"""Where a settings tree comes from: shared by the node's and the satellite's.

Sources, strongest first: keyword arguments (command-line options), environment
variables (the tree's prefix, ``__`` between sections), then a TOML file given to
``load`` or named by the tree's ``config_env`` variable. Depends on pydantic-settings
only, so the satellite can use it without the node's packages.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar, Self

from pydantic import ValidationError
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    TomlConfigSettingsSource,
)


class TomlSettings(BaseSettings):
    """A settings root that also reads a TOML file."""

    config_env: ClassVar[str] = ""
    """The environment variable that may name the TOML file."""
    config_file: ClassVar[Path | None] = None

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        named = os.environ.get(cls.config_env) if cls.config_env else None
        path = cls.config_file or (Path(named) if named else None)
        if path is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=path))
        return tuple(sources)

    @classmethod
    def load(cls, config_file: Path | None = None, **overrides: Any) -> Self:
        """The settings from all sources; ``overrides`` that are not None win."""
        if config_file is not None and not config_file.is_file():
            msg = f"config file not found: {config_file}"
            raise FileNotFoundError(msg)
        previous = cls.config_file
        cls.config_file = config_file
        try:
            return cls(**{k: v for k, v in overrides.items() if v is not None})
        finally:
            cls.config_file = previous


def describe_invalid(err: ValidationError) -> str:
    """What is wrong with the settings, key by key, without the values given: pydantic
    repeats the input ("mqtt.url must not hold credentials" would print the password),
    and this goes to stderr and the journal."""
    problems = [
        f"{'.'.join(str(part) for part in error['loc']) or 'settings'}: {error['msg']}"
        for error in err.errors(include_url=False, include_input=False, include_context=False)
    ]
    return "; ".join(problems)
