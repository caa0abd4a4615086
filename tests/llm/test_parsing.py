"""Reading model replies: the answers each prompt asks for, in the shapes models really write them."""

from __future__ import annotations

import pytest

from faithlens.errors import FaithLensError
from faithlens.llm import parsing, prompts
from faithlens.llm.parsing import Parsed, parse


@pytest.mark.parametrize(
    ("answer", "reply", "label", "raw"),
    [
        ("yes_no", "No", "unfaithful", "No"),
        ("yes_no", "Yes.", "faithful", "Yes"),
        ("yes_no", "**Yes**", "faithful", "Yes"),
        ("yes_no", "no, the summary says the minister was lying in the puddle.", "unfaithful", "no"),
        (
            "yes_no",
            "After comparing the two carefully:\n\n**No**\n\nThe summary says he was lying down.",
            "unfaithful",
            "No",
        ),
        ("yes_no", "The summary matches every event of the story, so the answer is Yes.", "faithful", "Yes"),
        ("yes_no", "Answer: No\n\nThe story never mentions a promotion.", "unfaithful", "No"),
        ("yes_no", "  YES  \n", "faithful", "YES"),
        ("yes_no_first", "Yes. The speaker says the council approved the budget.", "faithful", "Yes"),
        ("yes_no_first", "**No.** The document does not mention the airline's fees.", "unfaithful", "No"),
        ("true_false", "False", "unfaithful", "False"),
        ("true_false", "TRUE. The context states that Iris works at the Oath Gazette.", "faithful", "TRUE"),
        ("yes_no_tagged", "The summary changes who insults her.\n\n<answer>No</answer>", "unfaithful", "No"),
        (
            "yes_no_tagged",
            "I will place my answer between <answer></answer> tags.\n<answer> **Yes.** </answer>",
            "faithful",
            "Yes",
        ),
    ],
)
def test_a_label_in_the_asked_form_maps_to_the_shared_vocabulary(answer: str, reply: str, label: str, raw: str) -> None:
    parsed = parse(answer, [reply])
    assert (parsed.ok, parsed.label, parsed.raw_label, parsed.failure) == (True, label, raw, None)


@pytest.mark.parametrize(
    ("answer", "reply", "failure"),
    [
        ("yes_no", "Yes, mostly, but one detail is wrong, so No.", "ambiguous: expected a Yes or No answer"),
        ("yes_no", "Yes\n\nNo", "ambiguous: expected a Yes or No answer"),
        ("yes_no", "The summary is mostly accurate, apart from the ending.", "expected a Yes or No answer; got 'The"),
        ("yes_no", "Not all of the details are consistent.", "expected a Yes or No answer"),
        ("yes_no_first", "The sentence is consistent with the document. Yes.", "expected the answer to start with Yes"),
        ("true_false", "The statement is partially supported by the context.", "expected a True or False answer"),
        ("yes_no_tagged", "No", "expected <answer>Yes</answer> or <answer>No</answer>; got 'No'"),
        ("yes_no_tagged", "<answer>Partially</answer>", "expected <answer>Yes</answer> or <answer>No</answer>"),
        ("yes_no_tagged", "<answer>Yes</answer> On reflection: <answer>No</answer>", "ambiguous"),
    ],
)
def test_a_missing_or_ambiguous_label_is_a_failure_saying_what_came(answer: str, reply: str, failure: str) -> None:
    parsed = parse(answer, [reply])
    assert not parsed.ok and parsed.label is None and not parsed.refused
    assert parsed.failure is not None and parsed.failure.startswith(failure)
    assert "\n" not in parsed.failure


@pytest.mark.parametrize("answer", sorted(parsing.PARSERS))
@pytest.mark.parametrize("replies", [[], [""], [" \n\t"], ["**"]])
def test_an_empty_answer_is_a_refusal(answer: str, replies: list[str]) -> None:
    assert parse(answer, replies) == Parsed(ok=False, refused=True, failure="empty answer")


def test_an_explicit_refusal_is_marked_refused() -> None:
    parsed = parse("yes_no", ["I’m sorry, but I can’t evaluate this content."])
    assert parsed.refused and not parsed.ok
    assert not parse("yes_no", ["The summary is mostly accurate."]).refused


@pytest.mark.parametrize(
    ("reply", "label", "raw"),
    [
        ("<answer>Yes</answer>", "faithful", "objective"),
        ("The claim adds that the dog's prey drive is activated.\n<answer>No</answer>", "unfaithful", "subjective"),
        ("<answer> **no.** </answer>", "unfaithful", "subjective"),
    ],
)
def test_arms_objectivity_question_flags_a_subjective_claim_as_a_rewrite_is_flagged(
    reply: str, label: str, raw: str
) -> None:
    """ARM Table 2's zero- and few-shot baselines: "Is this claim objective to evaluate?" No is a
    subjective claim, stored as unfaithful like a rewritten one (r != s)."""
    parsed = parse("objective_tagged", [reply])
    assert (parsed.ok, parsed.label, parsed.raw_label) == (True, label, raw)
    for bad in ("No", "<answer>Maybe</answer>", "<answer>Yes</answer> or rather <answer>No</answer>"):
        assert not parse("objective_tagged", [bad]).ok


def test_the_explanation_is_the_text_beside_the_label() -> None:
    assert parse("yes_no", ["No"]).explanation is None
    assert parse("yes_no", ["No, he sits."]).explanation == "No, he sits."
    exp = parse("yes_no_first", ["No. The document says the vote was delayed, not cancelled."])
    assert exp.explanation == "The document says the vote was delayed, not cancelled."
    assert parse("yes_no_tagged", ["He sits, not lies. <answer>No</answer>"]).explanation == "He sits, not lies."


