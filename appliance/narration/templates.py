"""Deterministic sentences for every receipt, in English and Brazilian Portuguese.

One table maps (action, status, reason, variant) to a sentence pattern per language;
``"*"`` matches anything. The most specific row wins (see ``_candidates``). Slots such
as ``{items}`` or ``{when}`` are filled from the receipt (``_slots``), so the sentence
never says more than the receipt does.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from typing import NamedTuple

from appliance.narration.lang import normalize_lang
from appliance.narration.phrases import (
    capitalize,
    count_word,
    event_name,
    is_plural,
    item_phrase,
    join,
    pt_agree,
    pt_gender,
    the,
)
from appliance.narration.view import ReceiptView, proposed_either_half, proposed_time, view
from appliance.narration.when import (
    Moment,
    bare_time_words,
    default_now,
    parse_moment,
    part_of_day,
    time_words,
    when,
)
from appliance.protocol.receipts import ASK, ASK_TIME, PART, Receipt, ReceiptEvent, ReceiptItem

_LOGGER = logging.getLogger(__name__)

ITEM_CAP = 5
"""Items named in a list sentence; the rest are "and N more"."""
EVENT_CAP = 4
"""Events named in a list sentence."""

ANY = "*"


class T(NamedTuple):
    en: str
    pt: str


Key = tuple[str, str, str, str]  # action, status, reason, variant

# fmt: off
TEMPLATES: dict[Key, T] = {
    # --- shopping.add ---------------------------------------------------------
    ("shopping.add", "success", ANY, ANY): T(
        "I added {items} to the shopping list.",
        "Adicionei {items} à lista de compras."),
    ("shopping.add", "success", ANY, "merged"): T(
        "The shopping list now has {items}.",
        "A lista de compras agora tem {items}."),
    ("shopping.add", "success", ANY, "reopened"): T(
        "I put {items} back on the shopping list.",
        "Coloquei {items} de volta na lista de compras."),
    ("shopping.add", "no_change", "already_on_list", ANY): T(
        "{names} {is} already on the list.",
        "{names} já {esta} na lista."),
    ("shopping.add", "no_change", "unit_conflict", ANY): T(
        "The list already has {items}; I didn't change it.",
        "A lista já tem {items}; não mudei nada."),
    ("shopping.add", "needs_confirmation", ANY, ANY): T(
        "Did you want to add {items}?",
        "Você quis adicionar {items}?"),
    # "add two liters", "add a dozen": of what? (missing_slot:item)
    ("shopping.add", "rejected", "missing_slot", ANY): T(
        "I didn't catch what to add; nothing was added.",
        "Não entendi o que adicionar; nada foi adicionado."),
    ("shopping.add", "rejected", ANY, ANY): T(
        "Sorry, I couldn't add that to the shopping list.",
        "Desculpe, não consegui adicionar isso à lista de compras."),
    # --- shopping.set_quantity ------------------------------------------------
    ("shopping.set_quantity", "success", ANY, ANY): T(
        "The shopping list now has {items}.",
        "A lista de compras agora tem {items}."),
    ("shopping.set_quantity", "no_change", "same_quantity", ANY): T(
        "The list already has {items}.",
        "A lista já tem {items}."),
    ("shopping.set_quantity", "needs_confirmation", ANY, ANY): T(
        "Did you want to make it {items}?",
        "Você quis mudar para {items}?"),
    # "make that three" with no item said or added just before (missing_slot:item)
    ("shopping.set_quantity", "rejected", "missing_slot", ANY): T(
        "I didn't catch which item to change; nothing was changed.",
        "Não entendi qual item mudar; nada foi mudado."),
    ("shopping.set_quantity", "rejected", ANY, ANY): T(
        "Sorry, I couldn't change that on the shopping list.",
        "Desculpe, não consegui mudar isso na lista de compras."),
    # --- shopping.remove ------------------------------------------------------
    # "take two apples off the list": what is left of it
    ("shopping.remove", "success", ANY, "reduced"): T(
        "The shopping list now has {items}.",
        "A lista de compras agora tem {items}."),
    ("shopping.remove", "success", ANY, ANY): T(
        "I removed {names} from the shopping list.",
        "Tirei {names} da lista de compras."),
    ("shopping.remove", "needs_confirmation", ANY, ANY): T(
        "Did you want to remove {items} from the list?",
        "Você quis tirar {items} da lista?"),
    (ANY, "not_found", "not_on_list", ANY): T(
        "{names} {isnt} on the list.",
        "{names} não {esta} na lista."),
    # --- shopping.complete / uncomplete --------------------------------------
    # "I bought two apples" of the six listed: what is left to buy
    ("shopping.complete", "success", ANY, "reduced"): T(
        "The shopping list still has {items}.",
        "A lista de compras ainda tem {items}."),
    ("shopping.complete", "success", ANY, ANY): T(
        "I checked off {names}.",
        "Marquei {the_names} como {bought}."),
    ("shopping.complete", "no_change", "already_completed", ANY): T(
        "{names} {is} already checked off.",
        "{the_names} já {esta} {marked} como {bought}."),
    ("shopping.complete", "needs_confirmation", ANY, ANY): T(
        "Did you want to check off {items}?",
        "Você quis marcar {the_items} como {bought}?"),
    ("shopping.uncomplete", "success", ANY, ANY): T(
        "I put {names} back on the list.",
        "Coloquei {the_names} de volta na lista."),
    ("shopping.uncomplete", "no_change", "not_completed", ANY): T(
        "{names} {isnt} checked off.",
        "{the_names} não {esta} {marked} como {bought}."),
    ("shopping.uncomplete", "needs_confirmation", ANY, ANY): T(
        "Did you want to put {names} back on the list?",
        "Você quis colocar {the_names} de volta na lista?"),
    # --- shopping.list / clear_completed -------------------------------------
    ("shopping.list", "success", ANY, ANY): T(
        "You have {count_items} on the list: {list_names}.",
        "Você tem {count_items} na lista: {list_names}."),
    ("shopping.list", "success", ANY, "item"): T(
        "Yes, the list has {items}.",
        "Sim, a lista tem {items}."),
    ("shopping.list", "success", ANY, "item_done"): T(
        "{names} {is} on the list, checked off.",
        "{the_names} {esta} na lista, {marked} como {bought}."),
    ("shopping.list", "success", ANY, "empty"): T(
        "Your shopping list is empty.",
        "Sua lista de compras está vazia."),
    ("shopping.list", "needs_confirmation", ANY, ANY): T(
        "Did you want to hear your shopping list?",
        "Você quis ouvir sua lista de compras?"),
    ("shopping.clear_completed", "success", ANY, ANY): T(
        "I removed {count_checked} from the list: {list_names}.",
        "Tirei {count_checked} da lista: {list_names}."),
    ("shopping.clear_completed", "no_change", "nothing_completed", ANY): T(
        "There's nothing checked off to clear.",
        "Não há nada marcado como comprado para limpar."),
    ("shopping.clear_completed", "needs_confirmation", ANY, ANY): T(
        "Did you want to clear the checked-off items?",
        "Você quis limpar os itens comprados?"),
    ("shopping.clear", "success", ANY, ANY): T(
        "I cleared the shopping list: {list_names}.",
        "Limpei a lista de compras: {list_names}."),
    ("shopping.clear", "no_change", "list_empty", ANY): T(
        "The shopping list is already empty.",
        "A lista de compras já está vazia."),
    ("shopping.clear", "needs_confirmation", ANY, ANY): T(
        "Did you want to clear the whole shopping list?",
        "Você quer limpar a lista de compras inteira?"),
    # --- agenda.add -----------------------------------------------------------
    ("agenda.add", "success", ANY, ANY): T(
        "I added {event} to your agenda for {to_when}.",
        "Anotei {event} na agenda para {to_when}."),
    ("agenda.add", "success", ANY, "past"): T(
        "I added {event} to your agenda for {to_when}, a date in the past.",
        "Anotei {event} na agenda para {to_when}, uma data no passado."),
    ("agenda.add", "rejected", "end_before_start", ANY): T(
        "Sorry, that event would end before it starts; nothing was added.",
        "Desculpe, esse compromisso terminaria antes de começar; nada foi anotado."),
    ("agenda.add", "needs_confirmation", ANY, ANY): T(
        "Did you want to add {event} to your agenda {when}?",
        "Você quis anotar {event} na agenda {when}?"),
    # "add dentist tomorrow morning": a day and maybe a part of it, no time
    ("agenda.add", "needs_confirmation", ANY, "time"): T(
        "What time should I add {event} {day_part}?",
        "A que horas eu anoto {event} {day_part}?"),
    # --- agenda.list / next ---------------------------------------------------
    ("agenda.list", "success", ANY, ANY): T(
        "You have {count_events} {range}: {events_list}.",
        "Você tem {count_events} {range}: {events_list}."),
    ("agenda.list", "success", ANY, "empty"): T(
        "You have nothing on your agenda {range}.",
        "Você não tem nada na agenda {range}."),
    ("agenda.list", "needs_confirmation", ANY, ANY): T(
        "Did you want to hear your agenda?",
        "Você quis ouvir sua agenda?"),
    ("agenda.next", "success", ANY, ANY): T(
        "Your next appointment is {event} {when}.",
        "Seu próximo compromisso é {event} {when}."),
    # "when is my dentist appointment": the entry asked for by its title
    ("agenda.next", "success", ANY, "titled"): T(
        "{event} is {when}.",
        "{event} é {when}."),
    ("agenda.next", "not_found", ANY, ANY): T(
        "You have no upcoming appointments.",
        "Você não tem nenhum compromisso marcado."),
    ("agenda.next", "needs_confirmation", ANY, ANY): T(
        "Did you want to hear your next appointment?",
        "Você quis saber seu próximo compromisso?"),
    # --- agenda.remove / move -------------------------------------------------
    ("agenda.remove", "success", ANY, ANY): T(
        "I removed {event} {when} from your agenda.",
        "Tirei da agenda {event} {when}."),
    ("agenda.remove", "needs_confirmation", ANY, ANY): T(
        "Did you want to remove {event} {when} from your agenda?",
        "Você quis tirar {event} {when} da agenda?"),
    ("agenda.move", "success", ANY, ANY): T(
        "I moved {event} to {to_when}.",
        "Mudei {event} para {to_when}."),
    ("agenda.move", "no_change", "same_time", ANY): T(
        "{event} is already {when}; I didn't change it.",
        "{event} já está {event_marked} para {to_when}; não mudei nada."),
    # "push the holiday back an hour": an all-day entry moves by whole days
    ("agenda.move", "rejected", "all_day_shift", ANY): T(
        "{event} {when} takes the whole day; nothing was changed. Say the day to move it to.",
        "{event} {when} ocupa o dia todo; nada foi alterado. Diga para que dia mudar."),
    ("agenda.move", "needs_confirmation", ANY, "time"): T(
        "What time {day_part} should I move {event} to?",
        "Para que horas {day_part} eu mudo {event}?"),
    ("agenda.move", "needs_confirmation", ANY, ANY): T(
        "Did you want to move {event} to {to_when}?",
        "Você quis mudar {event} para {to_when}?"),
    (ANY, "not_found", "no_matching_event", ANY): T(
        "I couldn't find {that_event} on your agenda.",
        "Não encontrei {that_event} na agenda."),
    (ANY, "rejected", "ambiguous", "same_title"): T(
        "There are {n_events} events called {title}; which day?",
        "Há {n_events} compromissos chamados {title}; de qual dia?"),
    (ANY, "rejected", "ambiguous", ANY): T(
        "There are {n_events} matching events: {events_list}; which one?",
        "Há {n_events} compromissos parecidos: {events_list}; qual deles?"),
    # --- memory ---------------------------------------------------------------
    ("memory.add", "success", ANY, "likes"): T(
        "I'll remember that you like {names}.",
        "Vou lembrar que você gosta de {names}."),
    ("memory.add", "success", ANY, "dislikes"): T(
        "I'll remember that you don't like {names}.",
        "Vou lembrar que você não gosta de {names}."),
    ("memory.add", "success", ANY, "allergic"): T(
        "I'll remember that you're allergic to {names}.",
        "Vou lembrar que você tem alergia a {names}."),
    ("memory.add", "success", ANY, ANY): T(
        "I'll remember that.",
        "Vou lembrar disso."),
    ("memory.add", "no_change", "already_known", ANY): T(
        "I already knew that.",
        "Eu já sabia disso."),
    ("memory.add", "needs_confirmation", ANY, "likes"): T(
        "Did you want me to remember that you like {names}?",
        "Você quer que eu lembre que você gosta de {names}?"),
    ("memory.add", "needs_confirmation", ANY, "dislikes"): T(
        "Did you want me to remember that you don't like {names}?",
        "Você quer que eu lembre que você não gosta de {names}?"),
    ("memory.add", "needs_confirmation", ANY, "allergic"): T(
        "Did you want me to remember that you're allergic to {names}?",
        "Você quer que eu lembre que você tem alergia a {names}?"),
    ("memory.add", "needs_confirmation", ANY, ANY): T(
        "Did you want me to remember that?",
        "Você quer que eu lembre disso?"),
    ("memory.add", "rejected", ANY, ANY): T(
        "Sorry, I couldn't remember that; nothing was saved.",
        "Desculpe, não consegui guardar isso; nada foi salvo."),
    (ANY, "rejected", "memory_unavailable", ANY): T(
        "Sorry, my memory isn't available right now; nothing was saved.",
        "Desculpe, minha memória não está disponível agora; nada foi salvo."),
    ("memory.edit", "success", ANY, ANY): T(
        "I updated that memory.",
        "Atualizei essa lembrança."),
    ("memory.delete", "success", ANY, ANY): T(
        "I forgot that memory.",
        "Esqueci essa lembrança."),
    (ANY, "not_found", "no_such_memory", ANY): T(
        "I couldn't find that memory.",
        "Não encontrei essa lembrança."),
    # --- any action -----------------------------------------------------------
    (ANY, "rejected", "database_unavailable", ANY): T(
        "Sorry, I couldn't reach the database; nothing was changed.",
        "Desculpe, não consegui acessar o banco de dados; nada foi alterado."),
    (ANY, "rejected", "database_unavailable", "unknown_outcome"): T(
        "Sorry, the database connection broke; I'm not sure the change was saved.",
        "Desculpe, a conexão com o banco de dados caiu; não sei se a mudança foi salva."),
    (ANY, "rejected", "database_error", ANY): T(
        "Sorry, something went wrong with the database; nothing was changed.",
        "Desculpe, deu um erro no banco de dados; nada foi alterado."),
    # "don't add milk", "we don't need bread anymore": called off, as asked
    (ANY, "rejected", "negated", ANY): T(
        "Okay, I didn't change anything.",
        "Tudo bem, não mudei nada."),
    # "remind me to call mom later", "add yoga every tuesday": understood, not doable
    (ANY, "rejected", "vague_time", ANY): T(
        "I need a day or a time for that; nothing was added.",
        "Preciso de um dia ou de uma hora para isso; nada foi anotado."),
    (ANY, "rejected", "recurring", ANY): T(
        "Sorry, I can't add repeating entries yet; nothing was added.",
        "Desculpe, ainda não sei anotar compromissos que se repetem; nada foi anotado."),
    # "remind me in 10 minutes": of what? (missing_slot:title)
    ("agenda.add", "rejected", "missing_slot", ANY): T(
        "I need to know what it's for; nothing was added.",
        "Preciso saber do que se trata; nada foi anotado."),
    (ANY, "rejected", "two_requests", ANY): T(
        "Please say those requests separately; nothing was changed.",
        "Por favor, faça esses pedidos separadamente; nada foi alterado."),
    (ANY, "rejected", "unsupported_range", ANY): T(
        "Sorry, I can only read the agenda for a day, a weekend or a week.",
        "Desculpe, só sei ler a agenda de um dia, de um fim de semana ou de uma semana."),
    (ANY, "rejected", "not_understood", ANY): T(
        "Sorry, I didn't understand that; nothing was changed.",
        "Desculpe, não entendi; nada foi alterado."),
    (ANY, "rejected", "unsupported_language", ANY): T(
        "Sorry, I don't speak that language yet.",
        "Desculpe, ainda não falo essa língua."),
    (ANY, "rejected", "invalid_request", ANY): T(
        "Sorry, that request wasn't valid; nothing was changed.",
        "Desculpe, esse pedido não é válido; nada foi alterado."),
    (ANY, "rejected", ANY, ANY): T(
        "Sorry, I couldn't do that; nothing was changed.",
        "Desculpe, não consegui fazer isso; nada foi alterado."),
    # "take two bags of apples off" the kilo listed: amounts that do not take away
    (ANY, "no_change", "unit_conflict", ANY): T(
        "The list has {items}; I didn't change it.",
        "A lista tem {items}; não mudei nada."),
    (ANY, "no_change", ANY, ANY): T(
        "Nothing needed to change.",
        "Não precisei mudar nada."),
    (ANY, "not_found", ANY, ANY): T(
        "I couldn't find that.",
        "Não encontrei isso."),
    (ANY, "needs_confirmation", ANY, ANY): T(
        "Did you want me to do that?",
        "Você quer que eu faça isso?"),
    (ANY, "success", ANY, ANY): T(
        "Done.",
        "Pronto."),
}
# fmt: on

_RANGES = {
    "today": T("today", "hoje"),
    "tomorrow": T("tomorrow", "amanhã"),
    "week": T("this week", "nesta semana"),
    "weekend": T("this weekend", "neste fim de semana"),
    "next_week": T("next week", "na semana que vem"),
}
_SAME_DAY_RANGES = frozenset({"today", "tomorrow", "day"})
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([?.!,;:])")
_SPACES = re.compile(r"\s{2,}")


_FLAGS = {
    "shopping.add": ("reopened", "merged"),
    "shopping.remove": ("reduced",),
    "shopping.complete": ("reduced",),
}
"""The details of a successful receipt that name its row's variant, first found first."""


