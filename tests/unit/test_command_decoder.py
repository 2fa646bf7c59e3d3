"""MQTT message to request: every unusable message still gets a reasoned request."""

from __future__ import annotations

import datetime as dt
import json
import logging
from dataclasses import dataclass, field
from typing import Any

import pytest

from appliance.actions.service import Request
from appliance.bus.commands import ANNOUNCEMENT_MAX_CHARS, Announcement, CommandDecoder
from appliance.protocol import commands as c
from appliance.protocol.topics import Topics


@dataclass
class FakeResult:
    command: Any = None
    intent: str | None = None
    reason: str | None = "not_understood"
    commands: tuple[Any, ...] = field(default_factory=tuple)


class FakeParser:
    """Understands exactly the phrases given to it."""

    def __init__(self, known: dict[str, FakeResult]) -> None:
        self.known = known
        self.seen: list[tuple[str, str]] = []

    def parse(self, text: str, *, lang: str = "en", now: dt.datetime | None = None) -> FakeResult:
        self.seen.append((text, lang))
        return self.known.get(text, FakeResult())


def decoder(parser: FakeParser | None = None, max_bytes: int = 2048) -> CommandDecoder:
    return CommandDecoder(
        Topics(),
        default_user="household",
        language="en",
        max_payload_bytes=max_bytes,
        parser=parser,
    )


def one(result: object) -> Request:
    assert isinstance(result, list) and len(result) == 1
    request = result[0]
    assert isinstance(request, Request)
    return request


def test_structured_command() -> None:
    payload = json.dumps(
        {
            "request_id": "a1",
            "item": "milk",
            "quantity": 2,
            "unit": "litres",
            "user": "ana",
            "site": "kitchen",
        }
    ).encode()
    request = one(decoder().decode("appliance/cmd/shopping/add", payload))
    assert request.request_id == "a1"
    assert request.command == c.ShoppingAdd(item="milk", quantity=2, unit="l")
    assert (request.source.kind, request.source.user, request.source.site) == (
        "mqtt",
        "ana",
        "kitchen",
    )


@pytest.mark.parametrize(
    ("topic", "payload", "reason"),
    [
        ("appliance/cmd/shopping/add", b"\xff\xfe", "invalid_json"),
        ("appliance/cmd/shopping/add", b'"milk"', "invalid_payload"),
        ("appliance/cmd/shopping/add", b'{"item": 5}', "invalid_payload: item"),
        (
            "appliance/cmd/shopping/add",
            b'{"item": "x", "quantity": "lots"}',
            "invalid_payload: quantity",
        ),
        (
            "appliance/cmd/agenda/add",
            b'{"title": "x", "start": "2026-12-01T10:00:00"}',
            "invalid_payload: start",
        ),
        ("appliance/cmd/shopping/fly", b"{}", "unknown_action"),
        ("appliance/cmd/shopping/add", b'{"request_id": "a b", "item": "x"}', "invalid_request_id"),
        ("appliance/cmd/shopping/add", b'{"request_id": "a/#", "item": "x"}', "invalid_request_id"),
        ("appliance/cmd/shopping/add", b'{"user": "../x", "item": "x"}', "invalid_user"),
        ("appliance/cmd/text", b'{"text": ""}', "invalid_payload"),
        ("appliance/cmd/text", b'{"text": "hi", "lang": "fr"}', "unsupported_language"),
    ],
)
def test_rejections_name_the_problem(topic: str, payload: bytes, reason: str) -> None:
    request = one(decoder(FakeParser({})).decode(topic, payload))
    assert request.command is None
    assert request.rejection is not None and request.rejection.startswith(reason), request


def test_naive_datetime_is_refused_rather_than_guessed() -> None:
    payload = b'{"title": "Dentist", "start": "2026-12-01T15:00:00"}'
    assert one(decoder().decode("appliance/cmd/agenda/add", payload)).command is None
    aware = b'{"title": "Dentist", "start": "2026-12-01T15:00:00-03:00"}'
    command = one(decoder().decode("appliance/cmd/agenda/add", aware)).command
    assert isinstance(command, c.AgendaAdd) and command.start.utcoffset() is not None


def test_oversized_payload_is_not_parsed() -> None:
    payload = json.dumps({"request_id": "big", "item": "x" * 5000}).encode()
    request = one(decoder(max_bytes=1024).decode("appliance/cmd/shopping/add", payload))
    assert request.rejection is not None and request.rejection.startswith("payload_too_large")
    assert request.request_id != "big"


def test_text_with_several_items_gets_one_request_each() -> None:
    milk, eggs = c.ShoppingAdd(item="milk"), c.ShoppingAdd(item="eggs", quantity=12)
    parser = FakeParser(
        {
            "add milk and a dozen eggs": FakeResult(
                command=None, intent="shopping.add", reason="multiple_items", commands=(milk, eggs)
            )
        }
    )
    payload = b'{"text": "add milk and a dozen eggs", "request_id": "t1"}'
    requests = decoder(parser).decode("appliance/cmd/text", payload)
    assert isinstance(requests, list)
    assert [(r.request_id, r.command) for r in requests] == [("t1", milk), ("t1.2", eggs)]
    assert all(r.details["text"] == "add milk and a dozen eggs" for r in requests)


def test_text_not_understood_is_rejected_with_the_parser_reason() -> None:
    parser = FakeParser({"don't add milk": FakeResult(intent="shopping.add", reason="negated")})
    request = one(decoder(parser).decode("appliance/cmd/text", b'{"text": "don\'t add milk"}'))
    assert request.rejection == "not_understood: negated"


def test_home_assistant_text_entity_uses_the_parser_for_quantities() -> None:
    rice = c.ShoppingAdd(item="rice", quantity=2, unit="kg")
    parser = FakeParser({"add 2 kg of rice to the shopping list": FakeResult(command=rice)})
    request = one(decoder(parser).decode("appliance/ha/shopping/add", b"2 kg of rice"))
    assert request.command == rice and request.source.kind == "ha"
    plain = one(decoder(FakeParser({})).decode("appliance/ha/shopping/add", b"quinoa"))
    assert plain.command == c.ShoppingAdd(item="quinoa")


def test_announcement_and_foreign_topics() -> None:
    result = decoder().decode("appliance/ha/announce", b"Dinner is ready")
    assert result == Announcement("Dinner is ready")
    assert result.site is None
    assert decoder().decode("appliance/ha/announce", b"  ") is None
    assert decoder().decode("other/topic", b"{}") is None


def test_announcement_for_one_satellite() -> None:
    result = decoder().decode("appliance/ha/announce/living_room", b" Dinner\n is  ready ")
    assert result == Announcement("Dinner is ready", "living_room")


def test_unusable_announcements_are_refused_with_a_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    just_right = "a" * ANNOUNCEMENT_MAX_CHARS
    with caplog.at_level(logging.INFO, logger="appliance.bus.commands"):
        assert decoder().decode("appliance/ha/announce", just_right.encode()) is not None
        assert not caplog.records
        assert decoder().decode("appliance/ha/announce", (just_right + "b").encode()) is None
        assert decoder().decode("appliance/ha/announce", b"x" * 100_000) is None
        assert decoder().decode("appliance/ha/announce/kitchen", b"\n\t ") is None
        assert decoder().decode("appliance/ha/announce/a/b", b"hello") is None
        assert decoder().decode("appliance/ha/announce/", b"hello") is None
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 5
    assert "501 characters, limit 500" in messages[0]
    assert "100000 bytes" in messages[1]
    assert "empty announcement for kitchen" in messages[2]
    assert "'a/b' is not a satellite site name" in messages[3]
