"""Split a reply into sentences, so speech can start after the first one is synthesized.

A sentence ends at ".", "!", "?" or "…" followed by white space or the end, and at a line
break. A dot does not end one inside a number ("2.5", "1.000"), after a title ("Dr.",
"Sra."), after an initial ("J. Smith"), or after an abbreviation such as "etc." or
"p.m." unless a capital letter follows.
"""

from __future__ import annotations

import re

from appliance.tts.lexicon import TABLES, language

_END = re.compile(r"([.!?…]+)([\"'”’»)\]]*)(?=\s|$)")
_LAST_TOKEN = re.compile(r"(\S+)$")
_OPENING = "\"'“‘«(["


def _ends_here(
    line: str, match: re.Match[str], no_break: frozenset[str], may_end: frozenset[str]
) -> bool:
    rest = line[match.end() :].lstrip()
    if match.group(1) in ("…", "...") and rest and rest[0].islower():
        return False  # trailing off: "wait... ok"
    if match.group(1) != "." or match.group(2):
        return True
    before = _LAST_TOKEN.search(line, 0, match.start())
    if before is None:
        return True
    token = before.group(1).lstrip(_OPENING)
    key = token.casefold()
    if key in no_break:
        return False
    if len(token) == 1 and token.isalpha() and token.isupper():
        return False  # an initial: "J. Smith"
    if key in may_end or "." in key.strip("."):  # "etc", "a.m", "e.g"
        return not rest or rest[0].isupper()
    return True


def split_sentences(text: str, lang: str) -> list[str]:
    """The sentences of ``text`` in order, stripped; no empty or punctuation-only ones."""
    tables = TABLES[language(lang)]
    sentences: list[str] = []
    for line in text.splitlines():
        start = 0
        for match in _END.finditer(line):
            if _ends_here(line, match, tables.no_break_after, tables.may_end_on):
                sentences.append(line[start : match.end()])
                start = match.end()
        sentences.append(line[start:])
    return [s.strip() for s in sentences if any(c.isalnum() for c in s)]