def variant(v: ReceiptView) -> str:
    """The row variant: ``merged``, ``reopened``, ``reduced``, ``empty``, ``past``..."""
    if v.status == "success":
        flagged = _FLAGS.get(v.action or "", ())
        if found := next((flag for flag in flagged if v.details.get(flag)), None):
            return found  # "reopened", "merged", "reduced"
        if v.item_asked:
            return "item_done" if all(i.completed for i in v.items) else "item"
        listed = {"shopping.list": v.items, "agenda.list": v.events}.get(v.action or "")
        if listed is not None and not listed:
            return "empty"
        if v.action == "agenda.add" and v.details.get("past"):
            return "past"
        if v.action == "agenda.next" and v.details.get("title"):
            return "titled"
    if v.action == "memory.add" and v.items:
        stance = v.details.get("stance")
        if stance in ("likes", "dislikes", "allergic"):
            return str(stance)
    if v.status == "needs_confirmation" and v.details.get(ASK) == ASK_TIME:
        return "time"
    if v.reason == "ambiguous" and v.events:
        titles = {e.title.casefold().strip() for e in v.events}
        return "same_title" if len(titles) == 1 else ANY
    if v.reason == "database_unavailable" and v.unknown_outcome:
        return "unknown_outcome"
    return ANY


def _candidates(v: ReceiptView) -> list[Key]:
    action, status = v.action or ANY, v.status
    reason, var = v.reason or ANY, variant(v)
    return [
        (action, status, reason, var),
        (action, status, reason, ANY),
        (ANY, status, reason, var),
        (ANY, status, reason, ANY),
        (action, status, ANY, var),
        (action, status, ANY, ANY),
        (ANY, status, ANY, var),
        (ANY, status, ANY, ANY),
    ]


