"""The guard's word lists, English and Portuguese (folded: lower case, no accents).

``VOCABULARY`` is closed on purpose: a narration may use these words, the words of
the sentence templates, number and unit words, date words, and the words of the
receipt's own items and events. Any other word (a food, a person, a place) is
something the receipt did not say, so the sentence is refused.
"""

from __future__ import annotations

import re
from functools import cache

from appliance.actions.items import UNIT_BY_ALIAS
from appliance.narration.templates import TEMPLATES
from appliance.narration.tokens import EN_NUMBERS, PT_NUMBERS, fold, tokenize
from appliance.narration.when import EN_MONTHS, EN_WEEKDAYS, PT_MONTHS, PT_WEEKDAYS

ADD, REMOVE, CLEAR, COMPLETE, UNCOMPLETE, MOVE, SET = (
    "add", "remove", "clear", "complete", "uncomplete", "move", "set",
)  # fmt: skip
GENERIC = "generic"
"""Verbs such as "change" that fit any action when negated ("I didn't change it")."""

RELATED: dict[str, frozenset[str]] = {
    ADD: frozenset({ADD, UNCOMPLETE}),
    REMOVE: frozenset({REMOVE, CLEAR}),
    CLEAR: frozenset({CLEAR, REMOVE, COMPLETE}),
    COMPLETE: frozenset({COMPLETE, UNCOMPLETE}),
    UNCOMPLETE: frozenset({UNCOMPLETE, COMPLETE, ADD}),
    MOVE: frozenset({MOVE, ADD}),
    SET: frozenset({SET}),
}
"""Verbs a failure may use for an action: "Milk isn't checked off" (uncomplete)."""

ACTION_CATEGORY: dict[str, str] = {
    "shopping.add": ADD,
    "agenda.add": ADD,
    "shopping.remove": REMOVE,
    "agenda.remove": REMOVE,
    "shopping.clear_completed": CLEAR,
    "shopping.clear": CLEAR,
    "shopping.complete": COMPLETE,
    "shopping.uncomplete": UNCOMPLETE,
    "agenda.move": MOVE,
    "shopping.set_quantity": SET,
}


def _words(text: str) -> list[str]:
    return text.split()


def _verbs(spec: dict[str, str]) -> dict[str, frozenset[str]]:
    table: dict[str, set[str]] = {}
    for categories, words in spec.items():
        for word in words.split():
            table.setdefault(fold(word), set()).update(categories.split())
    return {word: frozenset(cats) for word, cats in table.items()}


# Verbs that claim an action was done (past tense, participles, first person).
CLAIMS: dict[str, dict[str, frozenset[str]]] = {
    "en": _verbs({
        "add": "added scheduled booked saved",
        "add uncomplete": "put",
        "remove clear": "removed deleted took cancelled canceled erased",
        "clear": "cleared",
        "complete": "checked ticked crossed completed purchased",
        "complete uncomplete": "marked",
        "uncomplete add": "reopened restored",
        "uncomplete": "unchecked unmarked unticked",
        "move": "moved rescheduled shifted pushed postponed",
        "move generic set": "changed updated",
        "set": "set",
    }),
    "pt": _verbs({
        "add": "adicionei adicionado adicionada adicionados adicionadas incluí incluído "
               "incluída incluídos anotei anotado anotada agendei agendado agendada salvei",
        "add uncomplete": "coloquei colocado colocada colocados colocadas",
        "add complete": "marquei marcado marcada marcados marcadas",
        "remove clear": "tirei tirado tirada tirados tiradas removi removido removida "
                        "removidos removidas apaguei apagado apagada excluí excluído "
                        "excluída cancelei cancelado cancelada",
        "remove uncomplete": "desmarquei desmarcado desmarcada",
        "clear": "limpei",
        "complete": "risquei riscado riscada",
        "uncomplete add": "reabri reaberto",
        "move": "movi movido movida remarquei remarcado remarcada transferi adiei adiado passei",
        "move generic set": "mudei mudado mudada alterei troquei",
        "set": "ajustei ajustado ajustada",
    }),
}  # fmt: skip

# The same actions in the infinitive/base form ("Did you want to add...?").
BASES: dict[str, dict[str, frozenset[str]]] = {
    "en": _verbs({
        "add": "add adding schedule book",
        "add uncomplete": "put",
        "remove clear": "remove delete take cancel erase",
        "clear": "clear",
        "complete": "check tick cross complete",
        "complete uncomplete": "mark",
        "uncomplete": "uncheck unmark untick reopen restore",
        "move": "move reschedule shift push postpone",
        "move generic set": "change update",
        "set": "set",
    }),
    "pt": _verbs({
        "add": "adicionar incluir anotar agendar salvar",
        "add uncomplete": "colocar",
        "add complete": "marcar",
        "remove clear": "tirar remover apagar excluir cancelar",
        "remove uncomplete": "desmarcar",
        "clear": "limpar",
        "complete": "riscar",
        "uncomplete": "reabrir",
        "move": "mover remarcar transferir adiar passar",
        "move generic set": "mudar alterar trocar",
        "set": "ajustar",
    }),
}  # fmt: skip

NEGATIONS: dict[str, frozenset[str]] = {
    "en": frozenset(
        _words(
            "not no nothing none never nobody sorry unable cannot failed empty already "
            "unfortunately"
        )
    ),
    "pt": frozenset(
        fold(w)
        for w in _words(
            "não nada nenhum nenhuma nunca ninguém desculpe desculpa infelizmente vazia vazio já"
        )
    ),
}
NEGATION_SUFFIX = "n't"

