"""Pedidos em português do Brasil -> o Command exato que o usuário espera (ou nenhum).

Relógio fixo: segunda-feira 2026-11-30 10:00 em São Paulo.
"""

from __future__ import annotations

import datetime as dt
from functools import cache
from zoneinfo import ZoneInfo

import pytest

from appliance.intents import IntentParser, ParseResult
from appliance.protocol.commands import (
    AgendaAdd,
    AgendaList,
    AgendaMove,
    AgendaNext,
    AgendaRemove,
    Command,
    ShoppingAdd,
    ShoppingClear,
    ShoppingClearCompleted,
    ShoppingComplete,
    ShoppingList,
    ShoppingRemove,
    ShoppingSetQuantity,
    ShoppingUncomplete,
)

SP = ZoneInfo("America/Sao_Paulo")
NOW = dt.datetime(2026, 11, 30, 10, 0, tzinfo=SP)  # segunda-feira


@cache
def parser() -> IntentParser:
    return IntentParser(timezone="America/Sao_Paulo")


def parse(text: str, lang: str = "pt", now: dt.datetime = NOW) -> ParseResult:
    return parser().parse(text, lang=lang, now=now)


def at(month: int, day: int, hour: int, minute: int = 0, year: int = 2026) -> dt.datetime:
    return dt.datetime(year, month, day, hour, minute, tzinfo=SP)


def assert_command(text: str, expected: Command) -> None:
    result = parse(text)
    assert result.command == expected, (text, result)
    assert result.intent == expected.action
    assert result.reason is None
    assert result.commands == (expected,)
    assert result.ask_time is None  # a time was said, or only a date


# -- compras: adicionar ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "adicione dois litros de leite à lista de compras",
            ShoppingAdd(item="leite", quantity=2, unit="l"),
        ),
        ("coloca ovos na lista", ShoppingAdd(item="ovos")),
        ("Adiciona leite na lista de compras.", ShoppingAdd(item="leite")),
        ("põe arroz na lista do mercado", ShoppingAdd(item="arroz")),
        ("bota sabão em pó na lista", ShoppingAdd(item="sabão em pó")),
        ("joga banana na lista", ShoppingAdd(item="banana")),
        ("adiciona café", ShoppingAdd(item="café")),
        ("adiciona o pão na minha lista", ShoppingAdd(item="pão")),
        # sem acento (teclado ou ASR)
        ("adiciona cafe na lista", ShoppingAdd(item="cafe")),
        ("poe acucar na lista", ShoppingAdd(item="acucar")),
        # quantidades
        ("adiciona um quilo e meio de arroz", ShoppingAdd(item="arroz", quantity=1.5, unit="kg")),
        ("adiciona 1,5 kg de arroz", ShoppingAdd(item="arroz", quantity=1.5, unit="kg")),
        (
            "adiciona meio quilo de carne moída",
            ShoppingAdd(item="carne moída", quantity=0.5, unit="kg"),
        ),
        ("adiciona três bananas", ShoppingAdd(item="bananas", quantity=3)),
        ("adiciona tres bananas", ShoppingAdd(item="bananas", quantity=3)),
        ("adiciona uma dúzia de ovos", ShoppingAdd(item="ovos", quantity=1, unit="dozen")),
        ("adiciona duas dúzias de ovos", ShoppingAdd(item="ovos", quantity=2, unit="dozen")),
        ("adiciona meia dúzia de ovos", ShoppingAdd(item="ovos", quantity=0.5, unit="dozen")),
        (
            "adiciona um quarto de quilo de presunto",
            ShoppingAdd(item="presunto", quantity=0.25, unit="kg"),
        ),
        (
            "coloque duas caixas de leite na lista",
            ShoppingAdd(item="leite", quantity=2, unit="box"),
        ),
        ("adiciona vinte e um pães", ShoppingAdd(item="pães", quantity=21)),
        ("adiciona 200 gramas de queijo", ShoppingAdd(item="queijo", quantity=200, unit="g")),
        # "um/uma" sem unidade é artigo: sem quantidade
        ("adiciona um ovo", ShoppingAdd(item="ovo")),
        ("adiciona uma melancia na lista", ShoppingAdd(item="melancia")),
        ("adiciona alguns tomates", ShoppingAdd(item="tomates")),
        ("adiciona mais leite", ShoppingAdd(item="leite")),
        ("adiciona romeu e julieta", ShoppingAdd(item="romeu e julieta")),
        # uma quantidade depois de um artigo; não uma hora ("às duas")
        ("adiciona as duas cervejas", ShoppingAdd(item="cervejas", quantity=2)),
        ("adiciona as 3 bananas na lista", ShoppingAdd(item="bananas", quantity=3)),
        (
            "adiciona os dois pacotes de arroz",
            ShoppingAdd(item="arroz", quantity=2, unit="pack"),
        ),
        ("adiciona a meia dúzia de ovos", ShoppingAdd(item="ovos", quantity=0.5, unit="dozen")),
        ("adiciona 3 ou 4 maçãs", ShoppingAdd(item="3 ou 4 maçãs")),
        ("adiciona 3 maçãs ou 4 peras", ShoppingAdd(item="3 maçãs ou 4 peras")),
        # uma quantidade aproximada é a quantidade
        ("coloca por volta de três maçãs na lista", ShoppingAdd(item="maçãs", quantity=3)),
        (
            "adiciona cerca de dois quilos de frango",
            ShoppingAdd(item="frango", quantity=2, unit="kg"),
        ),
        # outras formas
        ("acabou o café", ShoppingAdd(item="café")),
        ("o leite acabou", ShoppingAdd(item="leite")),
        ("o café está acabando", ShoppingAdd(item="café")),
        ("usei o último ovo", ShoppingAdd(item="ovo")),
        ("preciso comprar pilhas", ShoppingAdd(item="pilhas")),
        ("me lembra pra comprar pão", ShoppingAdd(item="pão")),
        ("não esquece de colocar leite na lista", ShoppingAdd(item="leite")),
        # ruído de ASR
        ("é... adiciona café por favor, obrigado", ShoppingAdd(item="café")),
        ("hum, adiciona, hum, café", ShoppingAdd(item="café")),
        ("anota aí, papel toalha", ShoppingAdd(item="papel toalha")),
        ("coloca leite na lista quando der", ShoppingAdd(item="leite")),
        ("põe pão na lista se puder", ShoppingAdd(item="pão")),
        # a lista antes do item
        ("coloca na lista de compras arroz", ShoppingAdd(item="arroz")),
        ("Oi, você pode colocar detergente na lista?", ShoppingAdd(item="detergente")),
        # "também" onde for dito, nunca parte de um item
        ("adiciona também manteiga", ShoppingAdd(item="manteiga")),
        ("quero que você adicione leite", ShoppingAdd(item="leite")),
        ("põe manteiga também na lista", ShoppingAdd(item="manteiga")),
        # uma gravação que começa com a palavra de ativação do satélite
        ("Hey Jarvis, põe leite na lista", ShoppingAdd(item="leite")),
        ("Ok Nabu, adiciona café", ShoppingAdd(item="café")),
    ],
)
def test_shopping_add(text: str, expected: Command) -> None:
    assert_command(text, expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("adiciona arroz e feijão", (ShoppingAdd(item="arroz"), ShoppingAdd(item="feijão"))),
        ("adiciona café e depois açúcar", (ShoppingAdd(item="café"), ShoppingAdd(item="açúcar"))),
        (
            "adiciona leite, pão e uma dúzia de ovos na lista",
            (
                ShoppingAdd(item="leite"),
                ShoppingAdd(item="pão"),
                ShoppingAdd(item="ovos", quantity=1, unit="dozen"),
            ),
        ),
        (
            "coloca um quilo e meio de arroz e dois litros de leite na lista",
            (
                ShoppingAdd(item="arroz", quantity=1.5, unit="kg"),
                ShoppingAdd(item="leite", quantity=2, unit="l"),
            ),
        ),
        # a count starts another counted item (a list transcribed without its commas)
        (
            "adiciona dois litros de leite três maçãs na lista",
            (
                ShoppingAdd(item="leite", quantity=2, unit="l"),
                ShoppingAdd(item="maçãs", quantity=3),
            ),
        ),
        (
            "Põe na lista: leite, ovos e manteiga.",
            (ShoppingAdd(item="leite"), ShoppingAdd(item="ovos"), ShoppingAdd(item="manteiga")),
        ),
    ],
)
def test_several_items(text: str, expected: tuple[Command, ...]) -> None:
    result = parse(text)
    assert result.command is None
    assert result.reason == "multiple_items"
    assert result.commands == expected


