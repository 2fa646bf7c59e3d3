"""Voice sessions on the node: wake arbitration, audio routing, speech back, timeouts.

A satellite claims a session after its wake word; claims that arrive within
``arbitration_ms`` of each other compete and the best score wins, the others are told
to stand down, so one spoken command never runs twice. Audio flows only for the
accepted session; a session that outlives ``session_timeout_s`` is stopped.

Speech that is not part of a turn (announcements, ``appliance.voice.announce``) uses
``sink_for`` and ``watch`` with a session id of its own, and ``wait_idle`` to let a
turn at the same satellite finish first.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from appliance import malloc
from appliance.actions.items import item_key
from appliance.actions.service import ActionService, Request
from appliance.asr.base import AsrError
from appliance.audio import AudioError
from appliance.bus.mqtt import Bus
from appliance.errors import BusError, StoreError
from appliance.intents.handlers import grocery_keys
from appliance.protocol.commands import READ_ONLY_ACTIONS, Command
from appliance.protocol.receipts import ASK, ASK_TIME, PART, Receipt, Source
from appliance.protocol.topics import Topics
from appliance.protocol.voice import (
    AudioEnd,
    Control,
    PlayEnd,
    SatelliteEvent,
    SiteTopics,
    WakeClaim,
    parse_topic,
)
from appliance.voice.answers import (
    Again,
    ask_again,
    corrected_request,
    heard_answer,
    parse_answer,
    question_again,
)
from appliance.voice.settings import VoiceSettings
from appliance.voice.turn import (
    Engines,
    MemoryLike,
    Milestones,
    SpeechSink,
    TurnResult,
    VoiceTurn,
    speak,
)

if TYPE_CHECKING:
    from appliance.asr.verifier import Expect

_LOGGER = logging.getLogger(__name__)
PLAY_CHUNK_BYTES = 4096


@dataclass
class _Session:
    site: str
    claim: WakeClaim
    turn: VoiceTurn
    milestones: Milestones
    task: asyncio.Task[None] | None = None
    played: asyncio.Event = field(default_factory=asyncio.Event)
    answer_turn: VoiceTurn | None = None
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    gone: bool = False
    """The satellite went offline during the session."""
    bad_chunks: int = 0
    """Audio chunks dropped because they were not 16-bit PCM."""


@dataclass
class _Outcome:
    """How a turn ended, for its report: the last receipt and what was said last."""

    receipt: Receipt | None
    reply: str
    answer: str | None = None
    asked_again: Again | None = None
    """Why the question was asked once more (``answers.ask_again``), if it was."""
    corrected: str | None = None
    """The request id of the proposal a no answer corrected ("No, oat milk."), if one
    did: the question was then asked about the correction."""


def _corrected_commands(parsed: Any, proposal: Receipt) -> tuple[Command, ...]:
    """The changes a parse of a corrected request proposes (only ever asked: ``ask``
    and ``negated``), none when it proposes nothing new."""
    commands = tuple(getattr(parsed, "commands", ()) or ())
    asked = getattr(parsed, "ask", False) and getattr(parsed, "negated", False)
    if not asked or not commands or any(not c.changes_state for c in commands):
        return ()
    same = [c.model_dump(mode="json") for c in commands] == proposal.details.get("proposal", [])
    return () if same else commands


def _known_items(commands: Sequence[Command], lang: str, listed: Sequence[str]) -> bool:
    """True if every item ``commands`` name is a grocery the node knows or one of the
    household's (``listed``)."""
    known = grocery_keys(lang) | {item_key(name) for name in listed}
    return all(item_key(str(getattr(c, "item", ""))) in known for c in commands)


@dataclass
class _Answer:
    """What an answer to a question says: ``said`` for the report (``yes``, ``no``,
    ``HH:MM`` or None); whether the proposal ``runs``, completed as ``commands`` (a
    time asked for) or as proposed (None); ``whisper_only``: only Whisper heard a time."""

    said: str | None
    commands: list[dict[str, Any]] | None = None
    runs: bool = False
    whisper_only: bool = False


KnownItems = Callable[[], Awaitable[Sequence[str]]]

_ITEM_ACTIONS = frozenset({"shopping.add", "shopping.set_quantity", "shopping.uncomplete"})
"""Actions after which "make that three" is about their item."""


