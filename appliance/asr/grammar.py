"""Speech grammars made from the intent parser's templates.

``build_grammar(lang, items)`` turns the hassil sentence templates of
``appliance.intents`` (the ones the text parser matches) into a grammar for the
verifier engines:

- ``Grammar.jsgf``: a JSGF grammar for PocketSphinx (English only), every word
  pronounceable with the bundled CMU dictionary (``Grammar.pronunciations`` lists
  the words the engine must add, derived from dictionary parts); words that cannot
  be pronounced are dropped with the alternatives that use them.
- ``Grammar.phrases``: sample sentences for Vosk's grammar mode (Vosk estimates a
  bigram model from them), plus ``"[unk]"``.

Wildcard slots become bounded sub-grammars: ``{item}`` the known items (list
items, past items, a built-in grocery list in ``groceries/<lang>.txt``) with
optional quantities and units (English units take "of": "a gallon of milk", "a
dozen eggs"; with "of" optional PocketSphinx heard "a gallon oat milk"; a number takes
the plural: "eight kilos of", "three apples", never "eight kilo of"), up to two,
or three when adding ("milk, eggs and bread", the comma a ``PAUSE``); ``{event}`` a
title vocabulary plus the date/time sub-grammar; ``{when}`` dates and times (a time
with "at", or without it after "to", "for" or "until": "move my meeting to three
p.m."). Yes/no answers are in the grammar too (``<answer>``; ``Grammar.answers_jsgf``
holds them alone, for confirmations).
Template blocks marked ``verifier: false`` are understood by the parser but left out
of the grammar: the verifier confused them with other commands ("tick the bread off"
for "take the bread off"); said, they are asked about. Built grammars are cached by
(lang, items).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import logging
import random
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from collections.abc import Sequence as SequenceOf
from dataclasses import dataclass, field
from functools import cache, cached_property
from importlib import resources
from pathlib import Path
from typing import Any

from hassil import (
    Alternative,
    Expression,
    ListReference,
    Permutation,
    RuleReference,
    Sequence,
    TextChunk,
    parse_sentence,
)

from appliance.asr import pt_phones
from appliance.intents import load_templates
from appliance.intents.lexicon import load_lexicon
from appliance.tts.normalize import speakable

_LOGGER = logging.getLogger(__name__)

ANSWER_RULE = "answer"
TIME_RULE = "time_answer"
"""A time of day said on its own (or a no), the answer to "what time?"."""
WHEN_AFTER = "when_after"
NEEDED_BY = "needed_by"
DAY_NEEDED = "day_needed"
"""A bare day after the item of a need ("we need milk tomorrow"), which the parser reads
as the day the item is needed by after a need only (templates ``needed_by: any``)."""
ITEM_TAIL = "item_tail"
"""What an added item is for, or where to get it ("put eggs on the list for the salad",
"grab apples on the way home"): the lexicon's ``item_trailing``, which the parser drops
from the end of an item, after an added item in English."""
REASON = "reason"
"""Why, said after an added item ("add coffee to the list, we're almost out"): the
lexicon's ``fillers.reasons``, which the parser leaves out at the end of a request to buy
only (``Lexicon.buying_fillers``; elsewhere they are what was said)."""
DONE_REASON = "done_reason"
"""Why, said after an item taken off the list or crossed off ("remove the milk, we
already have some"): the lexicon's ``fillers.done_reasons``, which the parser drops
from the end of the item of such a request (``Lexicon.done_reasons``), or from its end
after the list (``Lexicon.done_fillers``)."""
UNK = "[unk]"
PAUSE = ","
"""The grammar's only non-word: a pause between two items of a list ("milk, eggs and
bread"), which the parser reads as a comma. PocketSphinx hears it as silence (phone
``SIL``); Vosk's sample sentences leave it out."""
PAUSE_PHONES = "SIL"
_CACHE_SIZE = 8
_MAX_ENUMERATION = 5000
_SAMPLES_PER_SENTENCE = 12
_TIME_SAMPLES = 1500
"""Sample answers to "what time?" for Vosk (``_random_phrases``): every hour, minute
and part of the day comes in many of them."""

# -- the sub-grammars of the wildcard slots (hassil template syntax) -----------------

_EN_RULES: dict[str, str] = {
    "number": "(two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|"
    "sixteen|eighteen|twenty|twenty four|thirty|forty|fifty|a hundred|one hundred|"
    "two hundred|two hundred and fifty|five hundred)",
    "unit_one": "(liter|litre|kilo|kilogram|gram|pound|ounce|pack|package|packet|bottle|"
    "can|tin|box|jar|bag|loaf|bunch|carton|piece|gallon|quart|pint|stick|head|roll|tub|"
    "bar|tray|tube|case|jug|block)",
    "unit_many": "(liters|litres|kilos|kilograms|grams|pounds|ounces|packs|packages|"
    "packets|bottles|cans|tins|boxes|jars|bags|loaves|bunches|cartons|pieces|gallons|"
    "quarts|pints|sticks|heads|rolls|tubs|bars|trays|tubes|cases|jugs|blocks)",
    "measure": "(<unit_many> of|dozen)",
    "measure_one": "(<unit_one> of|dozen)",
    # "one", "a", "an", "another" only before one of something ("an apple", "a bag
    # of"): the verifier heard "one limes" and "an eggs" for "lemons" and "eggs". And
    # a number takes the plural ("two liters of", "eight kilos of"): it heard "eight
    # kilo of rice" for "a kilo of rice" and "eight egg" in noise.
    "quantity": "(<number> [more] [<measure>]|(a|an|one|another) <measure_one>|"
    "half (a|an) <measure_one>|a half <measure_one>|(one|a) <unit_one> and a half of|"
    "a couple [of]|some|some more|more|a few|a little|a bit of|a lot of|lots of|extra|"
    "the|my)",
    "item": "([<quantity>] <item_name>|(a|one [more]|another) <item_one_c>|"
    "(an|one [more]|another) <item_one_v>)",
    "items": "<item> [and <items>]",
    "item_list": "<item> [(<pause>|and) <item_list>]",
    "item_series": "<item> (<pause> <item_series>|and <items_or_series>)",
    "items_or_series": "<item> [and <items_or_series>|<pause> <item_series>]",
    # how much of an item, said apart from it: "change the milk to two liters"
    "amount": "(<number> [<unit_many>|dozen]|(a|an|one) (<unit_one>|dozen)|"
    "half (a|an) <unit_one>|(one|a) <unit_one> and a half)",
    "hour": "(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)",
    "minutes": "(oh five|ten|fifteen|twenty|twenty five|thirty|thirty five|forty|"
    "forty five|fifty|fifty five)",
    "ampm": "(a.m.|p.m.)",
    "period": "(morning|afternoon|evening|night)",
    "weekday": "(monday|tuesday|wednesday|thursday|friday|saturday|sunday)",
    "month": "(january|february|march|april|may|june|july|august|september|october|"
    "november|december)",
    "ordinal": "(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|"
    "eleventh|twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|"
    "nineteenth|twentieth|twenty first|twenty second|twenty third|twenty fourth|"
    "twenty fifth|twenty sixth|twenty seventh|twenty eighth|twenty ninth|thirtieth|"
    "thirty first)",
    "date": "([for] today|[for] tomorrow|[for] the day after tomorrow|tonight|"
    "this <period>|tomorrow <period>|[on|for] [this|next] <weekday> [<period>]|"
    "[on] <month> <ordinal>|[on] the <ordinal> [of <month>]|"
    "in (a|one|two|three) (day|days|week|weeks)|this week|[for] the week|next week)",
    # When items are needed, said after them ("add eggs to the list for saturday"), as
    # the parser reads it after any added item (``needed_by_markers``; it keeps no day of
    # a purchase). What they are for ("for dinner", "for the weekend") is the item tail
    # (``ITEM_TAIL``, the lexicon's ``item_trailing``).
    NEEDED_BY: "for (today|tonight|tomorrow [<period>]|[this|next] <weekday> [<period>])",
    DAY_NEEDED: "(today|tonight|tomorrow [<period>]|the day after tomorrow|"
    "[on|this|next|by] <weekday> [<period>]|by (today|tonight|tomorrow))",
    "time": "(at <hour> [o'clock] [<ampm>]|at <hour> <minutes> [<ampm>]|at (noon|midnight)|"
    "at (half|a quarter|quarter|ten|twenty|five) (past|to) <hour>|in the <period>|"
    "from <hour> [<ampm>] to <hour> [<ampm>]|<from_now>)",
    # "remind me in twenty minutes to check the oven"
    "from_now": "(in (five|ten|fifteen|twenty|twenty five|thirty|forty|forty five|fifty) "
    "minutes|in (an|one) hour|in (two|three|four|five|six) hours|in half an hour|"
    "in an hour and a half)",
    "duration": "for (an hour|half an hour|one hour|two hours|three hours|thirty minutes|"
    "forty five minutes|fifteen minutes|an hour and a half)",
    "when": "(<date> [<time>]|<time> [<date>])",
    # After "to", "for", "until" ("set a reminder for 7 pm to ...", "move my meeting to
    # 3 pm"), a time needs no "at" (``_WHEN_AFTER``).
    "clock": "(<hour> [o'clock] [<ampm>]|<hour> <minutes> [<ampm>]|noon|midnight)",
    WHEN_AFTER: "(<when>|<clock> [<date>])",
    "title_noun": "(dentist|dentist appointment|doctor|doctor's appointment|doctor appointment|"
    "appointment|meeting|team meeting|work meeting|call|phone call|video call|lunch|dinner|"
    "breakfast|brunch|coffee|drinks|party|birthday party|birthday|anniversary|wedding|"
    "haircut|hairdresser|barber|vet|vet appointment|gym|yoga|pilates|swimming|tennis|"
    "soccer practice|football practice|basketball practice|soccer game|football game|"
    "piano lesson|guitar lesson|music lesson|swimming lesson|dance class|class|school|"
    "school meeting|parent teacher conference|school play|exam|test|interview|"
    "job interview|presentation|conference|flight|train|trip|vacation|holiday|"
    "concert|movie|movies|theater|game night|book club|date night|date|playdate|"
    "sleepover|picnic|barbecue|church|mass|therapy|physical therapy|massage|"
    "checkup|eye doctor|dermatologist|pediatrician|car service|oil change|mechanic|"
    "plumber|electrician|cleaner|cleaning|laundry|grocery shopping|shopping|pick up|"
    "drop off|school pick up|bin day|trash day|recycling|taxes|rent|bills|reminder|"
    "run|walk|workout|training|rehearsal|practice|meditation|nap)",
    "title_adj": "(new|weekly|monthly|annual|quick|big|family|team|work|school|"
    "morning|evening|early|late)",
    "title_who": "(mom|dad|mum|grandma|grandpa|the kids|the family|my sister|my brother|"
    "my mother|my father|my wife|my husband|my son|my daughter|my friend|friends|"
    "the boss|my boss|the team|the doctor|the dentist|the neighbors|john|mary|james|"
    "sarah|david|anna|michael|emma|peter|lisa|paul|laura|tom|kate|alex|sam|chris|"
    "the office|the school|the clinic|the hospital|the gym|the park|the mall|"
    "the restaurant|home|work|the library|the airport|the station)",
    "title_task": "((take|put) out the (trash|garbage|bins|recycling)|"
    "(take|put) the (trash|garbage|bins|recycling) out|take the dog out|"
    "take the (chicken|meat) out of the freezer|start dinner|check the mail|pay rent|"
    "take the (cake|pizza|bread|roast|cookies|lasagna|chicken) out [of the oven]|"
    "turn off the (oven|stove)|check on the (roast|cake|oven)|"
    "water the (plants|garden|flowers)|feed the (cat|dog|fish)|walk the dog|"
    "pay the (bills|rent)|take my (medicine|pills|vitamins)|do the (laundry|dishes)|"
    "(run|empty) the dishwasher|defrost the (chicken|meat)|pick up the (kids|dry cleaning)|"
    "(book|make) a (doctor's appointment|dentist appointment)|check the oven|"
    "buy a (present|birthday present|gift)|"
    "call the (plumber|doctor|dentist|vet|school|bank|pharmacy|landlord)|"
    "(buy|get) [some|more] <item_name>)",
    "title": "([a|an|the|my|our] [<title_adj>] <title_noun> [(with|at|for) <title_who>]"
    "|(call|phone|ring|visit|see|pick up|text|email|meet) <title_who>|<title_task>)",
    "event": "<title> [<when>] [<duration>]",
    "other_list_name": "(to do|todo|packing|christmas|birthday|wish|work|reading|chores|"
    "hardware|party|gift|movie|books)",
    "answer": "(yes|yeah|yep|yup|yes please|yeah please|sure|sure thing|of course|correct|"
    "that's correct|that's right|right|exactly|do it|go ahead|please do|okay|ok|"
    "absolutely|definitely|confirm|confirmed|affirmative|yes do it|yes go ahead|"
    "sounds good|all right|go for it|why not|sure why not|(ok|okay) (do it|go ahead)|"
    "no|nope|nah|no thanks|no thank you|cancel|cancel it|cancel that|don't|do not|"
    "don't do it|please don't|no no|stop|never mind|wrong|that's wrong|negative|not now|"
    "no way|forget it)",
    TIME_RULE: "([let's say|make it|how about] [at|around|about] <answer_clock>|"
    "no|nope|no thanks|cancel|cancel it|cancel that|never mind|forget it|stop)",
    "answer_clock": "(<hour> [o'clock] [<ampm>] [in the <period>|at night]|"
    "<hour> <minutes> [<ampm>] [in the <period>|at night]|noon|midnight|"
    "(half|a quarter|quarter|ten|twenty|five) (past|to) <hour> [<ampm>] "
    "[in the <period>|at night])",
}