# -- compras: tirar / comprado / desmarcar ------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("tira o leite da lista", ShoppingRemove(item="leite")),
        ("tira o leite, já comprei", ShoppingRemove(item="leite")),
        ("risca o pão, já temos", ShoppingComplete(item="pão")),
        ("remove o sabão da lista de compras", ShoppingRemove(item="sabão")),
        ("apaga os ovos", ShoppingRemove(item="ovos")),
        ("exclui a manteiga da minha lista", ShoppingRemove(item="manteiga")),
        ("comprei leite", ShoppingComplete(item="leite")),
        ("comprei o leite hoje cedo", ShoppingComplete(item="leite")),
        ("peguei os ovos no mercado", ShoppingComplete(item="ovos")),
        ("já comprei o pão", ShoppingComplete(item="pão")),
        ("peguei os ovos", ShoppingComplete(item="ovos")),
        ("marca o leite como comprado", ShoppingComplete(item="leite")),
        ("marque o café como comprado na lista", ShoppingComplete(item="café")),
        ("risca o pão da lista", ShoppingComplete(item="pão")),
        ("desmarca os ovos", ShoppingUncomplete(item="ovos")),
        ("volta o leite pra lista", ShoppingUncomplete(item="leite")),
        ("põe o leite de volta na lista", ShoppingUncomplete(item="leite")),
    ],
)
def test_shopping_item_actions(text: str, expected: Command) -> None:
    assert_command(text, expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("muda o leite para dois litros", ShoppingSetQuantity(item="leite", quantity=2, unit="l")),
        ("altera a quantidade de maçãs para cinco", ShoppingSetQuantity(item="maçãs", quantity=5)),
        ("troca os ovos pra uma dúzia", ShoppingSetQuantity(item="ovos", quantity=1, unit="dozen")),
        ("muda pra três maçãs", ShoppingSetQuantity(item="maçãs", quantity=3)),
        ("muda leite pra 3", ShoppingSetQuantity(item="leite", quantity=3)),  # not 3 o'clock
        ("aumenta as maçãs pra cinco", ShoppingSetQuantity(item="maçãs", quantity=5)),
        ("diminui os ovos para seis", ShoppingSetQuantity(item="ovos", quantity=6)),
        ("na verdade, muda isso pra dois litros de leite",
         ShoppingSetQuantity(item="leite", quantity=2, unit="l")),
        ("a gente precisa de três maçãs então", ShoppingSetQuantity(item="maçãs", quantity=3)),
    ],
)  # fmt: skip
def test_how_much_of_an_item(text: str, expected: Command) -> None:
    assert_command(text, expected)


def test_a_request_corrected_as_it_is_said_is_not_run() -> None:
    result = parse("adiciona duas maçãs, muda pra três")  # nenhum item "muda pra três"
    assert result.commands == (ShoppingAdd(item="maçãs", quantity=3),)
    assert result.ask and result.negated  # perguntado, nunca executado


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("me lembra de ligar pra mãe às cinco, não, às seis",
         AgendaAdd(title="ligar pra mãe", start=at(11, 30, 18))),
        ("me lembra de ligar pra mãe às cinco, quer dizer, às seis",
         AgendaAdd(title="ligar pra mãe", start=at(11, 30, 18))),
        ("marca dentista na sexta às três, não, na quinta",
         AgendaAdd(title="dentista", start=at(12, 3, 15))),
        ("muda o dentista pra sexta, quer dizer, quinta",
         AgendaMove(title="dentista", new_start=dt.date(2026, 12, 3))),
    ],
)  # fmt: skip
def test_um_dia_ou_hora_corrigido_ao_dizer_e_perguntado_corrigido(
    text: str, expected: Command
) -> None:
    result = parse(text)
    assert result.commands == (expected,)
    assert result.ask and result.negated