class VoiceSessions:
    def __init__(
        self,
        *,
        prefix: str,
        bus: Bus,
        engines: Engines | None,
        service: ActionService,
        settings: VoiceSettings,
        default_user: str,
        default_language: str,
        known_items: KnownItems,
        log_transcripts: bool = False,
        expect_published: Callable[[str], asyncio.Future[None]] | None = None,
        take_session: Callable[[str, str], Awaitable[bool]] | None = None,
        shared: bool = False,
    ) -> None:
        """``take_session(session_id, site)``: claim a won session for this node; False
        when another node sharing the database took it. ``shared``: other nodes hear
        the same satellites, so a node that cannot serve a claim (models loading) keeps
        quiet instead of refusing it."""
        self._prefix = prefix
        self._bus = bus
        self._engines_or_none = engines
        self._unavailable: str | None = None
        self._service = service
        self._settings = settings
        self._default_user = default_user
        self._default_language = default_language
        self._known_items = known_items
        self._log_transcripts = log_transcripts
        self._expect_published = expect_published
        self._take_session = take_session
        self._shared = shared
        self._sessions: dict[str, _Session] = {}
        self._opening: set[str] = set()
        self._pending: list[tuple[str, WakeClaim, float]] = []
        self._window: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._watchers: dict[str, asyncio.Queue[SatelliteEvent]] = {}
        self._last_items: dict[str, tuple[str, float]] = {}
        """Site -> the item its last change was about, and when (``time.monotonic``)."""
        self.results: list[TurnResult] = []
        self.memory: MemoryLike | None = None
        """Set once the memory is loaded (``appliance.memory.conversation``)."""

    def ready(self, engines: Engines) -> None:
        """The models are loaded: accept sessions from now on. The idle verifier gets
        the grammar of the list as it is now, before the first turn needs it."""
        self._engines_or_none = engines
        self._spawn(self._prepare_next(self._default_language))

    def unavailable(self, why: str) -> None:
        """The models could not be loaded: refuse sessions, saying why."""
        self._unavailable = why

    @property
    def is_ready(self) -> bool:
        return self._engines_or_none is not None

    @property
    def engines(self) -> Engines | None:
        """The loaded models, or None while they load (or when they failed)."""
        return self._engines_or_none

    @property
    def not_ready_reason(self) -> str:
        """Why there are no engines: ``voice_unavailable: <error>`` or ``loading``."""
        return f"voice_unavailable: {self._unavailable}" if self._unavailable else "loading"

    async def wait_idle(self, site: str) -> None:
        """Until no turn runs at ``site`` (callers bound it with a timeout)."""
        while (session := self._sessions.get(site)) is not None:
            await session.finished.wait()

    def watch(self, session_id: str) -> asyncio.Queue[SatelliteEvent]:
        """The satellite events of a session that is not a turn (``unwatch`` after)."""
        queue: asyncio.Queue[SatelliteEvent] = asyncio.Queue()
        self._watchers[session_id] = queue
        return queue

    def unwatch(self, session_id: str) -> None:
        self._watchers.pop(session_id, None)

    @property
    def _engines(self) -> Engines:
        assert self._engines_or_none is not None  # noqa: S101 - only used inside sessions
        return self._engines_or_none

    # --- incoming -------------------------------------------------------------------
    def handle(self, topic: str, payload: bytes) -> bool:
        """Route one satellite message; False when the topic is not a satellite's."""
        parsed = parse_topic(self._prefix, topic)
        if parsed is None:
            return False
        site, kind, session_id = parsed
        try:
            if kind == "wake":
                self._claim(site, WakeClaim.from_payload(payload))
            elif kind == "audio" and session_id is not None:
                session = self._sessions.get(site)
                if session is not None and session.claim.session_id == session_id:
                    self._feed(session, payload)
            elif kind == "audio_end" and session_id is not None:
                end = AudioEnd.from_payload(payload)
                session = self._sessions.get(site)
                if session is not None and session.claim.session_id == end.session_id:
                    (session.answer_turn or session.turn).end_of_stream()
            elif kind == "event":
                self._event(site, SatelliteEvent.from_payload(payload))
        except ValidationError as err:
            _LOGGER.warning("malformed %s message from %s: %s", kind, site, err.errors()[0]["msg"])
        return True

    def _feed(self, session: _Session, payload: bytes) -> None:
        """One audio chunk into the turn; one that is not 16-bit PCM is dropped (with a
        line in the log), the rest of the stream goes on."""
        try:
            (session.answer_turn or session.turn).feed(payload)
        except AudioError as err:
            session.bad_chunks += 1
            if session.bad_chunks == 1:
                _LOGGER.warning("session %s at %s: audio chunk dropped: %s",
                                session.claim.session_id, session.site, err)  # fmt: skip

    def _claim(self, site: str, claim: WakeClaim) -> None:
        if not self._settings.enabled:
            self._spawn(
                self._control(
                    site,
                    Control(type="reject", session_id=claim.session_id, reason="voice_disabled"),
                )
            )
            return
        if self._engines_or_none is None:
            if self._shared:
                _LOGGER.debug("claim %s at %s left to another node (voice not ready here)",
                              claim.session_id, site)  # fmt: skip
                return
            reason = "voice_unavailable" if self._unavailable else "loading"
            self._spawn(self._reject(site, claim, reason))
            return
        if self._busy(site):
            self._spawn(self._reject(site, claim, "busy"))
            return
        self._pending.append((site, claim, time.perf_counter()))
        if self._window is None:
            self._window = asyncio.create_task(self._arbitrate(), name="wake-arbitration")

    def _busy(self, site: str) -> bool:
        """A session runs at ``site``, or is being opened there."""
        return site in self._sessions or site in self._opening

    async def _arbitrate(self) -> None:
        await asyncio.sleep(self._settings.arbitration_ms / 1000)
        claims, self._pending, self._window = self._pending, [], None
        # One claim per site (the best), then the best site wins. A site that became
        # busy since its claim came (a session opened meanwhile) is refused.
        best_by_site: dict[str, tuple[WakeClaim, float]] = {}
        for site, claim, at in claims:
            if self._busy(site):
                self._spawn(self._reject(site, claim, "busy"))
            elif site not in best_by_site or claim.score > best_by_site[site][0].score:
                best_by_site[site] = (claim, at)
        if not best_by_site:
            return
        # Every node ranks the same claims the same way (score, then site name).
        ranked = sorted(best_by_site.items(), key=lambda kv: (-kv[1][0].score, kv[0]))
        (winner, (claim, at)), losers = ranked[0], ranked[1:]
        # From here until the session is registered, claims from the winner's site
        # are refused: opening it awaits the database.
        self._opening.add(winner)
        try:
            if self._take_session is not None and not await self._take_session(
                claim.session_id, winner
            ):
                _LOGGER.debug("session %s at %s taken by another node", claim.session_id, winner)
                return
            for site, (lost, _) in losers:
                await self._control(
                    site,
                    Control(type="stand_down", session_id=lost.session_id,
                            reason=f"answered by {winner}"),
                )  # fmt: skip
            await self._accept(winner, claim, at)
        finally:
            self._opening.discard(winner)

    async def _accept(self, site: str, claim: WakeClaim, claimed_at: float) -> None:
        milestones = Milestones(start=claimed_at)
        milestones.marks["wake_claim"] = 0.0  # the clock starts at the claim
        lang = claim.lang or self._settings.site_languages.get(site, self._default_language)
        user = self._settings.site_users.get(site, self._default_user)
        try:
            items = await self._known_items()
        except StoreError as err:  # biasing is optional; the turn goes on without it
            _LOGGER.warning("known items unavailable for biasing: %s", err)
            items = ()
        turn = self._new_turn(
            session_id=claim.session_id,
            site=site,
            user=user,
            lang=lang,
            items=items,
            milestones=milestones,
            last_item=self._last_item(site),
        )
        session = _Session(site, claim, turn, milestones)
        self._sessions[site] = session
        await self._control(site, Control(type="accept", session_id=claim.session_id))
        milestones.mark("accepted")
        session.task = asyncio.create_task(self._run(session), name=f"session-{site}")

    def _new_turn(
        self,
        *,
        session_id: str,
        site: str,
        user: str,
        lang: str,
        items: Sequence[str],
        milestones: Milestones,
        expect: Expect = "command",
        last_item: str | None = None,
    ) -> VoiceTurn:
        answer_only = expect != "command"
        turn = VoiceTurn(
            session_id=session_id,
            site=site,
            user=user,
            lang=lang,
            engines=self._engines,
            service=None if answer_only else self._service,
            known_items=items,
            milestones=milestones,
            log_transcripts=self._log_transcripts,
            expect=expect,
            expect_published=self._expect_published,
            memory=None if answer_only else self.memory,
            first_audio_target_ms=self._settings.first_audio_target_ms,
            last_item=last_item,
        )
        turn.start()
        return turn

    def _last_item(self, site: str) -> str | None:
        """The item the site's last change was about, if it came within
        ``voice.refer_back_s``: what "make that three" changes."""
        item, at = self._last_items.get(site, ("", 0.0))
        if not item or time.monotonic() - at > self._settings.refer_back_s:
            return None
        return item

    def _remember(self, site: str, receipts: Sequence[Receipt]) -> None:
        """After a change at ``site``: the one item it added or changed, for "make that
        three" next; none after any other change, or one of several items (a read
        keeps what was there)."""
        changed = [r for r in receipts if r.action and r.action not in READ_ONLY_ACTIONS]
        if not changed:
            return
        about = [
            item.name
            for r in changed
            if r.action in _ITEM_ACTIONS and r.status in ("success", "no_change")
            for item in r.items
        ]
        if len(about) == 1 and len(changed) == 1:
            self._last_items[site] = (about[0], time.monotonic())
        else:
            self._last_items.pop(site, None)

    def _event(self, site: str, event: SatelliteEvent) -> None:
        watcher = self._watchers.get(event.session_id or "")
        if watcher is not None:
            watcher.put_nowait(event)
            return
        session = self._sessions.get(site)
        if session is None or (event.session_id and event.session_id != session.claim.session_id):
            return
        if event.type == "played":
            session.milestones.mark("playback_finished")
            session.played.set()
        elif event.type == "stop" and session.task is not None:
            session.task.cancel()

    # --- the session ---------------------------------------------------------------
    async def _heartbeat(self, site: str, session_id: str) -> None:
        """Tell the satellite this node is still on its session, until cancelled."""
        while True:
            await asyncio.sleep(self._settings.heartbeat_s)
            await self._control(site, Control(type="working", session_id=session_id))

    async def _run(self, session: _Session) -> None:
        site, sid = session.site, session.claim.session_id
        result: TurnResult | None = None
        beat = asyncio.create_task(self._heartbeat(site, sid), name=f"heartbeat-{site}")
        try:
            async with asyncio.timeout(self._settings.session_timeout_s):
                result = await session.turn.run(self._sink(session))
                self.results.append(result)
                if result.decision == "act":
                    self._remember(site, result.receipts)
                outcome = _Outcome(result.receipts[0] if result.receipts else None, result.speech)
                if result.speech:  # the turn ends when the satellite has played it
                    await self._wait_played(session)
                if result.decision == "confirm" and result.receipts:
                    outcome = await self._confirm(session, result)
                await session.turn.published()
            beat.cancel()  # no "working" after the session's last word
            await self._control(site, Control(type="end", session_id=sid))
            if result is not None:
                await self._report(session, result, outcome)
        except TimeoutError:
            beat.cancel()
            _LOGGER.warning("session %s at %s timed out", sid, site)
            await self._control(site, Control(type="stop", session_id=sid, reason="timeout"))
        except asyncio.CancelledError:
            beat.cancel()
            await self._control(site, Control(type="stop", session_id=sid, reason="stopped"))
        finally:
            beat.cancel()
            if self._sessions.get(site) is session:
                del self._sessions[site]
            session.finished.set()
            await session.turn.close()
            if session.answer_turn is not None:
                await session.answer_turn.close()
            self._spawn(self._prepare_next(session.turn.lang))

    async def _prepare_next(self, lang: str) -> None:
        """Between turns: ready the verifier grammar for the list as it is now, and
        give the turn's freed buffers back to the system."""
        loop = asyncio.get_running_loop()
        prepare = self._engines.prepare_verifier
        try:
            if prepare is not None:
                items = await self._known_items()
                await loop.run_in_executor(self._engines.executor, prepare, lang, items)
        except (StoreError, AsrError) as err:
            _LOGGER.warning("verifier grammar not prepared: %s", err)
        if not self._sessions:
            await loop.run_in_executor(self._engines.executor, malloc.trim)

    async def _report(self, session: _Session, result: TurnResult, outcome: _Outcome) -> None:
        """The turn's decision, outcome and milestones: in the log and on the
        diagnostics topic (docs/mqtt-api.md, "Voice")."""
        marks = dict(session.milestones.marks)
        _LOGGER.info(
            "turn %s at %s: %s; milestones (ms) %s",
            session.claim.session_id,
            session.site,
            result.decision,
            " ".join(f"{k}={v:.0f}" for k, v in marks.items()),
        )
        report = {
            "session_id": session.claim.session_id,
            "site": session.site,
            "decision": result.decision,
            "reason": result.gate.reason if result.gate else None,
            "request_id": result.receipts[0].request_id if result.receipts else None,
            "transcripts": result.transcripts,
            "speech": result.speech,
            "receipt": _summary(outcome.receipt),
            "reply": outcome.reply,
            "answer": outcome.answer,
            "asked_again": outcome.asked_again,
            "corrected": outcome.corrected,
            "milestones_ms": marks,
        }
        topic = Topics(self._prefix).voice_turn(session.site)
        await self._publish(topic, json.dumps(report).encode(), qos=0)

    async def _confirm(self, session: _Session, result: TurnResult) -> _Outcome:
        """Hear the answer to the turn's question (a yes/no, or the time asked for)
        through both engines, then run or drop what it proposed. The question is asked
        once more when the answer asks for it ("what?") or only Whisper heard one
        (``voice.ask_again``)."""
        proposal, lang = result.receipts[0], session.turn.lang
        expect: Expect = "time" if proposal.details.get(ASK) == ASK_TIME else "answer"
        heard = await self._hear_answer(session, expect)
        answer = self._read_answer(session, proposal, heard)
        asked, why = result.speech, None
        if not answer.runs and heard is not None:
            why = self._ask_again(session, heard, answer)
        if why is not None:
            _LOGGER.info("proposal %s: asking again (%s)", proposal.request_id, why)
            again = question_again(result.speech, why, lang)
            session.played.clear()
            asked = await speak(self._engines, [], lang, self._sink(session), fallback=again)
            await self._wait_played(session)
            heard = await self._hear_answer(session, expect)
            answer = self._read_answer(session, proposal, heard)
        corrected = None
        if not answer.runs and expect == "answer" and heard is not None:
            correction = await self._correction(session, result, proposal, heard)
            if correction is not None:  # "No, oat milk.": asked about the oat milk
                corrected, proposal = proposal.request_id, correction
                session.played.clear()
                asked = await speak(self._engines, [proposal], lang, self._sink(session))
                await self._wait_played(session)
                heard = await self._hear_answer(session, expect)
                answer = self._read_answer(session, proposal, heard)
        if not answer.runs:
            _LOGGER.info("proposal %s dropped (%s)", proposal.request_id,
                         answer.said or "no answer heard by both engines")  # fmt: skip
            return _Outcome(proposal, asked, answer.said, why, corrected)
        receipt, reply = await self._run_proposal(session, proposal, answer.commands)
        return _Outcome(receipt or proposal, reply, answer.said, why, corrected)

    async def _correction(
        self, session: _Session, result: TurnResult, proposal: Receipt, heard: TurnResult
    ) -> Receipt | None:
        """The proposal a no answer corrected ("Did you want to add milk?" "No, oat
        milk."), recorded as a question of its own (``needs_confirmation``, its details
        naming the proposal it ``corrects``); None when the answer corrects nothing.

        Only Whisper hears the correction (the verifier's grammar then has only yes and
        no): what it proposes is only ever asked about, and runs on a yes from both."""
        lang = session.turn.lang
        asked = result.transcripts["whisper"]
        said = corrected_request(asked, heard.transcripts["whisper"], lang)
        if said is None or session.answer_turn is None:
            return None
        parse = self._engines.parse(lang, None)
        commands = _corrected_commands(parse(said), proposal)
        if not (commands and _known_items(commands, lang, session.turn.known_items)):
            # Heard as an answer (Whisper's hints: yes, no...), "No, oat milk." was "no
            # hope milk": what was meant is read again with the items' words
            try:
                again = corrected_request(asked, await session.answer_turn.reread(), lang)
            except AsrError as err:  # the first reading stands
                _LOGGER.warning("answer not read again: %s", err)
                again = None
            commands = (_corrected_commands(parse(again), proposal) if again else ()) or commands
        if not commands:
            return None
        source = Source(kind="voice", site=session.site, user=session.turn.user)
        details = {
            "transcripts": heard.transcripts,
            "decision": "confirm",
            "gate_reason": "corrected_by_answer",
            "corrects": proposal.request_id,
        }
        request = Request.proposing(f"{proposal.request_id}-corrected", source, commands, details)
        _LOGGER.info("proposal %s corrected by its answer", proposal.request_id)
        (done,) = await self._service.execute_batch([request])
        return done.receipt

    async def _hear_answer(self, session: _Session, expect: Expect) -> TurnResult | None:
        """Open the satellite's microphone again and hear its answer (None: none came
        within ``confirm_timeout_s``)."""
        session.played.clear()
        if session.answer_turn is not None:
            await session.answer_turn.close()
        answer_turn = self._new_turn(
            session_id=session.claim.session_id,
            site=session.site,
            user=session.turn.user,
            lang=session.turn.lang,
            items=session.turn.known_items,
            milestones=session.milestones,
            expect=expect,
        )
        session.answer_turn = answer_turn
        await self._control(
            session.site, Control(type="listen", session_id=session.claim.session_id)
        )
        try:
            async with asyncio.timeout(self._settings.confirm_timeout_s):
                return await answer_turn.run(_silent)
        except TimeoutError:
            return None

    def _read_answer(
        self, session: _Session, proposal: Receipt, heard: TurnResult | None
    ) -> _Answer:
        """What the answer turn ``heard`` says of ``proposal``: a yes from both engines
        runs it; the same time of day from both completes an entry asked "what
        time...?" (the part of the day said reads the hour), which then runs; a no
        from either, silence, or anything else drops it."""
        turn = session.answer_turn
        if heard is None or turn is None:
            return _Answer(None)
        lang, transcripts = session.turn.lang, heard.transcripts
        if proposal.details.get(ASK) != ASK_TIME:
            said = heard_answer(transcripts, lang, have_verifier=turn.has_verifier)
            return _Answer(said, runs=said == "yes")
        texts = [transcripts["whisper"], *([transcripts["verifier"]] if turn.has_verifier else [])]
        raw = proposal.details.get("proposal", [])
        if parse_answer(texts[0], lang) == "no":
            return _Answer("no")
        if len(raw) != 1 or self._engines.answered_time is None:
            return _Answer(None)
        key = "new_start" if "new_start" in raw[0] else "start"  # a move, an entry
        day = dt.date.fromisoformat(str(raw[0].get(key, ""))[:10])
        part = proposal.details.get(PART)
        starts = [self._engines.answered_time(text, lang, day, part) for text in texts]
        said_no = any(parse_answer(text, lang) == "no" for text in texts[1:])
        if said_no or starts[0] is None or len(set(starts)) != 1:
            # the verifier's no, or another time, against a time Whisper heard: unsure
            return _Answer("no" if said_no else None, whisper_only=starts[0] is not None)
        start = starts[0]
        return _Answer(start.strftime("%H:%M"), [{**raw[0], key: start.isoformat()}], runs=True)

    def _ask_again(self, session: _Session, heard: TurnResult, answer: _Answer) -> Again | None:
        """Why the question is asked once more (``answers.ask_again``; for "what
        time...?", a time only Whisper heard: ``unsure_time``); None when it is not:
        not allowed, the satellite gone, or the answer stands as heard."""
        turn = session.answer_turn
        if turn is None or session.gone or not self._settings.ask_again:
            return None
        lang = session.turn.lang
        why = ask_again(heard.transcripts, lang, have_verifier=turn.has_verifier)
        return "unsure_time" if answer.whisper_only and why != "repeat" else why

    async def _run_proposal(
        self,
        session: _Session,
        proposal: Receipt,
        commands_json: Sequence[Mapping[str, Any]] | None = None,
    ) -> tuple[Receipt | None, str]:
        """Run what ``proposal`` proposed (``commands_json``: that, completed)."""
        from appliance.protocol.commands import parse_command

        raw = proposal.details.get("proposal", []) if commands_json is None else commands_json
        commands = [parse_command(dict(c)) for c in raw]
        source = Source(kind="voice", site=session.site, user=session.turn.user)
        requests = [
            Request(
                f"{proposal.request_id}-yes" + (f".{i}" if i > 1 else ""),
                source,
                command=c,
                details={"confirmed": proposal.request_id},
            )
            for i, c in enumerate(commands, start=1)
        ]
        results = await self._service.execute_batch(requests)
        receipts = [r.receipt for r in results]
        self._remember(session.site, receipts)
        reply = await speak(self._engines, receipts, session.turn.lang, self._sink(session))
        if reply:
            await self._wait_played(session)
        return (receipts[0] if receipts else None), reply

    def site_offline(self, site: str) -> None:
        """The satellite at ``site`` went offline (its last will). Before the end of
        speech the turn is dropped: nothing half-heard may act. After it, what was
        said in full goes on (its receipt is published), but nobody waits for a
        playback or an answer that cannot come."""
        session = self._sessions.get(site)
        if session is None or session.task is None:
            return
        session.gone = True
        session.played.set()
        if not session.turn.speech_ended.is_set():
            _LOGGER.warning("satellite %s went offline mid-turn; turn %s dropped",
                            site, session.claim.session_id)  # fmt: skip
            session.task.cancel()
        else:
            _LOGGER.warning("satellite %s went offline after speaking; turn %s finishes "
                            "without it", site, session.claim.session_id)  # fmt: skip
            if session.answer_turn is not None:
                session.answer_turn.end_of_stream()

    async def _wait_played(self, session: _Session) -> None:
        if session.gone:
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self._settings.playback_timeout_s):
                await session.played.wait()

    # --- outgoing -------------------------------------------------------------------
    def _sink(self, session: _Session) -> SpeechSink:
        def first() -> None:
            session.milestones.mark("first_speech_audio_sent")

        return self.sink_for(session.site, session.claim.session_id, first)

    def sink_for(
        self, site: str, sid: str, on_first_chunk: Callable[[], None] | None = None
    ) -> SpeechSink:
        """Speech to ``site`` in session ``sid``: ``speak`` control, PCM, play end."""
        topics = SiteTopics(self._prefix, site)

        async def send(text: str, rate: int, chunks: AsyncIterator[bytes]) -> None:
            await self._control(
                site,
                Control(type="speak", session_id=sid, rate=rate, width=2, channels=1, text=text),
            )
            count = 0
            async for pcm in chunks:
                for start in range(0, len(pcm), PLAY_CHUNK_BYTES):
                    chunk = pcm[start : start + PLAY_CHUNK_BYTES]
                    await self._publish(topics.play(sid), chunk, qos=0)
                    if count == 0 and on_first_chunk is not None:
                        on_first_chunk()
                    count += 1
            end = PlayEnd(session_id=sid, chunks=count)
            await self._publish(topics.play_end(sid), end.to_payload(), qos=1)

        return send

    async def control(self, site: str, control: Control) -> None:
        """Send one control message to ``site`` (a failure is logged, not raised)."""
        await self._control(site, control)

    async def _control(self, site: str, control: Control) -> None:
        await self._publish(SiteTopics(self._prefix, site).control, control.to_payload(), qos=1)

    async def _publish(self, topic: str, payload: bytes, qos: int) -> None:
        try:
            await self._bus.publish(topic, payload, qos=qos)
        except BusError as err:
            _LOGGER.warning("voice message to %s not sent: %s", topic, err)

    async def _reject(self, site: str, claim: WakeClaim, reason: str) -> None:
        await self._control(
            site, Control(type="reject", session_id=claim.session_id, reason=reason)
        )

    def _spawn(self, coro: Awaitable[None]) -> None:
        task: asyncio.Task[None] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        for session in list(self._sessions.values()):
            if session.task is not None:
                session.task.cancel()
        tasks = [s.task for s in self._sessions.values() if s.task] + list(self._tasks)
        if self._window is not None:
            self._window.cancel()
            tasks.append(self._window)
        await asyncio.gather(*tasks, return_exceptions=True)


def _summary(receipt: Receipt | None) -> dict[str, str | None] | None:
    """What the diagnostics report (and the satellite's "last receipt") shows of it."""
    if receipt is None:
        return None
    return {
        "request_id": receipt.request_id,
        "action": receipt.action,
        "status": receipt.status,
        "reason": receipt.reason,
    }


async def _silent(text: str, rate: int, chunks: AsyncIterator[bytes]) -> None:
    """An answer turn says nothing itself."""
    async for _ in chunks:
        pass