_BASE_WORDS = {
    "en": """
        i i've i'll i'm i'd you you've you're your yours we we've we're our it it's its
        they them their there there's here here's this that that's these those the a an
        to of on in at for from by with into onto about as and or but so now then also too
        just still already again yet all any some more most other others another both each
        every only total is are was were be been being has have had having do does did done
        will would can could should shall might must not no nothing none sorry please ok
        okay sure yes got get let me my mine want wanted like need needed see find found
        which what when where who whom one called named list lists shopping grocery
        groceries agenda calendar schedule appointment appointments event events item items
        thing things entry entries next upcoming left remaining currently right time day date
        dates week morning afternoon evening night tonight am pm noon midnight o'clock off
        done bought back empty database reach reached connection went wrong something
        understand understood speak language request valid saved broke hear know missing
        unable failed cannot later soon coming up out checkedoff include includes including
        plus match matching matches same already set up anything isn't aren't wasn't weren't
        don't doesn't didn't can't couldn't won't wouldn't haven't hasn't hadn't shouldn't
        there're amount quantity quantities bit because since mean meant
    """,
    "pt": """
        eu voce voces seu sua seus suas meu minha meus minhas nosso nossa o a os as um uma
        uns umas de do da dos das em no na nos nas ao aos para pra por pelo pela pelos pelas
        com sem e ou mas que ja agora ainda tambem so apenas mais outro outra outros outras
        todos todas tudo nada nenhum nenhuma nao sim desculpe desculpa infelizmente e sao
        esta estao estava estavam foi foram ser estar tem tinha ha havia ter fiz feito fazer
        isso isto esse essa este aqui la lista listas compras compra agenda calendario
        compromisso compromissos evento eventos item itens coisa coisas proximo proxima
        proximos proximas depois semana dia dias data hora horas manha tarde noite volta
        encontrei encontrado encontrar achei consegui conseguir entendi entender quis quer
        queria quiser deseja ouvir saber falo falar lingua idioma pedido valido banco dados
        conexao caiu erro deu algo errado alterado alterada mudanca salva sei certeza vazia
        vazio total chamados chamado chamada chamadas qual quais deles delas parecidos
        restantes faltam ok pronto certo comprado comprada comprados compradas passado
        passada terminaria antes comecar marcados quantidade como hoje amanha ontem entao
        pois porque porem certo
    """,
}


def _template_words(lang: str) -> set[str]:
    words: set[str] = set()
    for row in TEMPLATES.values():
        text = re.sub(r"\{[^}]*\}", " ", row.pt if lang == "pt" else row.en)
        words.update(t.text for t in tokenize(text))
    return words


@cache
def vocabulary(lang: str) -> frozenset[str]:
    """Every word a narration in ``lang`` may use besides the receipt's own words."""
    words = {fold(w) for w in _BASE_WORDS[lang].split()}
    words |= _template_words(lang)
    words |= set(CLAIMS[lang]) | set(BASES[lang]) | NEGATIONS[lang]
    words |= set(PT_NUMBERS if lang == "pt" else EN_NUMBERS)
    words |= {fold(alias) for alias in UNIT_BY_ALIAS}
    words |= {"forma", "formas", "quilo", "quilos", "kilo", "kilos"}
    names = (*PT_WEEKDAYS, *PT_MONTHS) if lang == "pt" else (*EN_WEEKDAYS, *EN_MONTHS)
    for name in names:
        words.update(t.text for t in tokenize(name))
    words |= {"segunda", "terca", "quarta", "quinta", "sexta", "feira"} if lang == "pt" else set()
    words |= set(RELATIVE_DAYS[lang]) | set(AFTER_TOMORROW[lang])
    words |= (
        {"nesta", "semana", "neste", "fim", "de", "na", "que", "vem"}
        if lang == "pt"
        else {"this", "week", "weekend", "next"}
    )
    return frozenset(words)


# Words that mark a language; a sentence with more of the other language's is refused.
MARKERS: dict[str, frozenset[str]] = {
    "en": frozenset(
        _words(
            "the is are i you your to of and it was have has there in for with from that "
            "this added removed list already not on"
        )
    ),
    "pt": frozenset(
        fold(w)
        for w in _words(
            "o os de da do na e é está estão você sua seu não já lista "
            "tem para há foi adicionei coloquei tirei compras compromisso"
        )
    ),
}

# Day words, folded: relative days and their offsets from today.
RELATIVE_DAYS: dict[str, dict[str, int]] = {
    "en": {"today": 0, "tonight": 0, "tomorrow": 1, "yesterday": -1},
    "pt": {"hoje": 0, "amanha": 1, "ontem": -1},
}
AFTER_TOMORROW: dict[str, tuple[str, ...]] = {
    "en": ("day", "after", "tomorrow"),
    "pt": ("depois", "de", "amanha"),
}
WEEKDAYS: dict[str, dict[str, int]] = {
    "en": {fold(d): i for i, d in enumerate(EN_WEEKDAYS)},
    "pt": {"segunda": 0, "terca": 1, "quarta": 2, "quinta": 3, "sexta": 4, "sabado": 5,
           "domingo": 6},
}  # fmt: skip
MONTHS: dict[str, dict[str, int]] = {
    "en": {fold(m): i + 1 for i, m in enumerate(EN_MONTHS)},
    "pt": {fold(m): i + 1 for i, m in enumerate(PT_MONTHS)},
}
AMBIGUOUS_MONTHS = frozenset({"may", "march"})
"""English month names that are also verbs: dates only next to a number."""
MORE_WORDS = frozenset({"more", "others", "other", "mais", "outros", "outras", "restantes"})
TOTAL_WORDS = frozenset({"now", "total", "agora", "todo"})
"""Words that present a merged quantity as the new total ("now has 3 liters")."""