def test_how_much_of_the_item_last_talked_about() -> None:
    said = parser().parse("na verdade, muda pra três", lang="pt", now=NOW, last_item="maçãs")
    assert said.commands == (ShoppingSetQuantity(item="maçãs", quantity=3),)
    assert parse("muda pra três").reason == "missing_slot:item"
    removed = parser().parse("tira isso da lista", lang="pt", now=NOW, last_item="leite")
    assert removed.commands == (ShoppingRemove(item="leite"),)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("coloca mais dois", ShoppingAdd(item="leite", quantity=2, more=True)),
        ("adiciona mais dois litros", ShoppingAdd(item="leite", quantity=2, unit="l", more=True)),
        ("adiciona mais um", ShoppingAdd(item="leite", quantity=1, more=True)),
        ("coloca outro na lista", ShoppingAdd(item="leite", quantity=1, more=True)),
        ("coloca mais duas maçãs na lista", ShoppingAdd(item="maçãs", quantity=2)),
    ],
)
def test_more_of_the_item_last_talked_about(text: str, expected: Command) -> None:
    result = parser().parse(text, lang="pt", now=NOW, last_item="leite")
    assert result.commands == (expected,)


@pytest.mark.parametrize("text", ["adiciona outro", "adiciona mais um", "coloca mais uma"])
def test_more_of_nothing_talked_about_is_no_item(text: str) -> None:
    result = parse(text)  # nunca um item chamado "outro" ou "um"
    assert (result.commands, result.reason) == ((), "missing_slot:item")


@pytest.mark.parametrize(
    "text", ["deixa pra lá", "troca leite por café", "muda pra leite de aveia"]
)
def test_no_quantity_is_set_unless_one_is_said(text: str) -> None:
    assert not any(c.action == "shopping.set_quantity" for c in parse(text).commands)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("o que tem na minha lista de compras", ShoppingList()),
        ("o que tem na lista", ShoppingList()),
        ("o que mais tem na lista", ShoppingList()),
        ("o que tá faltando", ShoppingList()),
        ("o que tem na lista?", ShoppingList()),
        ("lê a lista de compras", ShoppingList()),
        ("me fala a lista", ShoppingList()),
        ("o que eu preciso comprar", ShoppingList()),
        ("o que falta comprar", ShoppingList()),
        ("quais são os itens da lista", ShoppingList()),
        ("tem mais alguma coisa na lista", ShoppingList()),
        # a lista, não a agenda do dia
        ("o que tem na lista hoje", ShoppingList()),
        ("o que eu preciso comprar pra hoje", ShoppingList()),
        ("mostra a lista toda", ShoppingList(include_completed=True)),
        ("limpa os itens marcados", ShoppingClearCompleted()),
        ("limpa os itens comprados", ShoppingClearCompleted()),
        ("apaga os itens marcados da lista", ShoppingClearCompleted()),
        ("remove os concluídos", ShoppingClearCompleted()),
    ],
)
def test_shopping_list_and_clear(text: str, expected: Command) -> None:
    assert_command(text, expected)


@pytest.mark.parametrize(
    ("text", "item"),
    [
        ("tem leite na lista", "leite"),
        ("já tem ovos na lista de compras?", "ovos"),
        ("o café está na lista", "café"),
        ("os ovos já estão na minha lista", "ovos"),
        ("a gente já colocou pão na lista", "pão"),
        ("quantos ovos tem na lista", "ovos"),
        ("quanto leite a gente precisa comprar", "leite"),
        ("já coloquei leite na lista", "leite"),
        ("quanto de leite eu preciso", "leite"),
        ("vê se tem leite na lista", "leite"),
        ("confere se o café está na lista", "café"),
    ],
)
def test_one_item_on_the_list(text: str, item: str) -> None:
    assert_command(text, ShoppingList(item=item))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("anota aí feijão", ShoppingAdd(item="feijão")),
        ("tá faltando leite", ShoppingAdd(item="leite")),
        ("o que eu preciso comprar no mercado", ShoppingList()),
        # without it: out of it
        ("tô sem café", ShoppingAdd(item="café")),
        ("a gente tá sem ovo", ShoppingAdd(item="ovo")),
        ("estamos sem papel higiênico", ShoppingAdd(item="papel higiênico")),
        ("fiquei sem arroz", ShoppingAdd(item="arroz")),
    ],
)
def test_more_kitchen_phrasings(text: str, expected: Command) -> None:
    assert_command(text, expected)


@pytest.mark.parametrize(
    "text",
    ["limpa a lista", "esvazia a lista de compras", "tira tudo da lista", "apaga a lista toda"],
)
def test_emptying_the_whole_list_is_always_asked(text: str) -> None:
    result = parse(text)
    assert result.commands == (ShoppingClear(),)
    assert result.ask


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("compra flores pra sexta", ShoppingAdd(item="flores")),
        ("preciso comprar leite até amanhã", ShoppingAdd(item="leite")),
        ("precisamos de leite amanhã", ShoppingAdd(item="leite")),
        ("preciso de ovos pro fim de semana", ShoppingAdd(item="ovos")),
        ("adiciona ovos na lista pra sábado", ShoppingAdd(item="ovos")),
        ("adiciona ovos pra sábado na lista", ShoppingAdd(item="ovos")),
        ("põe leite na lista pro fim de semana", ShoppingAdd(item="leite")),
        ("adiciona leite pro café da manhã", ShoppingAdd(item="leite")),
        ("vou precisar de ovos", ShoppingAdd(item="ovos")),
        ("preciso de ovos pro bolo", ShoppingAdd(item="ovos")),
        ("coloca leite na lista que acabou", ShoppingAdd(item="leite")),
        ("coloca café na lista porque tá acabando", ShoppingAdd(item="café")),
        # o que acabou, dito antes ou depois do item, continua um pedido
        ("o leite acabou", ShoppingAdd(item="leite")),
        ("o café tá acabando", ShoppingAdd(item="café")),
        ("compra pão na volta", ShoppingAdd(item="pão")),
        ("compra farinha pra fazer pão", ShoppingAdd(item="farinha")),
        ("coloca ovos na lista pra fazer bolo", ShoppingAdd(item="ovos")),
        ("a gente vai precisar de mais leite amanhã", ShoppingAdd(item="leite")),
    ],
)
def test_quando_o_item_e_preciso_nao_e_parte_dele(text: str, expected: Command) -> None:
    assert_command(text, expected)
    assert not parse(text).ask


