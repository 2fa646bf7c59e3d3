"""The commit gate's rules, polarity, the profile text and the write results (no model,
no database)."""

from __future__ import annotations

import pytest

from appliance.memory.embedder import Thresholds
from appliance.memory.errors import MemoryInputError
from appliance.memory.gate import (
    Neighbour,
    check_input,
    clean_text,
    contradiction_candidates,
    decide,
    numbers,
    statement_similarities,
    substance,
)
from appliance.memory.model import (
    Kind,
    MemoryDraft,
    MemorySource,
    Outcome,
    RejectReason,
    WriteResult,
)
from appliance.memory.polarity import polarity
from appliance.memory.profile import build_profile
from appliance.memory.settings import MemorySettings
from appliance.memory.store import require_user, terms_query

SETTINGS = MemorySettings()
T = Thresholds(duplicate=0.975, conflict=0.88)


def draft(text: str, **kw: object) -> MemoryDraft:
    return MemoryDraft.of(text, kind=kw.pop("kind", "fact"), **kw)  # type: ignore[arg-type]


# --- input ---------------------------------------------------------------------------
def test_text_is_cleaned_of_control_characters_and_extra_space() -> None:
    assert clean_text("  I like\tcoffee\x00 \n\n with milk ") == "I like coffee with milk"
    assert check_input(draft(" I like   coffee "), SETTINGS).text == "I like coffee"


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda: check_input(draft("   \n\t "), SETTINGS), "empty"),
        (lambda: check_input(draft("x" * 501), SETTINGS), "too_long"),
        (lambda: check_input(draft("I like coffee", importance=0), SETTINGS), "bad_importance"),
        (lambda: check_input(draft("I like coffee", importance=11), SETTINGS), "bad_importance"),
        (lambda: draft("I like coffee", importance="7"), "bad_importance"),
        (lambda: draft("I like coffee", importance=True), "bad_importance"),
        (lambda: draft("I like coffee", kind="opinion"), "unknown_kind"),
        (lambda: draft("I like coffee", source="email"), "unknown_source"),
        (lambda: require_user(None), "no_user"),
        (lambda: require_user("  "), "no_user"),
    ],
)
def test_bad_input_is_a_clear_error(make: object, reason: str) -> None:
    with pytest.raises(MemoryInputError) as caught:
        make()  # type: ignore[operator]
    assert caught.value.reason == reason
    assert str(caught.value)


def test_kinds_and_sources_parse_loosely() -> None:
    made = MemoryDraft.of("I like coffee", kind=" Preference ", source="VOICE")
    assert made.kind is Kind.PREFERENCE and made.source is MemorySource.VOICE


def test_the_longest_allowed_text_passes() -> None:
    assert len(check_input(draft("x" * 500), SETTINGS).text) == 500


def test_substance() -> None:
    assert substance("ok then", SETTINGS) == (RejectReason.TOO_SHORT, "fewer than 8 characters")
    assert substance("12345 678 90", SETTINGS)[0] is RejectReason.NO_WORDS  # type: ignore[index]
    assert substance("Ana is 7", SETTINGS) is None


# --- polarity --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "negative", "neutral"),
    [
        ("I like coffee", False, "I like coffee"),
        ("I don't like coffee", True, "I like coffee"),
        ("I don’t like coffee", True, "I like coffee"),
        ("I do not like coffee", True, "I do like coffee"),
        ("I never drink milk", True, "I drink milk"),
        ("The kids cannot eat sugar", True, "The kids can eat sugar"),
        ("I hate spicy food", True, "I love spicy food"),
        ("I don't hate spicy food", False, "I love spicy food"),
        ("We have no dog", True, "We have dog"),
        ("Eu gosto de café", False, "Eu gosto de café"),
        ("Eu não gosto de café", True, "Eu gosto de café"),
        ("Não sou alérgico a amendoim", True, "Sou alérgico a amendoim"),
        ("Não temos nenhum cachorro", True, "Temos um cachorro"),
        ("Detesto cogumelos na pizza", True, "Gosto cogumelos na pizza"),
        # Portuguese "no" is "in the", not a negation
        ("Eu corro no parque aos sábados", False, "Eu corro no parque aos sábados"),
    ],
)
def test_polarity(text: str, negative: bool, neutral: str) -> None:
    found = polarity(text)
    assert (found.negative, found.neutral) == (negative, neutral)


def test_numbers_ignore_separators() -> None:
    assert numbers("every 10,000 km") == numbers("every 10000 km") == {"10000"}
    assert numbers("the code is 4521") != numbers("the code is 4522")
    assert numbers("I like coffee") == frozenset()


