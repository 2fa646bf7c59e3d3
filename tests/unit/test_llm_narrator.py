"""The narrator with a scripted LLM: guard, budget, errors, fallbacks, prompt modes."""

from __future__ import annotations

import datetime as dt
import hashlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import ValidationError

from appliance.llm import LlmSettings, Narrator
from appliance.llm import model as model_mod
from appliance.llm.engine import Engine
from appliance.llm.narrator import clean, first_sentence
from appliance.llm.prompt import (
    EXAMPLE_NOW,
    chat_messages,
    closest_example,
    completion_prefix,
    completion_query,
    examples,
    facts,
)
from appliance.narration import check, template_sentence
from appliance.narration.samples import ENGLISH, samples

BRT = dt.timezone(dt.timedelta(hours=-3))
NOW = dt.datetime(2026, 11, 30, 10, 0, tzinfo=BRT)
EN = samples(NOW, ENGLISH)
GOOD = "I added 2 liters of milk to your shopping list."


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class FakeLlama:
    """Streams scripted chunks; records prompts; advances a fake clock per chunk."""

    def __init__(
        self,
        chunks: list[str] | None = None,
        *,
        clock: FakeClock | None = None,
        step: float = 0.01,
        metadata: dict[str, str] | None = None,
        finish: str = "stop",
        error: Exception | None = None,
        gate: threading.Event | None = None,
    ) -> None:
        self.chunks = chunks if chunks is not None else [" I added", " 2 liters of milk",
                                                         " to your shopping list."]  # fmt: skip
        self.clock = clock
        self.step = step
        self.metadata = metadata or {}
        self.finish = finish
        self.error = error
        self.gate = gate
        self.prompts: list[Any] = []
        self.consumed = 0
        self.closed = False

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        return list(range(len(text.split())))  # about one token per word

    def _stream(self, chat: bool) -> Iterator[dict[str, Any]]:
        try:
            if self.gate is not None:
                self.gate.wait(5)
            if self.error is not None:
                raise self.error
            for index, chunk in enumerate(self.chunks):
                if self.clock is not None:
                    self.clock.now += self.step
                self.consumed += 1
                last = index == len(self.chunks) - 1
                finish = self.finish if last else None
                if chat:
                    yield {"choices": [{"delta": {"content": chunk}, "finish_reason": finish}]}
                else:
                    yield {"choices": [{"text": chunk, "finish_reason": finish}]}
        finally:
            self.closed = True

    def create_completion(self, prompt: str, **kwargs: Any) -> Iterator[dict[str, Any]]:
        self.prompts.append(prompt)
        return self._stream(chat=False)

    def create_chat_completion(self, messages: Any, **kwargs: Any) -> Iterator[dict[str, Any]]:
        self.prompts.append(messages)
        return self._stream(chat=True)


def make(
    tmp_path: Path, llm: FakeLlama, clock: FakeClock | None = None, **settings: Any
) -> Narrator:
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    config = LlmSettings(model_path=model, **settings)
    narrator = Narrator(
        config, tmp_path, engine_factory=lambda path, s: Engine(llm, s),
        clock=clock or FakeClock(),
    )  # fmt: skip
    assert narrator.load(("en",))
    llm.consumed, llm.closed = 0, False  # forget the warm-up
    return narrator


def test_a_guarded_llm_sentence_is_spoken(tmp_path: Path) -> None:
    llm = FakeLlama()
    narration = make(tmp_path, llm).narrate(EN["add"], "en", now=NOW)
    assert narration.source == "llm"
    assert narration.text == GOOD
    assert narration.reason is None
    assert narration.ttft_ms is not None
    prompt = llm.prompts[-1]
    assert prompt.startswith(completion_prefix("en"))
    assert prompt.endswith(completion_query(EN["add"], "en", NOW))


