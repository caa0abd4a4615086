"""The prompt files: each loads, renders safely, and says word for word what its paper printed."""

from __future__ import annotations

import dataclasses
import hashlib
import re
from importlib import resources
from pathlib import Path

import pytest

from faithlens.errors import FaithLensError
from faithlens.llm import parsing, prompts

PAPERS = Path(__file__).resolve().parents[2].parent / "shared" / "papers"
PAPER_FILES = {
    "StorySumm": "000_bef4cfce87aaa627.txt",
    "FABLES": "002_8c289d2a059dae6a.txt",
    "ARM": "003_12cbdc4e893b0a8a.txt",
    "TofuEval": "004_71ffb014882a14ed.txt",
}
TEMPLATES = sorted(prompts.templates())
VALUES = {slot: f"<{slot} text>" for slot in prompts.SLOTS}


def paper_text(template: prompts.Template) -> str:
    """The paper's extracted text, normalised as `normal`; skips when ../shared/papers is not beside the clone."""
    if not PAPERS.is_dir():
        pytest.skip(f"the papers are not at {PAPERS} (CI checks out ../shared beside the clone)")
    name = next(file for key, file in PAPER_FILES.items() if template.paper.startswith(key))
    return normal((PAPERS / name).read_text(encoding="utf-8"))


def normal(text: str) -> str:
    """Case-folded, whitespace collapsed, without the extraction's markdown emphasis and LaTeX `\\\\` breaks."""
    return " ".join(text.replace("*", "").replace("\\", " ").split()).casefold()


def fragments(template: prompts.Template) -> list[str]:
    """The template's own wording: every sentence of its texts, cut at the slots and line breaks.

    Sentences, not whole lines, because repairs join sentences the extraction printed apart (StorySumm's
    Prompt 2, the sentence it adds for Claude).
    """
    texts = [template.system or "", *template.turns]
    lines = [piece for text in texts for line in text.splitlines() for piece in prompts.SLOT.split(line)]
    pieces = [sentence for line in lines for sentence in re.split(r"(?<=[.?!])\s+", line)]
    return [normal(piece) for piece in pieces if piece.strip() and piece not in prompts.SLOTS]


@pytest.mark.parametrize("name", TEMPLATES)
def test_each_template_loads_with_a_version_of_its_file_bytes(name: str) -> None:
    template = prompts.load(name)
    data = resources.files("faithlens.llm").joinpath("prompts", f"{name}.toml").read_bytes()
    assert template.version == hashlib.sha256(data).hexdigest()[:12]
    assert template.answer in parsing.PARSERS
    assert template.slots() and template.slots() <= prompts.SLOTS
    assert template.note and template.where and template.paper


@pytest.mark.parametrize("name", TEMPLATES)
def test_each_template_renders_every_slot_it_uses(name: str) -> None:
    template = prompts.load(name)
    system, turns = template.render(**{slot: VALUES[slot] for slot in template.slots()})
    sent = "\n".join([system or "", *turns])
    assert "{{" not in sent and "}}" not in sent
    assert all(VALUES[slot] in sent for slot in template.slots())
    assert len(turns) == len(template.turns)


@pytest.mark.parametrize("name", TEMPLATES)
def test_each_template_refuses_to_render_without_a_slot_it_uses(name: str) -> None:
    template = prompts.load(name)
    missing = sorted(template.slots())[0]
    values = {slot: VALUES[slot] for slot in template.slots() if slot != missing}
    with pytest.raises(FaithLensError, match=rf"prompt {re.escape(name)}: no value for slot {missing}"):
        template.render(**values)


@pytest.mark.parametrize("name", [name for name in TEMPLATES if not prompts.load(name).ours])
def test_paper_wording_is_verbatim(name: str) -> None:
    """Every line of a non-ours template, cut at its slots, occurs in the paper's text."""
    template = prompts.load(name)
    paper = paper_text(template)
    absent = [piece for piece in fragments(template) if piece not in paper]
    assert not absent, f"{name}: not in the paper: {absent}"


def test_binary_system_prompt_is_the_papers_sentence_and_cot_repairs_its_garbled_copy() -> None:
    binary = prompts.for_method("storysumm-binary")
    lines = paper_text(binary).split("system prompt: ")
    assert normal(binary.system or "") == lines[1].split(" prompt: ")[0]
    cot = prompts.for_method("storysumm-cot")
    assert "evaluator. and you will be asked to short stories" in paper_text(cot)
    assert cot.system == binary.system


