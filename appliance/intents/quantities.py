"""Shopping item phrases: several items, quantities, units and the item name.

"two liters of milk" -> 2, "l", "milk"; "milk, bread and a dozen eggs" -> three
phrases. Units come from ``appliance.actions.items.UNIT_BY_ALIAS``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from appliance.actions.items import MEASURES, UNIT_BY_ALIAS, display_name
from appliance.intents.lexicon import Lexicon, Phrase, Quantities
from appliance.intents.numbers import NumberSpan, format_number, number_spans
from appliance.intents.text import Word, fold, span_text

_UNITS: dict[str, str] = {fold(alias): unit for alias, unit in UNIT_BY_ALIAS.items()}


@dataclass(frozen=True)
class ItemSpec:
    """One item with its optional quantity and unit."""

    name: str
    quantity: float | None = None
    unit: str | None = None


def _starts_with(words: Sequence[Word], at: int, phrases: Sequence[Phrase]) -> int:
    """Length of the longest phrase found at ``words[at:]``, or 0."""
    for candidate in phrases:
        end = at + len(candidate)
        if end <= len(words) and tuple(w.key for w in words[at:end]) == candidate:
            return len(candidate)
    return 0


def ends_with(words: Sequence[Word], phrases: Sequence[Phrase]) -> int:
    """Length of the first of ``phrases`` that ``words`` end with, leaving at least one
    word before it; 0 if none."""
    for candidate in phrases:
        size = len(candidate)
        if len(words) > size and tuple(w.key for w in words[-size:]) == candidate:
            return size
    return 0


def split_items(words: Sequence[Word], lexicon: Lexicon) -> list[list[Word]]:
    """Split at "," / "and" / "e" unless inside a number, "and a half" or a compound,
    and before a count that starts another counted item (``_counted_pieces``)."""
    spans = number_spans(words, lexicon.language)
    protected: set[int] = set()
    for span in spans:
        protected.update(range(span.start, span.end))
    for index in range(len(words)):
        size = _starts_with(words, index, lexicon.compounds)
        protected.update(range(index, index + size))
        if _starts_with(words, index, lexicon.quantities.and_a_half):
            protected.add(index)
    pieces: list[list[int]] = [[]]
    for index, word in enumerate(words):
        if word.key in lexicon.conjunctions and index not in protected:
            pieces.append([])
        else:
            pieces[-1].append(index)
    starts = {span.start: span.end for span in spans if not span.ordinal}
    return [
        [words[i] for i in counted]
        for piece in pieces
        if piece
        for counted in _counted_pieces(piece, words, starts, lexicon)
    ]


def _counted_pieces(
    piece: list[int], words: Sequence[Word], starts: dict[int, int], lexicon: Lexicon
) -> list[list[int]]:
    """``piece`` (indexes into ``words``) split before each count that follows a counted
    item: "four apples two pears" is two items, as said without the comma Whisper
    often leaves out. Only when the piece itself starts with a count ("chinese five
    spice" is one item), after a word that is not a count ("three 2 liter bottles"),
    never after "of" ("two bottles of 7 up"), nor after "or" ("3 apples or 4 pears":
    one item, a choice). ``starts``: where each cardinal number starts, and where it
    ends."""
    if piece[0] not in starts:
        return [piece]
    out = [[piece[0]]]
    counted_to = starts[piece[0]]  # the words of the piece's own count
    for index in piece[1:]:  # a piece is a run of consecutive words
        if (
            index in starts
            and index - 1 >= counted_to
            and words[index - 1].key not in lexicon.quantities.of
            and words[index - 1].key not in lexicon.quantities.alternatives
            # "3 or 4 apples": one item, its amount a range
            and not (index - 1 == counted_to and words[index - 1].key in lexicon.quantities.ranges)
        ):
            out.append([])
            counted_to = starts[index]
        out[-1].append(index)
    return out


def _number_at(spans: Sequence[NumberSpan], index: int) -> NumberSpan | None:
    for span in spans:
        if span.start == index and not span.ordinal:
            return span
    return None


def trim_trailing(words: Sequence[Word], lexicon: Lexicon) -> Sequence[Word]:
    """``words`` without the phrases said after an item that are no part of its name
    (the lexicon's ``item_trailing``: "too", "for the weekend")."""
    while words:
        size = ends_with(words, lexicon.item_trailing)
        if not size:
            break
        words = words[:-size]
    return words


_Found = tuple[float | None, int] | None


def _vague(words: Sequence[Word], _: Sequence[NumberSpan], q: Quantities) -> _Found:
    size = _starts_with(words, 0, q.vague)  # "some apples": no quantity
    return (None, size) if size else None


def _fixed(words: Sequence[Word], _: Sequence[NumberSpan], q: Quantities) -> _Found:
    size = _starts_with(words, 0, tuple(q.words))  # "a couple of"
    return (q.words[tuple(w.key for w in words[:size])], size) if size else None


def _fraction(words: Sequence[Word], _: Sequence[NumberSpan], q: Quantities) -> _Found:
    """A part of one unit: "a quarter pound of ham", "three quarters of a pound of
    turkey", "um quarto de quilo de presunto"; never without a unit after it."""
    size = _starts_with(words, 0, tuple(q.fractions))
    if not size:
        return None
    after = size
    if after < len(words) and words[after].key in q.of:  # "... of a pound", "... de quilo"
        after += 1
        if after < len(words) and words[after].key in q.one:
            after += 1
    if after < len(words) and words[after].key in _UNITS:
        return q.fractions[tuple(w.key for w in words[:size])], after
    return None


def _half(words: Sequence[Word], _: Sequence[NumberSpan], q: Quantities) -> _Found:
    one, half = q.one, q.half
    if len(words) > 2 and words[0].key in one and words[1].key in half and words[2].key in _UNITS:
        return 0.5, 2  # "a half gallon"
    if words[0].key not in q.half:
        return None
    after = 2 if len(words) > 1 and words[1].key in q.half_articles else 1
    if after < len(words) and words[after].key in _UNITS:  # "half a liter"
        return 0.5, after
    return None, 0  # "half and half": a name, not a quantity


def _a_size(words: Sequence[Word], spans: Sequence[NumberSpan], at: int) -> bool:
    """True if an article's number at ``at`` is a size: a number other than one before
    a unit in the singular ("a 12 pack of beer", "a 2 liter bottle of coke", "the 5
    pound bag of flour"): one of it, not twelve packs."""
    number = _number_at(spans, at)
    if number is None or number.value == 1 or number.end >= len(words):
        return False
    unit = words[number.end].key
    return unit in _UNITS and not unit.endswith("s")


def _number(words: Sequence[Word], spans: Sequence[NumberSpan], q: Quantities) -> _Found:
    start = 1 if words[0].key in q.one else 0  # "a dozen", "a hundred grams"
    if start and _a_size(words, spans, start):
        return None, start  # "a 12 pack of beer": an item of that size
    number = _number_at(spans, start)
    if number is not None:
        half = _starts_with(words, number.end, q.and_a_half)
        return number.value + (0.5 if half else 0.0), number.end + half
    if start and start < len(words) and words[start].key in _UNITS:
        return 1.0, start  # "a carton of milk", "another carton of milk"
    return None  # "an apple": an article, no quantity


def _bare_unit(words: Sequence[Word], _: Sequence[NumberSpan], q: Quantities) -> _Found:
    """One of a unit said without its article: "kilo of rice", "dozen eggs" (Whisper
    drops a quick "a"; "add dozen eggs" is what "a dozen eggs" means, not an item
    named "dozen eggs"). Only before "of", or for a dozen, which takes none; never a
    plural ("dozens of eggs" is no number)."""
    if len(words) < 2 or _UNITS.get(words[0].key) is None or words[0].key.endswith("s"):
        return None
    if (words[1].key in q.of and len(words) > 2) or _UNITS[words[0].key] == "dozen":
        return 1.0, 0
    return None


def _range(words: Sequence[Word], spans: Sequence[NumberSpan], q: Quantities) -> _Found:
    """No quantity for an amount said as a range ("3 or 4 apples", "three to four
    apples"): the item keeps it in its name."""
    first = _number_at(spans, 0)
    if first is None or first.end + 1 >= len(words) or words[first.end].key not in q.ranges:
        return None
    return (None, 0) if _number_at(spans, first.end + 1) is not None else None


def _choice(words: Sequence[Word], spans: Sequence[NumberSpan], q: Quantities) -> _Found:
    """No quantity for two amounts said as a choice ("3 apples or 4 pears", "a dozen
    eggs or 2 dozen"): the item is named as said."""
    for index in range(1, len(words) - 1):
        if words[index].key in q.alternatives and _number_at(spans, index + 1) is not None:
            return None, 0
    return None


_QUANTITY_READERS = (_range, _choice, _vague, _fixed, _fraction, _half, _number, _bare_unit)


def _leading_quantity(
    words: Sequence[Word], spans: Sequence[NumberSpan], lexicon: Lexicon
) -> tuple[float | None, int]:
    """The quantity said before the unit/item and the index of the next word."""
    if (
        len(words) > 1
        and words[0].key in lexicon.quantities.articles
        and not _a_size(words, spans, 1)
    ):
        # "the 3 apples", "os dois pacotes de arroz"
        shifted = [replace(s, start=s.start - 1, end=s.end - 1) for s in spans if s.start]
        quantity, end = _leading_quantity(words[1:], shifted, lexicon)
        if quantity is not None:
            return quantity, 1 + end
    for reader in _QUANTITY_READERS:
        found = reader(words, spans, lexicon.quantities)
        if found is None:
            continue
        if reader is _vague and 0 < found[1] < len(words):
            # "mais dois litros de leite": the amount after the vague word counts
            skip = found[1]
            shifted = [replace(s, start=s.start - skip, end=s.end - skip) for s in spans]
            quantity, end = _leading_quantity(words[skip:], shifted, lexicon)
            if quantity is not None:
                return quantity, skip + end
        quantity, end = found
        if quantity is not None:  # "two more apples", "a couple more lemons"
            end += _starts_with(words, end, lexicon.quantities.more)
        return quantity, end
    return None, 0


def _percent(original: str, words: Sequence[Word], index: int, q: Quantities) -> int | None:
    """How many words after a quantity (``words[:index]``) say it is a percentage: 0 for
    a "%" written after it ("2% milk"), the length of a percent word ("two percent
    milk"); None when it is no percentage or nothing follows it."""
    if not 0 < index < len(words):
        return None
    if "%" in original[words[index - 1].end : words[index].start]:
        return 0
    return _starts_with(words, index, q.percent) or None


def _glued(original: str, words: Sequence[Word], index: int) -> bool:
    """True if the digits before ``words[index]`` are written onto it, with no space or
    with a hyphen, and it is no unit: "7up", "7-Up" (not "2l", "2-liter")."""
    if not 0 < index < len(words) or not words[index - 1].key[:1].isdigit():
        return False
    gap = original[words[index - 1].end : words[index].start]
    return gap in ("", "-") and words[index].key not in _UNITS


def parse_item(original: str, words: Sequence[Word], lexicon: Lexicon) -> ItemSpec:
    """Read "[quantity] [unit] [of] item" from one item phrase."""
    words = trim_trailing(words, lexicon)
    if not words:
        return ItemSpec(name="")
    q = lexicon.quantities
    quantity, index = _leading_quantity(words, number_spans(words, lexicon.language), lexicon)
    if quantity is not None and _glued(original, words, index):
        quantity, index = None, 0  # "7up", "7-Up": a name, not seven of "up"
    percent = _percent(original, words, index, q) if quantity is not None else None
    if quantity is not None and percent is not None:
        # "2% milk", "two percent milk": a kind of milk, not two of it; said either way,
        # it is written the same
        rest = span_text(original, list(words[index + percent :]))
        return ItemSpec(name=display_name(f"{format_number(quantity)}% {rest}"))
    unit: str | None = None
    if quantity is not None and index < len(words) - 1:
        index += _starts_with(words, index, q.partitive)  # "two of the apples"
    if quantity is not None and index < len(words) and words[index].key in _UNITS:
        unit_index = index
        unit = _UNITS[words[index].key]
        index += 1
        half = _starts_with(words, index, q.and_a_half)
        quantity, index = quantity + (0.5 if half else 0.0), index + half
        index += _starts_with(words, index, q.more)  # "a dozen more eggs"
        if index < len(words) and words[index].key in q.of:
            index += 1
        if index >= len(words):  # "two boxes": the unit word is the item
            if unit in MEASURES:  # never "add two liters", "add a dozen" (cut off)
                return ItemSpec(name="")
            unit, index = None, unit_index
    name = display_name(span_text(original, list(words[index:])))
    return ItemSpec(name=name, quantity=quantity, unit=unit)
