"""ARM's signals on hand-computed pairs: NLTK's word tokens, stemmed; word-level Levenshtein and its
0-1 normalisation (Table 3's scale); the r != s label after whitespace and quote normalisation; and
the surface word diff over the same tokens."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from nltk.tokenize import TreebankWordTokenizer

from faithlens.llm.signals import (
    ArmSignals,
    DiffOp,
    arm_signals,
    edit_distance,
    normalized_edit_distance,
    plain,
    rewritten,
    stem,
    word_diff,
    words,
)

ROOT = Path(__file__).resolve().parents[2]

ABDUCTED = "The protagonist gets abducted by aliens."
PULLED = "The protagonist is pulled into the sky by a beam of light."


def test_words_are_lowercased_stems_with_punctuation_as_tokens() -> None:
    assert words(ABDUCTED) == ["the", "protagonist", "get", "abduct", "by", "alien", "."]
    assert words("She walked; he walks") == ["she", "walk", ";", "he", "walk"]
    assert words("  don't   well-known \n") == ["do", "n't", "well-known"]
    assert words("") == []


CONTRACTIONS = [
    "He didn't go.",
    "I can't, won't and shouldn't; they'll say it's Daniel's.",
    "We'd've gone, y'all.",
    "She cannot stay and isn't gonna.",
    "You're right, I'm sure we'd go.",
]


@pytest.mark.parametrize("text", CONTRACTIONS)
def test_words_split_contractions_as_nltks_treebank_tokenizer_does(text: str) -> None:
    """Our units are NLTK's Treebank tokens, lowercased and stemmed: same count, same splits."""
    treebank = TreebankWordTokenizer().tokenize(text)
    assert len(words(text)) == len(treebank)
    assert words(text) == [stem(token.lower()) for token in treebank]


def test_did_not_for_didnt_is_one_word_edit_as_with_nltk() -> None:
    # Treebank: did | n't  ->  did | not: one substitution (a whole-word tokenizer would count 2).
    assert TreebankWordTokenizer().tokenize("didn't") == ["did", "n't"]
    assert edit_distance("He didn't go.", "He did not go.") == 1
    assert word_diff("He didn't go.", "He did not go.") == [
        DiffOp("same", "He did"),
        DiffOp("delete", "n't"),
        DiffOp("insert", " not"),
        DiffOp("same", " go."),
    ]