def test_precisar_comprar_alguma_coisa_le_a_lista() -> None:
    assert parse("precisa comprar alguma coisa").commands == (ShoppingList(),)


def test_itens_ditos_depois_da_lista_tambem_entram() -> None:
    assert parse("coloca leite na lista e ovos").commands == (
        ShoppingAdd(item="leite"),
        ShoppingAdd(item="ovos"),
    )
    assert parse("põe leite na lista e também pão").commands == (
        ShoppingAdd(item="leite"),
        ShoppingAdd(item="pão"),
    )
    result = parse("coloca leite na lista e me lembra de ligar pra mãe")
    assert result.commands == ()
    assert result.reason == "two_requests"


def test_um_dia_para_comprar_ainda_e_um_lembrete() -> None:
    assert parse("me lembra de comprar leite amanhã").commands == (
        AgendaAdd(title="comprar leite", start=dt.date(2026, 12, 1)),
    )
    assert parse("adiciona ovos na lista às oito").commands == ()


def test_a_date_without_a_list_named_is_only_a_guess() -> None:
    result = parse("adiciona dentista na sexta")
    assert result.commands == (AgendaAdd(title="dentista", start=dt.date(2026, 12, 4)),)
    assert result.ask
    assert not parse("adiciona dentista na sexta na agenda").ask
    assert parse("marca academia toda terça às sete na agenda").reason == "recurring"
    assert parse("marca academia às terças às sete da noite").reason == "recurring"
    assert parse("adiciona aula de piano nas segundas-feiras na agenda").reason == "recurring"
    assert parse("marca academia na terça às sete da noite").commands


@pytest.mark.parametrize(
    "text",
    [
        "coloca ovos na lista de tarefas",
        "o que tem na minha lista de tarefas",
        "tira o leite da lista de presentes",
    ],
)
def test_other_lists_are_refused(text: str) -> None:
    result = parse(text)
    assert result.command is None
    assert result.reason == "unknown_list"


# -- agenda -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "marca dentista amanhã às 15h na agenda",
            AgendaAdd(title="dentista", start=at(12, 1, 15)),
        ),
        (
            "marca dentista amanha as 15h na agenda",
            AgendaAdd(title="dentista", start=at(12, 1, 15)),
        ),
        ("marca dentista amanhã às 15h", AgendaAdd(title="dentista", start=at(12, 1, 15))),
        # "pra" depois de "me lembra", e "me avisa"
        ("me lembra às 5 pra tirar o bolo", AgendaAdd(title="tirar o bolo", start=at(11, 30, 17))),
        (
            "me lembra pra ligar pra mãe amanhã às 10",
            AgendaAdd(title="ligar pra mãe", start=at(12, 1, 10)),
        ),
        (
            "me avisa amanhã às 8 de ligar pro médico",
            AgendaAdd(title="ligar pro médico", start=at(12, 1, 8)),
        ),
        ("coloca na agenda reunião amanhã às 9", AgendaAdd(title="reunião", start=at(12, 1, 9))),
        (
            "marca uma reunião com o João amanhã às 10h",
            AgendaAdd(title="reunião com o João", start=at(12, 1, 10)),
        ),
        (
            "marca dentista na agenda amanhã às 15h",
            AgendaAdd(title="dentista", start=at(12, 1, 15)),
        ),
        ("agenda reunião na sexta às 10", AgendaAdd(title="reunião", start=at(12, 4, 10))),
        (
            "agenda reunião com a Ana sexta-feira que vem às 10",
            AgendaAdd(title="reunião com a Ana", start=at(12, 4, 10)),
        ),
        ("agenda reunião na próxima segunda às 9", AgendaAdd(title="reunião", start=at(12, 7, 9))),
        ("marca dentista dia 5 às 10 da manhã", AgendaAdd(title="dentista", start=at(12, 5, 10))),
        (
            "marca consulta no dentista amanhã às 3 da tarde",
            AgendaAdd(title="consulta no dentista", start=at(12, 1, 15)),
        ),
        ("marca jantar amanhã às 8 da noite", AgendaAdd(title="jantar", start=at(12, 1, 20))),
        (
            "agendar almoço com a Ana dia 5 ao meio-dia",
            AgendaAdd(title="almoço com a Ana", start=at(12, 5, 12)),
        ),
        ("agenda jantar sábado às 20h", AgendaAdd(title="jantar", start=at(12, 5, 20))),
        ("agenda reunião às 16h30", AgendaAdd(title="reunião", start=at(11, 30, 16, 30))),
        # "7h" escrito é hora de 24 horas; "às 7" sozinho é lido como 19h
        ("agenda academia amanhã às 7h", AgendaAdd(title="academia", start=at(12, 1, 7))),
        ("agenda academia amanhã às 7", AgendaAdd(title="academia", start=at(12, 1, 19))),
        (
            "agenda academia amanhã às sete da manhã",
            AgendaAdd(title="academia", start=at(12, 1, 7)),
        ),
        (
            "agenda aniversário da Maria 12 de dezembro",
            AgendaAdd(title="aniversário da Maria", start=dt.date(2026, 12, 12)),
        ),
        (
            "agenda férias primeiro de janeiro",
            AgendaAdd(title="férias", start=dt.date(2027, 1, 1)),
        ),
        # dia inteiro: data sem hora
        (
            "marca dentista amanhã na agenda",
            AgendaAdd(title="dentista", start=dt.date(2026, 12, 1)),
        ),
        # um dia da semana que vem (de segunda a domingo): quarta é dia 9, não dia 2
        (
            "marca dentista na quarta da semana que vem às 3",
            AgendaAdd(title="dentista", start=at(12, 9, 15)),
        ),
        (
            "me lembra semana que vem na sexta de ligar pro banco",
            AgendaAdd(title="ligar pro banco", start=dt.date(2026, 12, 11)),
        ),
        # fim, duração, local
        (
            "agenda reunião amanhã das 14h às 15h30",
            AgendaAdd(title="reunião", start=at(12, 1, 14), end=at(12, 1, 15, 30)),
        ),
        (
            "agenda academia amanhã às 7h por uma hora e meia",
            AgendaAdd(title="academia", start=at(12, 1, 7), duration_minutes=90),
        ),
        (
            "marca consulta hoje à noite às 8 no consultório por uma hora",
            AgendaAdd(
                title="consulta",
                start=at(11, 30, 20),
                duration_minutes=60,
                location="consultório",
            ),
        ),
        (
            "agenda reunião na próxima segunda às 9 no escritório",
            AgendaAdd(title="reunião", start=at(12, 7, 9), location="escritório"),
        ),
    ],
)
def test_agenda_add(text: str, expected: Command) -> None:
    assert_command(text, expected)