@pytest.mark.parametrize(
    "sentence",
    [
        "I added 3 liters of milk to your shopping list.",
        "I removed milk from your list.",
        "I added 2 liters of milk and bread to your list.",
        "Milk is already on your list.",
    ],
)
def test_a_sentence_the_guard_refuses_gives_the_template(tmp_path: Path, sentence: str) -> None:
    narration = make(tmp_path, FakeLlama([" " + sentence])).narrate(EN["add"], "en", now=NOW)
    assert narration.source == "template"
    assert narration.text == "I added 2 liters of milk to the shopping list."
    assert narration.reason is not None
    assert narration.reason.startswith("guard: ")
    assert narration.llm_text == sentence


def test_think_blocks_are_never_spoken(tmp_path: Path) -> None:
    llm = FakeLlama(["<th", "ink>The user wants milk", ", say 3 liters</thi", "nk>", " " + GOOD])
    narration = make(tmp_path, llm).narrate(EN["add"], "en", now=NOW)
    assert (narration.source, narration.text) == ("llm", GOOD)


def test_an_unterminated_think_block_gives_the_template(tmp_path: Path) -> None:
    llm = FakeLlama(["<think>", "I added 2 liters of milk to your shopping list."])
    narration = make(tmp_path, llm).narrate(EN["add"], "en", now=NOW)
    assert (narration.source, narration.reason) == ("template", "empty")


def test_generation_stops_at_the_first_sentence(tmp_path: Path) -> None:
    llm = FakeLlama([" I added 2 liters", " of milk to your shopping list.", " Enjoy", " it."] * 3)
    narration = make(tmp_path, llm).narrate(EN["add"], "en", now=NOW)
    assert narration.text == GOOD
    assert llm.consumed == 3  # the sentence end is seen with the next chunk's space
    assert llm.closed


def test_the_time_budget_gives_the_template(tmp_path: Path) -> None:
    clock = FakeClock()
    llm = FakeLlama([" I", " added", " 2", " liters", " of milk."], clock=clock, step=0.5)
    narration = make(tmp_path, llm, clock, budget_ms=1500).narrate(EN["add"], "en", now=NOW)
    assert (narration.source, narration.reason) == ("template", "timeout")
    assert llm.consumed <= 4
    assert llm.closed


def test_a_sentence_cut_by_max_tokens_gives_the_template(tmp_path: Path) -> None:
    llm = FakeLlama([" I added 2 liters of milk to your"], finish="length")
    narration = make(tmp_path, llm).narrate(EN["add"], "en", now=NOW)
    assert (narration.source, narration.reason) == ("template", "incomplete")


def test_an_llm_exception_gives_the_template(tmp_path: Path) -> None:
    llm = FakeLlama()
    narrator = make(tmp_path, llm)
    llm.error = RuntimeError("llama_decode returned -1")
    narration = narrator.narrate(EN["add"], "en", now=NOW)
    assert (narration.source, narration.reason) == ("template", "error: RuntimeError")
    llm.error = None
    assert narrator.narrate(EN["add"], "en", now=NOW).source == "llm"  # still usable


def test_a_prompt_too_long_for_the_context_gives_the_template(tmp_path: Path) -> None:
    llm = FakeLlama()
    long_list = samples(NOW)["list"].model_copy(
        update={
            "items": [
                i.model_copy(update={"name": " ".join([i.name] * 300)}) for i in EN["list"].items
            ]
        }
    )
    narration = make(tmp_path, llm, n_ctx=1024).narrate(long_list, "en", now=NOW)
    assert (narration.source, narration.reason) == ("template", "prompt_too_long")
    assert len(llm.prompts) == 2  # only the warm-ups (narration, answer): nothing generated


def test_disabled_llm_uses_templates_and_never_loads(tmp_path: Path) -> None:
    def factory(path: Path, settings: LlmSettings) -> Engine:
        raise AssertionError

    narrator = Narrator(LlmSettings(enabled=False), tmp_path, engine_factory=factory)
    assert not narrator.load()
    narration = narrator.narrate(EN["list_empty"], "pt", now=NOW)
    assert (narration.text, narration.source, narration.reason) == (
        "Sua lista de compras está vazia.", "template", "disabled")  # fmt: skip