def test_the_tokenizer_needs_no_nltk_data_and_is_imported_only_when_used(tmp_path: Path) -> None:
    """A fresh process with an empty NLTK data folder and home: importing signals loads no NLTK,
    counting words works, and nothing is written (downloaded) anywhere."""
    data, home = tmp_path / "nltk_data", tmp_path / "home"
    data.mkdir()
    home.mkdir()
    script = (
        "import sys\n"
        "from faithlens.llm import signals\n"
        "assert 'nltk' not in sys.modules, 'signals imported nltk at import time'\n"
        "print(signals.edit_distance(\"He didn't go.\", 'He did not go.'))\n"
    )
    env = {**os.environ, "NLTK_DATA": str(data), "HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"
    assert list(data.iterdir()) == [] and list(home.iterdir()) == []


def test_figure_one_pair_by_hand() -> None:
    # the protagonist | get abduct          | by | alien            | .
    # the protagonist | is pull into the sky | by | a beam of light  | .
    # "the protagonist", "by" and "." match; [get abduct] -> [is pull into the sky] is 2
    # substitutions + 3 insertions = 5; [alien] -> [a beam of light] is 1 + 3 = 4. Total 9, and no
    # alignment does better: 13 - 7 = 6 insertions are forced and only "by" of the other 4 can match.
    assert edit_distance(ABDUCTED, PULLED) == 9
    assert edit_distance(PULLED, ABDUCTED) == 9


@pytest.mark.parametrize(
    ("original", "rewrite", "distance"),
    [
        ("Mary walked home.", "Mary walks home.", 0),  # walked/walks both stem to "walk"
        ("MARY WALKED HOME.", "mary walked home.", 0),  # casing ignored
        ("Mary walked home.", "Mary walked home;", 1),  # a punctuation mark is a unit
        ("Mary walked home.", "Mary ran home.", 1),  # one substitution
        ("Mary walked home.", "Mary walked home alone.", 1),  # one insertion
        ("Mary walked home.", "Mary home.", 1),  # one deletion
        ("Mary walked home.", "", 4),  # everything deleted
    ],
)
def test_edit_distance_by_hand(original: str, rewrite: str, distance: int) -> None:
    assert edit_distance(original, rewrite) == distance


def test_identical_claim_is_not_rewritten() -> None:
    assert not rewritten(ABDUCTED, ABDUCTED)
    assert edit_distance(ABDUCTED, ABDUCTED) == 0


@pytest.mark.parametrize(
    "repeat",
    [
        "  The protagonist gets abducted by aliens.\n",
        "The protagonist  gets\nabducted by aliens.",
        '"The protagonist gets abducted by aliens."',
        "“The protagonist gets abducted by aliens.” ",
    ],
)
def test_whitespace_or_quoted_repeat_is_not_rewritten(repeat: str) -> None:
    assert not rewritten(ABDUCTED, repeat)
    assert edit_distance(ABDUCTED, repeat) == 0
    assert [op.op for op in word_diff(ABDUCTED, repeat)] == ["same"]


def test_case_and_punctuation_changes_are_rewrites() -> None:
    assert rewritten(ABDUCTED, ABDUCTED.lower())
    assert rewritten(ABDUCTED, ABDUCTED.removesuffix("."))


def test_plain_collapses_whitespace_and_strips_quotes() -> None:
    assert plain(" 'a \t b'\n") == "a b"


def test_word_diff_keeps_surface_words_and_merges_runs() -> None:
    ops = word_diff(ABDUCTED, PULLED)
    assert ops == [
        DiffOp("same", "The protagonist"),
        DiffOp("delete", " gets abducted"),
        DiffOp("insert", " is pulled into the sky"),
        DiffOp("same", " by"),
        DiffOp("delete", " aliens"),
        DiffOp("insert", " a beam of light"),
        DiffOp("same", "."),
    ]
    assert "".join(op.text for op in ops if op.op != "delete") == PULLED
    assert "".join(op.text for op in ops if op.op != "insert") == ABDUCTED


def test_word_diff_shows_changes_the_stemmed_distance_ignores() -> None:
    assert word_diff("Mary walked home.", "Mary walks home.") == [
        DiffOp("same", "Mary"),
        DiffOp("delete", " walked"),
        DiffOp("insert", " walks"),
        DiffOp("same", " home."),
    ]


def test_words_added_before_the_full_stop_leave_the_full_stop_alone() -> None:
    assert word_diff("Daniel sees a seal.", "Daniel sees a seal in the story.") == [
        DiffOp("same", "Daniel sees a seal"),
        DiffOp("insert", " in the story"),
        DiffOp("same", "."),
    ]


def test_word_diff_of_empty_sides() -> None:
    assert word_diff("", "") == []
    assert word_diff("", "New claim") == [DiffOp("insert", "New claim")]
    assert word_diff("Old claim", "") == [DiffOp("delete", "Old claim")]


@pytest.mark.parametrize(
    ("original", "rewrite", "normalised"),
    [
        # the protagonist get abduct by alien . (7) -> the protagonist is pull into the sky by a beam
        # of light . (13): 9 edits (worked above) over the longer list, 13.
        (ABDUCTED, PULLED, 9 / 13),
        ("Mary walked home.", "Mary ran home.", 1 / 4),  # mary | walk -> ran | home | .
        ("Mary walked home.", "Mary walked home alone.", 1 / 5),  # one insertion; the rewrite has 5 words
        ("Mary walked home.", "Mary home.", 1 / 4),  # one deletion; the original has 4
        ("He didn't go.", "He did not go.", 1 / 5),  # he did n't go . -> he did not go .
        ("Mary walked home.", "Mary walks home.", 0.0),  # same stems
        ("Mary walked home.", "", 1.0),  # nothing kept
        ("", "", 0.0),
    ],
)
def test_normalised_edit_distance_divides_by_the_longer_word_list(
    original: str, rewrite: str, normalised: float
) -> None:
    assert normalized_edit_distance(original, rewrite) == pytest.approx(normalised)


def test_arm_signals_bundle_everything() -> None:
    signals = arm_signals(ABDUCTED, PULLED, ["The story never says aliens.", "It shows a beam of light."])
    assert signals == ArmSignals(
        rewritten=True,
        edit_distance=9,
        normalized_edit_distance=pytest.approx(9 / 13),
        points=2,
        diff=tuple(word_diff(ABDUCTED, PULLED)),
    )
    unchanged = arm_signals(ABDUCTED, ABDUCTED, None)
    assert (unchanged.rewritten, unchanged.edit_distance, unchanged.points) == (False, 0, None)
    assert unchanged.normalized_edit_distance == 0.0
    assert arm_signals(ABDUCTED, PULLED, []).points == 0
