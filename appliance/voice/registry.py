"""The satellites the node has seen: what each is (``info``) and whether it is online.

Every satellite keeps three retained topics (``status``, ``info``, ``state``; see
``appliance/protocol/voice.py``), so the node learns them all again on each
(re)connection. Home Assistant discovery is published from ``info``; announcements go
to the satellites whose ``status`` is ``online``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import ValidationError

from appliance.protocol.topics import OFFLINE, ONLINE
from appliance.protocol.voice import SatelliteInfo, SatelliteState, parse_topic

_LOGGER = logging.getLogger(__name__)

_KINDS = ("status", "info", "state")


@dataclass
class KnownSatellite:
    site: str
    info: SatelliteInfo | None = None
    online: bool = False
    state: SatelliteState | None = None


class SatelliteRegistry:
    """Fed with every satellite message; keeps the ``status``, ``info`` and ``state``."""

    def __init__(self, prefix: str, on_info: Callable[[str], None] | None = None) -> None:
        self._prefix = prefix
        self._on_info = on_info
        self._satellites: dict[str, KnownSatellite] = {}

    def handle(self, topic: str, payload: bytes) -> bool:
        """Take a ``status``, ``info`` or ``state`` message; False for any other topic."""
        parsed = parse_topic(self._prefix, topic)
        if parsed is None or parsed[1] not in _KINDS:
            return False
        site, kind, _ = parsed
        if kind == "status":
            self._status(site, payload.strip())
        elif kind == "info":
            self._info(site, payload)
        else:
            self._state(site, payload)
        return True

    def get(self, site: str) -> KnownSatellite | None:
        return self._satellites.get(site)

    def online_sites(self) -> list[str]:
        return sorted(s.site for s in self._satellites.values() if s.online)

    def described(self) -> list[KnownSatellite]:
        """The satellites whose ``info`` is known (those that get a Home Assistant device)."""
        return [s for s in self._satellites.values() if s.info is not None]

    # --- messages -----------------------------------------------------------------
    def _status(self, site: str, payload: bytes) -> None:
        if payload not in (ONLINE.encode(), OFFLINE.encode()):
            if payload:  # an empty retained payload only clears the topic
                _LOGGER.warning("satellite %s: unknown status %r", site, payload[:20])
            self._known(site).online = False
            return
        satellite = self._known(site)
        online = payload == ONLINE.encode()
        if online != satellite.online:
            _LOGGER.info("satellite %s is %s", site, "online" if online else "offline")
        satellite.online = online

    def _info(self, site: str, payload: bytes) -> None:
        if not payload.strip():  # the retained info was cleared: the satellite is gone
            satellite = self._satellites.get(site)
            if satellite is not None and satellite.info is not None:
                satellite.info = None
                _LOGGER.info("satellite %s removed (its info was cleared)", site)
                self._changed(site)
            return
        try:
            info = SatelliteInfo.from_payload(payload)
        except ValidationError as err:
            _LOGGER.warning("satellite %s: malformed info: %s", site, err.errors()[0]["msg"])
            return
        if info.site != site:
            _LOGGER.warning("satellite %s: info names another site (%r); ignored", site, info.site)
            return
        satellite = self._known(site)
        if satellite.info != info:
            satellite.info = info
            self._changed(site)

    def _state(self, site: str, payload: bytes) -> None:
        if not payload.strip():
            return
        try:
            self._known(site).state = SatelliteState.from_payload(payload)
        except ValidationError as err:
            _LOGGER.warning("satellite %s: malformed state: %s", site, err.errors()[0]["msg"])

    def _known(self, site: str) -> KnownSatellite:
        satellite = self._satellites.get(site)
        if satellite is None:
            satellite = self._satellites[site] = KnownSatellite(site)
        return satellite

    def _changed(self, site: str) -> None:
        if self._on_info is not None:
            self._on_info(site)