def template_key(v: ReceiptView) -> Key:
    """The table row that narrates a view (always found: ``(*, status, *, *)`` rows)."""
    for key in _candidates(v):
        if key in TEMPLATES:
            return key
    msg = f"no template for status {v.status!r}"
    raise LookupError(msg)


def pattern(v: ReceiptView, lang: str) -> str:
    """The sentence pattern of a view in ``lang``."""
    row = TEMPLATES[template_key(v)]
    return row.pt if lang == "pt" else row.en


def _moment(event: ReceiptEvent) -> Moment | None:
    return parse_moment(event.start)


def _when(event: ReceiptEvent | None, now: dt.datetime, lang: str, *, bare: bool) -> str:
    moment = _moment(event) if event is not None else None
    return when(moment, now, lang, bare=bare) if moment is not None else ""


def event_entry(event: ReceiptEvent, now: dt.datetime, lang: str, *, time_only: bool) -> str:
    """ "the dentist tomorrow at 3 PM" (``time_only``: "the dentist at 3 PM")."""
    name = event_name(event.title, lang)
    moment = _moment(event)
    if moment is None:
        return name
    if time_only:
        if moment.time is None:
            return name
        return f"{name} {time_words(moment.time, lang)}"
    return f"{name} {when(moment, now, lang)}"


