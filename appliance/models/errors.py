"""The one error this package raises on purpose."""

from __future__ import annotations

from appliance.errors import ApplianceError


class ModelFetchError(ApplianceError):
    """Fetching, unpacking, installing or checking a model failed.

    The message is meant for the person at the keyboard: it says what happened and,
    where there is one, what to do about it.
    """