def test_unsupported_language_uses_the_english_template(tmp_path: Path) -> None:
    llm = FakeLlama()
    narration = make(tmp_path, llm).narrate(EN["add"], "de", now=NOW)
    assert (narration.source, narration.reason) == ("template", "unsupported_language")
    assert narration.text == "I added 2 liters of milk to the shopping list."
    assert len(llm.prompts) == 2  # only the warm-ups (narration, answer)


def test_narrate_never_waits_for_the_model_to_load(tmp_path: Path) -> None:
    gate = threading.Event()
    llm = FakeLlama()
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")

    def slow_factory(path: Path, settings: LlmSettings) -> Engine:
        gate.wait(5)
        return Engine(llm, settings)

    narrator = Narrator(LlmSettings(model_path=model), tmp_path, engine_factory=slow_factory)
    narration = narrator.narrate(EN["add"], "en", now=NOW)
    assert (narration.source, narration.reason) == ("template", "loading")
    gate.set()
    assert narrator._loader is not None
    narrator._loader.join(5)
    assert narrator.ready
    assert narrator.narrate(EN["add"], "en", now=NOW).source == "llm"


def test_a_model_that_fails_to_load_means_templates(tmp_path: Path) -> None:
    settings = LlmSettings(model_path=tmp_path / "missing.gguf")
    narrator = Narrator(settings, tmp_path)
    assert not narrator.load()
    narration = narrator.narrate(EN["add"], "en", now=NOW)
    assert narration.source == "template"
    assert narration.reason is not None
    assert narration.reason.startswith("unavailable: ModelUnavailableError")


def test_a_busy_model_gives_the_template(tmp_path: Path) -> None:
    gate = threading.Event()
    llm = FakeLlama()
    narrator = make(tmp_path, llm, clock=None, budget_ms=100)
    narrator._clock = time.monotonic
    llm.gate = gate
    first = threading.Thread(target=narrator.narrate, args=(EN["add"], "en"))
    first.start()
    try:
        deadline = time.monotonic() + 5
        while len(llm.prompts) < 2 and time.monotonic() < deadline:
            time.sleep(0.005)
        narration = narrator.narrate(EN["add"], "en", now=NOW)
        assert (narration.source, narration.reason) == ("template", "busy")
    finally:
        gate.set()
        first.join(5)


def test_chat_models_get_a_system_prompt(tmp_path: Path) -> None:
    llm = FakeLlama(metadata={"tokenizer.chat_template": "{{ messages }}"})
    narration = make(tmp_path, llm).narrate(EN["add"], "en", now=NOW)
    assert narration.source == "llm"
    messages = llm.prompts[-1]
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "ONE short sentence" in messages[0]["content"]
    assert messages[1]["content"].endswith(facts(EN["add"], "en", NOW))


def test_chat_template_setting_overrides_the_metadata(tmp_path: Path) -> None:
    llm = FakeLlama(metadata={"tokenizer.chat_template": "{{ messages }}"})
    make(tmp_path, llm, chat_template="completion").narrate(EN["add"], "en", now=NOW)
    assert isinstance(llm.prompts[-1], str)
    plain = FakeLlama()
    make(tmp_path, plain, chat_template="chat").narrate(EN["add"], "en", now=NOW)
    assert isinstance(plain.prompts[-1], list)


def test_questions_and_portuguese(tmp_path: Path) -> None:
    pt = samples(NOW)["add_confirm"].model_copy(
        update={"details": {"proposed": {"action": "shopping.add", "item": "leite de aveia"}}}
    )
    llm = FakeLlama([" Você quis adicionar leite de aveia à sua lista?", "\n"])
    narrator = make(tmp_path, llm)
    first = narrator.narrate(pt, "pt-BR", now=NOW)  # the Portuguese prompt is not warm yet
    assert (first.source, first.reason) == ("template", "warming")
    assert first.text == "Você quis adicionar leite de aveia?"
    assert narrator._loader is not None
    narrator._loader.join(5)
    assert any(isinstance(p, str) and p.startswith(completion_prefix("pt")) for p in llm.prompts)
    narration = narrator.narrate(pt, "pt-BR", now=NOW)
    assert (narration.source, narration.text) == (
        "llm", "Você quis adicionar leite de aveia à sua lista?")  # fmt: skip


