"""Publishes the discovery configs: the node's and one per satellite, retained.

Everything is published again on each connection and whenever Home Assistant says
``online`` on ``homeassistant/status``; a satellite's config is published again when
its ``info`` changes, and removed (an empty retained config) when its ``info`` is
cleared.
"""

from __future__ import annotations

import asyncio
import logging

from appliance.aio import wait_any
from appliance.bus.mqtt import Bus
from appliance.errors import BusError
from appliance.ha.discovery import DeviceInfo, encode_payload, node_discovery, removal_payload
from appliance.ha.satellites import satellite_device_id, satellite_discovery
from appliance.protocol.topics import Topics
from appliance.voice.registry import SatelliteRegistry

_LOGGER = logging.getLogger(__name__)


class DiscoveryPublisher:
    def __init__(
        self, bus: Bus, device: DeviceInfo, topics: Topics, satellites: SatelliteRegistry
    ) -> None:
        self._bus = bus
        self._device = device
        self._topics = topics
        self._satellites = satellites
        self._everything = False
        self._sites: set[str] = set()
        self._wanted = asyncio.Event()

    def publish_all(self) -> None:
        """After a (re)connection or Home Assistant's birth message."""
        self._everything = True
        self._wanted.set()

    def satellite_changed(self, site: str) -> None:
        """A satellite's ``info`` is new, changed or cleared."""
        self._sites.add(site)
        self._wanted.set()

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            await wait_any(self._wanted, stop)
            if stop.is_set():
                return
            self._wanted.clear()
            everything, self._everything = self._everything, False
            sites, self._sites = self._sites, set()
            if everything:
                await self._publish_node()
                sites |= {s.site for s in self._satellites.described()}
            for site in sorted(sites):
                await self._publish_satellite(site)

    async def _publish_node(self) -> None:
        topic, payload = node_discovery(self._device, self._topics)
        await self._publish(topic, encode_payload(payload))

    async def _publish_satellite(self, site: str) -> None:
        known = self._satellites.get(site)
        if known is None or known.info is None:
            device_id = satellite_device_id(self._device.device_id, site)
            await self._publish(self._topics.discovery(device_id), removal_payload())
            return
        topic, payload = satellite_discovery(self._device, known.info, self._topics)
        await self._publish(topic, encode_payload(payload))

    async def _publish(self, topic: str, payload: bytes) -> None:
        try:
            await self._bus.publish(topic, payload, qos=1, retain=True)
        except BusError as err:  # published again on the next connection
            _LOGGER.warning("discovery not published on %s: %s", topic, err)
