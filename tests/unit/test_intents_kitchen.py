"""How people ask a kitchen assistant to add things, beyond "add X to the list"."""

from __future__ import annotations

import datetime as dt

import pytest

from appliance.intents import IntentParser
from appliance.protocol import commands as c

NOW = dt.datetime(2026, 11, 30, 12, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def parser() -> IntentParser:
    return IntentParser(timezone="UTC")


@pytest.mark.parametrize(
    ("text", "lang", "item"),
    [
        ("we need bread", "en", "bread"),
        ("I need some apples", "en", "apples"),
        ("we also need more coffee", "en", "coffee"),
        ("shopping list, add butter", "en", "butter"),
        ("we're out of eggs", "en", "eggs"),
        # said in passing, with no subject
        ("need milk", "en", "milk"),
        ("also need more coffee", "en", "coffee"),
        ("out of eggs", "en", "eggs"),
        ("running low on sugar", "en", "sugar"),
        ("need to buy batteries", "en", "batteries"),
        # one request after another, or said with a doubt
        ("oh, and add carrots", "en", "carrots"),
        ("go and add carrots", "en", "carrots"),  # Whisper's "oh, and" on flite's voices
        ("go add carrots", "en", "carrots"),  # and its "oh, add" on flite awb
        ("also add onions", "en", "onions"),
        ("I think we need more eggs", "en", "eggs"),
        ("add eggs to shopping", "en", "eggs"),
        ("add carrots too", "en", "carrots"),
        ("put onions on the list as well", "en", "onions"),
        ("don't let me forget to buy milk", "en", "milk"),
        # "i need you to ..." is a request, not a need of "you to add milk"
        ("I need you to add milk", "en", "milk"),
        ("put milk down on the list", "en", "milk"),
        ("write eggs down", "en", "eggs"),
        # when, said with no day: no part of the item
        ("we should get a new kettle someday", "en", "new kettle"),
        ("add batteries eventually", "en", "batteries"),
        ("put coffee on the list for next time", "en", "coffee"),
        ("preciso de pão", "pt", "pão"),
        ("ah, e coloca cenoura na lista", "pt", "cenoura"),
        ("acho que precisamos de ovos", "pt", "ovos"),
        ("também coloca banana", "pt", "banana"),
        ("tá acabando o açúcar", "pt", "açúcar"),
        ("a gente precisa de sabão", "pt", "sabão"),
        ("a gente precisa de café", "pt", "café"),
        ("would you mind adding coffee to the shopping list", "en", "coffee"),
        ("make a note to buy coffee", "en", "coffee"),
        ("será que você pode colocar ovos na lista", "pt", "ovos"),
        ("anota aí: comprar pão", "pt", "pão"),
        ("faz uma anotação pra comprar café", "pt", "café"),
        # asked of us both
        ("can we add some cheese", "en", "cheese"),
        ("could I add cheese to the list", "en", "cheese"),
        # a need said ahead
        ("we're gonna need more milk", "en", "milk"),
        ("we'll need eggs", "en", "eggs"),
        # the list said before the request
        ("lista de compras, adiciona ovos", "pt", "ovos"),
        ("na lista de compras coloca ovos", "pt", "ovos"),
    ],
)
def test_needs_are_additions(parser: IntentParser, text: str, lang: str, item: str) -> None:
    assert parser.parse(text, lang=lang).commands == (c.ShoppingAdd(item=item),)


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("we don't need milk", "en"),
        ("I need to call mom", "en"),
        ("need to call mom", "en"),
        ("don't need milk", "en"),
        ("I don't think we need milk", "en"),
        ("don't let me add milk", "en"),
        ("and milk", "en"),
        # Whisper's reading of "add oat cookies to the shopping list" (flite's slt)
        ("and add cookies to the shopping list", "en"),
        ("not out of milk", "en"),
        ("put the phone down", "en"),
        ("não preciso de pão", "pt"),
        # what a person has not that no shop sells, and a day's plans
        ("I have no idea", "en"),
        ("there's no time", "en"),
        ("we have no plans tomorrow", "en"),
        ("there is no meeting on friday", "en"),
        ("não tem problema", "pt"),
        ("não tenho ideia", "pt"),
        ("não tem reunião amanhã", "pt"),
        ("falta pouco", "pt"),
        ("falta uma hora pro jantar", "pt"),
    ],
)
def test_not_additions(parser: IntentParser, text: str, lang: str) -> None:
    assert parser.parse(text, lang=lang).commands == ()