# -- agenda: daqui a ... ------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "adiciona leite e tira os ovos",
        "adiciona ovos e me lembra de ligar pra mãe às 5",
        "me lembra de ligar pra mãe às 5 e adiciona ovos",
        "marca o dentista amanhã às 3 e depois me lembra de ligar pra mãe",
    ],
)
def test_two_requests_in_one_do_nothing(text: str) -> None:
    result = parse(text)
    assert (result.commands, result.reason) == ((), "two_requests")


@pytest.mark.parametrize(
    ("text", "title", "start"),
    [
        ("tenho dentista sexta às três", "dentista", at(12, 4, 15)),
        ("tenho que ligar pra mãe amanhã às 9", "ligar pra mãe", at(12, 1, 9)),
        ("preciso comprar pão às cinco", "comprar pão", at(11, 30, 17)),
    ],
)
def test_um_compromisso_contado_com_hora_e_perguntado(
    text: str, title: str, start: dt.datetime
) -> None:
    # "tenho ..." conta, não pede: o compromisso é proposto, nunca feito sem perguntar
    result = parse(text)
    assert result.commands == (AgendaAdd(title=title, start=start),)
    assert result.ask
    for chatter in ("tenho uma pergunta", "tenho que sair às cinco", "temos dois filhos"):
        assert not parse(chatter).commands, chatter


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("não esquece o leite", ShoppingAdd(item="leite")),
        ("não se esqueça das bananas", ShoppingAdd(item="bananas")),
        # sem verbo: uma quantidade numa unidade
        ("mais um pacote de café", ShoppingAdd(item="café", quantity=1, unit="pack")),
        ("outra caixa de leite na lista", ShoppingAdd(item="leite", quantity=1, unit="box")),
    ],
)
def test_nao_esquece_alguma_coisa_e_uma_compra_perguntada(text: str, expected: Command) -> None:
    result = parse(text)
    assert (result.commands, result.ask) == ((expected,), True)
    assert parse("mais uma coisa").commands == ()  # sem unidade, não é item


@pytest.mark.parametrize(
    ("text", "title", "expected"),
    [
        # depois de "às", uma hora continua hora quando só vem depois dela o que vem
        # depois de uma hora, ou outra data
        ("marca reunião às 3 com o joão", "reunião com o joão", at(11, 30, 15)),
        ("me lembra de ligar pra mãe pelas 5 amanhã", "ligar pra mãe", at(12, 1, 17)),
        ("me lembra às 8 de ligar pra mãe", "ligar pra mãe", at(11, 30, 20)),
        # o dia da semana dito com a data em que cai: essa data
        ("marca dentista sexta-feira, 11 de dezembro, às 15h", "dentista", at(12, 11, 15)),
    ],
)
def test_uma_hora_depois_de_as_continua_hora(text: str, title: str, expected: dt.datetime) -> None:
    assert parse(text).commands == (AgendaAdd(title=title, start=expected),)


def test_one_task_of_two_steps_is_one_entry() -> None:
    result = parse("me lembra de tirar o bolo e desligar o forno às 5")
    assert result.commands == (
        AgendaAdd(title="tirar o bolo e desligar o forno", start=at(11, 30, 17)),
    )


@pytest.mark.parametrize(
    ("text", "hour", "expected"),
    [
        # "às 8" dito às 10h: a desta noite; às 6h, a desta manhã; às 22h, a de amanhã cedo
        ("me lembra às 8 de ligar pra mãe", 10, at(11, 30, 20)),
        ("me lembra às oito e meia de ligar pra mãe", 10, at(11, 30, 20, 30)),
        ("me lembra às 8 de ligar pra mãe", 6, at(11, 30, 8)),
        ("me lembra às 8 de ligar pra mãe", 22, at(12, 1, 8)),
        # dito com a metade do dia, ou em 24 horas: uma leitura só
        ("me lembra às 8 da manhã de ligar pra mãe", 10, at(12, 1, 8)),
        ("me lembra às 20h de ligar pra mãe", 21, at(12, 1, 20)),
    ],
)
def test_a_bare_hour_is_the_next_of_its_two_readings(
    text: str, hour: int, expected: dt.datetime
) -> None:
    result = parse(text, now=NOW.replace(hour=hour))
    assert result.commands == (AgendaAdd(title="ligar pra mãe", start=expected),), result


# Os segundos caem: "daqui a 20 minutos" dito às 10:07:33 é 10:27.
NOW_WITH_SECONDS = dt.datetime(2026, 11, 30, 10, 7, 33, 250_000, tzinfo=SP)


@pytest.mark.parametrize(
    ("text", "title", "minutes"),
    [
        ("me lembra daqui a 20 minutos de tirar o bolo", "tirar o bolo", 20),
        ("me lembra de desligar o forno daqui a meia hora", "desligar o forno", 30),
        ("me lembra daqui a uma hora de ligar pra mãe", "ligar pra mãe", 60),
        ("me lembra daqui a duas horas de ligar pra mãe", "ligar pra mãe", 120),
        ("me lembra em 20 minutos de tirar o bolo", "tirar o bolo", 20),
        ("me lembra de tirar o bolo em vinte minutos", "tirar o bolo", 20),
        ("me lembra de tirar o bolo daqui a uma hora e meia", "tirar o bolo", 90),
        ("me lembra de tirar o bolo em 1 hora e 15 minutos", "tirar o bolo", 75),
        ("lembrete de tirar o bolo dentro de meia hora", "tirar o bolo", 30),
        ("cria um lembrete para daqui a 20 minutos de tirar o bolo", "tirar o bolo", 20),
        ("cria um lembrete pra daqui a meia hora pra desligar o forno", "desligar o forno", 30),
    ],
)
def test_a_time_from_now(text: str, title: str, minutes: int) -> None:
    result = parse(text, now=NOW_WITH_SECONDS)
    start = at(11, 30, 10, 7) + dt.timedelta(minutes=minutes)
    assert result.commands == (AgendaAdd(title=title, start=start),), (text, result)
    assert result.reason is None
    assert not result.ask


