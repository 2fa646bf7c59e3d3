"""systemd notifications (READY, WATCHDOG, STOPPING) without a dependency.

Does nothing when the node does not run under systemd (no ``NOTIFY_SOCKET``).
"""

from __future__ import annotations

import logging
import os
import socket

_LOGGER = logging.getLogger(__name__)


def notify(state: str) -> bool:
    address = os.environ.get("NOTIFY_SOCKET")
    if not address:
        return False
    if address.startswith("@"):
        address = "\0" + address[1:]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.sendto(state.encode(), address)
    except OSError as err:
        _LOGGER.warning("systemd notification %r failed: %s", state, err)
        return False
    return True


def watchdog_interval() -> float | None:
    """Half the watchdog timeout systemd asks for, in seconds, or None."""
    usec = os.environ.get("WATCHDOG_USEC")
    pid = os.environ.get("WATCHDOG_PID")
    if not usec or (pid and pid != str(os.getpid())):
        return None
    try:
        return int(usec) / 2_000_000
    except ValueError:
        return None