@pytest.mark.parametrize(
    ("text", "lang", "expected", "negated"),
    [
        # no longer needed: a removal
        ("we don't need bread anymore", "en", c.ShoppingRemove(item="bread"), True),
        ("I don't need milk on the list any more", "en", c.ShoppingRemove(item="milk"), True),
        ("we no longer need eggs", "en", c.ShoppingRemove(item="eggs"), True),
        ("we already have milk", "en", c.ShoppingRemove(item="milk"), False),
        ("we've got butter already", "en", c.ShoppingRemove(item="butter"), False),
        ("a gente não precisa mais de leite", "pt", c.ShoppingRemove(item="leite"), True),
        ("já temos arroz", "pt", c.ShoppingRemove(item="arroz"), False),
        # missing, said with a negation or with any words before a verb ("the movie ran
        # out"): an addition
        ("we have no milk", "en", c.ShoppingAdd(item="milk"), True),
        ("there's no more bread left", "en", c.ShoppingAdd(item="bread"), True),
        ("we don't have any coffee", "en", c.ShoppingAdd(item="coffee"), True),
        ("the milk ran out", "en", c.ShoppingAdd(item="milk"), False),
        ("the eggs are all gone", "en", c.ShoppingAdd(item="eggs"), False),
        ("não tem mais leite", "pt", c.ShoppingAdd(item="leite"), True),
        ("a gente não tem mais ovo", "pt", c.ShoppingAdd(item="ovo"), True),
        ("falta açúcar", "pt", c.ShoppingAdd(item="açúcar"), False),
    ],
)
def test_what_is_no_longer_needed_or_missing_is_only_asked(
    parser: IntentParser, text: str, lang: str, expected: c.Command, negated: bool
) -> None:
    """Proposed, never run unasked."""
    result = parser.parse(text, lang=lang)
    assert result.commands == (expected,)
    assert result.ask and result.negated == negated


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("we need milk and we need bread", "en", ["milk", "bread"]),
        ("we need milk, and we are out of eggs", "en", ["milk", "eggs"]),
        ("add milk and put eggs on the list too", "en", ["milk", "eggs"]),
        ("add milk and add eggs", "en", ["milk", "eggs"]),
        ("Add milk. Add eggs.", "en", ["milk", "eggs"]),
        ("Add milk. Also eggs.", "en", ["milk", "eggs"]),
        ("Can you add milk? And eggs?", "en", ["milk", "eggs"]),
        ("we need milk and we need bread and we need eggs", "en", ["milk", "bread", "eggs"]),
        ("add mac and cheese and add bread", "en", ["mac and cheese", "bread"]),
        ("precisamos de leite e precisamos de pão", "pt", ["leite", "pão"]),
        ("adiciona leite e coloca ovos na lista", "pt", ["leite", "ovos"]),
        ("adiciona leite. ovos também", "pt", ["leite", "ovos"]),
    ],
)
def test_one_request_said_twice_is_one(
    parser: IntentParser, text: str, lang: str, expected: list[str]
) -> None:
    """ "we need bread" is no item, nor are "add milk and add eggs" two requests."""
    result = parser.parse(text, lang=lang, now=NOW)
    assert result.commands == tuple(c.ShoppingAdd(item=item) for item in expected)
    assert not result.ask


def test_one_request_said_twice_keeps_its_amounts(parser: IntentParser) -> None:
    result = parser.parse("add two liters of milk and add a dozen eggs", lang="en", now=NOW)
    assert result.commands == (
        c.ShoppingAdd(item="milk", quantity=2, unit="l"),
        c.ShoppingAdd(item="eggs", quantity=1, unit="dozen"),
    )