def range_words(v: ReceiptView, now: dt.datetime, lang: str) -> str:
    """The period an agenda listing covers: "today", "this week", "on Friday"."""
    key = v.details.get("range")
    if isinstance(key, str) and key in _RANGES:
        row = _RANGES[key]
        return row.pt if lang == "pt" else row.en
    since = v.details.get("since")
    if isinstance(since, str) and (moment := parse_moment(since)) is not None:
        return when(Moment(moment.day, None, moment.tz), now, lang)
    return _RANGES["today"].pt if lang == "pt" else _RANGES["today"].en


def _count_noun(count: int, lang: str, en: tuple[str, str], pt: tuple[str, str]) -> str:
    forms = pt if lang == "pt" else en
    return f"{count} {forms[0] if count == 1 else forms[1]}"


def _plural_names(names: list[str], lang: str) -> bool:
    return len(names) > 1 or (len(names) == 1 and is_plural(names[0], lang))


def _pt_group_agree(names: list[str], masculine: str, feminine: str) -> str:
    if len(names) == 1:
        return pt_agree(names[0], masculine, feminine)
    if names and all(pt_gender(n) == "f" for n in names):
        return feminine + "s"
    return masculine + "s"


def _the_item(item: ReceiptItem, lang: str) -> str:
    """ "as maçãs", but "2 maçãs": an amount takes no article."""
    return the(item.name, lang) if item.quantity is None else item_phrase(item, lang)