# --- the decision ----------------------------------------------------------------------
def near(memory_id: int, text: str, sim: float, neutral_sim: float | None = None) -> Neighbour:
    return Neighbour(memory_id, text, sim, sim if neutral_sim is None else neutral_sim)


def test_a_close_paraphrase_reinforces_the_closest() -> None:
    neighbours = [near(1, "I like coffee", 0.98), near(2, "I really like coffee", 0.99)]
    decision = decide("I like drinking coffee", neighbours, T, {})
    assert (decision.reinforce, decision.supersede, decision.similarity) == (2, (), 0.99)


def test_below_the_duplicate_threshold_inserts() -> None:
    decision = decide("I like tea", [near(1, "I like coffee", 0.97)], T, {})
    assert (decision.reinforce, decision.supersede) == (None, ())


def test_other_numbers_are_never_a_duplicate() -> None:
    decision = decide("The gate code is 4522", [near(1, "The gate code is 4521", 0.99)], T, {})
    assert decision.reinforce is None


def test_a_negation_is_a_contradiction_not_a_duplicate() -> None:
    neighbours = [near(7, "I like coffee", 0.99)]
    candidates = contradiction_candidates("I don't like coffee", neighbours, T)
    assert [c.id for c in candidates] == [7]
    known, to_embed = statement_similarities("I don't like coffee", candidates)
    assert known == {7: 1.0} and to_embed == {}
    decision = decide("I don't like coffee", neighbours, T, known)
    assert (decision.reinforce, decision.supersede) == (None, (7,))


def test_a_negated_old_memory_needs_its_neutral_form_embedded() -> None:
    neighbours = [near(3, "Eu não gosto de café", 0.93, 0.97)]
    candidates = contradiction_candidates("Eu adoro café", neighbours, T)
    known, to_embed = statement_similarities("Eu adoro café", candidates)
    assert known == {} and to_embed == {3: "Eu gosto de café"}


def test_a_positive_old_memory_is_compared_by_its_stored_vector() -> None:
    neighbours = [near(3, "Eu adoro café", 0.93, 0.984)]
    known, to_embed = statement_similarities(
        "Eu não gosto de café", contradiction_candidates("Eu não gosto de café", neighbours, T)
    )
    assert known == {3: 0.984} and to_embed == {}


def test_a_different_fact_of_opposite_polarity_is_not_superseded() -> None:
    neighbours = [near(4, "I like coffee", 0.90, 0.925)]
    candidates = contradiction_candidates("I don't like tea", neighbours, T)
    known, _ = statement_similarities("I don't like tea", candidates)
    decision = decide("I don't like tea", neighbours, T, known)
    assert (decision.reinforce, decision.supersede) == (None, ())


def test_far_memories_are_not_contradiction_candidates() -> None:
    assert contradiction_candidates("I don't like jazz", [near(1, "I like cars", 0.8)], T) == []


# --- terms, profile, results --------------------------------------------------------
def test_terms_become_a_safe_prefix_query() -> None:
    assert terms_query("Café com leite!") == "café:* | com | leite:*"
    assert terms_query(["coffee", "o'reilly", "a"]) == "coffee:* | reilly:*"
    assert terms_query("') | !&:* --") is None
    assert terms_query("") is None


def test_the_profile_is_bounded_and_strongest_first() -> None:
    candidates = [
        (1, Kind.FACT, "I am allergic to peanuts", 10, 2.0),
        (2, Kind.PREFERENCE, "I like coffee " + "x" * 80, 6, 1.0),
        (3, Kind.PREFERENCE, "I like tea", 5, 1.0),
        (4, Kind.EPISODE, "Forgotten", 9, 0.0),
    ]
    built = build_profile(candidates, max_chars=60)
    assert built.text == "- (fact) I am allergic to peanuts\n- (preference) I like tea"
    assert built.memory_ids == (1, 3)
    assert len(built.text) <= 60


def test_results_say_what_happened() -> None:
    assert WriteResult(Outcome.INSERTED, 5).describe() == "inserted #5"
    assert (
        WriteResult(Outcome.REINFORCED, 2, similarity=0.9812).describe()
        == "reinforced #2 (similarity 0.981)"
    )
    superseded = WriteResult(Outcome.SUPERSEDED, 9, (4,), similarity=0.911)
    assert superseded.describe() == "inserted #9, superseded #4 (similarity 0.911)"
    assert superseded.to_payload()["superseded"] == [4]
    rejected = WriteResult(Outcome.REJECTED, reason=RejectReason.DAILY_CAP, detail="50 today")
    assert not rejected.written
    assert rejected.describe() == "rejected: daily_cap (50 today)"
    assert rejected.to_payload()["reason"] == "daily_cap"