def test_cot_reads_the_label_from_the_second_reply_and_keeps_the_reasoning() -> None:
    reasoning = "The summary says the minister was lying in the puddle, but the story says he sat down in it."
    parsed = parse("cot_yes_no", [reasoning, "No."])
    assert (parsed.ok, parsed.label, parsed.explanation) == (True, "unfaithful", reasoning)
    tagged = parse("cot_yes_no_tagged", [reasoning, "<answer>No</answer>"])
    assert (tagged.ok, tagged.label, tagged.explanation) == (True, "unfaithful", reasoning)
    assert parse("cot_yes_no", [reasoning, "It depends on the reading."]).failure.startswith(
        "expected a Yes or No answer in the second reply"
    )


def test_a_reply_count_that_does_not_match_the_turns_is_a_failure() -> None:
    assert parse("cot_yes_no", ["Only the reasoning came back."]).failure == "expected 2 replies, one per turn; got 1"
    assert parse("yes_no", ["Yes", "No"]).failure == "expected 1 reply; got 2"


def test_fables_claims_are_the_dash_lines() -> None:
    reply = (
        "List of atomic claims:\n"
        "- Iris Winnow is a reporter at the Oath Gazette.\n"
        "  - Roman Kitt is Iris Winnow's professional rival.\n"
        "\n"
        "Let me know if you need anything else."
    )
    parsed = parse("dash_claims", [reply])
    assert parsed.items == (
        "Iris Winnow is a reporter at the Oath Gazette.",
        "Roman Kitt is Iris Winnow's professional rival.",
    )
    numbered = parse("dash_claims", ["1. Iris is a reporter.\n2. Roman is her rival."])
    assert not numbered.ok and numbered.failure.startswith("expected claims on lines starting with '- '")


def test_inconsistencies_keep_their_reasons_and_drop_trailing_commentary() -> None:
    reply = (
        "Here are the inconsistencies I found:\n\n"
        "**Inconsistency 1:** The summary states that Daniel hits a frozen person and falls unconscious.\n\n"
        "**Reason for inconsistency:** He falls unconscious when he crashes into the rocks.\n\n"
        "**Reason for consistency:** The two events happen close together.\n\n"
        "Inconsistency 2: The summary says he agrees to rehab after the first hospital visit.\n"
        "Reason for inconsistency: He agrees after the second.\n"
        "Reason for consistency: The story is vague about the order.\n\n"
        "Overall, the summary captures the main events."
    )
    first, second = parse("inconsistencies", [reply]).items
    assert first == (
        "Inconsistency 1: The summary states that Daniel hits a frozen person and falls unconscious.\n"
        "Reason for inconsistency: He falls unconscious when he crashes into the rocks.\n"
        "Reason for consistency: The two events happen close together."
    )
    assert second.startswith("Inconsistency 2:") and second.endswith("The story is vague about the order.")
    assert not parse("inconsistencies", ["The summary is consistent with the story."]).ok


def test_arm_rewrite_returns_the_rewrite_and_the_explanation_around_it() -> None:
    reply = (
        'The story only mentions "strange figures"; it never says they are aliens.\n\n'
        "<answer>Daniel is taken by strange figures.</answer>"
    )
    parsed = parse("rewrite", [reply])
    assert parsed.ok and parsed.label is None
    assert parsed.rewrite == "Daniel is taken by strange figures."
    assert parsed.explanation == 'The story only mentions "strange figures"; it never says they are aliens.'
    assert parse("rewrite", ["<answer>Daniel is abducted by aliens.</answer>"]).explanation is None
    assert not parse("rewrite", ["Daniel is taken by strange figures."]).ok
    assert parse("rewrite", ["<answer>One.</answer> or <answer>Two.</answer>"]).failure.startswith("ambiguous")


def test_explanation_points_come_from_item_tags() -> None:
    reply = "Key reasons:\n<item>The story never states Daniel's age.</item>\n<item>\nAliens are never named.\n</item>"
    assert parse("items", [reply]).items == ("The story never states Daniel's age.", "Aliens are never named.")
    untagged = parse("items", ["1. The story never states Daniel's age."])
    assert not untagged.ok and untagged.failure.startswith("expected points between <item></item> tags")


@pytest.mark.parametrize(
    ("reply", "items", "raw"),
    [
        ("The summary names aliens where the story only implies them.\n<type>4</type>", ("4",), "4"),
        ("<type>Type 2.</type>", ("2",), "2"),
        ("The sentence restates the story exactly. <type>none</type>", (), "none"),
    ],
)
def test_ambiguity_type_is_one_type_or_none(reply: str, items: tuple[str, ...], raw: str) -> None:
    parsed = parse("ambiguity_type", [reply])
    assert (parsed.ok, parsed.items, parsed.raw_label) == (True, items, raw)


@pytest.mark.parametrize("reply", ["<type>1</type> and also <type>4</type>", "<type>6</type>", "Type 2: Detail."])
def test_ambiguity_type_rejects_several_unknown_or_untagged_types(reply: str) -> None:
    assert not parse("ambiguity_type", [reply]).ok


def test_every_template_names_a_parser_and_unknown_parsers_are_refused() -> None:
    assert {template.answer for template in prompts.templates().values()} == set(parsing.PARSERS)
    with pytest.raises(FaithLensError, match="known parsers: ambiguity_type"):
        parse("json", ["{}"])