def _slots(v: ReceiptView, lang: str, now: dt.datetime) -> dict[str, str]:
    pt = lang == "pt"
    shown = list(v.items[:ITEM_CAP])
    more = max(0, max(v.count, len(v.items)) - len(shown))
    names = [i.name for i in v.items]
    plural = _plural_names(names, lang)
    event = v.events[0] if v.events else None
    range_key = v.details.get("range")
    time_only = v.action == "agenda.list" and range_key in _SAME_DAY_RANGES
    shown_events = v.events[:EVENT_CAP]
    total_events = max(v.count, len(v.events)) if v.action == "agenda.list" else len(v.events)
    events_more = max(0, total_events - len(shown_events))
    that_event = event_name(v.title, lang) if v.title else ("esse compromisso" if pt else
                                                           "that event")  # fmt: skip
    return {
        "items": join([item_phrase(i, lang) for i in v.items], lang),
        "names": join(names, lang),
        "the_names": join([the(n, lang) for n in names], lang),
        "the_items": join([_the_item(i, lang) for i in v.items], lang),
        "list_names": join([i.name for i in shown], lang, more),
        "is": "are" if plural else "is",
        "isnt": "aren't" if plural else "isn't",
        "esta": "estão" if plural else "está",
        "bought": _pt_group_agree(names, "comprado", "comprada"),
        "marked": _pt_group_agree(names, "marcado", "marcada"),
        "count_items": _count_noun(v.count, lang, ("item", "items"), ("item", "itens")),
        "count_checked": _count_noun(
            v.count,
            lang,
            ("checked-off item", "checked-off items"),
            ("item comprado", "itens comprados"),
        ),
        "event": event_name(event.title, lang) if event else "",
        "title": event.title if event else "",
        "event_marked": pt_agree(event.title, "marcado", "marcada") if event else "marcado",
        "when": _when(event, now, lang, bare=False),
        "day_part": _day_part(v, event, now, lang),
        "to_when": _when(event, now, lang, bare=True) or _new_time_words(v, lang),
        "events_list": join(
            [event_entry(e, now, lang, time_only=time_only) for e in shown_events],
            lang,
            events_more,
        ),
        "count_events": _count_noun(
            v.count if v.action == "agenda.list" else len(v.events),
            lang,
            ("event", "events"),
            ("compromisso", "compromissos"),
        ),
        "n_events": count_word(len(v.events), lang),
        "range": range_words(v, now, lang),
        "that_event": that_event,
    }


