"""Word tables for speech normalization, one per language (English, Brazilian Portuguese).

Everything language-specific that ``normalize`` and ``sentences`` need lives here, as data:
units, currencies, scale words, month and weekday names, abbreviations and the grammatical
gender of Portuguese nouns. Adding a unit or an abbreviation is adding a table row.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from appliance.tts.errors import TtsError

Lang = Literal["en", "pt"]
LANGUAGES: tuple[Lang, ...] = ("en", "pt")


def language(tag: str) -> Lang:
    """Map a language tag ("en", "en-US", "pt", "pt-BR", "pt_BR") to "en" or "pt"."""
    base = tag.strip().replace("_", "-").split("-")[0].lower()
    if base == "en":
        return "en"
    if base == "pt":
        return "pt"
    raise TtsError(f"unsupported speech language {tag!r}: expected en or pt")


_HALF, _QUARTER, _THREE_QUARTERS = Decimal("0.5"), Decimal("0.25"), Decimal("0.75")


@dataclass(frozen=True)
class Noun:
    """How a unit (or a counted word such as "dozen") is read after a number."""

    singular: str
    plural: str
    feminine: bool = False
    """Portuguese gender of the noun: numbers before it agree ("duas dúzias")."""
    half: str | None = None
    """How 0.5 of it is said ("half a liter", "meio litro"); None: read 0.5 as a number."""
    quarter: str | None = None
    """How 0.25 of it is said ("a quarter pound", "um quarto de quilo"); None: a number."""
    three_quarters: str | None = None
    """How 0.75 of it is said ("three quarters of a pound"); None: read as a number."""
    measure: bool = False
    """A measure of something: "of" / "de" joins it to a noun after it ("2 l milk")."""

    def part(self, amount: Decimal) -> str | None:
        """How ``amount`` of one is said ("half a liter", "a quarter pound", "três
        quartos de quilo"), None when it is read as a number."""
        parts = {_HALF: self.half, _QUARTER: self.quarter, _THREE_QUARTERS: self.three_quarters}
        return parts.get(amount)


@dataclass(frozen=True)
class Currency:
    """Names of a currency and of its hundredth."""

    unit: Noun
    cent: Noun


@dataclass(frozen=True)
class Scale:
    """A scale word after an amount ("$2 million", "R$ 5 mil")."""

    singular: str
    plural: str
    takes_de: bool = False
    """Portuguese: "um milhão de reais" but "cinco mil reais"."""


@dataclass(frozen=True)
class Words:
    """The fixed words one language needs around numbers."""

    point: str
    minus: str
    and_: str
    to: str
    at: str
    of: str


@dataclass(frozen=True)
class Tables:
    """All the tables of one language."""

    words: Words
    units: Mapping[str, Noun]
    """Written unit (lower case) -> its noun."""
    currencies: Mapping[str, Currency]
    """Symbol or ISO code, as written -> currency."""
    scales: Mapping[str, Scale]
    months: tuple[str, ...]
    """Month names, January first."""
    month_keys: Mapping[str, int]
    """Written month name or abbreviation (lower case) -> month number."""
    weekday_abbreviations: Mapping[str, str]
    abbreviations: tuple[tuple[str, str], ...]
    """(regular expression, replacement), applied in order."""
    function_words: frozenset[str]
    """Words after a number that are not what it counts ("of", "to", "de", "às")."""
    no_break_after: frozenset[str]
    """Abbreviations (lower case, no final dot) a sentence never ends on ("Dr")."""
    may_end_on: frozenset[str]
    """Abbreviations that end a sentence only when a capital letter follows ("etc")."""
    feminine_after: frozenset[str] = frozenset()
    """Portuguese words after which a number counts hours, so is feminine: "às duas"."""


# --- English ----------------------------------------------------------------------------

_EN_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_EN_MONTH_ABBREVIATIONS = {
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sep": 9,
    "sept": 9,
    "oct": 10,
    "nov": 11,
    "dec": 12,
}

_LITER = Noun(
    "liter",
    "liters",
    half="half a liter",
    measure=True,
    quarter="a quarter liter",
    three_quarters="three quarters of a liter",
)
_KILO = Noun(
    "kilo",
    "kilos",
    half="half a kilo",
    measure=True,
    quarter="a quarter kilo",
    three_quarters="three quarters of a kilo",
)
_GRAM = Noun("gram", "grams", measure=True)
_POUND = Noun(
    "pound",
    "pounds",
    half="half a pound",
    measure=True,
    quarter="a quarter pound",
    three_quarters="three quarters of a pound",
)
_DOZEN = Noun("dozen", "dozen", half="half a dozen")
_PACK = Noun("pack", "packs", measure=True)
_PIECE = Noun("piece", "pieces", measure=True)
_HOUR = Noun("hour", "hours", half="half an hour")
_MINUTE = Noun("minute", "minutes")
_DOLLAR = Currency(Noun("dollar", "dollars"), Noun("cent", "cents"))
_BRL_EN = Currency(Noun("real", "reais"), Noun("centavo", "centavos"))
_EURO_EN = Currency(Noun("euro", "euros"), Noun("cent", "cents"))
_POUND_STERLING = Currency(Noun("pound", "pounds"), Noun("penny", "pence"))

EN = Tables(
    words=Words(point="point", minus="minus", and_="and", to="to", at="at", of="of"),
    units={
        "l": _LITER,
        # as the narration writes them ("0.25 pounds of ham")
        "liter": _LITER,
        "liters": _LITER,
        "kilo": _KILO,
        "kilos": _KILO,
        "pound": _POUND,
        "pounds": _POUND,
        "lt": _LITER,
        "ltr": _LITER,
        "ml": Noun("milliliter", "milliliters", measure=True),
        "cl": Noun("centiliter", "centiliters", measure=True),
        "kg": _KILO,
        "kgs": _KILO,
        "g": _GRAM,
        "gr": _GRAM,
        "mg": Noun("milligram", "milligrams", measure=True),
        "lb": _POUND,
        "lbs": _POUND,
        "oz": Noun("ounce", "ounces", measure=True),
        "km": Noun("kilometer", "kilometers"),
        "m": Noun("meter", "meters"),
        "cm": Noun("centimeter", "centimeters"),
        "mm": Noun("millimeter", "millimeters"),
        "°c": Noun("degree Celsius", "degrees Celsius"),
        "ºc": Noun("degree Celsius", "degrees Celsius"),
        "°f": Noun("degree Fahrenheit", "degrees Fahrenheit"),
        "ºf": Noun("degree Fahrenheit", "degrees Fahrenheit"),
        "°": Noun("degree", "degrees"),
        "%": Noun("percent", "percent"),
        "min": _MINUTE,
        "mins": _MINUTE,
        "h": _HOUR,
        "hr": _HOUR,
        "hrs": _HOUR,
        "dozen": _DOZEN,
        "dozens": _DOZEN,
        "doz": _DOZEN,
        "pack": _PACK,
        "packs": _PACK,
        "pk": _PACK,
        "pc": _PIECE,
        "pcs": _PIECE,
        "tbsp": Noun("tablespoon", "tablespoons", measure=True),
        "tsp": Noun("teaspoon", "teaspoons", measure=True),
    },
    currencies={
        "$": _DOLLAR,
        "US$": _DOLLAR,
        "USD": _DOLLAR,
        "R$": _BRL_EN,
        "BRL": _BRL_EN,
        "€": _EURO_EN,
        "EUR": _EURO_EN,
        "£": _POUND_STERLING,
        "GBP": _POUND_STERLING,
    },
    scales={
        "thousand": Scale("thousand", "thousand"),
        "k": Scale("thousand", "thousand"),
        "million": Scale("million", "million"),
        "mn": Scale("million", "million"),
        "billion": Scale("billion", "billion"),
        "bn": Scale("billion", "billion"),
    },
    months=_EN_MONTHS,
    month_keys={**{m.lower(): i for i, m in enumerate(_EN_MONTHS, 1)}, **_EN_MONTH_ABBREVIATIONS},
    weekday_abbreviations={
        "mon": "Monday",
        "tue": "Tuesday",
        "tues": "Tuesday",
        "wed": "Wednesday",
        "thu": "Thursday",
        "thur": "Thursday",
        "thurs": "Thursday",
        "fri": "Friday",
        "sat": "Saturday",
        "sun": "Sunday",
    },
    abbreviations=(
        (r"\bDr\.", "Doctor"),
        (r"\bMrs\.", "Missus"),
        (r"\bMr\.", "Mister"),
        (r"\bMs\.", "Miz"),
        (r"\bProf\.", "Professor"),
        (r"\bJr\.", "Junior"),
        (r"\bSt\.(?=\s+[A-Z])", "Saint"),
        (r"\bSt\.", "Street"),
        (r"\bAve\.", "Avenue"),
        (r"\bRd\.", "Road"),
        (r"\bApt\.", "Apartment"),
        (r"\bapprox\.", "approximately"),
        (r"\betc\.", "et cetera"),
        (r"\be\.g\.", "for example"),
        (r"\bi\.e\.", "that is"),
        (r"\bvs\.?(?=\s)", "versus"),
        (r"\b[Nn]o\.\s?(?=\d)", "number "),
        (r"#\s?(?=\d)", "number "),
        (r"\bqty\b\.?", "quantity"),
        (r"\bw/o(?=\s)", "without"),
        (r"\bw/(?=\s)", "with"),
        (r"\s&\s", " and "),
    ),
    function_words=frozenset(
        {"of", "to", "and", "or", "in", "on", "at", "for", "from", "with", "each", "per", "a"}
        | {"an", "the", "is", "are", "was", "were", "more", "less", "left", "total", "by"}
        | {"into", "x", "times", "plus", "minus", "than", "as", "so", "then", "ago", "now"}
        | {"today", "tomorrow", "yesterday", "tonight", "please", "only", "instead", "too"}
    ),
    no_break_after=frozenset(
        {"dr", "mr", "mrs", "ms", "prof", "jr", "st", "ave", "rd", "apt", "no", "vs", "approx"}
        | {"e.g", "i.e", "fig", "mt", "tel"}
    ),
    may_end_on=frozenset({"etc", "a.m", "p.m", "inc", "ltd", "co", "qty"})
    | frozenset(_EN_MONTH_ABBREVIATIONS)
    | frozenset({"mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun"}),
)

# --- Brazilian Portuguese -----------------------------------------------------------------

_PT_NOT_NOUNS = frozenset(
    {"a", "as", "à", "às", "o", "os", "e", "ou", "de", "da", "das", "do", "dos", "em", "na"}
    | {"nas", "no", "nos", "para", "pra", "com", "por", "até", "que", "se", "mais", "menos"}
    | {"ao", "aos", "cada", "um", "uma", "é", "são", "foi", "foram", "x", "hoje", "ontem"}
    | {"amanhã", "agora", "só", "apenas", "também", "total", "atrás"}
)


_PT_MONTHS = (
    "janeiro",
    "fevereiro",
    "março",
    "abril",
    "maio",
    "junho",
    "julho",
    "agosto",
    "setembro",
    "outubro",
    "novembro",
    "dezembro",
)

_LITRO = Noun(
    "litro",
    "litros",
    half="meio litro",
    measure=True,
    quarter="um quarto de litro",
    three_quarters="três quartos de litro",
)
_QUILO = Noun(
    "quilo",
    "quilos",
    half="meio quilo",
    measure=True,
    quarter="um quarto de quilo",
    three_quarters="três quartos de quilo",
)
_GRAMA = Noun("grama", "gramas", measure=True)
_LIBRA = Noun("libra", "libras", feminine=True, half="meia libra", measure=True)
_DUZIA = Noun("dúzia", "dúzias", feminine=True, half="meia dúzia", measure=True)
_PACOTE = Noun("pacote", "pacotes", half="meio pacote", measure=True)
_UNIDADE = Noun("unidade", "unidades", feminine=True, measure=True)
_CAIXA = Noun("caixa", "caixas", feminine=True, measure=True)
_PECA = Noun("peça", "peças", feminine=True, measure=True)
_HORA = Noun("hora", "horas", feminine=True, half="meia hora")
_MINUTO = Noun("minuto", "minutos")
_CENTAVO = Noun("centavo", "centavos")
_REAL = Currency(Noun("real", "reais"), _CENTAVO)
_DOLAR = Currency(Noun("dólar", "dólares"), _CENTAVO)
_EURO_PT = Currency(Noun("euro", "euros"), _CENTAVO)
_LIBRA_ESTERLINA = Currency(_LIBRA, Noun("pêni", "pence"))
_MILHAO = Scale("milhão", "milhões", takes_de=True)
_BILHAO = Scale("bilhão", "bilhões", takes_de=True)

PT = Tables(
    words=Words(point="vírgula", minus="menos", and_="e", to="a", at="às", of="de"),
    units={
        "l": _LITRO,
        # como a narração os escreve ("0,25 quilo de presunto")
        "litro": _LITRO,
        "litros": _LITRO,
        "quilo": _QUILO,
        "quilos": _QUILO,
        "lt": _LITRO,
        "ml": Noun("mililitro", "mililitros", measure=True),
        "cl": Noun("centilitro", "centilitros", measure=True),
        "kg": _QUILO,
        "g": _GRAMA,
        "gr": _GRAMA,
        "mg": Noun("miligrama", "miligramas", measure=True),
        "lb": _LIBRA,
        "lbs": _LIBRA,
        "oz": Noun("onça", "onças", feminine=True, measure=True),
        "km": Noun("quilômetro", "quilômetros"),
        "m": Noun("metro", "metros", half="meio metro"),
        "cm": Noun("centímetro", "centímetros"),
        "mm": Noun("milímetro", "milímetros"),
        "°c": Noun("grau Celsius", "graus Celsius"),
        "ºc": Noun("grau Celsius", "graus Celsius"),
        "°f": Noun("grau Fahrenheit", "graus Fahrenheit"),
        "ºf": Noun("grau Fahrenheit", "graus Fahrenheit"),
        "°": Noun("grau", "graus"),
        "%": Noun("por cento", "por cento"),
        "min": _MINUTO,
        "h": _HORA,
        "dúzia": _DUZIA,
        "dúzias": _DUZIA,
        "duzia": _DUZIA,
        "duzias": _DUZIA,
        "dz": _DUZIA,
        "pacote": _PACOTE,
        "pacotes": _PACOTE,
        "pct": _PACOTE,
        "pcte": _PACOTE,
        "pctes": _PACOTE,
        "un": _UNIDADE,
        "und": _UNIDADE,
        "unid": _UNIDADE,
        "cx": _CAIXA,
        "cxs": _CAIXA,
        "pç": _PECA,
        "pçs": _PECA,
        "pc": _PECA,
        "pcs": _PECA,
    },
    currencies={
        "R$": _REAL,
        "BRL": _REAL,
        "$": _DOLAR,
        "US$": _DOLAR,
        "USD": _DOLAR,
        "€": _EURO_PT,
        "EUR": _EURO_PT,
        "£": _LIBRA_ESTERLINA,
        "GBP": _LIBRA_ESTERLINA,
    },
    scales={
        "mil": Scale("mil", "mil"),
        "milhão": _MILHAO,
        "milhões": _MILHAO,
        "milhao": _MILHAO,
        "milhoes": _MILHAO,
        "mi": _MILHAO,
        "bilhão": _BILHAO,
        "bilhões": _BILHAO,
        "bilhao": _BILHAO,
        "bilhoes": _BILHAO,
        "bi": _BILHAO,
    },
    months=_PT_MONTHS,
    month_keys={m: i for i, m in enumerate(_PT_MONTHS, 1)} | {"marco": 3},
    weekday_abbreviations={
        "seg": "segunda-feira",
        "ter": "terça-feira",
        "qua": "quarta-feira",
        "qui": "quinta-feira",
        "sex": "sexta-feira",
        "sáb": "sábado",
        "sab": "sábado",
        "dom": "domingo",
    },
    abbreviations=(
        (r"\bSrta\.", "Senhorita"),
        (r"\bSra\.", "Senhora"),
        (r"\bSr\.", "Senhor"),
        (r"\bDra\.", "Doutora"),
        (r"\bDr\.", "Doutor"),
        (r"\bProfa\.", "Professora"),
        (r"\bProf\.", "Professor"),
        (r"\bAv\.", "Avenida"),
        (r"\betc\.", "etcétera"),
        (r"\bp\.\s?ex\.", "por exemplo"),
        (r"\baprox\.", "aproximadamente"),
        (r"\b[Nn](?:º|°|\.º|o\.)\s?(?=\d)", "número "),
        (r"#\s?(?=\d)", "número "),
        (r"\bqtde?\b\.?", "quantidade"),
        (r"\btel\.", "telefone"),
        (r"\bobs\.", "observação"),
        (r"\bc/(?=\s)", "com"),
        (r"\bs/(?=\s)", "sem"),
        (r"\s&\s", " e "),
    ),
    function_words=_PT_NOT_NOUNS,
    feminine_after=frozenset({"às", "à", "das"}),
    no_break_after=frozenset(
        {"sr", "sra", "srta", "dr", "dra", "prof", "profa", "av", "p.ex", "ex", "aprox"}
        | {"n", "nº", "tel", "obs", "pág", "vol", "no"}
    ),
    may_end_on=frozenset({"etc", "qtd", "qtde", "ltda", "cia", "seg", "ter", "qua", "qui", "sex"})
    | frozenset({"sáb", "sab", "dom", "jan", "fev", "mar", "abr", "mai", "jun", "jul", "ago"})
    | frozenset({"set", "out", "nov", "dez"}),
)

TABLES: Mapping[Lang, Tables] = {"en": EN, "pt": PT}

# --- Portuguese grammatical gender ----------------------------------------------------------

_PT_FEMININE_WORDS = frozenset(
    {"vez", "vezes", "noz", "nozes", "alface", "alfaces", "couve", "couves", "carne", "carnes"}
    | {"tarde", "tardes", "noite", "noites", "mãe", "mães", "flor", "flores", "colher"}
    | {"colheres", "mulher", "mulheres", "cor", "cores", "parte", "partes", "rede", "redes"}
    | {"chave", "chaves", "ponte", "pontes", "árvore", "árvores", "sede", "pele", "peles"}
    | {"nuvem", "nuvens", "gente", "lei", "leis", "semente", "sementes", "torre", "torres"}
)
_PT_MASCULINE_WORDS = frozenset(
    {"dia", "dias", "problema", "problemas", "sistema", "sistemas", "programa", "programas"}
    | {"mapa", "mapas", "tema", "temas", "clima", "idioma", "idiomas", "pijama", "pijamas"}
    | {"sofá", "sofás", "guaraná", "guaranás", "maracujá", "maracujás", "chá", "chás"}
    | {"fubá", "planeta", "planetas", "telefonema", "telefonemas", "grama", "gramas"}
    | {"quilograma", "quilogramas", "miligrama", "miligramas", "cinema", "cinemas"}
    | {"pão", "pães", "feijão", "feijões", "limão", "limões", "melão", "melões", "mamão"}
    | {"sabão", "sabões", "algodão", "camarão", "camarões", "avião", "aviões", "caminhão"}
)
_PT_FEMININE_ENDINGS = ("a", "as", "ã", "ãs", "ção", "ções", "são", "sões", "dade", "dades")
_PT_FEMININE_ENDINGS_2 = ("gem", "gens", "tude", "tudes")


def pt_is_feminine(word: str) -> bool:
    """Whether a Portuguese noun is feminine, by a word list then by its ending.

    Numbers agree with the noun that follows them ("duas garrafas", "dois litros");
    an unknown word, or one that is not a noun, counts as masculine.
    """
    key = word.casefold()
    if key in _PT_NOT_NOUNS or key in _PT_MASCULINE_WORDS:
        return False
    if key in _PT_FEMININE_WORDS:
        return True
    return key.endswith(_PT_FEMININE_ENDINGS) or key.endswith(_PT_FEMININE_ENDINGS_2)
