"""Brazilian Portuguese words in the phones of PocketSphinx's bundled en-us model.

No registry package ships a Portuguese acoustic model for PocketSphinx or a
Portuguese Vosk model, so where none has been fetched the Portuguese verifier
decodes with the English one: each word of the Portuguese grammar is spelled in the
English phones nearest to how it is said in Brazil. The spelling is regular enough
for rules (``phones``): "leite" is L EY CH IY, "pão" P AW N, "arroz" AA HH OW S.

What the English phones cannot say is approximated: nasal vowels are the vowel and
an N, the tap of "cara" is R (as D, the flap of "water", "pode" was heard as "pare":
yes as no), the strong R of "carro" and "rua" is HH, a final "l" is W ("sal",
"papel"), "lh" and "nh" are L Y and N Y. The verifier has only to tell its grammar's
sentences apart, and a transcript it is unsure of only confirms what Whisper heard;
on espeak-ng's Brazilian voices it reads about a third of the commands exactly.
"""

from __future__ import annotations

import unicodedata

_VOWELS = frozenset("aeiouáéíóúâêôãõàü")
_FRONT = frozenset("eiéêí")
_SIMPLE = {
    "b": "B", "p": "P", "f": "F", "v": "V", "k": "K", "w": "W", "j": "ZH", "ç": "S",
    "m": "M", "n": "N",
    "x": "SH", "y": "IY", "á": "AA", "à": "AA", "é": "EH", "í": "IY", "ó": "AO",
    "ú": "UW", "ü": "UW",
}  # fmt: skip
_ORAL = {"a": "AA", "â": "AH", "e": "EH", "ê": "EY", "i": "IY", "o": "OW", "ô": "OW", "u": "UW"}
_NASAL = {"a": "AH", "â": "AH", "e": "EY", "ê": "EY", "é": "EY", "i": "IY", "o": "OW",
          "ô": "OW", "u": "UW", "í": "IY", "ú": "UW", "ó": "OW", "á": "AH"}  # fmt: skip
_DIPHTHONGS = {"ai": "AY", "ei": "EY", "éi": "EH IY", "oi": "OY", "ói": "OY", "ou": "OW",
               "au": "AW", "eu": "EH UW", "éu": "EH UW", "ui": "UW IY"}  # fmt: skip
_STRONG_R_AFTER = frozenset("nls")
_DIGRAPHS = {"ch": ["SH"], "lh": ["L", "Y"], "nh": ["N", "Y"], "rr": ["HH"], "ss": ["S"]}


def phones(word: str) -> str:
    """The en-us phones of a Brazilian Portuguese word ("pão" -> "P AW N"); parts of
    a hyphenated word one after the other ("couve-flor")."""
    return pronunciations(word)[0]


def pronunciations(word: str) -> list[str]:
    """``phones(word)`` first, then the word with its stressed "e" or "o" said the
    other way, open or closed, when the spelling does not tell ("pode" is [ɔ], "bolo"
    [o]; "leve" [ɛ], "mesa" [e])."""
    parts = [p for p in unicodedata.normalize("NFC", word.lower()).split("-") if p]
    spelled = [_word_phones(part) for part in parts]
    main = " ".join(" ".join(p) for p in spelled)
    others = []
    for index, part in enumerate(parts):
        stressed = _stressed_vowel(part)
        if stressed is None or part[stressed] not in "eo":
            continue
        swapped = _word_phones(part, open_at=stressed)
        if swapped != spelled[index]:
            other = [*spelled[:index], swapped, *spelled[index + 1 :]]
            others.append(" ".join(" ".join(p) for p in other))
    if main.endswith(" N") and parts[-1].endswith(_NASAL_ENDINGS):
        # a nasal vowel at the end has no N to close it ("não" is [nɐ̃w̃], "sim" [sĩ])
        others += [p.removesuffix(" N") for p in (main, *others)]
    return [main, *dict.fromkeys(o for o in others if o != main)]


_NASAL_ENDINGS = ("ão", "ãe", "ã", "am", "em", "ém", "im", "om", "um")


_ACCENTED = frozenset("áéíóúâêôãõ")
_GLIDES = frozenset("iu")


def _nuclei(text: str) -> list[int]:
    """Where each syllable's vowel starts (a diphthong is one: "lei-te", "pão")."""
    starts: list[int] = []
    i = 0
    while i < len(text):
        if text[i] in _VOWELS and not (
            text[i] == "u"
            and i > 0
            and text[i - 1] in "qg"
            and i + 1 < len(text)
            and text[i + 1] in _VOWELS
        ):
            starts.append(i)
            j = i + 1
            # a falling diphthong ("ai", "ou", "ão") stays in one syllable
            while (
                j < len(text)
                and text[j] in _VOWELS
                and (text[j] in _GLIDES or text[j - 1] in "ãõ")
                and text[j] not in _ACCENTED
            ):
                j += 1
            i = j
            continue
        i += 1
    return starts