def test_ambiguity_type_prompt_is_ours_but_quotes_the_papers_five_definitions() -> None:
    template = prompts.for_method("arm-ambiguity-type")
    definitions = re.findall(r"^[1-5]\. (.+)$", template.turns[0], re.MULTILINE)
    assert template.ours and len(definitions) == 5
    paper = paper_text(template)
    assert [normal(text) in paper for text in definitions] == [True] * 5
    assert "<type>none</type>" in template.turns[0]


def test_cot_sends_the_label_question_as_a_second_turn() -> None:
    for variant in ("", "claude"):
        first, second = prompts.for_method("storysumm-cot", variant).turns
        assert "provide a couple sentences of reasoning" in first
        assert second.startswith("So overall, are all of the details in the summary consistent with the story?")
    assert prompts.for_method("storysumm-cot", "claude").turns[1].endswith("<answer></answer> tags.")


def test_the_hybrid_method_combines_its_two_inconsistency_prompts() -> None:
    prompt1, prompt2 = (prompts.for_method("storysumm-inconsistencies", part) for part in ("prompt1", "prompt2"))
    assert prompt1.combine == prompt2.combine == ("prompt1", "prompt2")
    assert "identify as many inconsistent details" in prompt1.turns[0]
    assert "identify the most inconsistent detail" in prompt2.turns[0]
    example = "Inconsistency: The summary states that the protagonist becomes an angry sheet of fire."
    assert example in prompt1.turns[0] and example in prompt2.turns[0]


def test_a_combined_prompt_whose_partner_is_missing_is_refused() -> None:
    lone = dataclasses.replace(
        prompts.for_method("storysumm-inconsistencies", "prompt1"), combine=("prompt1", "prompt3")
    )
    with pytest.raises(FaithLensError, match="combine must list its own variant"):
        prompts._check_combine(lone, prompts.templates())


def test_paper_settings_are_kept_where_the_paper_gives_them() -> None:
    assert {prompts.for_method("tofueval-dir", level).temperature for level in ("sentence", "summary")} == {0.7}
    assert prompts.for_method("arm-rewrite", "both").temperature == 0.0
    assert prompts.for_method("tofueval-exp", "sentence").levels == ("sentence",)
    assert prompts.for_method("fables-verify").levels == ("claim",)


def test_dataset_text_is_inserted_literally() -> None:
    template = prompts.for_method("fables-verify")
    evidence = "He paid $1 \\1 for {the} {{claim}} and {{story}}."
    _, (turn,) = template.render(evidence=evidence, claim="Iris is a reporter.")
    assert f"Context:\n{evidence}\n\nStatement:\nIris is a reporter." in turn


def test_render_rejects_a_slot_no_template_has() -> None:
    with pytest.raises(FaithLensError, match="no slot named document"):
        prompts.for_method("storysumm-binary").render(story="s", summary="t", document="d")


def test_unknown_names_list_what_exists() -> None:
    with pytest.raises(FaithLensError) as unknown:
        prompts.load("storysumm")
    assert "storysumm-binary" in str(unknown.value)
    with pytest.raises(FaithLensError, match="its variants: dir|its variants: sentence, summary"):
        prompts.for_method("tofueval-dir")
    with pytest.raises(FaithLensError, match="known methods: arm-ambiguity-type"):
        prompts.for_method("summac")


GOOD = """method = "fables-verify"
variant = ""
paper = "p"
where = "w"
ours = false
note = "n"
level = ["claim"]
temperature = 0.0
max_tokens = 10
answer = "true_false"
[[turn]]
user = "{{evidence}} {{claim}}"
"""


@pytest.mark.parametrize(
    ("stem", "text", "message"),
    [
        ("fables-check", GOOD, "its name must be fables-verify.toml"),
        ("fables-verify", GOOD.replace("{{claim}}", "{{statement}}"), "unknown slots statement"),
        ("fables-verify", GOOD.replace('answer = "true_false"\n', ""), "missing keys \\['answer'\\]"),
        ("fables-verify", GOOD.replace('level = ["claim"]', 'level = ["book"]'), "level must list some of"),
        ("fables-verify", GOOD.replace("max_tokens = 10", 'max_tokens = "10"'), "max_tokens has the wrong type"),
        ("fables-verify", GOOD.replace("ours = false", "ours = false\nours = true"), "not valid TOML"),
    ],
)
def test_a_broken_prompt_file_is_named_with_what_to_fix(stem: str, text: str, message: str) -> None:
    with pytest.raises(FaithLensError, match=message) as error:
        prompts._parse(stem, text.encode())
    assert f"prompt file {stem}.toml" in str(error.value)
