"""MQTT messages to requests: validation, and a reason for every rejection.

A message that cannot be used still becomes a request: a rejected one, whose receipt
names the problem. Nothing here touches the database.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import logging
import re
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import ValidationError

from appliance.actions.service import Request, new_request_id
from appliance.bus.limits import RateLimiter
from appliance.protocol.commands import ACTIONS, ShoppingAdd, ShoppingClearCompleted, parse_command
from appliance.protocol.receipts import Source, SourceKind
from appliance.protocol.topics import Topics

_LOGGER = logging.getLogger(__name__)

REQUEST_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}\Z")  # \Z: "$" would pass a final newline
USER = re.compile(r"^[\w.@-]{1,64}\Z", re.UNICODE)
_META = ("request_id", "user", "site")
RATE_LIMITED = "rate_limited"
HA_SENDER = "ha"
"""The rate-limit key of every Home Assistant entity topic (``<prefix>/ha/...``)."""


class TextParser(Protocol):
    """What the decoder needs of the intent parser."""

    def parse(self, text: str, *, lang: str = ..., now: dt.datetime | None = ...) -> Any: ...


ANNOUNCEMENT_MAX_CHARS = 500
"""Longest announcement spoken (about half a minute of speech); longer ones are refused."""
_SITE = re.compile(r"^[A-Za-z0-9_-]{1,64}\Z")  # ``SiteName`` of the satellite protocol


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
        limiter: RateLimiter | None = None,
    ) -> None:
        self._topics = topics
        self._limiter = limiter
        self._default_user = default_user
        self._language = language
        self._max = max_payload_bytes
        self._parser = parser
        prefix = topics.prefix
        self._cmd_prefix = f"{prefix}/cmd/"
        self._user_prefix = f"{prefix}/u/"
        self._announce_prefix = f"{topics.ha_announce}/"

    def decode(self, topic: str, payload: bytes) -> list[Request] | Announcement | None:
        """Requests for a command topic, an announcement, or None for other topics."""
        if topic == self._topics.ha_add_item:
            if limited := self._limited(HA_SENDER):
                return [self._reject({}, limited, "shopping.add", kind="ha")]
            return self._ha_add(payload)
        if topic == self._topics.ha_clear_completed:
            if limited := self._limited(HA_SENDER):
                return [self._reject({}, limited, "shopping.clear_completed", kind="ha")]
            return [self._request({}, "ha", ShoppingClearCompleted())]
        if topic == self._topics.ha_announce or topic.startswith(self._announce_prefix):
            if limited := self._limited(HA_SENDER):
                _LOGGER.warning("announcement dropped: %s", limited)
                return None
            site = (
                topic[len(self._announce_prefix) :] if topic != self._topics.ha_announce else None
            )
            return self._announcement(payload, site)
        if topic.startswith(self._cmd_prefix):
            return self._command(topic[len(self._cmd_prefix) :], payload)
        if topic.startswith(self._user_prefix):
            user, marker, name = topic[len(self._user_prefix) :].partition("/cmd/")
            if marker and name and USER.match(user) and "/" not in user:
                return self._command(name, payload, as_user=user)
        return None

    # --- topic handlers -----------------------------------------------------------
    def _command(self, name: str, payload: bytes, *, as_user: str | None = None) -> list[Request]:
        """``<prefix>/cmd/<name>``: a structured command, or free text.

        ``as_user``: it came on ``<prefix>/u/<user>/cmd/<name>``, which only that MQTT
        user may write to (the broker's ACL): it acts for that user and no other, and
        its receipt also goes to ``<prefix>/u/<user>/receipts/<request_id>``.
        """
        action = name.replace("/", ".")  # kept on a rejection when it is one of ACTIONS
        data = self._json_object(payload, action)
        if isinstance(data, Request):
            return [self._for_user(data, as_user)]
        problem = self._check_meta(data) or _unstorable_text(data)
        if problem:
            return [self._for_user(self._reject(data, problem, action), as_user)]
        if as_user is not None:
            claimed = data.get("user")
            if claimed is not None and claimed != as_user:
                forbidden = f"forbidden_user: {as_user} may not act for {claimed}"
                return [self._for_user(self._reject({**data, "user": as_user}, forbidden,
                                                    action), as_user)]  # fmt: skip
            data = {**data, "user": as_user}
            return [self._for_user(r, as_user) for r in self._checked(name, action, data)]
        return self._checked(name, action, data)

    def _for_user(self, request: Request, user: str | None) -> Request:
        if user is None:
            return request
        reply = (self._topics.user_receipt(user, request.request_id),)
        return dataclasses.replace(request, reply_topics=reply)

    def _checked(self, name: str, action: str, data: dict[str, Any]) -> list[Request]:
        if limited := self._limited(self._sender(data)):
            return [self._reject(data, limited, action)]
        if name == "text":
            return self._text(data)
        if action not in ACTIONS:
            return [self._reject(data, f"unknown_action: {name}", None)]
        fields = {k: v for k, v in data.items() if k not in _META}
        try:
            command = parse_command({**fields, "action": action})
        except ValidationError as err:
            return [self._reject(data, "invalid_payload: " + _describe(err), action)]
        return [self._request(data, "mqtt", command)]

    def _json_object(self, payload: bytes, action: str) -> dict[str, Any] | Request:
        """The payload's JSON object, or the rejection saying why there is none."""
        if len(payload) > self._max:
            size = f"payload_too_large: {len(payload)} bytes, limit {self._max}"
            return self._reject({}, size, action)
        try:
            data = json.loads(payload) if payload.strip() else {}
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            return self._reject({}, f"invalid_json: {err}", action)
        except RecursionError:  # "[[[[…": deeper than the interpreter's stack
            return self._reject({}, "invalid_json: nested too deeply", action)
        if not isinstance(data, dict):
            return self._reject({}, "invalid_payload: a JSON object is expected", action)
        return data

    def _ha_add(self, payload: bytes) -> list[Request]:
        try:
            text = payload.decode("utf-8").strip()
        except UnicodeDecodeError:
            return [self._reject({}, "invalid_text: not UTF-8", "shopping.add", kind="ha")]
        if "\x00" in text:
            return [self._reject({}, "invalid_text: NUL character", "shopping.add", kind="ha")]
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
        if getattr(result, "ask", False):
            # the parser only guessed what it means: recorded as a question, not run
            source = self._source(data, "mqtt")
            details = {"text": text, **result.question()}
            return [Request.proposing(self._request_id(data), source, commands, details)]
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
    def _sender(self, data: dict[str, Any]) -> str:
        """The rate-limit key of a command: its user (or the default one), then its
        site when it names one. A user name holds no ``/``, so keys never collide."""
        user = data.get("user") or self._default_user
        site = data.get("site")
        return f"{user}/{site}" if site else str(user)

    def _limited(self, sender: str) -> str | None:
        """The rejection reason when ``sender`` is over its rate limit, else None."""
        if self._limiter is None or self._limiter.allow(sender):
            return None
        rate = self._limiter.rate
        return f"{RATE_LIMITED}: {rate:g} commands per second at most for {sender}"

    def _check_meta(self, data: dict[str, Any]) -> str | None:
        rid = data.get("request_id")
        if rid is not None and (not isinstance(rid, str) or not REQUEST_ID.match(rid)):
            return "invalid_request_id: 1-128 characters of A-Z a-z 0-9 _ . : -"
        user = data.get("user")
        if user is not None and (not isinstance(user, str) or not USER.match(user)):
            return "invalid_user"
        site = data.get("site")
        if site is not None and not _valid_site(site):
            return "invalid_site"
        return None

    def _source(self, data: dict[str, Any], kind: SourceKind) -> Source:
        user = data.get("user")
        site = data.get("site")
        return Source(
            kind=kind,
            user=user if isinstance(user, str) and USER.match(user) else self._default_user,
            site=site if _valid_site(site) else None,
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
            # Over the limit now, not forever: the same request id may come back.
            transient=reason.startswith(RATE_LIMITED),
        )


_ADD_PHRASE = {"en": "add {} to the shopping list", "pt": "adicione {} à lista de compras"}


_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
"""NUL, or half of a surrogate pair (a lone ``\\ud800`` escape): JSON allows them,
PostgreSQL text and UTF-8 do not."""


def _valid_site(site: object) -> bool:
    return isinstance(site, str) and len(site) <= 64 and _UNSTORABLE.search(site) is None


def _unstorable_text(data: dict[str, Any]) -> str | None:
    """The rejection of a payload with a string (or key) that cannot be stored, else
    None. Iterative: a payload may nest as deep as ``json.loads`` allows."""
    stack: list[tuple[str, Any]] = [("payload", data)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            if _UNSTORABLE.search(value):
                return f"invalid_payload: {where[:64]}: NUL or unpaired surrogate in text"
        elif isinstance(value, dict):
            for key, item in value.items():
                name = key if _UNSTORABLE.search(key) is None else "payload"
                stack.append((name, key))
                stack.append((name if where == "payload" else where, item))
        elif isinstance(value, list):
            stack.extend((where, item) for item in value)
    return None


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
