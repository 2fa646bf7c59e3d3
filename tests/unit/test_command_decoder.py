"""MQTT message to request: every unusable message still gets a reasoned request."""

from __future__ import annotations

import datetime as dt
import json
import logging
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic import ValidationError

from appliance.actions.service import Request
from appliance.bus.commands import ANNOUNCEMENT_MAX_CHARS, Announcement, CommandDecoder
from appliance.bus.limits import RateLimiter
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


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def limited_decoder(clock: Clock, rate: float = 1, burst: int = 2) -> CommandDecoder:
    return CommandDecoder(
        Topics(),
        default_user="household",
        language="en",
        max_payload_bytes=2048,
        parser=FakeParser({}),
        limiter=RateLimiter(rate, burst, clock=clock),
    )


def test_commands_beyond_the_rate_limit_are_rejected_with_their_receipt() -> None:
    clock = Clock()
    dec = limited_decoder(clock)
    add = "appliance/cmd/shopping/add"
    for n in (1, 2):
        payload = json.dumps({"request_id": f"k{n}", "item": "milk", "site": "kitchen"})
        assert one(dec.decode(add, payload.encode())).command == c.ShoppingAdd(item="milk")
    payload = json.dumps({"request_id": "k3", "item": "milk", "site": "kitchen"}).encode()
    request = one(dec.decode(add, payload))
    assert request.command is None and request.request_id == "k3"
    assert request.action == "shopping.add" and request.source.site == "kitchen"
    assert request.rejection == (
        "rate_limited: 1 commands per second at most for household/kitchen"
    )
    # another sender (the same user elsewhere, or another user) is not held back
    other = one(dec.decode(add, b'{"item": "milk", "site": "office"}'))
    assert other.command is not None
    ana = one(dec.decode(add, b'{"item": "milk", "user": "ana", "site": "kitchen"}'))
    assert ana.command is not None
    clock.now += 1.0
    assert one(dec.decode(add, payload)).command is not None


def test_text_commands_and_unknown_actions_count_too() -> None:
    dec = limited_decoder(Clock(), burst=1)
    dec.decode("appliance/cmd/shopping/fly", b'{"user": "ana"}')
    request = one(dec.decode("appliance/cmd/text", b'{"text": "add milk", "user": "ana"}'))
    assert request.rejection == "rate_limited: 1 commands per second at most for ana"
    assert request.source.user == "ana"


def test_unreadable_messages_are_not_counted() -> None:
    dec = limited_decoder(Clock(), burst=1)
    for _ in range(5):
        one(dec.decode("appliance/cmd/shopping/add", b"{not json"))
    assert one(dec.decode("appliance/cmd/shopping/add", b'{"item": "x"}')).command is not None


def test_home_assistant_entities_share_the_ha_limit(caplog: pytest.LogCaptureFixture) -> None:
    dec = limited_decoder(Clock(), rate=0.5, burst=2)
    assert one(dec.decode("appliance/ha/shopping/add", b"rice")).command is not None
    assert one(dec.decode("appliance/ha/shopping/clear_completed", b"")).command is not None
    request = one(dec.decode("appliance/ha/shopping/add", b"beans"))
    assert request.rejection == "rate_limited: 0.5 commands per second at most for ha"
    assert request.source.kind == "ha" and request.action == "shopping.add"
    cleared = one(dec.decode("appliance/ha/shopping/clear_completed", b""))
    assert cleared.action == "shopping.clear_completed" and cleared.rejection is not None
    # a structured command naming no user is someone else
    assert one(dec.decode("appliance/cmd/shopping/add", b'{"item": "x"}')).command is not None
    with caplog.at_level(logging.WARNING):
        assert dec.decode("appliance/ha/announce", b"dinner is ready") is None
    assert "announcement dropped: rate_limited" in caplog.text


def test_no_limiter_no_limit() -> None:
    dec = decoder()
    for _ in range(100):
        assert one(dec.decode("appliance/cmd/shopping/add", b'{"item": "x"}')).command