_PT_RULES: dict[str, str] = {
    "number": "(um|uma|dois|duas|três|quatro|cinco|seis|sete|oito|nove|dez|onze|doze|"
    "quinze|dezesseis|dezoito|vinte|vinte e quatro|trinta|quarenta|cinquenta|cem|"
    "duzentos|duzentas|duzentos e cinquenta|quinhentos|quinhentas)",
    "unit": "(litro|litros|quilo|quilos|grama|gramas|dúzia|dúzias|pacote|pacotes|"
    "garrafa|garrafas|lata|latas|caixa|caixas|pote|potes|vidro|vidros|saco|sacos|"
    "sacola|sacolas|maço|maços|cacho|cachos|unidade|unidades|galão|galões|tablete|"
    "tabletes|cabeça|cabeças|rolo|rolos|barra|barras|bandeja|bandejas|tubo|tubos|bisnaga|"
    "bisnagas|fardo|fardos|engradado|engradados|garrafão|garrafões|bloco|blocos)",
    "of": "(de|do|da|dos|das)",
    "quantity": "(<number> [<unit>] [<of>]|(meio|meia) <unit> [<of>]|"
    "(um|uma) <unit> e (meio|meia) [<of>]|o|a|os|as|um|uma|uns|umas|mais|alguns|"
    "algumas|um pouco de|bastante)",
    "item": "[<quantity>] <item_name>",
    "items": "<item> [e <items>]",
    "item_list": "<item> [(<pause>|e) <item_list>]",
    "item_series": "<item> (<pause> <item_series>|e <items_or_series>)",
    "items_or_series": "<item> [e <items_or_series>|<pause> <item_series>]",
    # quanto de um item, dito à parte dele: "muda o leite para dois litros"
    "amount": "(<number> [<unit>]|(meio|meia) <unit>|(um|uma) <unit> e (meio|meia))",
    "hour": "(uma|duas|três|quatro|cinco|seis|sete|oito|nove|dez|onze|doze|treze|"
    "quatorze|catorze|quinze|dezesseis|dezessete|dezoito|dezenove|vinte|vinte e uma|"
    "vinte e duas|vinte e três)",
    "minutes": "(meia|cinco|dez|quinze|vinte|vinte e cinco|trinta|quarenta|"
    "quarenta e cinco|cinquenta)",
    "period": "(manhã|tarde|noite)",
    "weekday": "(segunda|segunda-feira|terça|terça-feira|quarta|quarta-feira|quinta|"
    "quinta-feira|sexta|sexta-feira|sábado|domingo)",
    "month": "(janeiro|fevereiro|março|abril|maio|junho|julho|agosto|setembro|outubro|"
    "novembro|dezembro)",
    "day_number": "(primeiro|um|dois|três|quatro|cinco|seis|sete|oito|nove|dez|onze|doze|"
    "treze|quatorze|quinze|dezesseis|dezessete|dezoito|dezenove|vinte|vinte e um|"
    "vinte e dois|vinte e três|vinte e quatro|vinte e cinco|vinte e seis|vinte e sete|"
    "vinte e oito|vinte e nove|trinta|trinta e um)",
    "date": "([para|pra] hoje|[para|pra] amanhã|depois de amanhã|hoje à noite|"
    "hoje de noite|hoje de manhã|hoje à tarde|amanhã cedo|"
    "amanhã (de manhã|à tarde|de tarde|à noite|de noite)|"
    "[na|no|nesta|neste|nessa|nesse|na próxima|no próximo] <weekday> [que vem] "
    "[(de manhã|à tarde|de tarde|à noite|de noite)]|[no] dia <day_number> [de <month>]|"
    "esta semana|essa semana|nesta semana|na semana|a semana toda|semana que vem)",
    NEEDED_BY: "((para|pra) (hoje|amanhã|hoje à noite)|(pra|pro|para|até) <weekday>|"
    "(pro|para o) fim de semana|(pra|para a) (janta|festa|semana)|"
    "(pro|para o) (almoço|jantar|café da manhã|bolo))",
    DAY_NEEDED: "(hoje|amanhã|hoje à noite|amanhã (de manhã|cedo)|depois de amanhã|"
    "(na|no|nesta|neste) <weekday>|(neste|nesse|no) fim de semana)",
    "time": "((às|as|lá pelas|por volta das) <hour> [hora|horas] [e <minutes>] "
    "[(da|de) <period>]|(ao|à) (meio-dia|meio dia|meia-noite|meia noite)|"
    "(de manhã|à tarde|de tarde|à noite|de noite)|"
    "(das|de) <hour> [horas] (às|as|até as) <hour> [horas]|<from_now>)",
    # "me lembra daqui a vinte minutos de tirar o bolo"
    "from_now": "(daqui a|daqui|em) ((cinco|dez|quinze|vinte|vinte e cinco|trinta|quarenta|"
    "quarenta e cinco|cinquenta) minutos|uma hora|meia hora|uma hora e meia|duas horas|"
    "três horas)",
    "duration": "(por|durante) (uma hora|meia hora|duas horas|três horas|trinta minutos|"
    "quinze minutos|uma hora e meia)",
    "when": "(<date> [<time>]|<time> [<date>])",
    "title_noun": "(dentista|médico|médica|consulta|consulta médica|reunião|almoço|jantar|"
    "café da manhã|café|festa|aniversário|casamento|cabeleireiro|cabeleireira|barbeiro|"
    "manicure|veterinário|academia|ioga|pilates|natação|futebol|treino|aula|"
    "aula de inglês|aula de piano|aula de música|aula de dança|escola|reunião de pais|"
    "prova|exame|exames|entrevista|entrevista de emprego|apresentação|viagem|voo|"
    "férias|show|cinema|teatro|churrasco|piquenique|missa|culto|terapia|fisioterapia|"
    "massagem|oftalmologista|dermatologista|pediatra|revisão do carro|mecânico|"
    "encanador|eletricista|faxina|faxineira|diarista|mercado|compras|feira|buscar|levar|"
    "pagar as contas|conta de luz|aluguel|lembrete|corrida|caminhada|ensaio|jogo|"
    "pelada|happy hour|chá de bebê|batizado|formatura|plantão|trabalho)",
    "title_adj": "(nova|novo|semanal|mensal|rápida|rápido|grande)",
    "title_who": "(mãe|pai|a mãe|o pai|vovó|vovô|a avó|o avô|as crianças|a família|"
    "minha irmã|meu irmão|minha mãe|meu pai|minha esposa|meu marido|meu filho|"
    "minha filha|os amigos|um amigo|uma amiga|o chefe|a chefe|a equipe|o médico|"
    "o dentista|os vizinhos|joão|maria|josé|ana|pedro|paulo|carlos|lucas|julia|"
    "mariana|fernanda|rafael|gabriel|beatriz|o escritório|a escola|a clínica|"
    "o hospital|a academia|o parque|o shopping|o restaurante|casa|o trabalho|"
    "o aeroporto|a rodoviária)",
    "title_task": "(tirar o lixo|levar o lixo|regar as plantas|dar comida pro (gato|cachorro)|"
    "passear com o cachorro|pagar (o aluguel|as contas|a conta de luz)|"
    "tomar (o remédio|os remédios|a vitamina)|lavar a roupa|buscar as crianças|"
    "descongelar (o frango|a carne)|ligar pro (encanador|médico|dentista)|"
    "tirar (o bolo|a pizza|o pão|o frango|a lasanha) do forno|desligar o (forno|fogão)|"
    "(ligar|telefonar) (pra|para|pro) <title_who>|(visitar|buscar|encontrar) <title_who>|"
    "comprar <item_name>)",
    "title": "([o|a|um|uma|meu|minha] [<title_adj>] <title_noun> [(com|no|na|do|da|de) "
    "<title_who>] [<title_adj>]|<title_task>)",
    # "cancela o dentista de amanhã", "a reunião de sexta", "a consulta das três"
    "event": "<title> [(<when>|<of_day>)] [<duration>]",
    "of_day": "((de|do|da) (hoje|amanhã|<weekday>|dia <day_number> [de <month>])|"
    "das <hour> [horas] [(da|de) <period>])",
    "other_list_name": "(tarefas|afazeres|presentes|viagem|natal|aniversário|leitura|filmes|"
    "livros|trabalho|casa|farmácia)",
    "answer": "(sim|sim sim|isso|isso mesmo|isso aí|é isso|é isso aí|pode|pode sim|"
    "pode ser|claro|claro que sim|com certeza|certo|está certo|tá certo|exato|"
    "exatamente|confirma|confirmo|confirmado|beleza|ok|tá bom|está bem|tá|manda ver|"
    "sim por favor|pode fazer|faz isso|"
    "não|não não|não quero|não obrigado|não obrigada|cancela|cancelar|cancele|"
    "cancela isso|deixa pra lá|deixa para lá|esquece|esquece isso|negativo|para|pare|"
    "errado|está errado|tá errado|agora não|nada|de jeito nenhum|nem pensar)",
    TIME_RULE: "([pode ser] [às|as|lá pelas|por volta das] <hour> [hora|horas] [e <minutes>] "
    "[(da|de) <period>]|[ao] (meio-dia|meio dia)|[à] (meia-noite|meia noite)|"
    "não|não obrigado|cancela|cancelar|esquece|deixa pra lá|deixa para lá)",
}