@pytest.mark.parametrize(
    ("text", "lang", "action"),
    [
        ("remove milk and remove eggs", "en", c.ShoppingRemove),
        ("cross off milk and cross off eggs", "en", c.ShoppingComplete),
    ],
)
def test_any_item_request_said_twice_is_one(
    parser: IntentParser, text: str, lang: str, action: type[c.ShoppingRemove]
) -> None:
    result = parser.parse(text, lang=lang, now=NOW)
    assert result.commands == (action(item="milk"), action(item="eggs"))


@pytest.mark.parametrize(
    "text",
    [
        "add milk and remove eggs",
        "add milk and remind me to call mom at 5",
        "add milk and check the oven",
    ],
)
def test_two_different_requests_stay_refused(parser: IntentParser, text: str) -> None:
    result = parser.parse(text, lang="en", now=NOW)
    assert result.commands == () and result.reason == "two_requests"


@pytest.mark.parametrize(
    "text",
    [
        "we don't need milk",  # a correction as likely as a wish: refused
        "I don't think we need milk anymore",
        "we don't need bread anymore and add milk",
        "we don't need anything anymore",
        "don't remove the milk",
        "we already have milk on the list",
        "add milk and don't add eggs",
    ],
)
def test_other_negations_stay_refused(parser: IntentParser, text: str) -> None:
    assert parser.parse(text, lang="en").commands == ()


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("remind me to buy milk", "en", c.ShoppingAdd(item="milk")),
        ("me lembra de comprar leite", "pt", c.ShoppingAdd(item="leite")),
        ("don't forget to buy lemons", "en", c.ShoppingAdd(item="lemons")),
        ("remember to get some bread", "en", c.ShoppingAdd(item="bread")),
        ("buy two cartons of eggs", "en", c.ShoppingAdd(item="eggs", quantity=2, unit="carton")),
        ("não esquece de comprar limão", "pt", c.ShoppingAdd(item="limão")),
        ("compra pão", "pt", c.ShoppingAdd(item="pão")),
        (
            "remember to take out the trash tonight at eight",
            "en",
            c.AgendaAdd(
                title="take out the trash", start=dt.datetime(2026, 11, 30, 20, tzinfo=dt.UTC)
            ),
        ),
        (
            "remind me to call mom tomorrow at 5 pm",
            "en",
            c.AgendaAdd(title="call mom", start=dt.datetime(2026, 12, 1, 17, tzinfo=dt.UTC)),
        ),
        (
            "remind me about the dentist on friday",
            "en",
            c.AgendaAdd(title="dentist", start=dt.date(2026, 12, 4)),
        ),
        # a date or a time makes a purchase a reminder, not an item "flowers on friday"
        (
            "remind me to buy flowers on friday",
            "en",
            c.AgendaAdd(title="buy flowers", start=dt.date(2026, 12, 4)),
        ),
        (
            "remind me to pick up the kids at three",
            "en",
            c.AgendaAdd(
                title="pick up the kids", start=dt.datetime(2026, 11, 30, 15, tzinfo=dt.UTC)
            ),
        ),
        # "don't forget to" a thing to do at a time: a reminder ("... to buy lemons" and
        # "... to add milk" read without it, as before)
        (
            "don't forget to call mom tomorrow at 5 pm",
            "en",
            c.AgendaAdd(title="call mom", start=dt.datetime(2026, 12, 1, 17, tzinfo=dt.UTC)),
        ),
        (
            "don't let me forget to call the vet tomorrow at 10",
            "en",
            c.AgendaAdd(title="call the vet", start=dt.datetime(2026, 12, 1, 10, tzinfo=dt.UTC)),
        ),
        ("don't forget to add milk to the list", "en", c.ShoppingAdd(item="milk")),
        (
            "não esquece de ligar pra mãe amanhã às 5",
            "pt",
            c.AgendaAdd(title="ligar pra mãe", start=dt.datetime(2026, 12, 1, 17, tzinfo=dt.UTC)),
        ),
        ("não esqueça de colocar ovos na lista", "pt", c.ShoppingAdd(item="ovos")),
        # "lembra de" without "me", with a day or a time ("lembra de quando ..." is chat)
        (
            "lembra de pagar a conta de luz amanhã às 9",
            "pt",
            c.AgendaAdd(
                title="pagar a conta de luz", start=dt.datetime(2026, 12, 1, 9, tzinfo=dt.UTC)
            ),
        ),
        (
            "lembra de pagar a conta de luz amanhã",
            "pt",
            c.AgendaAdd(title="pagar a conta de luz", start=dt.date(2026, 12, 1)),
        ),
        # the time first, or "set a reminder"
        (
            "remind me at six to start dinner",
            "en",
            c.AgendaAdd(title="start dinner", start=dt.datetime(2026, 11, 30, 18, tzinfo=dt.UTC)),
        ),
        (
            "remind me tomorrow to call mom",
            "en",
            c.AgendaAdd(title="call mom", start=dt.date(2026, 12, 1)),
        ),
        (
            "set a reminder to take out the trash at 8 pm",
            "en",
            c.AgendaAdd(
                title="take out the trash", start=dt.datetime(2026, 11, 30, 20, tzinfo=dt.UTC)
            ),
        ),
        (
            "set a reminder for 7 am to take my pills",
            "en",
            c.AgendaAdd(title="take my pills", start=dt.datetime(2026, 12, 1, 7, tzinfo=dt.UTC)),
        ),
        (
            "set a reminder at six to start dinner",
            "en",
            c.AgendaAdd(title="start dinner", start=dt.datetime(2026, 11, 30, 18, tzinfo=dt.UTC)),
        ),
        # the article left out, or another verb: the title is what comes after "to"
        (
            "set reminder to water the plants tomorrow at 9am",
            "en",
            c.AgendaAdd(title="water the plants", start=dt.datetime(2026, 12, 1, 9, tzinfo=dt.UTC)),
        ),
        (
            "add a reminder to call mom tomorrow at five pm",
            "en",
            c.AgendaAdd(title="call mom", start=dt.datetime(2026, 12, 1, 17, tzinfo=dt.UTC)),
        ),
        (
            "create a reminder to call the plumber at ten",
            "en",
            c.AgendaAdd(
                title="call the plumber", start=dt.datetime(2026, 12, 1, 10, tzinfo=dt.UTC)
            ),
        ),
        (
            "set me a reminder at six to start dinner",
            "en",
            c.AgendaAdd(title="start dinner", start=dt.datetime(2026, 11, 30, 18, tzinfo=dt.UTC)),
        ),
        (
            "me lembra amanhã de ligar pra mãe",
            "pt",
            c.AgendaAdd(title="ligar pra mãe", start=dt.date(2026, 12, 1)),
        ),
        (
            "cria um lembrete para levar o lixo às oito da noite",
            "pt",
            c.AgendaAdd(title="levar o lixo", start=dt.datetime(2026, 11, 30, 20, tzinfo=dt.UTC)),
        ),
        (
            "lembrete para pagar a conta amanhã às nove",
            "pt",
            c.AgendaAdd(title="pagar a conta", start=dt.datetime(2026, 12, 1, 9, tzinfo=dt.UTC)),
        ),
        (
            "me lembra de comprar pão amanhã",
            "pt",
            c.AgendaAdd(title="comprar pão", start=dt.date(2026, 12, 1)),
        ),
        (
            "me lembra de ligar pra mãe amanhã às cinco da tarde",
            "pt",
            c.AgendaAdd(title="ligar pra mãe", start=dt.datetime(2026, 12, 1, 17, tzinfo=dt.UTC)),
        ),
        # the day or the time first
        (
            "Tomorrow at 9, remind me to take the trash out.",
            "en",
            c.AgendaAdd(
                title="take the trash out", start=dt.datetime(2026, 12, 1, 9, tzinfo=dt.UTC)
            ),
        ),
        (
            "at 6 pm please remind me to start dinner",
            "en",
            c.AgendaAdd(title="start dinner", start=dt.datetime(2026, 11, 30, 18, tzinfo=dt.UTC)),
        ),
        (
            "on friday remind me about the dentist",
            "en",
            c.AgendaAdd(title="dentist", start=dt.date(2026, 12, 4)),
        ),
        (
            "amanhã às 9 me lembra de tirar o lixo",
            "pt",
            c.AgendaAdd(title="tirar o lixo", start=dt.datetime(2026, 12, 1, 9, tzinfo=dt.UTC)),
        ),
    ],
)
def test_reminders(parser: IntentParser, text: str, lang: str, expected: c.Command) -> None:
    assert parser.parse(text, lang=lang, now=NOW).commands == (expected,)