def test_nesting_deeper_than_the_parser_can_go_is_rejected_not_raised() -> None:
    request = one(decoder(max_bytes=16_384).decode("appliance/cmd/shopping/add", b"[" * 16_000))
    assert request.rejection == "invalid_json: nested too deeply"
    assert request.action == "shopping.add"


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (rb'{"request_id": "n1", "item": "milk\u0000"}', "invalid_payload: item: NUL"),
        (rb'{"request_id": "n1", "item": "\ud800"}', "invalid_payload: item: NUL or unpaired"),
        (rb'{"request_id": "n1", "item": "x", "site": "\udfff"}', "invalid_site"),
        (rb'{"request_id": "n1", "item": "x", "a": [{"b": "\u0000"}]}', "invalid_payload: a:"),
    ],
)
def test_text_postgres_cannot_store_is_rejected(payload: bytes, reason: str) -> None:
    request = one(decoder().decode("appliance/cmd/shopping/add", payload))
    assert request.rejection is not None and request.rejection.startswith(reason)
    assert request.request_id == "n1" and request.source.site is None


def test_a_readable_request_id_is_kept_when_user_or_site_is_wrong() -> None:
    payload = b'{"request_id": "u1", "user": "../x", "item": "x"}'
    request = one(decoder().decode("appliance/cmd/shopping/add", payload))
    assert (request.request_id, request.rejection) == ("u1", "invalid_user")
    assert request.source.user == "household" and request.action == "shopping.add"


@pytest.mark.parametrize("field", ["request_id", "user"])
def test_a_final_newline_does_not_pass_for_a_name(field: str) -> None:
    payload = json.dumps({field: "abc\n", "item": "x"}).encode()
    request = one(decoder().decode("appliance/cmd/shopping/add", payload))
    assert request.command is None and "\n" not in request.request_id


def test_home_assistant_item_with_a_nul_is_rejected() -> None:
    request = one(decoder().decode("appliance/ha/shopping/add", b"milk\x00"))
    assert request.rejection == "invalid_text: NUL character" and request.source.kind == "ha"


@pytest.mark.parametrize(
    ("topic", "payload", "reason"),
    [
        ("agenda/add", {"title": "x", "start": "0001-01-01T00:00:00+14:00"}, "start: years"),
        ("agenda/add", {"title": "x", "start": "9999-12-31"}, "start: years 1900 to 2999"),
        ("agenda/list", {"range": "day", "day": "9999-12-31"}, "day: years"),
        ("agenda/move", {"title": "x", "new_start": "1899-12-31"}, "new_start: years"),
        (
            "agenda/move",
            {"title": "x"},
            "payload: exactly one of new_start, new_time and shift_minutes",
        ),
        (
            "agenda/move",
            {"title": "x", "new_start": "2026-12-04", "new_time": "16:00"},
            "payload: exactly one of new_start, new_time and shift_minutes",
        ),
        ("agenda/move", {"title": "x", "shift_minutes": 0}, "payload: shift_minutes must not be 0"),
        ("agenda/move", {"title": "x", "shift_minutes": True}, "shift_minutes: Input should be"),
        (
            "agenda/move",
            {"title": "x", "shift_minutes": 10**6},
            "shift_minutes: Input should be less than or equal to 527040",
        ),
        (
            "agenda/move",
            {"title": "x", "new_start": "2026-12-04", "either_half": True},
            "payload: either_half needs new_time",
        ),
        ("shopping/add", {"item": "rice", "quantity": 1e-320}, "quantity: at least 0.001"),
        ("shopping/add", {"item": "rice", "quantity": 0.0004}, "quantity: at least 0.001"),
    ],
)
def test_values_the_actions_cannot_hold_are_rejected(
    topic: str, payload: dict[str, object], reason: str
) -> None:
    body = json.dumps(payload).encode()
    request = one(decoder().decode(f"appliance/cmd/{topic}", body))
    assert request.rejection is not None
    assert request.rejection.startswith(f"invalid_payload: {reason}"), request.rejection


def test_a_move_to_a_time_on_the_same_day() -> None:
    body = b'{"title": "dentist", "new_time": "16:30"}'
    ok = one(decoder().decode("appliance/cmd/agenda/move", body))
    assert ok.command == c.AgendaMove(title="dentist", new_time=dt.time(16, 30))


def test_a_quantity_the_list_can_hold_is_kept() -> None:
    ok = one(decoder().decode("appliance/cmd/shopping/add", b'{"item": "x", "quantity": 0.001}'))
    assert ok.command == c.ShoppingAdd(item="x", quantity=0.001)


def test_the_command_models_refuse_what_the_actions_cannot_hold() -> None:
    # in the models, so the text parser and the voice turn cannot build them either
    with pytest.raises(ValidationError, match="years 1900 to 2999 only"):
        c.AgendaAdd(title="x", start=dt.date(9999, 12, 31))
    with pytest.raises(ValidationError, match=r"at least 0\.001"):
        c.ShoppingAdd(item="x", quantity=0.0004)