_RULES = {"en": _EN_RULES, "pt": _PT_RULES}

_WHEN_AFTER = frozenset({"to", "for", "until", "till"})
"""Words after which a sentence's ``{when}`` may be a time said without "at": the
rule ``WHEN_AFTER`` there (``_when_after``), where the grammar has it (English)."""

# Template slot (hassil list) -> sub-grammar rule. Other text lists become rules.
_SLOT_RULES = {
    "item": "items",
    "shopping_list_item": "items",
    "more": "item",  # one more, said after the list: "add milk to the list and eggs"
    "amount": "amount",
    "event": "event",
    "when": "when",
    "list_name": "other_list_name",
}
_DEFAULT_WILDCARD_RULE = "title"
_LIST_INTENTS = frozenset({"shopping.add"})
_DONE_INTENTS = ("shopping.remove", "shopping.complete")
"""Sentences that take an item off the list or cross it off, after which the grammar
has why (``DONE_REASON``)."""
_LIST_TARGETS = frozenset({"r_shopping_list", "r_na_lista"})
"""Sentences whose items may be said with a pause between them ("milk, eggs, bread and
butter", "leite, ovos e pão"): ``item_list`` instead of ``items``, in the sentences of
``_LIST_INTENTS`` that name the list ("add ... to the shopping list", "adiciona ... na
lista"). Their other sentences ("add milk, eggs and bread", "we need ...") take such a
list only when it ends with "and" and an item (``items_or_series``), as people say
one: "add milk, eggs" has no list in it there. Elsewhere items are joined by "and"
("remove the milk and the eggs"). Each is a list of any length, a loop in the
automaton (``_AutomatonBuilder``): one copy of the items, two for ``items_or_series``
(after a pause, the list may not end), which took an English verifier's search from
135 to 145 MB (the copies of a first wording, three: 162)."""


# -- a small grammar tree --------------------------------------------------------------


@dataclass(frozen=True)
class Word:
    """One word."""

    text: str


@dataclass(frozen=True)
class Ref:
    """A reference to a rule of the grammar."""

    name: str


@dataclass(frozen=True)
class Seq:
    """Words and groups, in order."""

    items: tuple[Node, ...]


@dataclass(frozen=True)
class Alt:
    """One of ``items`` (or nothing if ``optional``)."""

    items: tuple[Node, ...]
    optional: bool = False


Node = Word | Ref | Seq | Alt


@dataclass(frozen=True)
class _Lit:
    """Raw template text, spaces included (word boundaries are resolved later)."""

    text: str


@dataclass(frozen=True)
class _RawSeq:
    items: tuple[_Raw, ...]


@dataclass(frozen=True)
class _RawAlt:
    items: tuple[_Raw, ...]
    optional: bool = False


_Raw = _Lit | Ref | _RawSeq | _RawAlt
_PLACEHOLDER = "\x00"


def _first_glued(node: _Raw) -> bool:
    """True if some realisation of ``node`` starts inside a word."""
    if isinstance(node, _Lit):
        return bool(node.text) and not node.text[0].isspace()
    if isinstance(node, Ref):
        return False
    if isinstance(node, _RawAlt):
        return any(_first_glued(i) for i in node.items)
    for item in node.items:
        if _first_glued(item):
            return True
        if not _nullable(item):
            return False
    return False


def _last_glued(node: _Raw) -> bool:
    if isinstance(node, _Lit):
        return bool(node.text) and not node.text[-1].isspace()
    if isinstance(node, Ref):
        return False
    if isinstance(node, _RawAlt):
        return any(_last_glued(i) for i in node.items)
    for item in reversed(node.items):
        if _last_glued(item):
            return True
        if not _nullable(item):
            return False
    return False


def _nullable(node: _Raw) -> bool:
    if isinstance(node, _Lit):
        return node.text == ""
    if isinstance(node, Ref):
        return False
    if isinstance(node, _RawAlt):
        return node.optional or any(_nullable(i) for i in node.items)
    return all(_nullable(i) for i in node.items)


def _enumerate(node: _Raw) -> list[str]:
    """Every string ``node`` produces (rule references as placeholders)."""
    if isinstance(node, _Lit):
        return [node.text]
    if isinstance(node, Ref):
        return [f" {_PLACEHOLDER}{node.name}{_PLACEHOLDER} "]
    if isinstance(node, _RawAlt):
        out = [s for i in node.items for s in _enumerate(i)]
        return [*out, ""] if node.optional else out
    strings = [""]
    for item in node.items:
        strings = [a + b for a in strings for b in _enumerate(item)]
        if len(strings) > _MAX_ENUMERATION:
            raise ValueError("template too wide to resolve a word joined across groups")
    return strings


def _from_hassil(expr: Expression, slot_rule: Callable[[str], str], prefix: str) -> _Raw:
    """Convert a hassil expression, joining text split across groups ("marca[r]")."""
    if isinstance(expr, TextChunk):
        return _Lit(expr.original_text if expr.original_text is not None else expr.text)
    if isinstance(expr, RuleReference):
        return Ref(f"{prefix}{expr.rule_name}")
    if isinstance(expr, ListReference):
        return Ref(slot_rule(expr.list_name))
    if isinstance(expr, Permutation):
        parts = [_from_hassil(i, slot_rule, prefix) for i in expr.items]
        orders = itertools.permutations(parts)
        return _RawAlt(tuple(_RawSeq(_spaced(order)) for order in orders))
    if isinstance(expr, Alternative):
        items = tuple(_from_hassil(i, slot_rule, prefix) for i in expr.items)
        return _RawAlt(items, optional=expr.is_optional)
    if isinstance(expr, Sequence):
        out: list[_Raw] = []
        for item in (_from_hassil(i, slot_rule, prefix) for i in expr.items):
            if out and _last_glued(out[-1]) and (_first_glued(item) or _nullable(item)):
                joined = [a + b for a in _enumerate(out[-1]) for b in _enumerate(item)]
                out[-1] = _RawAlt(tuple(_Lit(s) for s in dict.fromkeys(joined)))
            else:
                out.append(item)
        return _RawSeq(tuple(out))
    raise TypeError(f"unsupported template expression: {type(expr).__name__}")


def _spaced(parts: Iterable[_Raw]) -> tuple[_Raw, ...]:
    out: list[_Raw] = []
    for part in parts:
        out.extend((_Lit(" "), part))
    return tuple(out[1:])


_TOKEN_EDGE = re.compile(r"^[^\w'\x00]+|[^\w'.\x00]+$")


def _tokens(text: str) -> list[Node]:
    out: list[Node] = []
    for raw in text.split():
        if raw.startswith(_PLACEHOLDER):
            out.append(Ref(raw.strip(_PLACEHOLDER)))
            continue
        token = _TOKEN_EDGE.sub("", raw.lower())
        if token:
            out.append(Word(token))
    return out


def _words_tree(node: _Raw) -> Node:
    """Resolve raw text into words; flatten trivial groups."""
    if isinstance(node, _Lit):
        return _seq(_tokens(node.text))
    if isinstance(node, Ref):
        return node
    if isinstance(node, _RawAlt):
        items = [_words_tree(i) for i in node.items]
        optional = node.optional or any(_is_empty(i) for i in items)
        kept = tuple(dict.fromkeys(i for i in items if not _is_empty(i)))
        if not kept:
            return Seq(())
        if len(kept) == 1 and not optional:
            return kept[0]
        return Alt(kept, optional)
    return _seq([_words_tree(i) for i in node.items])


