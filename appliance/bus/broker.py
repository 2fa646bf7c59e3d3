"""The embedded MQTT broker (amqtt, in-process) for a node with no broker configured.

MQTT 3.1.1 only and one node: a household that runs several nodes, or wants
passwords and ACLs, points ``mqtt.url`` at a mosquitto instead.
"""

from __future__ import annotations

import logging
from typing import Any

from appliance.errors import EmbeddedServerError

_LOGGER = logging.getLogger(__name__)


class EmbeddedBroker:
    """An amqtt broker bound to one address, started and stopped with the node."""

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port
        self._broker: Any = None

    async def start(self) -> None:
        from amqtt.broker import Broker

        config: dict[str, Any] = {
            "listeners": {"default": {"type": "tcp", "bind": f"{self.host}:{self.port}"}},
            "plugins": {
                "amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": True},
            },
        }
        self._broker = Broker(config)
        try:
            await self._broker.start()
        except Exception as err:  # amqtt raises its own BrokerError or OSError
            msg = f"embedded MQTT broker could not listen on {self.host}:{self.port}: {err}"
            raise EmbeddedServerError(msg) from err
        _LOGGER.info("embedded MQTT broker listening on %s:%d", self.host, self.port)

    async def stop(self) -> None:
        if self._broker is not None:
            await self._broker.shutdown()
            self._broker = None
