"""MQTT topic names: every topic the node publishes or subscribes to, in one place.

``<prefix>`` defaults to ``appliance`` (setting ``mqtt.prefix``). See docs/mqtt-api.md.
"""

from __future__ import annotations

from dataclasses import dataclass

HA_STATUS_TOPIC = "homeassistant/status"
HA_DISCOVERY_PREFIX = "homeassistant"

ONLINE = "online"
OFFLINE = "offline"


@dataclass(frozen=True)
class Topics:
    """Topic names under one prefix."""

    prefix: str = "appliance"

    # --- subscribed by the node -------------------------------------------------
    @property
    def command_filter(self) -> str:
        """``<prefix>/cmd/<domain>/<action>`` and ``<prefix>/cmd/text``."""
        return f"{self.prefix}/cmd/#"

    def command(self, action: str) -> str:
        """The topic of one structured command, ``shopping.add`` -> ``.../cmd/shopping/add``."""
        domain, _, name = action.partition(".")
        return f"{self.prefix}/cmd/{domain}/{name}"

    @property
    def text_command(self) -> str:
        """Free text through the intent parser: ``{"text": ..., "lang": ...}``."""
        return f"{self.prefix}/cmd/text"

    @property
    def ha_add_item(self) -> str:
        """Home Assistant ``text`` entity: the raw payload is an item to add."""
        return f"{self.prefix}/ha/shopping/add"

    @property
    def ha_clear_completed(self) -> str:
        """Home Assistant ``button`` entity: any payload clears completed items."""
        return f"{self.prefix}/ha/shopping/clear_completed"

    @property
    def ha_announce(self) -> str:
        """Home Assistant ``notify`` entity: the raw payload is text to announce."""
        return f"{self.prefix}/ha/announce"

    def ha_announce_site(self, site: str) -> str:
        """Home Assistant ``notify`` entity of one satellite: the raw payload is text
        to announce at ``site`` only."""
        return f"{self.prefix}/ha/announce/{site}"

    @property
    def ha_filter(self) -> str:
        return f"{self.prefix}/ha/#"

    @property
    def user_command_filter(self) -> str:
        """``<prefix>/u/<user>/cmd/...``: commands of one MQTT user, for that user only
        (the broker's ACL lets each user write under its own name)."""
        return f"{self.prefix}/u/+/cmd/#"

    def user_command(self, user: str, action: str) -> str:
        domain, _, name = action.partition(".")
        return (
            f"{self.prefix}/u/{user}/cmd/{domain}/{name}"
            if name
            else (f"{self.prefix}/u/{user}/cmd/{domain}")
        )

    def user_receipt(self, user: str, request_id: str) -> str:
        """The receipt of a user's own command, readable by that user only."""
        return f"{self.prefix}/u/{user}/receipts/{request_id}"

    # --- published by the node --------------------------------------------------
    @property
    def availability(self) -> str:
        """``online`` / ``offline`` (retained; ``offline`` is the last will)."""
        return f"{self.prefix}/status"

    @property
    def receipts(self) -> str:
        """Every receipt, as a stream (QoS 1, not retained)."""
        return f"{self.prefix}/receipts"

    def receipt(self, request_id: str) -> str:
        """The receipt of one request (QoS 1, not retained)."""
        return f"{self.prefix}/receipts/{request_id}"

    def voice_turn(self, site: str) -> str:
        """One finished voice turn at ``site``: decision, transcripts, receipt, reply,
        milestones in milliseconds (QoS 0, not retained)."""
        return f"{self.prefix}/diagnostics/voice/{site}"

    @property
    def shopping_state(self) -> str:
        """The current shopping list (retained JSON)."""
        return f"{self.prefix}/state/shopping"

    @property
    def agenda_state(self) -> str:
        """Upcoming agenda events (retained JSON)."""
        return f"{self.prefix}/state/agenda"

    @property
    def announcements(self) -> str:
        """Announcements the node could not speak itself (voice disabled or not
        loaded): ``{"text", "site"}`` for satellites to show (QoS 1, not retained)."""
        return f"{self.prefix}/announce"

    def discovery(self, device_id: str) -> str:
        """Device-based Home Assistant discovery config (retained)."""
        return f"{HA_DISCOVERY_PREFIX}/device/{device_id}/config"
