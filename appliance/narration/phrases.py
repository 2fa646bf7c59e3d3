"""Items and event titles as words: quantities, units, plurals, gender, lists.

Quantities stay digits ("2 liters of milk", "1,5 litro de leite"); a TTS front end
spells them out later. Portuguese agreement (o/a/os/as, "está"/"estão",
"comprado"/"comprada") is guessed from the first word of a name: an exception list,
then the usual endings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from appliance.protocol.receipts import ReceiptItem

Gender = Literal["m", "f"]

EN_UNITS: dict[str, tuple[str, str]] = {
    "l": ("liter", "liters"), "ml": ("milliliter", "milliliters"), "kg": ("kilo", "kilos"),
    "g": ("gram", "grams"), "lb": ("pound", "pounds"), "oz": ("ounce", "ounces"),
    "dozen": ("dozen", "dozen"), "pack": ("pack", "packs"), "bottle": ("bottle", "bottles"),
    "can": ("can", "cans"), "box": ("box", "boxes"), "jar": ("jar", "jars"),
    "bag": ("bag", "bags"), "loaf": ("loaf", "loaves"), "bunch": ("bunch", "bunches"),
    "carton": ("carton", "cartons"), "piece": ("piece", "pieces"),
    "gallon": ("gallon", "gallons"), "quart": ("quart", "quarts"), "pint": ("pint", "pints"),
    "stick": ("stick", "sticks"), "head": ("head", "heads"), "roll": ("roll", "rolls"),
    "tub": ("tub", "tubs"), "bar": ("bar", "bars"), "tray": ("tray", "trays"),
    "tube": ("tube", "tubes"), "case": ("case", "cases"), "jug": ("jug", "jugs"),
    "block": ("block", "blocks"),
}  # fmt: skip
PT_UNITS: dict[str, tuple[str, str]] = {
    "l": ("litro", "litros"), "ml": ("mililitro", "mililitros"), "kg": ("quilo", "quilos"),
    "g": ("grama", "gramas"), "lb": ("libra", "libras"), "oz": ("onça", "onças"),
    "dozen": ("dúzia", "dúzias"), "pack": ("pacote", "pacotes"),
    "bottle": ("garrafa", "garrafas"), "can": ("lata", "latas"), "box": ("caixa", "caixas"),
    "jar": ("pote", "potes"), "bag": ("saco", "sacos"), "loaf": ("forma", "formas"),
    "bunch": ("maço", "maços"), "carton": ("caixa", "caixas"),
    "piece": ("unidade", "unidades"), "gallon": ("galão", "galões"),
    "quart": ("quarto de galão", "quartos de galão"), "pint": ("pint", "pints"),
    "stick": ("tablete", "tabletes"), "head": ("cabeça", "cabeças"), "roll": ("rolo", "rolos"),
    "tub": ("pote", "potes"), "bar": ("barra", "barras"), "tray": ("bandeja", "bandejas"),
    "tube": ("tubo", "tubos"), "case": ("fardo", "fardos"), "jug": ("garrafão", "garrafões"),
    "block": ("bloco", "blocos"),
}  # fmt: skip

_EN_SINGULAR_S = frozenset(
    {
        "hummus", "couscous", "asparagus", "citrus", "molasses", "news", "series", "species",
        "lens", "gas", "bus", "swiss", "analysis", "tennis", "mayonnaise",
    }
)  # fmt: skip
_EN_IRREGULAR_PLURALS = frozenset({"mice", "children", "feet", "teeth", "geese", "people"})
_PT_SINGULAR_S = frozenset(
    {"lápis", "ônibus", "tênis", "pires", "gás", "atlas", "vírus", "mais", "bis", "ananás"}
)
_PT_MASCULINE_A = frozenset(
    {
        "dia", "mapa", "problema", "sistema", "tema", "programa", "clima", "cinema", "sofá",
        "guaraná", "chá", "fubá", "maracujá", "dentista", "pijama", "planeta", "idioma",
        "telefonema", "poema", "drama", "jantar", "açaí",
    }
)  # fmt: skip
_PT_FEMININE = frozenset(
    {
        "alface", "carne", "couve", "couve-flor", "mão", "fome", "noite", "tarde", "parte",
        "gente", "vez", "luz", "paz", "cor", "flor", "mulher", "colher", "reunião",
        "opinião", "televisão", "manhã", "maçã", "romã", "hortelã", "lã", "dose", "árvore",
        "febre", "nuvem", "pele", "sede", "neve", "chave", "ponte", "gripe", "ave", "cruz",
        "noz", "voz", "aula", "missa", "água", "ração",
    }
)  # fmt: skip
_PT_FEMININE_ENDINGS = ("a", "ã", "ção", "são", "dade", "gem", "ie", "ice")
_EN_DETERMINERS = frozenset({"the", "a", "an", "my", "your", "our", "his", "her", "their"})
_PT_DETERMINERS = frozenset(
    {"o", "a", "os", "as", "um", "uma", "meu", "minha", "seu", "sua", "nosso", "nossa"}
)


def format_number(value: float, lang: str) -> str:
    """``2.0`` -> ``"2"``; ``1.5`` -> ``"1.5"`` (en) or ``"1,5"`` (pt)."""
    if float(value).is_integer():
        return str(int(value))
    text = f"{value:.3f}".rstrip("0").rstrip(".")
    return text.replace(".", ",") if lang == "pt" else text


def _singular_amount(quantity: float, lang: str) -> bool:
    return quantity < 2 if lang == "pt" else quantity == 1


def unit_word(unit: str, quantity: float, lang: str) -> str:
    """``("l", 2, "en")`` -> ``"liters"``; units we don't know are kept as written."""
    table = PT_UNITS if lang == "pt" else EN_UNITS
    forms = table.get(unit)
    if forms is None:
        return unit
    return forms[0] if _singular_amount(quantity, lang) else forms[1]


