"""Package data (YAML) of the intents package, read via importlib.resources."""

from __future__ import annotations

import importlib.resources
import re
from importlib.resources.abc import Traversable
from typing import Any

import yaml  # type: ignore[import-untyped,unused-ignore]

PACKAGE = "appliance.intents"


class _Loader(yaml.SafeLoader):  # type: ignore[misc,unused-ignore]
    """YAML 1.2 booleans: only true/false, so "no", "on", "yes" stay words."""


_Loader.yaml_implicit_resolvers = {
    key: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def load_yaml(resource: Traversable) -> Any:
    """Parse one YAML resource."""
    return yaml.load(resource.read_text(encoding="utf-8"), Loader=_Loader)  # noqa: S506


def data_file(*parts: str) -> Traversable:
    """A file or folder inside the package."""
    resource = importlib.resources.files(PACKAGE)
    for part in parts:
        resource = resource / part
    return resource