def _seq(items: Iterable[Node]) -> Node:
    flat: list[Node] = []
    for item in items:
        if isinstance(item, Seq):
            flat.extend(item.items)
        else:
            flat.append(item)
    return flat[0] if len(flat) == 1 else Seq(tuple(flat))


def _is_empty(node: Node) -> bool:
    return isinstance(node, Seq) and not node.items


def parse_template(text: str, rule_prefix: str = "") -> Node:
    """A hassil template (``"(add|put) {item} [to] <list>"``) as a grammar tree.

    ``<rule>`` references become ``Ref(rule_prefix + rule)``; ``{list}`` references
    the sub-grammar of that slot.
    """
    expr = parse_sentence(text, keep_text=True).expression
    return _words_tree(_from_hassil(expr, _slot_rule, rule_prefix))


def _slot_rule(list_name: str) -> str:
    return _SLOT_RULES.get(list_name, f"list_{list_name}")


# -- pronunciations (English: the CMU dictionary bundled with PocketSphinx) -----------

# Common words of our vocabularies that the CMU dictionary lacks.
EXTRA_PRONUNCIATIONS: Mapping[str, str] = {
    "butternut": "B AH T ER N AH T",
    "couscous": "K UW S K UW S",
    "disinfecting": "D IH S IH N F EH K T IH NG",
    "kefir": "K AH F IH R",
    "kombucha": "K AA M B UW CH AH",
    "litre": "L IY T ER",
    "litres": "L IY T ER Z",
    "mycroft": "M AY K R AO F T",
    "nabu": "N AA B UW",
    "nectarines": "N EH K T ER IY N Z",
    "nutella": "N UW T EH L AH",
    "penne": "P EH N EY",
    "pesto": "P EH S T OW",
    "ramen": "R AA M AH N",
    "refried": "R IY F R AY D",
    "rhasspy": "R AE S P IY",
    "sanitizer": "S AE N AH T AY Z ER",
    "shallots": "SH AE L AH T S",
    "sriracha": "S ER AA CH AH",
    "tilapia": "T AH L AA P IY AH",
    "yoghurt": "Y OW G ER T",
    "ziploc": "Z IH P L AA K",
}

_VOICELESS = frozenset({"P", "T", "K", "F", "TH"})
_SIBILANT = frozenset({"S", "Z", "SH", "ZH", "CH", "JH"})


@cache
def _read_cmudict() -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    """PocketSphinx's bundled US English dictionary, read once: each word's first
    variant, and the other variants of the words that have more than one."""
    import pocketsphinx  # type: ignore[import-untyped,unused-ignore]

    path = pocketsphinx.get_model_path("en-us/cmudict-en-us.dict")
    words: dict[str, str] = {}
    others: dict[str, list[str]] = {}
    with Path(path).open(encoding="utf-8") as lines:
        for line in lines:
            word, _, phones = line.strip().partition(" ")
            base, bracket, _ = word.partition("(")
            if bracket:
                others.setdefault(base, []).append(phones.strip())
            elif word:
                words[word] = phones.strip()
    return words, {word: tuple(found) for word, found in others.items()}


def cmudict() -> Mapping[str, str]:
    """Word -> phones of PocketSphinx's bundled US English dictionary (first variant)."""
    return _read_cmudict()[0]


def pronunciation(word: str, lang: str) -> str | None:
    """The phones of an English ``word`` ("pears": "P EH R Z") as the grammar spells
    it (the dictionary's, else ``derive_pronunciation``); None when it has none, or
    for another language (whose spellings rarely share a sound)."""
    if lang != "en":
        return None
    word = word.lower()
    dictionary = cmudict()
    return dictionary.get(word) or derive_pronunciation(word, dictionary)


def cmudict_variants() -> Mapping[str, tuple[str, ...]]:
    """Word -> phones of its other variants in the bundled dictionary ("tomato(2)"),
    for the words that have more than one."""
    return _read_cmudict()[1]


def _plural(phones: str) -> str:
    last = phones.rsplit(maxsplit=1)[-1]
    if last in _SIBILANT:
        return f"{phones} IH Z"
    return f"{phones} {'S' if last in _VOICELESS else 'Z'}"


def derive_pronunciation(word: str, dictionary: Mapping[str, str]) -> str | None:
    """Phones for a word the dictionary lacks, from dictionary parts; None if unknown.

    Tries hyphen/apostrophe parts, a plural or possessive "s", and a split into two
    dictionary words ("cornflakes" = "corn" + "flakes").
    """
    if word in EXTRA_PRONUNCIATIONS:
        return EXTRA_PRONUNCIATIONS[word]
    parts = [p for p in re.split(r"[-.]", word) if p]
    if len(parts) > 1:
        found = [dictionary.get(p) or derive_pronunciation(p, dictionary) for p in parts]
        if all(found):
            return " ".join(p for p in found if p)
    for suffix in ("'s", "s"):
        stem = word.removesuffix(suffix)
        if stem != word and stem in dictionary:
            return _plural(dictionary[stem])
    if word.startswith("un") and word[2:] in dictionary:
        return f"AH N {dictionary[word[2:]]}"
    for cut in range(len(word) - 4, 3, -1):  # "corn|flakes": 4+ letters each side
        left, right = word[:cut], word[cut:]
        if left in dictionary and right in dictionary and right[0] not in "aeiouy":
            return f"{dictionary[left]} {dictionary[right]}"
    return None


def _as_listed(sentence: str, items: Collection[str]) -> list[str]:
    """``items`` as ``sentence`` (a grammar's words) says them: one it says with the
    grammar's pause inside is the two items on either side ("milk eggs" of Whisper's
    "add milk eggs and bread", which ``Grammar.sentence_of`` read as "milk , eggs")."""
    padded = f" {sentence} "
    listed: list[str] = []
    for item in items:
        words = item.lower().split()
        at = next(
            (
                at
                for at in range(1, len(words))
                if f" {' '.join(words[:at])} {PAUSE} {' '.join(words[at:])} " in padded
            ),
            None,
        )
        if at is None or f" {' '.join(words)} " in padded:
            listed.append(item)
        else:
            listed += [" ".join(words[:at]), " ".join(words[at:])]
    return listed


# -- the grammar -----------------------------------------------------------------------


