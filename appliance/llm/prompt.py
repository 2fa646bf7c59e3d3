"""Prompts: a receipt as compact facts, few-shot examples, a chat system prompt.

The facts are pre-rendered in the target language ("2 liters of milk", "amanhã às
15h"), so a small model only has to phrase them, never to convert units or dates.
The completion prompt is a fixed prefix per language (header + examples) followed by
the current receipt: the prefix stays in the model's KV cache between calls.
"""

from __future__ import annotations

import datetime as dt
from functools import cache
from typing import Any

from appliance.narration.phrases import event_name, item_phrase
from appliance.narration.samples import EXAMPLE_NAMES, samples
from appliance.narration.templates import (
    EVENT_CAP,
    ITEM_CAP,
    Key,
    event_entry,
    range_words,
    template_key,
    template_sentence,
)
from appliance.narration.view import ReceiptView, view
from appliance.narration.when import parse_moment, when
from appliance.protocol.receipts import Receipt, ReceiptEvent, ReceiptItem, Source

LABELS = {"en": ("Receipt", "Sentence"), "pt": ("Recibo", "Frase")}
HEADERS = {
    "en": "A home assistant tells the user what it did. Each receipt below is told as one "
    "short sentence in English that says exactly what the receipt says.\n\n",
    "pt": "Um assistente doméstico conta ao usuário o que fez. Cada recibo abaixo é dito em "
    "uma frase curta em português do Brasil que diz exatamente o que o recibo diz.\n\n",
}
SYSTEM_PROMPTS = {
    "en": "You turn a receipt from a home assistant into ONE short sentence for the user, "
    "in English. Say only what the receipt says: its outcome, items, quantities, dates and "
    "times. Never add items, numbers, dates or advice. If the status is not success, say "
    "that it was not done and why. If the status is needs_confirmation, ask a short yes/no "
    "question. Reply with the sentence only.",
    "pt": "Você transforma um recibo de um assistente doméstico em UMA frase curta para o "
    "usuário, em português do Brasil. Diga só o que o recibo diz: o resultado, os itens, as "
    "quantidades, as datas e os horários. Nunca acrescente itens, números, datas ou "
    "conselhos. Se o status não for success, diga que não foi feito e por quê. Se o status "
    "for needs_confirmation, faça uma pergunta curta de sim ou não. Responda só com a frase.",
}

_LISTINGS = frozenset(
    {"shopping.list", "shopping.clear_completed", "shopping.clear", "agenda.list"}
)
_SAME_DAY = frozenset({"today", "tomorrow", "day"})


def _quote(text: str) -> str:
    return '"' + text.replace('"', "'") + '"'


def _event_when(event: ReceiptEvent, now: dt.datetime, lang: str, *, bare: bool) -> str:
    moment = parse_moment(event.start)
    return when(moment, now, lang, bare=bare) if moment is not None else ""


def _item_facts(v: ReceiptView, lang: str) -> list[str]:
    if not v.items:
        return []
    if v.action in _LISTINGS:
        shown = [i.name for i in v.items[:ITEM_CAP]]
        more = max(v.count, len(v.items)) - len(shown)
        facts = [f"count={v.count}", f"items={_quote(', '.join(shown))}"]
        return [*facts, f"more={more}"] if more > 0 else facts
    facts = [f"items={_quote(', '.join(item_phrase(i, lang) for i in v.items))}"]
    previous = v.details.get("previous")
    if v.details.get("merged") and isinstance(previous, dict) and "name" in previous:
        facts.append(f"before={_quote(item_phrase(ReceiptItem.model_validate(previous), lang))}")
    if v.details.get("reopened"):
        facts.append("reopened=yes")
    return facts


def _event_facts(v: ReceiptView, lang: str, now: dt.datetime) -> list[str]:
    if v.action == "agenda.list":
        facts = [f"range={_quote(range_words(v, now, lang))}", f"count={v.count}"]
    else:
        facts = []
    if not v.events:
        return facts
    if v.action == "agenda.list" or len(v.events) > 1:
        time_only = v.details.get("range") in _SAME_DAY
        shown = [event_entry(e, now, lang, time_only=time_only) for e in v.events[:EVENT_CAP]]
        if v.action != "agenda.list":
            facts.append(f"count={len(v.events)}")
        facts.append(f"events={_quote('; '.join(shown))}")
        return facts
    event = v.events[0]
    bare = v.action in ("agenda.move", "agenda.add") and v.status != "needs_confirmation"
    facts.append(f"event={_quote(event_name(event.title, lang))}")
    moment = _event_when(event, now, lang, bare=bare)
    if moment:
        facts.append(f"{'new_time' if v.action == 'agenda.move' else 'when'}={_quote(moment)}")
    return facts


