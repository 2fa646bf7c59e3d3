"""Models beyond the defaults: a catalog, a checked download, and what is installed.

Nothing here runs by itself: the node only asks :func:`find`, and downloads happen
when someone runs ``appliance models fetch``.
"""

from appliance.models.catalog import CATALOG, CatalogEntry, RemoteFile
from appliance.models.cli import add_models_commands, run_models_command
from appliance.models.errors import ModelFetchError
from appliance.models.fetch import FileSpec, fetch, fetch_entry, install, models_dir
from appliance.models.manifest import InstalledModel
from appliance.models.registry import VerifyResult, find, installed, verify

__all__ = [
    "CATALOG",
    "CatalogEntry",
    "FileSpec",
    "InstalledModel",
    "ModelFetchError",
    "RemoteFile",
    "VerifyResult",
    "add_models_commands",
    "fetch",
    "fetch_entry",
    "find",
    "install",
    "installed",
    "models_dir",
    "run_models_command",
    "verify",
]