@dataclass(frozen=True)
class Grammar:
    """A speech grammar of one language built from the intent templates."""

    lang: str
    rules: Mapping[str, Node]
    intents: Mapping[str, tuple[str, ...]]  # intent -> its sentence rules
    items: tuple[str, ...]  # item names in the <item_name> rule
    phrases: tuple[str, ...]  # Vosk grammar mode (sample sentences and "[unk]")
    answer_phrases: tuple[str, ...]
    time_phrases: tuple[str, ...] = ()  # Vosk: samples of TIME_RULE and "[unk]"
    jsgf: str | None = None  # PocketSphinx (English)
    answers_jsgf: str | None = None
    pronunciations: Mapping[str, str] = field(default_factory=dict)  # to add to the dict
    variants: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Other pronunciations of a word the grammar spells itself (Portuguese)."""
    dropped: tuple[str, ...] = ()  # words without a pronunciation (left out)
    spellings: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Each spelling of a sound the grammar says one way where it has both ("okay",
    "ok"; "all right", "alright"): every spelling of that sound, the kept one first."""
    build_ms: float = 0.0
    key: str = ""

    @cached_property
    def words(self) -> frozenset[str]:
        """Every word the grammar can produce."""
        return frozenset(w for rule in self.rules.values() for w in _node_words(rule))

    def accepts(self, text: str, rule: str = "utterance") -> bool:
        """True if ``text`` (lower case words) is a sentence of ``rule``."""
        words = tuple(text.split())
        memo: dict[tuple[int, int], frozenset[int]] = {}
        return len(words) in _ends(Ref(rule), words, 0, self.rules, memo)

    def sentence_of(self, text: str) -> str | None:
        """Another engine's transcript ("Add 2 liters of milk, eggs and bread.") in
        this grammar's words, when it is one of its sentences: numbers and times said
        as words, case and punctuation dropped, a comma the grammar's pause where it
        has one there. None when it is not a sentence of the grammar."""
        # "3:30" as said ("three thirty"), not as a clock reads it ("... a.m.")
        spoken = speakable(_CLOCK.sub(_said_time, text), self.lang).lower()
        spoken = _MERIDIEM.sub(lambda m: f"{m.group(1)}.m.", spoken)
        with_pauses = _NOT_A_WORD.sub(" ", spoken.replace(",", f" {PAUSE} "))
        # Hesitations are the decoder's filler models', never the grammar's words.
        hesitations = _SAID_HESITATIONS.get(self.lang, frozenset())
        with_pauses = " ".join(w for w in with_pauses.split() if w not in hesitations)
        # "apples, pears, and grapes": the grammar pauses between the first two only
        oxford = re.sub(rf"{re.escape(PAUSE)}(\s+(?:and|e)\s)", r"\1", with_pauses)
        # "meio-dia" as the grammar spells it, "meio dia" as some do
        apart = with_pauses.replace("-", " ")
        candidates = (with_pauses, oxford, apart, with_pauses.replace(PAUSE, " "))
        for candidate in dict.fromkeys(candidates):
            for words in self._respellings(" ".join(candidate.split())):
                if words and self.accepts(words):
                    return words
        return self._listed(with_pauses)

    def _listed(self, text: str) -> str | None:
        """``text`` (this grammar's words, without its pause) with the grammar's pause
        put in where that makes it a sentence: Whisper writes a quick list without its
        comma ("add milk eggs and bread"). Whether the speaker paused there is for the
        audio to say: a second look weighs the pause as silence, and reports it only
        when it heard one (``pauses``). None when no place will do."""
        words = text.split()
        if PAUSE in words or not {"and", "e"} & set(words):
            return None
        for at in range(1, len(words)):
            for listed in self._respellings(" ".join([*words[:at], PAUSE, *words[at:]])):
                if self.accepts(listed):
                    return listed
        return None

    def _respellings(self, words: str) -> Iterator[str]:
        """``words``, then ``words`` with the spellings the grammar says otherwise in some
        of its places ("okay add milk": "ok add milk") replaced by the others of their
        sound: Whisper writes "Okay," where the grammar kept "ok" (and "okay" where it
        is an answer), "litres" where it kept "liters"."""
        readings = [f" {words} "]
        for spelling, others in self.spellings.items():
            if f" {spelling} " in readings[0] and len(readings) < _MAX_RESPELLINGS:
                readings += [
                    r.replace(f" {spelling} ", f" {other} ")
                    for r in readings
                    for other in others
                    if other != spelling
                ]
        yield from dict.fromkeys(r.strip() for r in readings)

    def choice(
        self, sentence: str, items: Collection[str], without: Collection[str] = ()
    ) -> Automaton | None:
        """``sentence`` (this grammar's words) as an automaton in which each of
        ``items`` (names it says) may be any item the grammar knows instead, and each
        word of an amount, a day or a time any other of its kind (``_open_words``: "two"
        any number or hour, "liters" any unit, "friday" any weekday, "tomorrow"
        "today", "p.m." "a.m."): which
        one the audio holds there is for the decoder to say. An item the sentence
        says with the grammar's pause inside (``sentence_of`` put it in a list) is the
        two items on either side. ``without``: item names left out of the choice (the
        sentence's own stay). None when an item's words are not in the sentence."""
        words = sentence.split()
        items = _as_listed(sentence, items)
        kinds = self._open_words
        item_choice = self._item_choice
        if without:
            left_out = {" ".join(n.split()) for n in without} - {i.lower() for i in items}
            item_choice = Alt(
                tuple(a for a in item_choice.items if " ".join(_node_words(a)) not in left_out)
            )
        rules: dict[str, Node] = {"item_choice": item_choice}
        rules.update({f"kind_{i}": Alt(tuple(map(Word, sorted(k)))) for i, k in enumerate(kinds)})

        def fixed(part: SequenceOf[str]) -> list[Node]:
            return [
                next((Ref(f"kind_{i}") for i, k in enumerate(kinds) if w in k), Word(w))
                for w in part
            ]

        parts: list[Node] = []
        at = 0
        for item in sorted({i.lower() for i in items}, key=sentence.find):
            # as the sentence spells it ("yoghurt" said, "yogurt" kept)
            found = (
                (i, len(span))
                for spelled in self._respellings(item)
                for span in (spelled.split(),)
                for i in range(at, len(words))
                if words[i : i + len(span)] == span
            )
            start, length = next(found, (None, 0))
            if start is None:
                return None
            parts += [*fixed(words[at:start]), Ref("item_choice")]
            at = start + length
        parts += fixed(words[at:])
        rules["sentence"] = Seq(tuple(parts))
        return compile_automaton(rules, "sentence")

    @cached_property
    def _item_choice(self) -> Alt:
        """Every item name whose words the grammar says (not a homophone it dropped)."""
        known = self.words
        return Alt(
            tuple(
                _seq(Word(w) for w in name.split())
                for name in self.items
                if all(w in known for w in name.split())
            )
        )

    @cached_property
    def _open_words(self) -> tuple[frozenset[str], ...]:
        """The words of an amount, a day or a time, by kind, that a ``choice`` leaves
        open: numbers and the hours and minutes of a time ("two", "twenty", "one",
        "noon", "midnight"; not "a"), units of one and of many ("can" also starts "can
        you"), weekdays, the days said relative to today, "a.m." and "p.m.", the parts
        of a day ("morning", "evening"), months and the days of a month. A time is as
        much what was said as an amount: Whisper wrote "remind me to call the plumber
        tomorrow at noon" for "... at ten a.m." (espeak-ng), which fitted the audio as
        well as anything, and the reminder would have been set for noon."""

        def words(rule: str, *not_these: str) -> frozenset[str]:
            node = self.rules.get(rule)
            said = frozenset(_node_words(node)) if node is not None else frozenset()
            return said - set(not_these)

        not_numbers = ("a", "an", "and", "hundred", "um", "uma", "e", "cem", "oh", "meia")
        kinds = (
            words("number", *not_numbers)
            | words("hour", *not_numbers)
            | words("minutes", *not_numbers)
            | words("day_number", *not_numbers)  # Portuguese's days of a month
            | (self.words & _NOON),
            words("unit_one", "can"),
            words("unit_many"),
            words("unit"),  # Portuguese's, of one and of many
            words("weekday"),
            words("date") & _RELATIVE_DAYS,
            words("ampm"),
            words("period"),
            words("month"),
            words("ordinal"),  # "the third" "the thirtieth"
        )
        return tuple(k for k in kinds if len(k) > 1)

    def command_rules(self) -> tuple[str, ...]:
        """The sentence rules of the intents, in order."""
        return tuple(r for rules in self.intents.values() for r in rules)


_RELATIVE_DAYS = frozenset({"today", "tomorrow", "tonight", "hoje", "amanhã"})
_NOON = frozenset({"noon", "midnight", "meio-dia", "meia-noite"})
_CLOCK = re.compile(r"\b(\d{1,2}):(\d{2})\b")


def _said_time(match: re.Match[str]) -> str:
    hour, minutes = match.groups()
    return hour if minutes == "00" else f"{hour} {int(minutes)}"


_MERIDIEM = re.compile(r"\b([ap])\.? ?m\b\.?")
_MAX_RESPELLINGS = 16  # readings of one text tried with other spellings (``_respellings``)
_NOT_A_WORD = re.compile(r"(?!(?<=\w)-(?=\w))[^\w',.]+|(?<![ap]\.m)\.(?!m\.)|(?<=\s)'|'(?=\s|$)")
"""What separates words: anything but letters, digits, apostrophes and hyphens inside
a word ("segunda-feira", "lembra-me"), the dots of "a.m." and "p.m.", and the
grammar's pause."""


def _node_words(node: Node) -> Iterator[str]:
    if isinstance(node, Word):
        yield node.text
    elif isinstance(node, Seq | Alt):
        for item in node.items:
            yield from _node_words(item)


def _ends(
    node: Node,
    words: tuple[str, ...],
    pos: int,
    rules: Mapping[str, Node],
    memo: dict[tuple[int, int], frozenset[int]],
) -> frozenset[int]:
    """Positions where a match of ``node`` starting at ``pos`` can end."""
    key = (id(node), pos)
    if key in memo:
        return memo[key]
    out: set[int] = set()
    if isinstance(node, Word):
        if pos < len(words) and words[pos] == node.text:
            out.add(pos + 1)
    elif isinstance(node, Ref):
        memo[key] = frozenset()  # no left recursion in these grammars
        out |= _ends(rules[node.name], words, pos, rules, memo)
    elif isinstance(node, Alt):
        if node.optional:
            out.add(pos)
        for item in node.items:
            out |= _ends(item, words, pos, rules, memo)
    else:
        current = {pos}
        for item in node.items:
            current = {e for p in current for e in _ends(item, words, p, rules, memo)}
            if not current:
                break
        out = current
    memo[key] = frozenset(out)
    return memo[key]


def _prune(node: Node, ok: Callable[[str], bool], void_rules: frozenset[str]) -> Node | None:
    """``node`` without the alternatives that use unpronounceable words; None if void."""
    if isinstance(node, Word):
        return node if ok(node.text) else None
    if isinstance(node, Ref):
        return None if node.name in void_rules else node
    if isinstance(node, Seq):
        items = [_prune(i, ok, void_rules) for i in node.items]
        if any(i is None for i in items):
            return None
        return Seq(tuple(i for i in items if i is not None))
    kept = tuple(p for p in (_prune(i, ok, void_rules) for i in node.items) if p is not None)
    if not kept:
        return Seq(()) if node.optional else None
    return Alt(kept, node.optional)


def _dedupe_homophones(
    node: Node, phones: Callable[[str], str], spellings: dict[str, list[str]] | None = None
) -> Node:
    """``node`` without alternatives that sound like an earlier one ("whats", "what's").

    A recogniser cannot tell them apart, so it would pick either spelling at random.
    Each dropped spelling and the one kept go into ``spellings`` (by sound).
    """
    if isinstance(node, Word | Ref):
        return node
    items = tuple(_dedupe_homophones(i, phones, spellings) for i in node.items)
    if isinstance(node, Seq):
        return Seq(items)
    seen: dict[str, str] = {}
    kept: list[Node] = []
    for item in items:
        words = _plain_words(item)
        if words is not None:
            sound = " ".join(phones(w) for w in words)
            spelled = " ".join(words)
            if sound in seen:
                if spellings is not None:
                    group = spellings.setdefault(sound, [seen[sound]])
                    if spelled not in group:
                        group.append(spelled)
                continue
            seen[sound] = spelled
        kept.append(item)
    return Alt(tuple(kept), node.optional)


def _plain_words(node: Node) -> list[str] | None:
    if isinstance(node, Word):
        return [node.text]
    if isinstance(node, Seq) and all(isinstance(i, Word) for i in node.items):
        return [i.text for i in node.items if isinstance(i, Word)]
    return None


def _prune_rules(rules: Mapping[str, Node], ok: Callable[[str], bool]) -> dict[str, Node]:
    void: set[str] = set()
    while True:
        pruned = {n: _prune(r, ok, frozenset(void)) for n, r in rules.items()}
        newly = {n for n, r in pruned.items() if r is None} - void
        if not newly:
            return {n: r for n, r in pruned.items() if r is not None}
        void |= newly


# -- a compact automaton (what PocketSphinx decodes with) ------------------------------


@dataclass(frozen=True)
class Automaton:
    """A word automaton equivalent to a rule, with shared suffixes.

    ``arcs`` are (source, target, word); a word of None is an empty transition (used
    to share large states instead of copying their arcs). ``final`` is the one end
    state.
    """

    start: int
    final: int
    n_states: int
    arcs: tuple[tuple[int, int, str | None], ...]

    @cached_property
    def _index(self) -> tuple[dict[int, list[tuple[int, str]]], dict[int, list[int]]]:
        words: dict[int, list[tuple[int, str]]] = {}
        empty: dict[int, list[int]] = {}
        for source, target, word in self.arcs:
            if word is None:
                empty.setdefault(source, []).append(target)
            else:
                words.setdefault(source, []).append((target, word))
        return words, empty

    def accepts(self, text: str) -> bool:
        """True if the words of ``text`` lead from start to the end state."""
        words, empty = self._index

        def closure(states: set[int]) -> set[int]:
            pending = list(states)
            while pending:
                for target in empty.get(pending.pop(), ()):
                    if target not in states:
                        states.add(target)
                        pending.append(target)
            return states

        current = closure({self.start})
        for word in text.split():
            current = closure({t for s in current for t, w in words.get(s, ()) if w == word})
        return self.final in current