def test_a_time_from_now_passes_midnight() -> None:
    late = dt.datetime(2026, 11, 30, 23, 30, 45, tzinfo=SP)
    result = parse("me lembra daqui a duas horas de tomar o remédio", now=late)
    assert result.command == AgendaAdd(title="tomar o remédio", start=at(12, 1, 1, 30))


@pytest.mark.parametrize(
    "text",
    [
        "me lembra amanhã daqui a 20 minutos de tirar o bolo",
        "me lembra de tirar o bolo na sexta em uma hora",
        "me lembra daqui a 20 minutos às 15h de tirar o bolo",
    ],
)
def test_a_time_from_now_with_another_date_is_refused(text: str) -> None:
    result = parse(text)
    assert result.commands == ()
    assert result.reason == "ambiguous_date"


def test_a_time_from_now_leaves_durations_and_days_alone() -> None:
    assert_command(
        "agenda academia amanhã às 7h por 20 minutos",
        AgendaAdd(title="academia", start=at(12, 1, 7), duration_minutes=20),
    )
    assert_command(
        "me lembra daqui a 20 minutos de alongar por 10 minutos",
        AgendaAdd(title="alongar", start=at(11, 30, 10, 20), duration_minutes=10),
    )
    assert_command(
        "me lembra daqui a 3 dias de ligar pra mãe",
        AgendaAdd(title="ligar pra mãe", start=dt.date(2026, 12, 3)),
    )
    assert_command("adiciona leite", ShoppingAdd(item="leite"))
    assert_command("adiciona leite agora", ShoppingAdd(item="leite"))
    assert_command("adiciona 2 litros de leite", ShoppingAdd(item="leite", quantity=2, unit="l"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("o que tenho na agenda hoje", AgendaList(range="today")),
        ("o que tem na minha agenda", AgendaList(range="today")),
        ("o que eu tenho hoje à noite", AgendaList(range="today")),
        ("o que eu tenho amanhã", AgendaList(range="tomorrow")),
        ("o que eu tenho pra fazer amanhã", AgendaList(range="tomorrow")),
        ("o que a gente vai fazer no fim de semana", AgendaList(range="weekend")),
        ("minha agenda", AgendaList(range="today")),
        ("agenda de amanhã", AgendaList(range="tomorrow")),
        ("o que tá marcado pra amanhã", AgendaList(range="tomorrow")),
        ("qual é a programação de hoje", AgendaList(range="today")),
        ("o que vem por aí", AgendaNext()),
        ("como está minha agenda amanhã", AgendaList(range="tomorrow")),
        ("tenho algum compromisso amanhã", AgendaList(range="tomorrow")),
        ("o que tem na agenda essa semana", AgendaList(range="week")),
        ("quais são os meus compromissos da semana", AgendaList(range="week")),
        ("o que eu tenho no fim de semana", AgendaList(range="weekend")),
        ("tem alguma coisa na agenda neste fim de semana", AgendaList(range="weekend")),
        ("o que tem na agenda semana que vem", AgendaList(range="next_week")),
        ("qual o meu primeiro compromisso amanhã", AgendaList(range="tomorrow")),
        ("quais são os meus compromissos da próxima semana", AgendaList(range="next_week")),
        (
            "o que tem na agenda no dia 5 de dezembro",
            AgendaList(range="day", day=dt.date(2026, 12, 5)),
        ),
        ("qual a minha agenda na sexta", AgendaList(range="day", day=dt.date(2026, 12, 4))),
        ("o que tenho na agenda dia 05/12", AgendaList(range="day", day=dt.date(2026, 12, 5))),
        # fora da nossa gramática; lido pelo dateparser (dia primeiro)
        ("o que tenho na agenda em 05-12-2026", AgendaList(range="day", day=dt.date(2026, 12, 5))),
        ("qual é o meu próximo compromisso", AgendaNext()),
        ("qual minha próxima reunião", AgendaNext()),
        ("o que eu tenho a seguir", AgendaNext()),
        ("quando é a consulta do dentista", AgendaNext(title="consulta do dentista")),
        ("que horas é a minha próxima reunião", AgendaNext(title="reunião")),
        ("quando eu tenho o cabeleireiro", AgendaNext(title="cabeleireiro")),
        ("quando é meu compromisso", AgendaNext()),
    ],
)
def test_agenda_reads(text: str, expected: Command) -> None:
    assert_command(text, expected)


def test_unsupported_agenda_range() -> None:
    result = parse("o que tenho na agenda mês que vem")
    assert result.command is None
    assert result.reason == "unsupported_range"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("cancela o dentista de amanhã", AgendaRemove(title="dentista", day=dt.date(2026, 12, 1))),
        ("cancela a reunião de sexta", AgendaRemove(title="reunião", day=dt.date(2026, 12, 4))),
        ("apaga o dentista da agenda", AgendaRemove(title="dentista")),
        # "desmarca" com data é compromisso; sem data é item da lista (acima)
        ("desmarca o dentista de amanhã", AgendaRemove(title="dentista", day=dt.date(2026, 12, 1))),
        ("apaga a reunião de amanhã", AgendaRemove(title="reunião", day=dt.date(2026, 12, 1))),
        # um compromisso dito como tal, sem data: nunca um item da lista
        ("desmarca a consulta", AgendaRemove(title="consulta")),
        # com quem se tem hora marcada: um compromisso, nunca um item da lista
        ("desmarca o dentista", AgendaRemove(title="dentista")),
        ("desmarca o cabeleireiro", AgendaRemove(title="cabeleireiro")),
        ("apaga o lembrete de ligar pra mãe", AgendaRemove(title="lembrete de ligar pra mãe")),
        ("tira a consulta do dentista", AgendaRemove(title="consulta do dentista")),
        (
            "muda o dentista para sexta às 16h",
            AgendaMove(title="dentista", new_start=at(12, 4, 16)),
        ),
        ("passa a reunião para amanhã às 10", AgendaMove(title="reunião", new_start=at(12, 1, 10))),
        (
            "remarca o dentista de amanhã para quinta",
            AgendaMove(title="dentista", day=dt.date(2026, 12, 1), new_start=dt.date(2026, 12, 3)),
        ),
        ("adia a reunião para as 17h", AgendaMove(title="reunião", new_time=dt.time(17))),
        ("passa a reunião pras três", AgendaMove(title="reunião", new_time=dt.time(15))),
        (
            "muda o encanador para sete e meia",
            AgendaMove(title="encanador", new_time=dt.time(19, 30), either_half=True),
        ),
        # o título diz a metade do dia
        ("passa o jantar pra amanhã às 8", AgendaMove(title="jantar", new_start=at(12, 1, 20))),
    ],
)
def test_agenda_changes(text: str, expected: Command) -> None:
    assert_command(text, expected)


