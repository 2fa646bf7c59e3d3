"""Exception tree: one root, one subclass per subsystem.

Library errors (psycopg, aiomqtt, model loaders) are translated at the adapter with
``raise ... from err``, so callers handle these and nothing else.
"""

from __future__ import annotations


class ApplianceError(Exception):
    """Root of every error the node raises on purpose."""


class ConfigError(ApplianceError):
    """The settings are unusable (bad value, missing file)."""


class StoreError(ApplianceError):
    """PostgreSQL failed: connection lost, statement failed, migration refused."""


class StoreUnavailableError(StoreError):
    """The database cannot be reached right now; safe to retry later.

    ``maybe_committed`` is True when the connection broke while committing: the
    transaction may or may not have taken effect.
    """

    def __init__(self, message: str, *, maybe_committed: bool = False) -> None:
        super().__init__(message)
        self.maybe_committed = maybe_committed


class EmbeddedServerError(ApplianceError):
    """An embedded server (PostgreSQL or MQTT broker) did not start or stop."""


class BusError(ApplianceError):
    """The MQTT broker failed or refused us."""


class CommandError(ApplianceError):
    """A command payload is malformed; the message says why, for the receipt."""