_StateKey = tuple[frozenset[tuple[str, int]], frozenset[int]]
_COPY_LIMIT = 200  # larger states (item lists) are joined by an empty transition


class _AutomatonBuilder:
    """Right-to-left construction; identical states are shared (hash-consing). A rule
    that refers to itself at its end (right recursion, as a list of items does) is a
    loop back to its start.

    Each place an item is said, with what may follow it, is a copy of the item names,
    and they are most of the automaton. Lists were the most: each further item of one
    was a copy (98k arcs in English with the 613 groceries of bbb440d, ~160 MB of each
    PocketSphinx search, two thirds of it the last phones of words, one per right
    context). As a loop, a list costs one copy whatever its length: 57k arcs.
    One copy for all the sentences of an intent, entered from each place and left to
    whatever follows any of them, was tried: 28k arcs, the verifier 390 -> 222 MB and
    0.63x the decode time, but the sentences crossed over at the item ("buy a coffee
    to the shopping list" for "add coffee ...", which nothing understands; "tick the
    bread off ...", left out of the grammar on purpose), and `bench voice` (clean and
    reverb) lost 8 of 448 turns. One copy per sentence rule saves little (55 -> 49
    copies): the places differ by what follows them."""

    def __init__(self, rules: Mapping[str, Node]) -> None:
        self._rules = rules
        self._ids: dict[_StateKey, int] = {}
        self._states: list[_StateKey] = []
        self._memo: dict[tuple[int, int], int] = {}
        self._open: dict[tuple[str, int], int | None] = {}  # rules being compiled
        self._loops: set[int] = set()  # the states a loop goes back through
        self.final = self._intern(frozenset(), frozenset())

    def _intern(self, arcs: frozenset[tuple[str, int]], empty: frozenset[int]) -> int:
        key = (arcs, empty)
        if key not in self._ids:
            self._ids[key] = len(self._states)
            self._states.append(key)
        return self._ids[key]

    def _union(self, states: Iterable[int]) -> int:
        arcs: set[tuple[str, int]] = set()
        empty: set[int] = set()
        for state in dict.fromkeys(states):
            state_arcs, state_empty = self._states[state]
            if (
                state == self.final
                or state in self._loops
                or len(state_arcs) + len(state_empty) > _COPY_LIMIT
            ):
                empty.add(state)
            else:
                arcs |= state_arcs
                empty |= state_empty
        if not arcs and len(empty) == 1:
            return next(iter(empty))
        return self._intern(frozenset(arcs), frozenset(empty))

    def compile(self, node: Node, following: int) -> int:
        key = (id(node), following)
        if key in self._memo:
            return self._memo[key]
        if isinstance(node, Word):
            state = self._intern(frozenset({(node.text, following)}), frozenset())
        elif isinstance(node, Ref):
            state = self._rule(node.name, following)
        elif isinstance(node, Seq):
            state = following
            for item in reversed(node.items):
                state = self.compile(item, state)
        else:
            starts = [self.compile(i, following) for i in node.items]
            state = self._union([*starts, following] if node.optional else starts)
        self._memo[key] = state
        return state

    def _rule(self, name: str, following: int) -> int:
        """Rule ``name`` followed by ``following``. A rule that refers to itself again
        before ``following`` (right recursion: "<item> [and <items>]") loops back to
        a state made for it, with its start's transitions."""
        if (name, following) in self._open:
            loop = self._open[name, following]
            if loop is None:
                loop = self._open[name, following] = len(self._states)
                self._states.append((frozenset(), frozenset()))  # filled below
                self._loops.add(loop)
            return loop
        self._open[name, following] = None
        try:
            state = self.compile(self._rules[name], following)
        finally:
            loop = self._open.pop((name, following))
        if loop is not None:
            # The start's own transitions, not an empty one to it: PocketSphinx follows
            # one empty transition at a time (no closure of those it is given), and the
            # start has some (to the item names); after a chain of two, the verifier
            # heard every further item with an article ("milk, the eggs and a bread").
            self._states[loop] = self._states[state]
        return state

    def build(self, top: str) -> Automaton:
        start = self.compile(Ref(top), self.final)
        used: dict[int, int] = {}
        pending = [start]
        while pending:  # renumber the states reachable from start
            state = pending.pop()
            if state in used:
                continue
            used[state] = len(used)
            arcs, empty = self._states[state]
            pending.extend(t for _, t in arcs)
            pending.extend(empty)
        used.setdefault(self.final, len(used))
        transitions: list[tuple[int, int, str | None]] = []
        for state, number in used.items():
            arcs, empty = self._states[state]
            transitions.extend((number, used[t], w) for w, t in sorted(arcs))
            transitions.extend((number, used[t], None) for t in sorted(empty))
        return Automaton(used[start], used[self.final], len(used), tuple(transitions))


def compile_automaton(rules: Mapping[str, Node], top: str) -> Automaton:
    """The automaton of rule ``top``."""
    return _AutomatonBuilder(rules).build(top)


# -- JSGF ------------------------------------------------------------------------------

_JSGF_SAFE = re.compile(r"^[a-z0-9'][a-z0-9'.\-]*$")


def _jsgf_token(word: str) -> str:
    return word if _JSGF_SAFE.match(word) else '"' + word.replace('"', "") + '"'


def _jsgf(node: Node) -> str:
    if isinstance(node, Word):
        return _jsgf_token(node.text)
    if isinstance(node, Ref):
        return f"<{node.name}>"
    if isinstance(node, Seq):
        if not node.items:
            return "<NULL>"
        return " ".join(_jsgf(i) for i in node.items)
    body = " | ".join(_jsgf(i) for i in node.items)
    return f"[ {body} ]" if node.optional else f"( {body} )"


def _reachable(rules: Mapping[str, Node], start: str) -> list[str]:
    seen: dict[str, None] = {}
    pending = [start]
    while pending:
        name = pending.pop()
        if name in seen or name not in rules:
            continue
        seen[name] = None
        pending.extend(_refs(rules[name]))
    return list(seen)


def _refs(node: Node) -> Iterator[str]:
    if isinstance(node, Ref):
        yield node.name
    elif isinstance(node, Seq | Alt):
        for item in node.items:
            yield from _refs(item)


def to_jsgf(rules: Mapping[str, Node], top: str, name: str) -> str:
    """A JSGF grammar whose public rule ``top`` uses ``rules``."""
    lines = ["#JSGF V1.0;", f"grammar {name};"]
    for rule in _reachable(rules, top):
        visibility = "public " if rule == top else ""
        lines.append(f"{visibility}<{rule}> = {_jsgf(rules[rule])};")
    return "\n".join(lines) + "\n"


# -- Vosk phrases ----------------------------------------------------------------------


class _Sampler:
    """Round-robin expansion: every alternative is used in turn across samples."""

    def __init__(self, rules: Mapping[str, Node]) -> None:
        self._rules = rules
        self._turn: dict[int, int] = {}

    def sample(self, node: Node) -> list[str]:
        if isinstance(node, Word):
            return [node.text]
        if isinstance(node, Ref):
            return self.sample(self._rules[node.name])
        if isinstance(node, Seq):
            return [w for i in node.items for w in self.sample(i)]
        turn = self._turn.get(id(node), 0)
        self._turn[id(node)] = turn + 1
        choices = len(node.items) + (1 if node.optional else 0)
        index = turn % choices
        return [] if index == len(node.items) else self.sample(node.items[index])


def _phrases(rules: Mapping[str, Node], sentence_rules: Iterable[str]) -> tuple[str, ...]:
    sampler = _Sampler(rules)
    out: dict[str, None] = {}
    for rule in sentence_rules:
        for _ in range(_SAMPLES_PER_SENTENCE):
            out[" ".join(w for w in sampler.sample(Ref(rule)) if w != PAUSE)] = None
    for _ in range(len(_alternatives(rules["item_name"]))):  # every item at least once
        out[" ".join(sampler.sample(Ref("item")))] = None
    for _ in range(len(_alternatives(rules["event"])) * 3):
        out[" ".join(sampler.sample(Ref("event")))] = None
    out.pop("", None)
    return (*out, UNK)


def _random_phrases(rules: Mapping[str, Node], rule: str, count: int) -> Iterator[str]:
    """``count`` different sentences of ``rule`` (fewer if it has not as many), each
    alternative picked at random, the same ones every build: for a rule with too many
    sentences to list, where taking alternatives in turn (``_Sampler``) repeats."""
    pick = random.Random(rule)  # noqa: S311 - sampling a grammar, not a secret

    def sample(node: Node) -> list[str]:
        if isinstance(node, Word):
            return [node.text]
        if isinstance(node, Ref):
            return sample(rules[node.name])
        if isinstance(node, Seq):
            return [w for i in node.items for w in sample(i)]
        index = pick.randrange(len(node.items) + (1 if node.optional else 0))
        return [] if index == len(node.items) else sample(node.items[index])

    seen: set[str] = set()
    for _ in range(count * 20):
        phrase = " ".join(sample(Ref(rule)))
        if phrase not in seen:
            seen.add(phrase)
            yield phrase
            if len(seen) == count:
                return


def _alternatives(node: Node) -> tuple[Node, ...]:
    return node.items if isinstance(node, Alt) else (node,)


def _enumerate_words(node: Node, rules: Mapping[str, Node]) -> list[str]:
    if isinstance(node, Word):
        return [node.text]
    if isinstance(node, Ref):
        return _enumerate_words(rules[node.name], rules)
    if isinstance(node, Alt):
        out = [s for i in node.items for s in _enumerate_words(i, rules)]
        return [*out, ""] if node.optional else out
    strings = [""]
    for item in node.items:
        strings = [f"{a} {b}".strip() for a in strings for b in _enumerate_words(item, rules)]
    return strings


# -- building ----------------------------------------------------------------------------


