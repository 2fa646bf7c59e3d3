"""Sentence templates: our YAML files plus reused home-assistant-intents sentences.

``sentences/<lang>/*.yaml`` are hassil intent files whose intent names are our
command actions. A ``home_assistant`` block in them imports sentences from the
``home_assistant_intents`` package under our intent names. The templates are
kept as written (``TemplateSet.intents``, for grammars) and folded to match the
folded input text (``TemplateSet.matcher``).
"""

from __future__ import annotations

import copy
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from hassil import (
    Alternative,
    Expression,
    Intents,
    ListReference,
    Permutation,
    RuleReference,
    Sequence,
    TextChunk,
    TextSlotList,
    merge_dict,
    parse_sentence,
)
from home_assistant_intents import get_intents

from appliance.actions.items import UNIT_BY_ALIAS
from appliance.intents.lexicon import LANGUAGES, load_lexicon
from appliance.intents.numbers import number_words
from appliance.intents.resources import data_file, load_yaml
from appliance.intents.text import fold

_LOGGER = logging.getLogger(__name__)
_HA_KEY = "home_assistant"
_RULE_REFERENCE = re.compile(r"<([^<>]+)>")
_LIST_REFERENCE = re.compile(r"\{([^{}:]+)(?::[^{}]+)?\}")


@dataclass(frozen=True)
class TemplateSet:
    """The templates of one language."""

    language: str
    source: Mapping[str, Any]
    intents: Intents
    matcher: Intents
    written: Mapping[str, str]  # folded sentence template -> as written
    negated_matcher: Intents | None = None
    """The blocks marked ``negated: true`` ("we don't need {item} anymore"), matched only
    against a request the negation gate refused, never with the others."""

    def as_written(self, folded_sentence: str | None) -> str | None:
        """The template as written in the YAML file, for diagnostics."""
        if folded_sentence is None:
            return None
        return self.written.get(folded_sentence, folded_sentence)


def _read_sentence_files(lang: str) -> dict[str, Any]:
    folder = data_file("sentences", lang)
    merged: dict[str, Any] = {}
    files = sorted((f for f in folder.iterdir() if f.name.endswith(".yaml")), key=lambda f: f.name)
    for resource in files:
        merge_dict(merged, load_yaml(resource))
    return merged


def _import_home_assistant(merged: dict[str, Any]) -> None:
    """Copy the configured Home Assistant sentences into ``merged`` (in place)."""
    config = merged.pop(_HA_KEY, None)
    if not config:
        return
    data = get_intents(config["language"])
    if data is None:
        _LOGGER.warning("home-assistant-intents has no %r data", config["language"])
        return
    used_rules: set[str] = set()
    used_lists: set[str] = set()
    for ha_name, spec in config["intents"].items():
        excluded: list[str] = spec.get("exclude_sentences_with", [])
        for block in data["intents"].get(ha_name, {}).get("data", []):
            if block.get("requires_context") or block.get("excludes_context"):
                continue
            sentences = [s for s in block["sentences"] if not any(x in s for x in excluded)]
            if not sentences:
                continue
            target = merged.setdefault("intents", {}).setdefault(spec["intent"], {"data": []})
            target["data"].append(
                {"sentences": sentences, "metadata": {"source": f"home-assistant:{ha_name}"}}
            )
            for sentence in sentences:
                used_rules.update(_RULE_REFERENCE.findall(sentence))
                used_lists.update(_LIST_REFERENCE.findall(sentence))
    rules = merged.setdefault("expansion_rules", {})
    pending = list(used_rules)
    while pending:  # rules may use other rules
        name = pending.pop()
        if name in rules or name not in data["expansion_rules"]:
            continue
        rules[name] = data["expansion_rules"][name]
        pending.extend(_RULE_REFERENCE.findall(rules[name]))
        used_lists.update(_LIST_REFERENCE.findall(rules[name]))
    lists = merged.setdefault("lists", {})
    for name in used_lists:
        if name not in lists and name in data["lists"]:
            lists[name] = copy.deepcopy(data["lists"][name])