def _stressed_vowel(text: str) -> int | None:
    """The index of the stressed vowel: the accented one, else the last syllable's for
    a word ending in a consonant other than "s", "m" or "ns", or in "i" or "u", else
    the one before it (Portuguese spelling marks every other stress)."""
    for index, letter in enumerate(text):
        if letter in "áéíóúâêô":
            return index
    nuclei = _nuclei(text)
    if not nuclei:
        return None
    for index, letter in enumerate(text):
        if letter in "ãõ":
            return index
    ending = text.rstrip("s")
    paroxytone = ending.endswith(("a", "e", "o", "am", "em", "en"))
    if paroxytone and len(nuclei) > 1:
        return nuclei[-2]
    return nuclei[-1]


def _is_vowel(text: str, index: int) -> bool:
    return 0 <= index < len(text) and text[index] in _VOWELS


def _reduced_end(text: str, index: int) -> bool:
    """True if the vowel at ``index`` is an unstressed final "e" or "o" (said [i] and
    [u] in Brazil: "leite", "tomate", "ovo"), also before a plural "s"."""
    # A final vowel that is stressed is written with an accent ("café", "avô"); an
    # unaccented one is not stressed, one-syllable words included ("de", "que").
    return text[index] in "eo" and text[index + 1 :] in ("", "s")


def _nasal_here(text: str, index: int) -> bool:
    """True if the vowel at ``index`` is nasal: an "m" or "n" follows that ends the
    syllable (end of word, or a consonant after it other than "h")."""
    after = index + 1
    if after >= len(text) or text[after] not in "mn":
        return False
    following = after + 1
    return following >= len(text) or (text[following] not in _VOWELS and text[following] != "h")


def _word_phones(text: str, open_at: int = -1) -> list[str]:  # noqa: PLR0912, PLR0915
    """The phones of one word, one rule per letter; the "e" or "o" at ``open_at`` said
    open ("EH", "AO") if the rules made it closed, closed if they made it open."""
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        nxt = text[i + 1] if i + 1 < len(text) else ""
        pair = c + nxt
        if c in "ãõ":
            if pair in ("ão", "ãe", "õe"):
                out += {"ão": ["AW", "N"], "ãe": ["AY", "N"], "õe": ["OY", "N"]}[pair]
                i += 2
            else:
                out += ["AH" if c == "ã" else "OW", "N"]
                i += 1
            continue
        if c in _VOWELS:
            if _nasal_here(text, i):
                end = i + 2 >= len(text)
                if c == "a" and end and text[i + 1] == "m":
                    out += ["AW", "N"]  # "compraram"
                else:
                    out += [_NASAL.get(c, "AH"), "N"]
                i += 2
                continue
            if pair in _DIPHTHONGS and not _nasal_here(text, i + 1):
                out += _DIPHTHONGS[pair].split()
                i += 2
                continue
            if _reduced_end(text, i):
                out.append("IY" if c == "e" else "UW")
            elif c == "a" and text[i + 1 :] in ("", "s") and i > 0:
                out.append("AH")  # unstressed final "a": "banana", "batatas"
            elif i == open_at:
                out.append({"e": "EY", "o": "AO"}[c])  # the rules' "e" is EH, "o" OW
            else:
                out.append(_ORAL.get(c) or _SIMPLE[c])
            i += 1
            continue
        if pair in _DIGRAPHS:
            out += _DIGRAPHS[pair]
            i += 2
            continue
        if c == "h":
            i += 1  # silent ("hoje")
            continue
        if c in _SIMPLE:
            out.append(_SIMPLE[c])
            i += 1
            continue
        palatal = nxt in ("i", "í") or (nxt == "e" and _reduced_end(text, i + 1))
        if c == "c":
            out.append("S" if nxt in _FRONT else "K")
        elif c == "d":
            out.append("JH" if palatal else "D")
        elif c == "t":
            out.append("CH" if palatal else "T")
        elif c == "g":
            if nxt == "u" and i + 2 < len(text) and text[i + 2] in _VOWELS:
                out += ["G"] if text[i + 2] in _FRONT else ["G", "W"]  # "guerra", "água"
                i += 2
                continue
            out.append("ZH" if nxt in _FRONT else "G")
        elif c == "q":
            if nxt == "u":
                front = i + 2 < len(text) and text[i + 2] in _FRONT
                out += ["K"] if front else ["K", "W"]
                i += 2
                continue
            out.append("K")
        elif c == "l":
            out.append("L" if _is_vowel(text, i + 1) else "W")  # "sal", "algo"
        elif c == "r":
            # "rua", "honra"; else a tap ("cara", "prato") or a syllable's end ("mar")
            out.append("HH" if i == 0 or text[i - 1] in _STRONG_R_AFTER else "R")
        elif c == "s":
            if nxt == "c" and i + 2 < len(text) and text[i + 2] in _FRONT:
                out.append("S")  # "descer"
                i += 2
                continue
            out.append("Z" if _is_vowel(text, i - 1) and _is_vowel(text, i + 1) else "S")
        elif c == "z":
            out.append("S" if i == len(text) - 1 else "Z")
        # anything else (an apostrophe, a digit) says nothing
        i += 1
    return out