def test_the_household_timezone_anchors_today(tmp_path: Path) -> None:
    tokyo = dt.timezone(dt.timedelta(hours=9))
    start = dt.datetime.now(tokyo).date() + dt.timedelta(days=1)
    all_day = samples(NOW)["agenda_add_all_day"].model_copy(
        update={"events": [EN["agenda_add_all_day"].events[0].model_copy(
            update={"start": start.isoformat()})]}
    )  # fmt: skip
    narrator = Narrator(LlmSettings(enabled=False), tmp_path, timezone=tokyo)
    assert narrator.narrate(all_day, "en").text == (
        "I added the dentist to your agenda for tomorrow."
    )


def test_sentence_helpers() -> None:
    assert first_sentence("I added milk") is None
    assert first_sentence(" I added 1.5 liters of milk. And") == "I added 1.5 liters of milk."
    assert first_sentence("Is it 3 p.m. today? Yes") == "Is it 3 p.m. today?"
    assert first_sentence("No punctuation\nnext") == "No punctuation"
    assert clean(' Sentence: "I added milk."  ') == "I added milk."
    assert clean("Frase:  Adicionei   leite.") == "Adicionei leite."


# --- prompts ------------------------------------------------------------------------
@pytest.mark.parametrize("lang", ["en", "pt"])
def test_few_shot_examples_pass_the_guard(lang: str) -> None:
    for receipt, sentence in examples(lang):
        assert check(sentence, receipt, lang, now=EXAMPLE_NOW).ok, sentence


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_every_sample_has_a_closest_example_with_other_names(lang: str) -> None:
    for label, receipt in EN.items():
        found = closest_example(receipt, lang)
        assert found is not None, label
        shot_receipt, shot = found
        assert shot == template_sentence(shot_receipt, lang, now=EXAMPLE_NOW)
        for name in ("oat milk", "dentist", "eggs", "bread", "rice"):
            assert name not in shot


def test_facts_are_compact_and_in_the_target_language() -> None:
    assert facts(EN["add"], "en", NOW) == (
        'status=success action=shopping.add items="2 liters of milk"'
    )
    assert facts(EN["add"], "pt", NOW) == (
        'status=success action=shopping.add items="2 litros de milk"'
    )
    assert facts(EN["add_already"], "en", NOW) == (
        'status=no_change reason=already_on_list action=shopping.add items="milk"'
    )
    assert facts(EN["next"], "en", NOW) == (
        'status=success action=agenda.next event="the dentist" when="tomorrow at 3 PM"'
    )
    assert facts(EN["move"], "pt", NOW) == (
        'status=success action=agenda.move event="o dentist" new_time="sexta-feira às 16h"'
    )
    assert facts(EN["list_long"], "en", NOW) == (
        "status=success action=shopping.list count=11 "
        'items="milk, eggs, bread, rice, apples" more=6'
    )
    assert facts(EN["add_merged"], "en", NOW).endswith('before="2 liters of milk"')


def test_the_prompt_prefix_is_fixed_per_language() -> None:
    assert completion_prefix("en") == completion_prefix("en")
    assert completion_prefix("en") != completion_prefix("pt")
    assert "Frase:" in completion_prefix("pt")
    query = completion_query(EN["add"], "en", NOW)
    assert query.endswith('status=success action=shopping.add items="2 liters of milk"\nSentence:')
    messages = chat_messages(EN["add"], "pt", NOW)
    assert "português" in messages[0]["content"]