def test_a_reminder_without_a_date_is_not_an_entry(parser: IntentParser) -> None:
    assert parser.parse("remind me to call mom", now=NOW).commands == ()
    assert parser.parse("remember to call mom", now=NOW).commands == ()
    assert parser.parse("set a reminder to call mom", now=NOW).commands == ()
    assert parser.parse("make a reminder to call mom", now=NOW).commands == ()
    assert parser.parse("remind me at six", now=NOW).commands == ()
    # a purchase with a date is not an item "flowers on friday" either
    assert parser.parse("buy flowers on friday", now=NOW).commands == ()
    assert parser.parse("me lembra de ligar pra mãe", lang="pt", now=NOW).commands == ()
    assert parser.parse("lembrete de ligar pra mãe", lang="pt", now=NOW).commands == ()
    # the reply asks for a day or a time, never says it only helps with lists
    assert parser.parse("remind me to call mom", now=NOW).reason == "vague_time"
    assert parser.parse("me lembra de ligar pra mãe", lang="pt", now=NOW).reason == "vague_time"
    assert parser.parse("don't forget to call mom", now=NOW).reason == "vague_time"
    # a purchase at most, only ever asked ("Did you want to add your keys?")
    assert parser.parse("don't forget your keys", now=NOW).ask
    assert parser.parse("lembra de quando a gente foi pra praia", lang="pt", now=NOW).commands == ()
    # a purchase is still an item
    assert parser.parse("remind me to buy milk", now=NOW).commands == (c.ShoppingAdd(item="milk"),)