def normalize_item(text: str) -> str:
    """An item name as grammar words: lower case, punctuation blanked."""
    text = re.sub(r"[^\w\s'\-]", " ", text.lower())
    return " ".join(w.strip("'-") for w in text.split() if w.strip("'-"))


@cache
def groceries(lang: str) -> tuple[str, ...]:
    """The built-in grocery vocabulary of ``lang`` (``groceries/<lang>.txt``)."""
    text = resources.files(__package__).joinpath("groceries", f"{lang}.txt").read_text("utf-8")
    names = (normalize_item(line.partition("#")[0]) for line in text.splitlines())
    return tuple(dict.fromkeys(n for n in names if n))


def _template_rules(
    lang: str,
) -> tuple[dict[str, Node], dict[str, tuple[str, ...]], frozenset[str]]:
    """The rules of the templates the verifier hears, the sentence rules of each intent,
    and those of the sentences after which any day is the one the item is needed by
    (``needed_by: any``)."""
    source: Mapping[str, Any] = load_templates(lang).source
    rules: dict[str, Node] = {}
    any_day: set[str] = set()
    for name, body in source.get("expansion_rules", {}).items():
        rules[f"r_{name}"] = parse_template(body, "r_")
    for name, spec in source.get("lists", {}).items():
        values = spec.get("values")
        if values and name not in _SLOT_RULES:
            texts = [v if isinstance(v, str) else v["in"] for v in values]
            rules[f"list_{name}"] = Alt(tuple(parse_template(t, "r_") for t in texts))
    intents: dict[str, tuple[str, ...]] = {}
    for intent, spec in source.get("intents", {}).items():
        names: list[str] = []
        for block in spec.get("data", []):
            if not verifier_hears(block):
                continue
            for sentence in block["sentences"]:
                rule = f"s_{_ident(intent)}_{len(names)}"
                rules[rule] = parse_template(sentence, "r_")
                if intent in _LIST_INTENTS:
                    named = bool(_LIST_TARGETS & set(_refs(rules[rule])))
                    listed = "item_list" if named else "items_or_series"
                    rules[rule] = _renamed(rules[rule], "items", listed)
                if WHEN_AFTER in _RULES[lang]:
                    rules[rule] = _when_after(rules[rule])
                if (block.get("metadata") or {}).get("needed_by") == "any":
                    any_day.add(rule)
                names.append(rule)
        intents[intent] = tuple(names)
    return rules, intents, frozenset(any_day)


def verifier_hears(block: Mapping[str, Any]) -> bool:
    """False for a template block marked ``verifier: false``: understood by the
    parser, left out of the grammar (the verifier confused it with another command)."""
    return (block.get("metadata") or {}).get("verifier") is not False


def _renamed(node: Node, old: str, new: str) -> Node:
    """``node`` with its references to rule ``old`` made to ``new``."""
    if isinstance(node, Ref):
        return Ref(new) if node.name == old else node
    if isinstance(node, Seq):
        return Seq(tuple(_renamed(i, old, new) for i in node.items))
    if isinstance(node, Alt):
        return Alt(tuple(_renamed(i, old, new) for i in node.items), node.optional)
    return node


def _when_after(node: Node) -> Node:
    """``node`` with each ``{when}`` that follows "to", "for" or "until" (or a group of
    only such words, "[for]") made ``WHEN_AFTER``: "move my meeting to three p.m.",
    "set a reminder for seven p.m. to call dad", said as often as with "at"."""
    if isinstance(node, Alt):
        return Alt(tuple(_when_after(i) for i in node.items), node.optional)
    if not isinstance(node, Seq):
        return node
    items = [_when_after(i) for i in node.items]
    for index in range(1, len(items)):
        if items[index] == Ref("when") and _says_only(items[index - 1], _WHEN_AFTER):
            items[index] = Ref(WHEN_AFTER)
    return Seq(tuple(items))


def _says_only(node: Node, words: Collection[str]) -> bool:
    """True if ``node`` is one of ``words``, or a group of nothing but them."""
    if isinstance(node, Word):
        return node.text in words
    if isinstance(node, Alt):
        return all(isinstance(i, Word) and i.text in words for i in node.items)
    return False


# One closing word after a command ("put coffee on the list, please"). Measured on
# PocketSphinx alone (two Piper renditions and espeak-ng, clean and in white noise at
# 20 dB): commands with a closing word went from 30 to 45 of 60 right, commands without
# one stayed at 84 of 132, chatter read as a command stayed at 8 of 84, and fewer
# utterances ended in no sentence (2 against 7). A longer tail of fillers ("for me,
# thanks") did make noisy commands end in no sentence, and "too" or "as well" after any
# command made the verifier lose "a kilo of rice" (espeak-ng's voice) in its search;
# after an added item only, they do not (``ALSO_WORDS``).
CLOSING_WORDS: dict[str, tuple[str, ...]] = {
    "en": ("please", "thanks", "thank you"),
    "pt": ("por favor", "obrigado", "obrigada"),
}
# A word that adds to what was asked before ("add carrots too"), after an item added to
# the list only. Measured through the whole turn (PocketSphinx and Whisper, the eight
# voices of ``bench voice``, quiet): of 104 such commands 62 ran, against 15 without
# these words; its own 224 commands were right as often (188, against 189: flite awb's
# "put two cans of beans on the list, thanks" was heard as "two pounds").
ALSO_WORDS: dict[str, tuple[str, ...]] = {"en": ("too", "as well", "also"), "pt": ("também",)}
# The item tail (``ITEM_TAIL``) is English only: the parser reads "coloca ovos na lista de
# novo" as nothing, and the Portuguese grammar is heard with the English acoustic model,
# where each tail is one more path for a misheard end ("... a lista e cola").
_ITEM_TAIL_LANGUAGES = frozenset({"en"})
_HESITATIONS = frozenset({"uh", "uhh", "uhm", "um", "umm", "er", "erm", "hmm", "ahn", "hum"})
_SAID_HESITATIONS = {
    "en": frozenset({"uh", "uhh", "uhm", "um", "umm", "er", "erm", "hmm"}),
    "pt": frozenset({"ahn", "hum", "hmm"}),  # "um" is "a" ("um quilo de arroz")
}
"""Another engine's words for a hesitation, by language (``Grammar.sentence_of``)."""
_NOT_A_START = frozenset({"yes", "yeah", "no", "sim", "não", "nao"})  # answers, not commands
# "and" sounds like "add": with a leading "and" alone in its grammar, the verifier heard
# "add a dozen eggs" as "and add pens and eggs" (the parser does not drop it either).
# "oh and" is in: measured through the whole turn (the eight voices of ``bench voice``,
# quiet), 43 of 80 commands said after "oh, and" ran, against 14 without it. The
# benchmark's own 224 commands: 187 right, against 191 (espeak-ng's voices lost two
# and won one that its search now finds or loses; Piper's random renditions, three).
# "go and" and "go" are Whisper's readings of "oh, and" and "oh" on flite's voices, which
# the parser drops; the verifier has "oh and" and "oh" for them.
_WHISPER_READINGS = frozenset({"go and", "go"})


def _polite_start(lang: str) -> Node:
    """The words before a command that the parser drops ("hey, could you please ...",
    "don't forget to ..."), from the lexicon's fillers and negation exemptions, so the
    verifier can hear a polite command too; and the negation words it must be able to
    hear there (``negation.heard``: "não coloca leite na lista", which the parser
    refuses). Hesitations are left to the decoder's filler models."""
    raw = load_lexicon(lang).raw
    fillers = raw["fillers"]

    def phrases(texts: Iterable[object], skip: frozenset[str]) -> tuple[Node, ...]:
        return _phrases_rule(texts, skip).items

    unheard = frozenset(str(t).lower() for t in fillers.get("unheard", ()))
    negation = raw["negation"]
    leading = phrases(
        (*fillers.get("leading", ()), *negation.get("exempt", ())),
        _HESITATIONS | _NOT_A_START | _WHISPER_READINGS | unheard,
    ) + phrases(negation.get("heard", ()), frozenset())
    anywhere = phrases(fillers.get("anywhere", ()), _HESITATIONS | unheard)
    return Alt((Seq((Alt(leading), Alt(anywhere, optional=True))), Alt(anywhere)))


def _phrases_rule(texts: Iterable[object], skip: Collection[str] = frozenset()) -> Alt:
    """One alternative for each of ``texts`` (a phrase of words, lowercased) not in
    ``skip``."""
    unique = dict.fromkeys(str(t).lower() for t in texts)
    return Alt(tuple(_seq(Word(w) for w in t.split()) for t in unique if t and t not in skip))


def _ident(text: str) -> str:
    return re.sub(r"[^a-z0-9_]", "_", text.lower())


def _slot_fallbacks(rules: dict[str, Node]) -> None:
    """Wildcard lists the templates use but no sub-grammar covers: bounded titles."""
    for name in list(_refs_of_all(rules)):
        if name not in rules and name.startswith("list_"):
            _LOGGER.debug("grammar: wildcard %s read as a title", name)
            rules[name] = Ref(_DEFAULT_WILDCARD_RULE)


def _item_names(lang: str, names: SequenceOf[str]) -> dict[str, Node]:
    """The ``item_name`` rule, and in English the names of one thing said after "a"
    (``item_one_c``: "a lemon", "a milk") or "an" (``item_one_v``: "an apple").

    They are copies, not references to parts of ``item_name``: a chain of two empty
    transitions in front of the items (item start -> ``item_name`` -> its part) made
    PocketSphinx hear "three ounce of ice" for "three apples" and "the mangoes" for
    "bananas"."""

    def alternatives(group: Iterable[str]) -> Alt:
        return Alt(tuple(_seq(Word(w) for w in n.split()) for n in group))

    if lang != "en":
        return {"item_name": alternatives(names)}
    # One thing whose plural the vocabulary has ("egg", "apple") only after a word for
    # one ("an egg"): the number words take the plural. Not the names that are also
    # said as they are ("salt and pepper", "add steak").
    every = frozenset(names)
    rules: dict[str, Node] = {
        "item_name": alternatives(
            n for n in names if n in _SAID_AS_IS or not _plural_known(n, every)
        )
    }
    one = [n for n in names if not _is_plural(n)]
    rules["item_one_c"] = alternatives(n for n in one if not _starts_with_a_vowel(n))
    rules["item_one_v"] = alternatives(n for n in one if _starts_with_a_vowel(n))
    return rules


