"""The node's registry of satellites: info, status and state from their retained topics."""

from __future__ import annotations

import logging

import pytest

from appliance.protocol.voice import SatelliteInfo, SatelliteState, SiteTopics
from appliance.voice.registry import SatelliteRegistry

KITCHEN = SiteTopics("appliance", "kitchen")
INFO = SatelliteInfo(site="kitchen", name="Kitchen", lang="pt")


def registry() -> tuple[SatelliteRegistry, list[str]]:
    changed: list[str] = []
    return SatelliteRegistry("appliance", on_info=changed.append), changed


def test_info_makes_a_described_satellite_and_only_changes_are_reported() -> None:
    reg, changed = registry()
    assert reg.handle(KITCHEN.info, INFO.to_payload())
    assert changed == ["kitchen"]
    assert [s.info for s in reg.described()] == [INFO]
    reg.handle(KITCHEN.info, INFO.to_payload())  # retained again after a reconnection
    assert changed == ["kitchen"]
    renamed = INFO.model_copy(update={"name": "Cozinha"})
    reg.handle(KITCHEN.info, renamed.to_payload())
    assert changed == ["kitchen", "kitchen"]
    known = reg.get("kitchen")
    assert known is not None and known.info == renamed


def test_cleared_info_removes_the_device() -> None:
    reg, changed = registry()
    reg.handle(KITCHEN.info, INFO.to_payload())
    reg.handle(KITCHEN.info, b"")
    assert changed == ["kitchen", "kitchen"]
    assert reg.described() == []
    reg.handle(KITCHEN.info, b"")  # nothing left to remove
    assert len(changed) == 2


def test_status_online_and_offline() -> None:
    reg, changed = registry()
    reg.handle(KITCHEN.status, b"online")
    reg.handle(SiteTopics("appliance", "office").status, b"offline")
    assert reg.online_sites() == ["kitchen"]
    assert reg.get("office") is not None  # known, but not online
    assert reg.described() == []  # no info: no Home Assistant device
    reg.handle(KITCHEN.status, b"offline")
    assert reg.online_sites() == []
    assert changed == []


def test_state_is_kept() -> None:
    reg, _ = registry()
    state = SatelliteState(muted=True, volume=40)
    assert reg.handle(KITCHEN.state, state.to_payload())
    known = reg.get("kitchen")
    assert known is not None and known.state == state


def test_bad_messages_are_logged_and_change_nothing(caplog: pytest.LogCaptureFixture) -> None:
    reg, changed = registry()
    with caplog.at_level(logging.WARNING):
        reg.handle(KITCHEN.info, b"{not json")
        reg.handle(KITCHEN.info, SatelliteInfo(site="office", name="Office").to_payload())
        reg.handle(KITCHEN.status, b"maybe")
        reg.handle(KITCHEN.state, b'{"volume": 300}')
    assert changed == []
    assert reg.described() == [] and reg.online_sites() == []
    assert len(caplog.records) == 4
    assert "another site" in caplog.text


def test_other_topics_are_left_to_others() -> None:
    reg, _ = registry()
    assert not reg.handle(KITCHEN.wake, b"{}")
    assert not reg.handle(KITCHEN.audio("s1"), b"\0\0")
    assert not reg.handle(KITCHEN.set("mute"), b"ON")
    assert not reg.handle("appliance/cmd/shopping/add", b"{}")