# -- nada a fazer ------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "não adicione leite",
        "não coloca ovos na lista",
        "nao coloca ovos na lista",
        "não preciso de leite",
        "eu não comprei o pão",
        "deixa pra lá",
        "esquece",
        "cancela isso",
        "não cancela o dentista",
        # corrigido enquanto era dito, um pedido é perguntado como corrigido, nunca a
        # metade: test_um_dia_ou_hora_corrigido_...
    ],
)
def test_negations_do_nothing(text: str) -> None:
    result = parse(text)
    assert result.command is None
    assert result.commands == ()
    assert result.reason == "negated"


@pytest.mark.parametrize(
    "text",
    [
        "que horas são",
        "conta uma piada",
        "leite",
        "como está o tempo hoje",
        "e leite na lista",
        "coloca leite na lista ovos",
        "preciso de ajuda",
        "a gente precisa de um tempo",
        # without what no shop sells
        "tô sem tempo",
        "estou sem fome",
        "estamos sem luz",
        "tô sem paciência",
    ],
)
def test_chatter_does_nothing(text: str) -> None:
    result = parse(text)
    assert result.command is None
    assert result.commands == ()
    assert result.reason == "not_understood"


@pytest.mark.parametrize("text", ["", "obrigado", "por favor", "valeu!"])
def test_empty_text(text: str) -> None:
    assert parse(text) == ParseResult(command=None, intent=None, reason="empty")


@pytest.mark.parametrize("lang", ["pt", "pt-BR", "pt_BR", "PT-br"])
def test_language_tags(lang: str) -> None:
    assert parse("coloca ovos na lista", lang=lang).command == ShoppingAdd(item="ovos")


@pytest.mark.parametrize(
    ("text", "day", "part"),
    [
        ("agenda cinema hoje à noite", dt.date(2026, 11, 30), "night"),
        ("marca dentista amanhã de manhã na agenda", dt.date(2026, 12, 1), "morning"),
        ("coloca reunião na sexta à tarde na agenda", dt.date(2026, 12, 4), "afternoon"),
        ("me lembra de ligar pra mãe amanhã cedo", dt.date(2026, 12, 1), "morning"),
    ],
)
def test_parte_do_dia_sem_hora_pergunta_a_hora(text: str, day: dt.date, part: str) -> None:
    result = parse(text)
    assert len(result.commands) == 1, result
    command = result.commands[0]
    assert isinstance(command, AgendaAdd) and command.start == day
    assert result.ask and result.ask_time == part


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # "essa noite", "amanhã cedo": um dia e a parte dele numa expressão só
        ("marca jantar essa noite às 9", at(11, 30, 21)),
        ("marca jantar esta noite às 8", at(11, 30, 20)),
        ("marca academia amanhã cedo às 7", at(12, 1, 7)),
        ("marca voo amanhã às 5 da madrugada", at(12, 1, 5)),
        ("marca dentista amanhã às cinco horas e meia da tarde", at(12, 1, 17, 30)),
        ("marca dentista amanhã de manhã ao meio-dia", at(12, 1, 12)),
        # o título diz a metade do dia que a hora não diz
        ("coloca na agenda jantar com a Ana no sábado às oito", at(12, 5, 20)),
        ("marca café da manhã com a Ana amanhã às 7", at(12, 1, 7)),
        ("marca jantar amanhã das 7 às 9", at(12, 1, 19)),
    ],
)
def test_horas_com_a_parte_do_dia(text: str, expected: dt.datetime) -> None:
    command = parse(text).command
    assert isinstance(command, AgendaAdd) and command.start == expected, (text, command)


@pytest.mark.parametrize(
    ("text", "part", "expected"),
    [
        ("às dez e meia", "morning", dt.time(10, 30)),
        ("dez e meia", "morning", dt.time(10, 30)),
        ("às oito", "night", dt.time(20)),
        ("oito horas", "night", dt.time(20)),
        ("lá pelas três", "afternoon", dt.time(15)),
        # o Whisper escreve "9h30" para "nove e meia": à noite, 21h30; "15h" é 15h
        ("às 9h30", "night", dt.time(21, 30)),
        ("15h", "morning", dt.time(15)),
        ("meio-dia", "morning", dt.time(12)),
        ("oito e quinze", "night", dt.time(20, 15)),
        ("hum, pode ser às cinco horas e meia", "afternoon", dt.time(17, 30)),
    ],
)
def test_uma_hora_dita_sozinha(text: str, part: str, expected: dt.time) -> None:
    assert parser().time_of_day(text, lang="pt", part=part) == expected


@pytest.mark.parametrize("text", ["não", "adiciona leite", "amanhã às 9", "às 9 ou às 10"])
def test_o_que_nao_e_uma_hora_sozinha(text: str) -> None:
    assert parser().time_of_day(text, lang="pt", part="morning") is None


@pytest.mark.parametrize(
    "text",
    [
        "marca dentista daqui a pouco",
        "me lembra mais tarde de ligar pra mãe",
        "me lembra de ligar pra mãe mais tarde",
        "agenda o cabeleireiro um dia desses",
        # sem dia nem hora nenhum: um compromisso (nunca o item "consulta"), mas quando?
        "adiciona uma consulta no dentista",
        "marca uma reunião com a Ana",
        "agenda o cabeleireiro",
        "me lembra de regar as plantas",
        "me lembra pra regar as plantas",
        # nenhuma palavra de "de ligar" é data: "me lembra {when} pra {event}" não serve
        "me lembra de ligar pra mãe",
        "me avisa de regar as plantas",
        # uma semana ou um mês não é um dia
        "me lembra semana que vem de ligar pro banco",
        "marca dentista mês que vem",
    ],
)
def test_quando_sem_dia_nem_hora_e_pedido_de_novo(text: str) -> None:
    result = parse(text)
    assert (result.intent, result.reason, result.commands) == ("agenda.add", "vague_time", ())