def facts(receipt: Receipt, lang: str, now: dt.datetime) -> str:
    """``status=success action=shopping.add items="2 liters of milk"``.

    The status comes first: a small model follows it more often that way.
    """
    v = view(receipt)
    parts = [f"status={v.status}"]
    if v.reason:
        parts.append(f"reason={v.reason}")
    parts.append(f"action={v.action or 'none'}")
    if v.title and not v.events:
        parts.append(f"event={_quote(event_name(v.title, lang))}")
    parts += _item_facts(v, lang)
    parts += _event_facts(v, lang, now)
    return " ".join(parts)


# --- few-shot examples -------------------------------------------------------------
EXAMPLE_NOW = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.timezone(dt.timedelta(hours=-3)))
"""A Monday morning: the examples' dates are relative to it."""
_SOURCE = Source(kind="voice", user="household")


def _receipt(
    action: str | None,
    status: Any,
    reason: str | None = None,
    items: tuple[ReceiptItem, ...] = (),
    events: tuple[ReceiptEvent, ...] = (),
    **details: Any,
) -> Receipt:
    return Receipt(
        request_id="example", action=action, status=status, reason=reason, items=list(items),
        events=list(events), source=_SOURCE, details=details,
    )  # fmt: skip


def _item(name: str, quantity: float | None = None, unit: str | None = None) -> ReceiptItem:
    return ReceiptItem(name=name, quantity=quantity, unit=unit)


def _event(title: str, start: str) -> ReceiptEvent:
    return ReceiptEvent(title=title, start=start, all_day=len(start) == 10)


def _examples() -> tuple[tuple[Receipt, str, str], ...]:
    """(receipt with English names, English sentence, Portuguese sentence).

    The order matters to a small model, which leans on the last examples: it ends
    with failures and questions, so "I added..." is not the default continuation
    (measured: 94% of the English samples accepted by the guard, against 79% with
    the additions last).
    """
    return (
        (_receipt("shopping.add", "success", items=(_item("orange juice", 2, "l"),)),
         "I added 2 liters of orange juice to your shopping list.",
         "Adicionei 2 litros de suco de laranja à sua lista de compras."),
        (_receipt("shopping.add", "success", items=(_item("bananas", 6),)),
         "I added 6 bananas to the shopping list.",
         "Adicionei 6 bananas à lista de compras."),
        (_receipt("shopping.remove", "success", items=(_item("butter"),)),
         "I removed butter from your shopping list.",
         "Tirei manteiga da sua lista de compras."),
        (_receipt("shopping.complete", "success", items=(_item("tomatoes"),)),
         "I checked off tomatoes.",
         "Marquei os tomates como comprados."),
        (_receipt("shopping.list", "success",
                  items=(_item("rice"), _item("beans"), _item("apples")), count=3),
         "You have 3 items on your list: rice, beans and apples.",
         "Você tem 3 itens na lista: arroz, feijão e maçãs."),
        (_receipt("agenda.add", "success",
                  events=(_event("yoga class", "2026-03-05T19:00:00-03:00"),)),
         "I added the yoga class to your agenda for Thursday at 7 PM.",
         "Anotei a aula de ioga na agenda para quinta-feira às 19h."),
        (_receipt("agenda.move", "success",
                  events=(_event("haircut", "2026-03-06T11:00:00-03:00"),)),
         "I moved the haircut to Friday at 11 AM.",
         "Mudei o corte de cabelo para sexta-feira às 11h."),
        (_receipt("agenda.next", "success",
                  events=(_event("vet", "2026-03-03T10:00:00-03:00"),)),
         "Your next appointment is the vet tomorrow at 10 AM.",
         "Seu próximo compromisso é o veterinário amanhã às 10h."),
        (_receipt("shopping.add", "needs_confirmation",
                  proposed={"action": "shopping.add", "item": "oat milk"}),
         "Did you want to add oat milk to your list?",
         "Você quis adicionar leite de aveia à sua lista?"),
        (_receipt("shopping.add", "rejected", "database_unavailable: timeout"),
         "Sorry, I couldn't reach the database, so nothing was changed.",
         "Desculpe, não consegui acessar o banco de dados, então nada foi alterado."),
        (_receipt("shopping.add", "no_change", "unit_conflict",
                  items=(_item("flour", 1, "kg"),)),
         "The list already has 1 kilo of flour, so I didn't change it.",
         "A lista já tem 1 quilo de farinha, então não mudei nada."),
        (_receipt("agenda.remove", "rejected", "ambiguous",
                  events=(_event("meeting", "2026-03-04T14:00:00-03:00"),
                          _event("meeting", "2026-03-11T14:00:00-03:00"))),
         "There are two events called meeting; which day?",
         "Há dois compromissos chamados reunião; de qual dia?"),
        (_receipt("shopping.add", "no_change", "already_on_list", items=(_item("coffee"),)),
         "Coffee is already on your list.",
         "Café já está na sua lista."),
        (_receipt("shopping.remove", "not_found", "not_on_list", items=(_item("cheese"),)),
         "Cheese isn't on your list.",
         "Queijo não está na sua lista."),
    )  # fmt: skip