def test_deleting_something_with_a_date_is_an_agenda_entry(parser: IntentParser) -> None:
    assert parser.parse("delete my meeting tomorrow", now=NOW).commands == (
        c.AgendaRemove(title="meeting", day=dt.date(2026, 12, 1)),
    )
    assert parser.parse("delete milk", now=NOW).commands == (c.ShoppingRemove(item="milk"),)


def test_a_question_is_not_an_item(parser: IntentParser) -> None:
    # "add" misheard in front of a question must not add "what's" to the list
    assert parser.parse("add what's to the shopping list", now=NOW).commands == ()


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("add a gallon of milk to the shopping list", "en", ("milk", 1.0, "gallon")),
        ("add a half gallon of milk", "en", ("milk", 0.5, "gallon")),
        ("add half a gallon of milk", "en", ("milk", 0.5, "gallon")),
        ("add a half dozen eggs", "en", ("eggs", 0.5, "dozen")),
        ("add two sticks of butter", "en", ("butter", 2.0, "stick")),
        ("add a head of lettuce", "en", ("lettuce", 1.0, "head")),
        ("add two rolls of paper towels", "en", ("paper towels", 2.0, "roll")),
        ("add a pint of cream", "en", ("cream", 1.0, "pint")),
        ("add a tub of yogurt", "en", ("yogurt", 1.0, "tub")),
        ("adicione um galão de água", "pt", ("água", 1.0, "gallon")),
        ("adicione uma bandeja de ovos", "pt", ("ovos", 1.0, "tray")),
        ("adicione duas barras de chocolate", "pt", ("chocolate", 2.0, "bar")),
        ("add a tube of toothpaste", "en", ("toothpaste", 1.0, "tube")),
        ("add two cases of water", "en", ("water", 2.0, "case")),
        ("add a jug of milk", "en", ("milk", 1.0, "jug")),
        ("add a block of cheese", "en", ("cheese", 1.0, "block")),
        ("adicione um tubo de pasta de dente", "pt", ("pasta de dente", 1.0, "tube")),
        ("adicione uma bisnaga de maionese", "pt", ("maionese", 1.0, "tube")),
        ("adicione um fardo de cerveja", "pt", ("cerveja", 1.0, "case")),
        ("adicione dois garrafões de água", "pt", ("água", 2.0, "jug")),
        ("adicione um bloco de queijo", "pt", ("queijo", 1.0, "block")),
    ],
)
def test_kitchen_units(
    parser: IntentParser, text: str, lang: str, expected: tuple[str, float, str]
) -> None:
    item, quantity, unit = expected
    assert parser.parse(text, lang=lang).commands == (
        c.ShoppingAdd(item=item, quantity=quantity, unit=unit),
    )