def _folded(source: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``source`` whose templates are folded like the input text."""
    result = copy.deepcopy(dict(source))
    for intent in result.get("intents", {}).values():
        for block in intent["data"]:
            block["sentences"] = [fold(s) for s in block["sentences"]]
    result["expansion_rules"] = {
        name: fold(body) for name, body in result.get("expansion_rules", {}).items()
    }
    for slot_list in result.get("lists", {}).values():
        values = slot_list.get("values")
        if values is None:
            continue
        slot_list["values"] = [
            {"in": fold(v), "out": v} if isinstance(v, str) else {**v, "in": fold(v["in"])}
            for v in values
        ]
    return result


@cache
def load_templates(lang: str) -> TemplateSet:
    """Load, merge and compile the templates of ``lang`` ("en" or "pt")."""
    if lang not in LANGUAGES:
        raise ValueError(f"unsupported language: {lang!r}")
    source = _read_sentence_files(lang)
    _import_home_assistant(source)
    written = {
        fold(sentence): sentence
        for intent in source.get("intents", {}).values()
        for block in intent["data"]
        for sentence in block["sentences"]
    }
    plain, negated = _split_negated(source)
    return TemplateSet(
        language=lang,
        source=source,
        intents=Intents.from_dict(source),
        matcher=Intents.from_dict(_folded(plain)),
        written=written,
        negated_matcher=Intents.from_dict(_folded(negated)) if negated["intents"] else None,
    )


def _split_negated(source: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``source`` without its blocks marked ``negated: true``, and with only them."""
    plain, negated = dict(source), dict(source)
    plain["intents"], negated["intents"] = {}, {}
    for intent, spec in source.get("intents", {}).items():
        for block in spec["data"]:
            said_negated = bool((block.get("metadata") or {}).get("negated"))
            target = negated if said_negated else plain
            target["intents"].setdefault(intent, {**spec, "data": []})["data"].append(block)
    return plain, negated


def templates(lang: str) -> Intents:
    """The hassil intents of ``lang`` as written (accents kept), e.g. to build a grammar."""
    return load_templates(lang).intents


# -- vocabulary ----------------------------------------------------------------

_MAX_VARIANTS = 4096


def _compress(text: str, words: set[str]) -> str:
    """Keep only the first and last partial words; move whole inner words to ``words``."""
    parts = text.split(" ")
    if len(parts) <= 2:
        return text
    words.update(p for p in parts[1:-1] if p)
    return f"{parts[0]} {parts[-1]}"


class _Walker:
    """Collects every word a set of templates can produce."""

    def __init__(self, intents: Intents) -> None:
        self._intents = intents
        self.words: set[str] = set()
        self._rules: dict[str, frozenset[str]] = {}

    def variants(self, expr: Expression) -> frozenset[str]:
        """Every string ``expr`` can produce, inner words moved to ``self.words``."""
        if isinstance(expr, TextChunk):
            return frozenset({expr.text})
        if isinstance(expr, RuleReference):
            return self._rule(expr.rule_name)
        if isinstance(expr, ListReference):
            return self._list(expr.list_name)
        if isinstance(expr, Alternative | Permutation):
            return self._choice(expr)
        if isinstance(expr, Sequence):
            return self._sequence(expr)
        return frozenset({" "})

    def _choice(self, expr: Alternative | Permutation) -> frozenset[str]:
        out: set[str] = set()
        for item in expr.items:
            # A permutation's parts may come in any order: keep them word-separated.
            pad = " " if isinstance(expr, Permutation) else ""
            out |= {f"{pad}{v}{pad}" for v in self.variants(item)}
        if isinstance(expr, Alternative) and expr.is_optional:
            out.add("")
        return frozenset(out)

    def _sequence(self, expr: Sequence) -> frozenset[str]:
        current: set[str] = {""}
        for item in expr.items:
            following = self.variants(item)
            current = {_compress(a + b, self.words) for a in current for b in following}
            if len(current) > _MAX_VARIANTS:
                _LOGGER.debug("vocabulary: template too wide, partial expansion")
                current = set(sorted(current)[:_MAX_VARIANTS])
        return frozenset(current)

    def _rule(self, name: str) -> frozenset[str]:
        if name not in self._rules:
            self._rules[name] = frozenset({" "})  # guards against recursion
            body = self._intents.expansion_rules.get(name)
            self._rules[name] = self.variants(body.expression) if body else frozenset({" "})
        return self._rules[name]

    def _list(self, name: str) -> frozenset[str]:
        slot_list = self._intents.slot_lists.get(name)
        if not isinstance(slot_list, TextSlotList):
            return frozenset({" "})  # wildcards and ranges: a word boundary
        out: set[str] = set()
        for value in slot_list.values:
            out |= self.variants(value.text_in)
        return frozenset(out)

    def add_sentence(self, text: str) -> None:
        for variant in self.variants(parse_sentence(text, keep_text=True).expression):
            self.words.update(variant.split())


def _template_words(intents: Intents) -> Iterable[str]:
    walker = _Walker(intents)
    for intent in intents.intents.values():
        for block in intent.data:
            for text in block.sentence_texts:
                walker.add_sentence(text)
    return walker.words


@cache
def vocabulary(lang: str) -> frozenset[str]:
    """Every word ``lang`` requests are made of, lower case, as written.

    Template words, lexicon words, spelled-out numbers and unit names; item and
    event names (wildcards) are of course not included.
    """
    words = {w.lower() for w in _template_words(templates(lang))}
    words |= {w.lower() for w in load_lexicon(lang).words()}
    words |= number_words(lang)
    words |= set(UNIT_BY_ALIAS)  # English and Portuguese aliases alike
    return frozenset(w for w in words if any(c.isalpha() for c in w))