_PT_NAMES = {
    "orange juice": "suco de laranja", "coffee": "café", "vet": "veterinário",
    "butter": "manteiga", "cheese": "queijo", "tomatoes": "tomates", "rice": "arroz",
    "beans": "feijão", "apples": "maçãs", "yoga class": "aula de ioga",
    "haircut": "corte de cabelo", "flour": "farinha", "meeting": "reunião",
    "oat milk": "leite de aveia", "bananas": "bananas",
}  # fmt: skip


def _translate(receipt: Receipt) -> Receipt:
    """The example receipt with Portuguese item names and titles."""
    items = [i.model_copy(update={"name": _PT_NAMES.get(i.name, i.name)}) for i in receipt.items]
    events = [
        e.model_copy(update={"title": _PT_NAMES.get(e.title, e.title)}) for e in receipt.events
    ]
    details = dict(receipt.details)
    proposed = details.get("proposed")
    if isinstance(proposed, dict) and "item" in proposed:
        details["proposed"] = {**proposed, "item": _PT_NAMES.get(proposed["item"])}
    return receipt.model_copy(update={"items": items, "events": events, "details": details})


def examples(lang: str) -> tuple[tuple[Receipt, str], ...]:
    """The few-shot (receipt, sentence) pairs of a language."""
    if lang == "pt":
        return tuple((_translate(receipt), pt) for receipt, _, pt in _examples())
    return tuple((receipt, en) for receipt, en, _ in _examples())


def completion_prefix(lang: str) -> str:
    """The fixed part of the completion prompt (header and examples)."""
    receipt_label, sentence_label = LABELS[lang]
    shots = "".join(
        f"{receipt_label}: {facts(r, lang, EXAMPLE_NOW)}\n{sentence_label}: {s}\n\n"
        for r, s in examples(lang)
    )
    return HEADERS[lang] + shots


def _shape(receipt: Receipt) -> tuple[bool, bool, int, int, bool]:
    first = receipt.items[0] if receipt.items else None
    timed = any(len(e.start) > 10 for e in receipt.events)
    return (
        first is not None and first.quantity is not None,
        first is not None and first.unit is not None,
        min(len(receipt.items), 4),
        min(len(receipt.events), 4),
        timed,
    )


@cache
def _bank(lang: str) -> dict[Key, tuple[Receipt, ...]]:
    bank: dict[Key, list[Receipt]] = {}
    for sample in samples(EXAMPLE_NOW, EXAMPLE_NAMES[lang]).values():
        bank.setdefault(template_key(view(sample)), []).append(sample)
    return {key: tuple(found) for key, found in bank.items()}


def closest_example(receipt: Receipt, lang: str) -> tuple[Receipt, str] | None:
    """A sample receipt narrated by the same template row, of the most similar shape,
    with its template sentence; None when no sample uses that row."""
    candidates = _bank(lang).get(template_key(view(receipt)))
    if not candidates:
        return None
    shape = _shape(receipt)
    best = max(candidates, key=lambda c: sum(a == b for a, b in zip(_shape(c), shape, strict=True)))
    return best, template_sentence(best, lang, now=EXAMPLE_NOW)


def completion_query(receipt: Receipt, lang: str, now: dt.datetime) -> str:
    """The variable part: the closest example, then the current receipt, ending where
    the sentence starts."""
    receipt_label, sentence_label = LABELS[lang]
    query = f"{receipt_label}: {facts(receipt, lang, now)}\n{sentence_label}:"
    example = closest_example(receipt, lang)
    if example is None:
        return query
    shot_receipt, shot = example
    return (
        f"{receipt_label}: {facts(shot_receipt, lang, EXAMPLE_NOW)}\n{sentence_label}: {shot}"
        f"\n\n{query}"
    )


def chat_messages(receipt: Receipt, lang: str, now: dt.datetime) -> list[dict[str, str]]:
    """System prompt with a few examples, then the receipt as the user's message."""
    receipt_label, sentence_label = LABELS[lang]
    shots = "\n".join(
        f"{receipt_label}: {facts(r, lang, EXAMPLE_NOW)}\n{sentence_label}: {s}"
        for r, s in examples(lang)[:6]
    )
    system = f"{SYSTEM_PROMPTS[lang]}\n\n{shots}"
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": f"{receipt_label}: {facts(receipt, lang, now)}"},
    ]
