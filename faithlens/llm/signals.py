"""ARM's signals for one claim and its rewrite (Ambiguity Rewrite Metric paper, section 3.1).

A rewrite model repeats a claim verbatim when it finds no issue, so the signals are: whether the
claim was rewritten at all (r != s), how far the rewrite moved in words, and how many explanation
points justify it; plus a word diff for showing the change.

All three compare the claims after `plain`: whitespace runs collapsed to one space, surrounding
whitespace and quote marks stripped. A model that wraps a verbatim repeat in quotes or reflows its
spacing has not rewritten anything, and then the distance is 0 and the diff is all "same" too.

Words are NLTK's word tokenizer's tokens (`NLTKWordTokenizer`, the Penn Treebank tokenizer that
`nltk.word_tokenize` applies to each sentence; the paper names no tokenizer): contractions split
as the Treebank does ("didn't" -> "did", "n't"), punctuation marks are tokens. It needs no
downloaded data. NLTK is imported on first use, since importing it costs about a second.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Literal

from rapidfuzz.distance import Levenshtein

from faithlens.build.stemming import stem

if TYPE_CHECKING:
    from nltk.tokenize.destructive import NLTKWordTokenizer

QUOTES = "\"'“”‘’«»`"
_WHITESPACE = re.compile(r"\s+")


@cache
def _tokenizer() -> NLTKWordTokenizer:
    """NLTK's word tokenizer, imported on first use (it is stateless, so one serves every thread)."""
    from nltk.tokenize.destructive import NLTKWordTokenizer

    return NLTKWordTokenizer()


def tokens(text: str) -> list[str]:
    """NLTK's word tokens of `text`, as `nltk.word_tokenize(text, preserve_line=True)` gives them."""
    return _tokenizer().tokenize(text)


def plain(text: str) -> str:
    """`text` with whitespace runs collapsed and surrounding whitespace and quote marks stripped."""
    return _WHITESPACE.sub(" ", text).strip().strip(QUOTES).strip()


def words(text: str) -> list[str]:
    """The paper's units for edit distance (section 4.3): NLTK's tokens, lowercased and
    Snowball-stemmed, no whitespace.

    Punctuation marks count as tokens, each on its own, as NLTK emits them: the paper removes only
    whitespace, so a rewrite that turns a full stop into a semicolon moved one unit.
    """
    return [stem(token.lower()) for token in tokens(text)]


def edit_distance(original: str, rewrite: str) -> int:
    """Word-level Levenshtein distance between the claim and its rewrite (insertions, deletions and
    substitutions of stemmed words, each costing 1): the raw count of word edits."""
    return Levenshtein.distance(words(plain(original)), words(plain(rewrite)))


def normalized_edit_distance(original: str, rewrite: str) -> float:
    """`edit_distance` divided by the longer of the two word lists (0 = the same words, 1 = nothing
    in common), rapidfuzz's normalised Levenshtein distance.

    ARM's Table 3 prints its "Avg. edit dist." on a 0-1 scale (0.17-0.61) but does not say how it
    normalises; this is the standard normalisation, our choice (see the README, "Asking language
    models"). Two empty claims are 0 apart.
    """
    return Levenshtein.normalized_distance(words(plain(original)), words(plain(rewrite)))


def rewritten(original: str, rewrite: str) -> bool:
    """ARM's binary label r != s, compared after `plain` (case and punctuation still count)."""
    return plain(original) != plain(rewrite)


@dataclass(frozen=True)
class DiffOp:
    """A run of surface words the rewrite kept, deleted or inserted, joined by single spaces."""

    op: Literal["same", "delete", "insert"]
    text: str


def _pieces(text: str) -> list[str]:
    """NLTK's tokens as they are written in the text (the same tokens `words` counts, with the text's
    own quote marks where NLTK spells them `` and ''), each with the whitespace before it, so joined
    they give the text."""
    text = plain(text)
    ends = [end for _, end in _tokenizer().span_tokenize(text)]
    return [text[start:end] for start, end in zip([0, *ends], ends, strict=False)]


def word_diff(original: str, rewrite: str) -> list[DiffOp]:
    """The rewrite as edits of the claim's words and punctuation marks, casing kept.

    Pieces match only when identical, so the diff shows every visible change (also "walked" ->
    "walks", which the stemmed distance ignores); a full stop moved after added words is not a
    change. Each op's text keeps the whitespace before it, so the ops joined give the texts back.
    Between two kept runs, all deletions come before all insertions, each merged into one op.
    """
    before, after = _pieces(original), _pieces(rewrite)
    ops: list[DiffOp] = []
    deleted: list[str] = []
    inserted: list[str] = []

    def flush() -> None:
        if deleted:
            ops.append(DiffOp("delete", "".join(deleted)))
        if inserted:
            ops.append(DiffOp("insert", "".join(inserted)))
        deleted.clear()
        inserted.clear()

    steps = Levenshtein.opcodes([p.strip() for p in before], [p.strip() for p in after])
    for step in steps:
        if step.tag == "equal":
            flush()
            ops.append(DiffOp("same", "".join(after[step.dest_start : step.dest_end])))
        else:
            deleted += before[step.src_start : step.src_end]
            inserted += after[step.dest_start : step.dest_end]
    flush()
    return ops


@dataclass(frozen=True)
class ArmSignals:
    """What a rewrite says about a claim: the binary label, how far it moved (word edits, and on
    Table 3's 0-1 scale), how many explanation points (None when the model gave no parsed
    explanation) and the word diff."""

    rewritten: bool
    edit_distance: int
    normalized_edit_distance: float
    points: int | None
    diff: tuple[DiffOp, ...]


def arm_signals(original: str, rewrite: str, points: Sequence[str] | None) -> ArmSignals:
    """All of ARM's signals for one claim `original` and its `rewrite`."""
    return ArmSignals(
        rewritten=rewritten(original, rewrite),
        edit_distance=edit_distance(original, rewrite),
        normalized_edit_distance=normalized_edit_distance(original, rewrite),
        points=None if points is None else len(points),
        diff=tuple(word_diff(original, rewrite)),
    )