@pytest.mark.parametrize(
    ("text", "item"),
    [
        ("add two rolls", "rolls"),  # the unit word is the item
        ("add bread rolls", "bread rolls"),  # no quantity, no unit
        ("add a pencil case", "pencil case"),
        ("add half and half", "half and half"),
        ("add a half and half", "half and half"),
    ],
)
def test_unit_words_that_are_items(parser: IntentParser, text: str, item: str) -> None:
    (command,) = parser.parse(text).commands
    assert isinstance(command, c.ShoppingAdd)
    assert (command.item, command.unit) == (item, None)


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("add two more apples", "en", c.ShoppingAdd(item="apples", quantity=2)),
        ("add a couple more lemons", "en", c.ShoppingAdd(item="lemons", quantity=2)),
        ("add a dozen more eggs", "en", c.ShoppingAdd(item="eggs", quantity=1, unit="dozen")),
        (
            "add another carton of milk",
            "en",
            c.ShoppingAdd(item="milk", quantity=1, unit="carton"),
        ),
        ("add another loaf of bread", "en", c.ShoppingAdd(item="bread", quantity=1, unit="loaf")),
        ("add another milk", "en", c.ShoppingAdd(item="milk")),
        ("add some more milk", "en", c.ShoppingAdd(item="milk")),
        ("add two extra large eggs", "en", c.ShoppingAdd(item="extra large eggs", quantity=2)),
        (
            "adiciona mais dois litros de leite",
            "pt",
            c.ShoppingAdd(item="leite", quantity=2, unit="l"),
        ),
        (
            "adiciona outro pacote de café",
            "pt",
            c.ShoppingAdd(item="café", quantity=1, unit="pack"),
        ),
        ("adiciona outro café", "pt", c.ShoppingAdd(item="café")),
    ],
)
def test_more_of_something(parser: IntentParser, text: str, lang: str, expected: c.Command) -> None:
    # "more" and "another" are not part of the item: "more apples" would be a second
    # item next to "apples"
    assert parser.parse(text, lang=lang, now=NOW).commands == (expected,)


def test_a_full_stop_between_sentences_is_a_pause() -> None:
    """Whisper ends a sentence where the speaker paused: read as a comma, unless it
    ends a title's abbreviation."""
    parser = IntentParser(timezone="UTC")
    result = parser.parse("Remind me to call mom. Tomorrow at 5.", lang="en", now=NOW)
    assert result.commands == (
        c.AgendaAdd(title="call mom", start=dt.datetime(2026, 12, 1, 17, tzinfo=dt.UTC)),
    )
    result = parser.parse("add lunch with Dr. Silva tomorrow at noon", lang="en", now=NOW)
    assert [cmd.title for cmd in result.commands if isinstance(cmd, c.AgendaAdd)] == [
        "lunch with Dr. Silva"
    ]
    result = parser.parse("Okay. Add milk to the list. Thanks.", lang="en", now=NOW)
    assert result.commands == (c.ShoppingAdd(item="milk"),)


def test_a_reading_is_given_only_for_an_exempt_phrase_and_never_longer() -> None:
    from appliance.intents.lexicon import _reads

    exempt = ["don't forget to"]
    assert _reads({"don't forget to": "remember to"}, exempt) == {"don't forget to": "remember to"}
    with pytest.raises(ValueError, match="not an exempt phrase"):
        _reads({"do forget to": "remember to"}, exempt)
    with pytest.raises(ValueError, match="longer"):
        _reads({"don't forget to": "please do remember to"}, exempt)


def test_a_guessed_reading_needs_a_reading() -> None:
    from appliance.intents.lexicon import _asked

    reads = {"don't forget": "buy"}
    assert _asked(["Don't forget"], reads) == {"don't forget"}
    with pytest.raises(ValueError, match="no reading"):
        _asked(["don't forget about"], reads)