def amount(item: ReceiptItem, lang: str) -> str | None:
    """ "2 liters" / "3" / None (no quantity)."""
    if item.quantity is None:
        return None
    number = format_number(item.quantity, lang)
    if item.unit is None:
        return number
    return f"{number} {unit_word(item.unit, item.quantity, lang)}"


def item_phrase(item: ReceiptItem, lang: str) -> str:
    """ "2 liters of milk", "2 dozen eggs", "3 eggs", "milk" / "2 litros de leite"."""
    if item.quantity is None:
        return item.name
    number = format_number(item.quantity, lang)
    if item.unit is None:
        return f"{number} {item.name}"
    unit = unit_word(item.unit, item.quantity, lang)
    if lang != "pt" and item.unit == "dozen":
        return f"{number} {unit} {item.name}"
    return f"{number} {unit} {'de' if lang == 'pt' else 'of'} {item.name}"


def is_plural(name: str, lang: str) -> bool:
    """Whether a name takes a plural verb: "Eggs are", "Ovos estão", "Leite de aveia está"."""
    words = name.casefold().split()
    if not words:
        return False
    if lang == "pt":
        word = words[0]
        return word not in _PT_SINGULAR_S and len(word) > 3 and word.endswith("s")
    word = words[-1]
    if word in _EN_IRREGULAR_PLURALS:
        return True
    if word in _EN_SINGULAR_S or word.endswith(("ss", "us", "is")):
        return False
    return len(word) > 2 and word.endswith("s")


def pt_gender(name: str) -> Gender:
    """The grammatical gender of a Portuguese noun phrase (its first word), guessed."""
    words = name.casefold().split()
    if not words:
        return "m"
    word = words[0]
    singular = word[:-1] if is_plural(word, "pt") else word
    if singular.endswith("õe"):  # reuniões -> reuniõe
        singular = singular[:-2] + "ão"
    if word in _PT_MASCULINE_A or singular in _PT_MASCULINE_A:
        return "m"
    if word in _PT_FEMININE or singular in _PT_FEMININE:
        return "f"
    if singular.endswith("ão"):
        return "f" if singular.endswith(("ção", "são")) else "m"
    return "f" if singular.endswith(_PT_FEMININE_ENDINGS) else "m"


def pt_agree(name: str, masculine: str, feminine: str) -> str:
    """Pick the masculine or feminine form for ``name`` and pluralize it with "s"."""
    word = feminine if pt_gender(name) == "f" else masculine
    return word + "s" if is_plural(name, "pt") else word


def the(name: str, lang: str) -> str:
    """A name with its definite article: "o leite", "as bananas" (pt); English: "milk"."""
    if lang != "pt":
        return name
    return f"{pt_agree(name, 'o', 'a')} {name}"


def event_name(title: str, lang: str) -> str:
    """An event title as a noun phrase: "the dentist", "a reunião", "Ana's party"."""
    words = title.split()
    if not words:
        return title
    first = words[0]
    proper = not first[:1].islower()
    determiners = _PT_DETERMINERS if lang == "pt" else _EN_DETERMINERS
    if proper or first.casefold() in determiners or "'" in first or "’" in first:
        return title
    if lang == "pt":
        return the(title, lang)
    return f"the {title}"


def join(parts: Sequence[str], lang: str, more: int = 0) -> str:
    """ "milk, eggs and bread"; with ``more``: "milk, eggs and 12 more" / "e mais 12"."""
    conj = "e" if lang == "pt" else "and"
    parts = list(parts)
    if more > 0:
        tail = f"mais {more}" if lang == "pt" else f"{more} more"
        parts.append(tail)
    if not parts:
        return ""
    if len(parts) == 1:
        return parts[0]
    return f"{', '.join(parts[:-1])} {conj} {parts[-1]}"


EN_COUNT_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
                  "nine", "ten")  # fmt: skip
PT_COUNT_WORDS_M = ("zero", "um", "dois", "três", "quatro", "cinco", "seis", "sete", "oito",
                    "nove", "dez")  # fmt: skip


def count_word(count: int, lang: str) -> str:
    """A small count as a word (masculine in Portuguese): "two" / "dois"; else digits."""
    words = PT_COUNT_WORDS_M if lang == "pt" else EN_COUNT_WORDS
    return words[count] if 0 <= count < len(words) else str(count)


def capitalize(sentence: str) -> str:
    """Upper-case the first letter only ("oat milk is..." -> "Oat milk is...")."""
    for index, char in enumerate(sentence):
        if char.isalpha():
            return sentence[:index] + char.upper() + sentence[index + 1 :]
        if not char.isspace():
            return sentence
    return sentence
