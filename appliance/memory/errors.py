"""The memory subsystem's errors: one root, the user's mistakes apart from faults.

Database failures come out of ``Database.transaction`` as ``StoreError`` (and
``StoreUnavailableError``); everything else the memory code raises on purpose is a
``MemoryStoreError``.
"""

from __future__ import annotations

from appliance.errors import ApplianceError


class MemoryStoreError(ApplianceError):
    """The memory subsystem refused a request or failed."""


class MemoryInputError(MemoryStoreError):
    """The caller's mistake (empty or too long text, unknown kind, ...): nothing was
    written. ``reason`` is a short code for a receipt; the message says it in words."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class MemoryUserRequiredError(MemoryInputError):
    """No user: memories are per user, so without one nothing is read or written."""

    def __init__(self) -> None:
        super().__init__("no_user", "memories need a user: none was given, nothing was done")


class EmbeddingError(MemoryStoreError):
    """The embedding model failed to load or to embed."""


class MemoryIndexMismatchError(MemoryStoreError):
    """The stored embeddings come from another model than the configured one."""