_SAID_AS_IS = frozenset({"pepper", "steak", "sausage", "chicken breast"})
"""English names of one thing whose plural the vocabulary has, that are also said
without "a", as food ("add pepper", "add chicken breast")."""
_NOT_PLURAL = ("ss", "us", "is", "ous")
_VOWEL_PHONES = frozenset(
    {"AA", "AE", "AH", "AO", "AW", "AY", "EH", "ER", "EY", "IH", "IY", "OW", "OY", "UH", "UW"}
)


def _plural_known(name: str, names: Collection[str]) -> bool:
    """True if ``name`` is one thing ("egg", "cherry") and ``names`` has its plural."""
    if _is_plural(name):
        return False
    forms = (f"{name}s", f"{name}es", f"{name[:-1]}ies" if name.endswith("y") else "")
    return any(form in names for form in forms if form)


def _is_plural(name: str) -> bool:
    """An English item name that is more than one thing, by its last word ("green
    beans", "oats"; not "hummus", "swiss cheese")."""
    last = name.rsplit(maxsplit=1)[-1]
    return last.endswith("s") and not last.endswith(_NOT_PLURAL) and len(last) > 3


def _starts_with_a_vowel(name: str) -> bool:
    """Said with "an": its first sound is a vowel ("an onion", "a unicorn cake")."""
    first = name.split(maxsplit=1)[0]
    phones = cmudict().get(first)
    if phones is None:
        return first[:1] in "aeiou"
    return phones.split(maxsplit=1)[0].rstrip("012") in _VOWEL_PHONES


def _refs_of_all(rules: Mapping[str, Node]) -> Iterator[str]:
    for node in rules.values():
        yield from _refs(node)


def _command(
    lang: str,
    rules: dict[str, Node],
    intents: Mapping[str, tuple[str, ...]],
    any_day: Collection[str],
) -> Node:
    """The rule of a whole command: polite words, one sentence, a closing word. After
    an added item, one tail ("too", when or what for it is needed, why, and in English
    where to get it), whose rules it adds to ``rules``; after a need (``any_day``), a
    bare day too; after an item taken off or crossed off, why (``DONE_REASON``)."""
    closing = _phrases_rule(CLOSING_WORDS.get(lang, ())).items
    also = _phrases_rule(ALSO_WORDS.get(lang, ())).items
    lexicon = load_lexicon(lang).raw
    rules[REASON] = _phrases_rule(lexicon["fillers"]["reasons"])
    rules[DONE_REASON] = _phrases_rule(lexicon["fillers"]["done_reasons"])
    tails = [Ref(NEEDED_BY), Ref(REASON)]
    if lang in _ITEM_TAIL_LANGUAGES:
        rules[ITEM_TAIL] = _phrases_rule(lexicon["item_trailing"])
        tails.append(Ref(ITEM_TAIL))
    adding = [r for i in _LIST_INTENTS for r in intents.get(i, ())]
    done = [r for i in _DONE_INTENTS for r in intents.get(i, ())]
    sentences: tuple[Node, ...] = tuple(
        Ref(r) for rs in intents.values() for r in rs if r not in adding and r not in done
    )
    if done:
        why = Alt((Ref(DONE_REASON),), optional=True)
        sentences = (Seq((Alt(tuple(Ref(r) for r in done)), why)), *sentences)
    if adding:  # one tail, a single copy of each of its rules
        after = (*also, *tails)
        needs = tuple(Ref(r) for r in adding if r in any_day)
        others = tuple(Ref(r) for r in adding if r not in any_day)
        added: tuple[Node, ...] = (Seq((Alt(others), Alt(after, optional=True))),)
        if needs:  # and a bare day after a need: a copy of the items of its own
            tail = Alt((*after, Ref(DAY_NEEDED)), optional=True)
            added = (*added, Seq((Alt(needs), tail)))
        sentences = (*added, *sentences)
    return Seq(
        (
            Alt((Ref("polite_start"),), optional=True),
            Alt(sentences),
            *((Alt(closing, optional=True),) if closing else ()),
        )
    )


def _build(lang: str, items: tuple[str, ...]) -> Grammar:
    started = time.perf_counter()
    if lang not in _RULES:
        raise ValueError(f"no speech grammar for language {lang!r}")
    rules, intents, any_day = _template_rules(lang)
    for name, body in _RULES[lang].items():
        rules[name] = parse_template(body)
    rules["pause"] = Word(PAUSE)
    names = tuple(dict.fromkeys((*items, *groceries(lang))))
    rules.update(_item_names(lang, names))
    _slot_fallbacks(rules)
    sentence_rules = [r for rs in intents.values() for r in rs]
    rules["polite_start"] = _polite_start(lang)
    rules["command"] = _command(lang, rules, intents, any_day)
    rules["utterance"] = Alt((Ref("command"), Ref(ANSWER_RULE)))
    missing = set(_refs_of_all(rules)) - set(rules)
    if missing:
        raise ValueError(f"grammar rules referenced but not defined: {sorted(missing)}")

    jsgf = answers_jsgf = None
    variants: dict[str, tuple[str, ...]] = {}
    spellings: dict[str, tuple[str, ...]] = {}
    if lang == "en":
        rules, pronunciations, dropped, spellings = _english_sounds(rules)
        jsgf = to_jsgf(rules, "utterance", "appliance_en")
        answers_jsgf = to_jsgf(rules, ANSWER_RULE, "appliance_en_answers")
    else:
        pronunciations, variants, dropped = _portuguese_sounds(rules)
        rules = _prune_rules(rules, pronunciations.__contains__)
    names = tuple(n for n in names if all(w not in dropped for w in n.split()))
    if dropped:
        _LOGGER.debug("grammar %s: %d words without pronunciation dropped", lang, len(dropped))
    answer_phrases = tuple(dict.fromkeys(_enumerate_words(rules[ANSWER_RULE], rules)))
    time_phrases = dict.fromkeys(_random_phrases(rules, TIME_RULE, _TIME_SAMPLES))
    phrases = (*_phrases(rules, sentence_rules), *answer_phrases)
    key = hashlib.sha1(repr((lang, names)).encode(), usedforsecurity=False).hexdigest()[:12]
    elapsed = (time.perf_counter() - started) * 1000
    _LOGGER.info(
        "grammar %s built in %.0f ms: %d rules, %d items, %d phrases",
        lang,
        elapsed,
        len(rules),
        len(names),
        len(phrases),
    )
    return Grammar(
        lang=lang,
        rules=rules,
        intents=intents,
        items=names,
        phrases=tuple(dict.fromkeys(phrases)),
        answer_phrases=(*answer_phrases, UNK),
        time_phrases=(*time_phrases, UNK),
        jsgf=jsgf,
        answers_jsgf=answers_jsgf,
        pronunciations=pronunciations,
        variants=variants,
        dropped=tuple(dropped),
        spellings=spellings,
        build_ms=elapsed,
        key=key,
    )


def _english_sounds(
    rules: dict[str, Node],
) -> tuple[dict[str, Node], dict[str, str], list[str], dict[str, tuple[str, ...]]]:
    """The rules without words that cannot be pronounced and homophones, the words to
    add to the dictionary (derived from its parts), the words dropped, and each
    spelling of a homophone with all the spellings of its sound (``Grammar.spellings``)."""
    dictionary = cmudict()
    pronunciations = {PAUSE: PAUSE_PHONES}
    dropped: list[str] = []
    for word in sorted({w for r in rules.values() for w in _node_words(r)}):
        if word in dictionary or word in pronunciations:
            continue
        phones = derive_pronunciation(word, dictionary)
        if phones is None:
            dropped.append(word)
        else:
            pronunciations[word] = phones
    rules = _prune_rules(rules, lambda w: w in dictionary or w in pronunciations)
    sounds = {**dictionary, **pronunciations}
    by_sound: dict[str, list[str]] = {}
    rules = {n: _dedupe_homophones(r, sounds.__getitem__, by_sound) for n, r in rules.items()}
    spellings = {w: tuple(group) for group in by_sound.values() for w in group}
    return rules, pronunciations, dropped, spellings


def _portuguese_sounds(
    rules: Mapping[str, Node],
) -> tuple[dict[str, str], dict[str, tuple[str, ...]], list[str]]:
    """Every word's pronunciation in the English acoustic model's phones
    (``pt_phones``; the English dictionary is never used), its other pronunciations,
    and the words that have none. Homophones stay: "a", "à" and "há" are all read
    the same by the parser, and a second look needs every spelling Whisper writes to
    be a sentence of the grammar."""
    pronunciations = {PAUSE: PAUSE_PHONES}
    variants: dict[str, tuple[str, ...]] = {}
    dropped: list[str] = []
    for word in sorted({w for r in rules.values() for w in _node_words(r)} - {PAUSE}):
        spelled, *others = pt_phones.pronunciations(word)
        if not spelled:
            dropped.append(word)
            continue
        pronunciations[word] = spelled
        if others:
            variants[word] = tuple(others)
    return pronunciations, variants, dropped


_cache: OrderedDict[tuple[str, tuple[str, ...]], Grammar] = OrderedDict()
_cache_lock = threading.Lock()


@functools.cache
def _built_in_names(lang: str) -> frozenset[str]:
    return frozenset(n for n in (normalize_item(g) for g in groceries(lang)) if n)


def build_grammar(lang: str, items: SequenceOf[str] = ()) -> Grammar:
    """The speech grammar of ``lang`` ("en" or "pt") knowing ``items`` (cached).

    ``items`` are item names (list items, past items) added to the built-in grocery
    vocabulary; order and case do not matter.
    """
    # Items the built-in vocabulary has already do not change the grammar, so adding
    # "bread" to the list does not cost the verifier a grammar swap.
    if lang not in _RULES:
        raise ValueError(f"no speech grammar for language {lang!r}")
    built_in = _built_in_names(lang)
    names = tuple(sorted({n for n in (normalize_item(i) for i in items) if n} - built_in))
    key = (lang, names)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    grammar = _build(lang, names)
    with _cache_lock:
        _cache[key] = grammar
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return grammar