def test_marcar_com_uma_data_e_agendar() -> None:
    # "marca dentista na sexta" agenda o dia todo; "marca o leite" risca da lista
    assert_command(
        "marca dentista na sexta", AgendaAdd(title="dentista", start=dt.date(2026, 12, 4))
    )
    assert_command("marca o leite", ShoppingComplete(item="leite"))
    assert_command(
        "marca dentista depois de amanhã", AgendaAdd(title="dentista", start=dt.date(2026, 12, 2))
    )


@pytest.mark.parametrize(
    "text", ["desmarca a reunião das 3", "desmarca a reunião às 15h", "cancela a reunião das 15h"]
)
def test_um_compromisso_desmarcado_pela_hora(text: str) -> None:
    assert parse(text).commands == (AgendaRemove(title="reunião"),)


def test_uma_preferencia_dita_depois_de_lembra_que() -> None:
    result = parse("lembra que eu gosto de chocolate amargo")
    assert [(c.action, getattr(c, "stance", None)) for c in result.commands] == [
        ("memory.add", "likes")
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("põe leite, não, espera, leite de aveia", [ShoppingAdd(item="leite de aveia")]),
        # nunca um item "quer dizer ovos"
        ("põe leite, quer dizer, ovos", [ShoppingAdd(item="ovos")]),
        ("adiciona leite ou melhor leite de aveia", [ShoppingAdd(item="leite de aveia")]),
        ("adiciona duas maçãs, quer dizer, três", [ShoppingAdd(item="maçãs", quantity=3)]),
        ("adiciona duas maçãs, muda pra três", [ShoppingAdd(item="maçãs", quantity=3)]),
        (
            "adiciona dois litros de leite, não, três litros",
            [ShoppingAdd(item="leite", quantity=3, unit="l")],
        ),
        ("tira os ovos da lista, quer dizer, o pão", [ShoppingRemove(item="pão")]),
        ("risca o leite, ou melhor, os ovos", [ShoppingComplete(item="ovos")]),
        ("adiciona leite, não espera, adiciona ovos", [ShoppingAdd(item="ovos")]),
    ],
)
def test_um_pedido_corrigido_enquanto_e_dito_e_perguntado_como_corrigido(
    text: str, expected: list[Command]
) -> None:
    result = parse(text)
    assert list(result.commands) == expected
    assert result.ask and result.negated


def test_o_que_nao_e_correcao() -> None:
    assert not parse("adiciona leite, deixa pra lá").commands
    # "pera" é uma fruta, nunca uma correção
    said = parse("coloca arroz, pera, feijão")
    assert [getattr(c, "item", None) for c in said.commands] == ["arroz", "pera", "feijão"]
    assert not said.ask


def test_um_dia_contado_a_partir_de_hoje_ou_de_amanha() -> None:
    said = parse("me lembra uma semana a partir de hoje de ligar pra mãe").commands
    assert said == (AgendaAdd(title="ligar pra mãe", start=dt.date(2026, 12, 7)),)
    said = parse("marca dentista duas semanas a partir de amanhã às três da tarde").commands
    assert said == (AgendaAdd(title="dentista", start=dt.datetime(2026, 12, 15, 15, tzinfo=SP)),)


def test_uma_quantidade_tirada_ou_comprada_e_a_do_comando() -> None:
    said = parse("tira duas maçãs da lista")
    assert said.commands == (ShoppingRemove(item="maçãs", quantity=2),)
    assert not said.ask  # seis maçãs na lista ficam quatro
    bought = parse("comprei três maçãs")
    assert bought.commands == (ShoppingComplete(item="maçãs", quantity=3),)
    assert not bought.ask  # seis maçãs na lista: ficam três por comprar
    some = parse("já peguei meia dúzia de ovos")
    assert some.commands == (ShoppingComplete(item="ovos", quantity=0.5, unit="dozen"),)
    part = parse("comprei duas das maçãs")  # uma parte das que estão na lista
    assert part.commands == (ShoppingComplete(item="maçãs", quantity=2),)
    packs = parse("tira dois dos pacotes de arroz").commands
    assert packs == (ShoppingRemove(item="arroz", quantity=2, unit="pack"),)


HORA, DIA, SEMANA = 60, 24 * 60, 7 * 24 * 60


@pytest.mark.parametrize(
    ("text", "title", "minutes"),
    [
        ("adia o dentista uma semana", "dentista", SEMANA),
        ("adia a reunião em duas horas", "reunião", 2 * HORA),
        ("adia o jantar meia hora", "jantar", 30),
        ("passa o jantar uma hora pra frente", "jantar", HORA),
        ("passa o jantar pra frente uma hora e meia", "jantar", 90),
        ("adianta a reunião em trinta minutos", "reunião", -30),
        ("antecipa o dentista um dia", "dentista", -DIA),
    ],
)
def test_uma_mudanca_por_um_tanto_de_tempo(text: str, title: str, minutes: int) -> None:
    assert_command(text, AgendaMove(title=title, shift_minutes=minutes))


def test_pra_semana_que_vem_e_uma_semana_depois_perguntado() -> None:
    result = parse("passa a reunião pra semana que vem")
    assert result.commands == (AgendaMove(title="reunião", shift_minutes=SEMANA),)
    assert result.ask


def test_adiar_pra_um_dia_nao_e_um_tanto_de_tempo() -> None:
    said = parse("adia o dentista pra sexta").commands
    assert said == (AgendaMove(title="dentista", new_start=dt.date(2026, 12, 4)),)
    assert parse("adia o dentista").commands == ()


def test_uma_refeicao_com_alguem_e_um_compromisso() -> None:
    assert_command("tira o jantar com os pais", AgendaRemove(title="jantar com os pais"))
    assert_command("apaga o almoço com o joão", AgendaRemove(title="almoço com o joão"))
    assert parse("adiciona janta com a ana").reason == "vague_time"
