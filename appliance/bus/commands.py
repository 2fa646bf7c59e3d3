"""MQTT messages to requests: validation, and a reason for every rejection.

A message that cannot be used still becomes a request: a rejected one, whose receipt
names the problem. Nothing here touches the database.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import ValidationError

from appliance.actions.service import Request, new_request_id
from appliance.protocol.commands import ACTIONS, ShoppingAdd, ShoppingClearCompleted, parse_command
from appliance.protocol.receipts import Source, SourceKind
from appliance.protocol.topics import Topics

_LOGGER = logging.getLogger(__name__)

REQUEST_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
USER = re.compile(r"^[\w.@-]{1,64}$", re.UNICODE)
_META = ("request_id", "user", "site")


class TextParser(Protocol):
    """What the decoder needs of the intent parser."""

    def parse(self, text: str, *, lang: str = ..., now: dt.datetime | None = ...) -> Any: ...


ANNOUNCEMENT_MAX_CHARS = 500
"""Longest announcement spoken (about half a minute of speech); longer ones are refused."""
_SITE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # ``SiteName`` of the satellite protocol


@dataclass(frozen=True)
class Announcement:
    """Text for the satellites to speak: at ``site``, or everywhere when None."""

    text: str
    site: str | None = None


class CommandDecoder:
    """Turns one MQTT message into the requests it asks for."""

    def __init__(
        self,
        topics: Topics,
        *,
        default_user: str,
        language: str,
        max_payload_bytes: int,
        parser: TextParser | None,
    ) -> None:
        self._topics = topics
        self._default_user = default_user
        self._language = language
        self._max = max_payload_bytes
        self._parser = parser
        prefix = topics.prefix
        self._cmd_prefix = f"{prefix}/cmd/"
        self._announce_prefix = f"{topics.ha_announce}/"

    def decode(self, topic: str, payload: bytes) -> list[Request] | Announcement | None:
        """Requests for a command topic, an announcement, or None for other topics."""
        if topic == self._topics.ha_add_item:
            return self._ha_add(payload)
        if topic == self._topics.ha_clear_completed:
            return [self._request({}, "ha", ShoppingClearCompleted())]
        if topic == self._topics.ha_announce:
            return self._announcement(payload, None)
        if topic.startswith(self._announce_prefix):
            return self._announcement(payload, topic[len(self._announce_prefix) :])
        if not topic.startswith(self._cmd_prefix):
            return None
        name = topic[len(self._cmd_prefix) :]
        if len(payload) > self._max:
            return [
                self._reject(
                    {}, f"payload_too_large: {len(payload)} bytes, limit {self._max}", name
                )
            ]
        try:
            data = json.loads(payload) if payload.strip() else {}
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            return [self._reject({}, f"invalid_json: {err}", name)]
        if not isinstance(data, dict):
            return [self._reject({}, "invalid_payload: a JSON object is expected", name)]
        problem = self._check_meta(data)
        if problem:
            return [self._reject({}, problem, name)]
        if name == "text":
            return self._text(data)
        action = name.replace("/", ".")
        if action not in ACTIONS:
            return [self._reject(data, f"unknown_action: {name}", None)]
        fields = {k: v for k, v in data.items() if k not in _META}
        try:
            command = parse_command({**fields, "action": action})
        except ValidationError as err:
            return [self._reject(data, "invalid_payload: " + _describe(err), action)]
        return [self._request(data, "mqtt", command)]

    # --- topic handlers -----------------------------------------------------------
    def _ha_add(self, payload: bytes) -> list[Request]:
        try:
            text = payload.decode("utf-8").strip()
        except UnicodeDecodeError:
            return [self._reject({}, "invalid_text: not UTF-8", "shopping.add", kind="ha")]
        if not text or len(text) > 120:
            return [
                self._reject({}, "invalid_item: 1 to 120 characters", "shopping.add", kind="ha")
            ]
        command = None
        if self._parser is not None:
            phrase = _ADD_PHRASE.get(self._language, _ADD_PHRASE["en"]).format(text)
            result = self._parser.parse(phrase, lang=self._language)
            if isinstance(getattr(result, "command", None), ShoppingAdd):
                command = result.command
        return [self._request({}, "ha", command or ShoppingAdd(item=text))]

    def _announcement(self, payload: bytes, site: str | None) -> Announcement | None:
        where = site or "every satellite"
        if site is not None and not _SITE.match(site):
            _LOGGER.warning("announcement refused: %r is not a satellite site name", site[:80])
            return None
        if len(payload) > 4 * ANNOUNCEMENT_MAX_CHARS:  # not even decoded
            _LOGGER.warning("announcement for %s refused: %d bytes", where, len(payload))
            return None
        text = " ".join(payload.decode("utf-8", "replace").split())
        if not text:
            _LOGGER.info("empty announcement for %s ignored", where)
            return None
        if len(text) > ANNOUNCEMENT_MAX_CHARS:
            _LOGGER.warning(
                "announcement for %s refused: %d characters, limit %d",
                where,
                len(text),
                ANNOUNCEMENT_MAX_CHARS,
            )
            return None
        return Announcement(text, site)

    def _text(self, data: dict[str, Any]) -> list[Request]:
        text = data.get("text")
        lang = data.get("lang", self._language)
        if not isinstance(text, str) or not text.strip():
            return [
                self._reject(data, "invalid_payload: text: a non-empty string is required", None)
            ]
        if lang not in ("en", "pt", "pt-BR", "pt_BR"):
            return [self._reject(data, f"unsupported_language: {lang}", None)]
        if self._parser is None:
            return [self._reject(data, "text_commands_disabled", None)]
        result = self._parser.parse(text, lang=lang)
        commands = tuple(getattr(result, "commands", ()) or ())
        if not commands and result.command is not None:
            commands = (result.command,)
        if not commands:
            reason = f"not_understood: {result.reason}" if result.reason else "not_understood"
            return [self._reject(data, reason, result.intent, details={"text": text})]
        base = data.get("request_id") or new_request_id()
        requests = []
        for index, command in enumerate(commands, start=1):
            request_id = base if index == 1 else f"{base}.{index}"
            requests.append(
                self._request(
                    {**data, "request_id": request_id}, "mqtt", command, details={"text": text}
                )
            )
        return requests

    # --- helpers ------------------------------------------------------------------
    def _check_meta(self, data: dict[str, Any]) -> str | None:
        rid = data.get("request_id")
        if rid is not None and (not isinstance(rid, str) or not REQUEST_ID.match(rid)):
            return "invalid_request_id: 1-128 characters of A-Z a-z 0-9 _ . : -"
        user = data.get("user")
        if user is not None and (not isinstance(user, str) or not USER.match(user)):
            return "invalid_user"
        site = data.get("site")
        if site is not None and (not isinstance(site, str) or len(site) > 64):
            return "invalid_site"
        return None

    def _source(self, data: dict[str, Any], kind: SourceKind) -> Source:
        user = data.get("user")
        site = data.get("site")
        return Source(
            kind=kind,
            user=user if isinstance(user, str) and USER.match(user) else self._default_user,
            site=site if isinstance(site, str) and len(site) <= 64 else None,
        )

    def _request_id(self, data: dict[str, Any]) -> str:
        rid = data.get("request_id")
        return rid if isinstance(rid, str) and REQUEST_ID.match(rid) else new_request_id()

    def _request(
        self,
        data: dict[str, Any],
        kind: SourceKind,
        command: Any,
        details: dict[str, Any] | None = None,
    ) -> Request:
        return Request(
            request_id=self._request_id(data),
            source=self._source(data, kind),
            command=command,
            details=details or {},
        )

    def _reject(
        self,
        data: dict[str, Any],
        reason: str,
        action: str | None,
        *,
        kind: SourceKind = "mqtt",
        details: dict[str, Any] | None = None,
    ) -> Request:
        _LOGGER.info("rejected command (%s): %s", action or "?", reason)
        return Request(
            request_id=self._request_id(data),
            source=self._source(data, kind),
            rejection=reason[:300],
            action=action if action in ACTIONS else None,
            details=details or {},
        )


_ADD_PHRASE = {"en": "add {} to the shopping list", "pt": "adicione {} à lista de compras"}


_TYPE_TAGS = frozenset(
    {"datetime", "date", "float", "int", "str", "bool", "none", "function-after"}
)


def _describe(err: ValidationError) -> str:
    """``field: problem`` for the first problem of each field, without union noise."""
    seen: dict[str, str] = {}
    for error in err.errors():
        path = [str(p) for p in error["loc"]]
        if path and path[0] in ACTIONS:
            path = path[1:]
        where = ".".join(p for p in path if p not in _TYPE_TAGS and not p.startswith("function-"))
        seen.setdefault(where or "payload", error["msg"])
    return "; ".join(f"{where}: {msg}" for where, msg in list(seen.items())[:3])
