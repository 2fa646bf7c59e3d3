"""Shopping item names and units: one normal form for matching.

The list shows an item as the user said it ("Eggs"); matching uses ``item_key``
("egg"): case-folded, articles dropped, the last word singular. Two different items
never map to the same key by design: there is no fuzzy matching here.
"""

from __future__ import annotations

import re
import unicodedata

_ARTICLES = frozenset(
    {
        # English
        "a", "an", "another", "the", "some", "any", "my", "our",
        # Portuguese
        "o", "os", "as", "um", "uns", "uma", "umas", "outro", "outra", "meu", "meus",
        "minha", "minhas", "algum", "alguns", "alguma", "algumas",
    }
)  # fmt: skip

# Words that end in "s" in the singular; left as they are.
_KEEP_S = frozenset(
    {
        "hummus", "couscous", "asparagus", "citrus", "molasses", "swiss", "grass", "glass",
        "bass", "lettuce", "rice", "juice", "cheese", "sauce", "mayonnaise",
        "news", "series", "species", "chips", "oats", "lentils",
        "lápis", "pires", "ônibus", "vírus", "tênis", "atlas", "gás", "mais", "arroz",
    }
)  # fmt: skip
_OES_PLURALS = frozenset({"potatoes", "tomatoes", "mangoes", "avocadoes", "heroes"})
_IRREGULAR = {
    "loaves": "loaf",
    "knives": "knife",
    "leaves": "leaf",
    "halves": "half",
    "mice": "mouse",
    "children": "child",
    "feet": "foot",
    "teeth": "tooth",
    "geese": "goose",
    "pães": "pão",
    "mães": "mãe",
    "cães": "cão",
}

_SPACE = re.compile(r"\s+")
_PUNCT = re.compile(r"[^\w\s'-]", re.UNICODE)

_UNIT_ALIASES = {
    "l": ("l", "liter", "liters", "litre", "litres", "litro", "litros", "lt", "lts"),
    "ml": ("ml", "milliliter", "milliliters", "millilitre", "millilitres", "mililitro",
           "mililitros"),
    "kg": ("kg", "kilo", "kilos", "kilogram", "kilograms", "kilogramme", "quilo", "quilos",
           "quilograma", "quilogramas"),
    "g": ("g", "gram", "grams", "gramme", "grammes", "grama", "gramas"),
    "lb": ("lb", "lbs", "pound", "pounds", "libra", "libras"),
    "oz": ("oz", "ounce", "ounces", "onça", "onças"),
    "dozen": ("dozen", "dozens", "dúzia", "dúzias", "duzia", "duzias"),
    "pack": ("pack", "packs", "package", "packages", "packet", "packets", "pacote", "pacotes"),
    "bottle": ("bottle", "bottles", "garrafa", "garrafas"),
    "can": ("can", "cans", "tin", "tins", "lata", "latas"),
    "box": ("box", "boxes", "caixa", "caixas"),
    "jar": ("jar", "jars", "pote", "potes", "vidro", "vidros"),
    "bag": ("bag", "bags", "saco", "sacos", "sacola", "sacolas"),
    "loaf": ("loaf", "loaves"),
    "bunch": ("bunch", "bunches", "maço", "maços", "cacho", "cachos"),
    "carton": ("carton", "cartons"),
    "piece": ("piece", "pieces", "unidade", "unidades"),
    "gallon": ("gallon", "gallons", "gal", "galão", "galões", "galao", "galoes"),
    "quart": ("quart", "quarts", "qt"),
    "pint": ("pint", "pints"),
    "stick": ("stick", "sticks", "tablete", "tabletes"),
    "head": ("head", "heads", "cabeça", "cabeças", "cabeca", "cabecas"),
    "roll": ("roll", "rolls", "rolo", "rolos"),
    "tub": ("tub", "tubs"),
    "bar": ("bar", "bars", "barra", "barras"),
    "tray": ("tray", "trays", "bandeja", "bandejas"),
    "tube": ("tube", "tubes", "tubo", "tubos", "bisnaga", "bisnagas"),
    "case": ("case", "cases", "fardo", "fardos", "engradado", "engradados"),
    "jug": ("jug", "jugs", "garrafão", "garrafões", "garrafao", "garrafoes"),
    "block": ("block", "blocks", "bloco", "blocos"),
}  # fmt: skip
MEASURES = frozenset({"l", "ml", "kg", "g", "lb", "oz", "dozen", "gallon", "quart", "pint"})
"""The units that only measure: said alone ("add two liters"), what they measure is
missing; a box, a bag or a jar may itself be the thing bought."""
UNIT_BY_ALIAS: dict[str, str] = {
    alias: unit for unit, aliases in _UNIT_ALIASES.items() for alias in aliases
}


def normalize_unit(unit: str) -> str:
    """Map a unit word in English or Portuguese to its canonical short form.

    Unknown units are kept, case-folded, so nothing the user said is lost.
    """
    folded = _SPACE.sub(" ", unit.strip().casefold()).rstrip(".")
    return UNIT_BY_ALIAS.get(folded, folded)


def _singular(word: str) -> str:
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if len(word) <= 3 or word in _KEEP_S or not word.endswith("s") or word.endswith("ss"):
        return word
    # Portuguese plurals
    for plural, singular in (("ões", "ão"), ("ães", "ão"), ("ãos", "ão"), ("éis", "el"),
                             ("óis", "ol"), ("ais", "al"), ("eis", "el")):  # fmt: skip
        if word.endswith(plural):
            return word[: -len(plural)] + singular
    if word.endswith("zes") and len(word) > 4:
        return word[:-2]
    # English plurals
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "sses")) or word in _OES_PLURALS:
        return word[:-2]
    return word[:-1]


def item_key(name: str) -> str:
    """The matching key of an item name: "The Eggs" and "egg" share ``"egg"``."""
    text = unicodedata.normalize("NFC", name).casefold()
    text = _PUNCT.sub(" ", text)
    words = [w for w in _SPACE.split(text.strip()) if w]
    while len(words) > 1 and words[0] in _ARTICLES:
        words.pop(0)
    if not words:
        return ""
    words[-1] = _singular(words[-1])
    return " ".join(words)


def display_name(name: str) -> str:
    """The name as it is shown: white space folded, leading articles dropped."""
    words = _SPACE.split(name.strip())
    while len(words) > 1 and words[0].casefold() in _ARTICLES:
        words.pop(0)
    return " ".join(words)