def _day_part(v: ReceiptView, event: ReceiptEvent | None, now: dt.datetime, lang: str) -> str:
    """The day of a proposed entry with the part of the day said: "tomorrow morning"."""
    moment = _moment(event) if event is not None else None
    if moment is None:
        return ""
    part = v.details.get(PART)
    return part_of_day(moment.day, part if isinstance(part, str) else None, now, lang)


def _new_time_words(v: ReceiptView, lang: str) -> str:
    """A move proposed to a time on the entry's own day: "4 PM" / "as 16h"."""
    new_time = proposed_time(v)
    if new_time is None:
        return ""
    return bare_time_words(new_time, lang, either_half=proposed_either_half(v))


def _tidy(sentence: str) -> str:
    sentence = _SPACE_BEFORE_PUNCT.sub(r"\1", sentence)
    return capitalize(_SPACES.sub(" ", sentence).strip())


def render(v: ReceiptView, lang: str, now: dt.datetime | None = None) -> str:
    """The sentence for a view; ``lang`` must be a supported language code."""
    now = now or default_now()
    return _tidy(pattern(v, lang).format_map(_slots(v, lang, now)))


def template_sentence(receipt: Receipt, lang: str, *, now: dt.datetime | None = None) -> str:
    """The deterministic sentence for ``receipt`` in ``lang`` ("en", "pt"; others: English).

    ``now`` (aware) anchors "today"/"tomorrow"; default: the machine's clock.
    """
    code = normalize_lang(lang)
    if code is None:
        _LOGGER.debug("no templates for language %r; using English", lang)
        code = "en"
    return render(view(receipt), code, now)