# --- settings and the model file ----------------------------------------------------
def test_settings_defaults_and_descriptions() -> None:
    settings = LlmSettings()
    assert settings.enabled
    assert settings.model_path is None
    assert settings.n_threads == 2
    assert settings.max_tokens == 40
    assert settings.budget_ms == 1500
    assert settings.temperature <= 0.3
    assert settings.chat_template == "auto"
    for name, field in LlmSettings.model_fields.items():
        assert field.description, name
    with pytest.raises(ValidationError):
        LlmSettings(chat_template="jinja")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        LlmSettings.model_validate({"unknown": 1})


class FakePackage:
    def __init__(self, payload: bytes) -> None:
        self.payload = payload
        self.EXPECTED_SHA256 = hashlib.sha256(payload).hexdigest()
        self.calls = 0

    def assemble(self, output_path: Path, overwrite: bool = False) -> Path:
        self.calls += 1
        Path(output_path).write_bytes(self.payload)
        return Path(output_path)


def test_the_default_model_is_assembled_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = FakePackage(b"GGUF weights")
    monkeypatch.setattr(model_mod, "_package", lambda: package)
    path = model_mod.resolve_model_path(None, tmp_path)
    assert path == tmp_path / "models" / "gemma3-270m-q4_k_m.gguf"
    assert path.read_bytes() == b"GGUF weights"
    assert model_mod.ensure_default_model(tmp_path) == path
    assert package.calls == 1
    assert not list(path.parent.glob("*.partial"))
    path.write_bytes(b"corrupted!!!")  # same size, other content: the marker no longer fits
    path.with_name(path.name + ".sha256").unlink()
    assert model_mod.ensure_default_model(tmp_path).read_bytes() == b"GGUF weights"
    assert package.calls == 2


def test_a_failed_assembly_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(output_path: Path, overwrite: bool = False) -> Path:
        Path(output_path).write_bytes(b"half")
        raise ValueError("Assembled file sha256 did not match expected value")

    package = SimpleNamespace(EXPECTED_SHA256="0" * 64, assemble=broken)
    monkeypatch.setattr(model_mod, "_package", lambda: package)
    with pytest.raises(model_mod.ModelUnavailableError):
        model_mod.ensure_default_model(tmp_path)
    assert not list((tmp_path / "models").iterdir())


def test_a_configured_model_path_must_exist(tmp_path: Path) -> None:
    with pytest.raises(model_mod.ModelUnavailableError):
        model_mod.resolve_model_path(tmp_path / "nope.gguf", tmp_path)


@pytest.mark.parametrize(
    "label",
    [
        "memory_likes",
        "memory_dislikes",
        "memory_delete",
        # a question for more than a yes, and a move whose half of the day is not said
        "agenda_add_time",
        "move_either_half_confirm",
    ],
)
def test_receipts_no_model_may_word_are_told_by_their_template(tmp_path: Path, label: str) -> None:
    llm = FakeLlama([" I added 50 beers to your shopping list."])
    narrator = make(tmp_path, llm)
    warm_up = len(llm.prompts)
    narration = narrator.narrate(EN[label], "en", now=NOW)
    assert narration.source == "template"
    assert narration.reason == "template_only"
    assert len(llm.prompts) == warm_up  # the model never saw it
    assert "beer" not in narration.text


def test_too_little_time_gives_the_template_without_asking_the_llm(tmp_path: Path) -> None:
    llm = FakeLlama()
    narrator = make(tmp_path, llm)
    asked = len(llm.prompts)
    narration = narrator.narrate(EN["add"], "en", now=NOW, budget_ms=40)
    assert (narration.source, narration.reason) == ("template", "no_time")
    assert len(llm.prompts) == asked
    # a budget that leaves room: the LLM's sentence
    assert narrator.narrate(EN["add"], "en", now=NOW, budget_ms=1500).source == "llm"


def test_the_synthesis_clock_follows_what_it_measures() -> None:
    from appliance.voice.turn import SynthesisClock

    clock = SynthesisClock(initial_ms=300.0, weight=0.5)
    clock.observe(100.0)
    assert clock.estimate_ms == 200.0
    clock.observe(100.0)
    assert clock.estimate_ms == 150.0
