"""Plain-text helpers with character offsets: sentence splitting, word tokens, n-gram overlap.

Pure functions over strings. Every span is a half-open `(start, end)` pair of character offsets
into the text it came from, so callers can highlight the exact characters without re-searching.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A sentence ends at . ! ? or … (possibly repeated, possibly followed by closing quotes or brackets)
# when whitespace and then something that can open a sentence follows.
_BOUNDARY = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s+[\"'“‘(\[]*[A-Z0-9])")
_LINE_BREAK = re.compile(r"\n+")
_WORD = re.compile(r"\w+(?:['’]\w+)*")
# Words that end in a period without ending a sentence ("Mr. Smith", "e.g. this").
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof st jr sr vs etc e.g i.e u.s u.k no vol fig approx inc ltd co gen gov sen rep rev".split()
)


@dataclass(frozen=True)
class Token:
    """One word: its character span in the text and its lowercased form."""

    start: int
    end: int
    norm: str


@dataclass(frozen=True)
class Overlap:
    """Character spans shared by a sentence and a source through common n-grams, merged and sorted."""

    sentence_spans: tuple[tuple[int, int], ...]
    source_spans: tuple[tuple[int, int], ...]


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _ends_with_abbreviation(text: str, start: int, stop: int) -> bool:
    """True when the period at `stop` closes an abbreviation or an initial ("J. Smith")."""
    word = text[start:stop].rsplit(None, 1)[-1] if text[start:stop].strip() else ""
    word = word.lstrip("\"'“‘([").lower()
    return word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha())


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Sentence spans of `text`, in order, without surrounding whitespace.

    Line breaks always end a sentence (paragraphs, dialogue turns); inside a line a sentence ends
    at terminal punctuation followed by whitespace and a capital, digit or opening quote, unless
    the word before the period is a known abbreviation or a single letter.
    """
    spans: list[tuple[int, int]] = []
    line_start = 0
    for line_end in [m.start() for m in _LINE_BREAK.finditer(text)] + [len(text)]:
        start = line_start
        for match in _BOUNDARY.finditer(text, line_start, line_end):
            if text[match.start()] == "." and _ends_with_abbreviation(text, start, match.start()):
                continue
            spans.append(_strip(text, start, match.end()))
            start = match.end()
        spans.append(_strip(text, start, line_end))
        line_start = line_end
        while line_start < len(text) and text[line_start] == "\n":
            line_start += 1
    return [span for span in spans if span[0] < span[1]]


def tokenize(text: str) -> list[Token]:
    """Word tokens (letters, digits, inner apostrophes) with offsets, lowercased."""
    return [Token(m.start(), m.end(), m.group().lower().replace("’", "'")) for m in _WORD.finditer(text)]


def word_count(text: str) -> int:
    """How many word tokens `text` has (cheaper than `len(tokenize(text))`)."""
    return sum(1 for _ in _WORD.finditer(text))


def _covered(tokens: list[Token], grams: set[tuple[str, ...]], n: int) -> list[tuple[int, int]]:
    """Merged character spans of the tokens that take part in any n-gram found in `grams`."""
    hit = [False] * len(tokens)
    for i in range(len(tokens) - n + 1):
        if tuple(token.norm for token in tokens[i : i + n]) in grams:
            hit[i : i + n] = [True] * n
    spans: list[tuple[int, int]] = []
    for i, token in enumerate(tokens):
        if not hit[i]:
            continue
        if i and hit[i - 1]:
            spans[-1] = (spans[-1][0], token.end)
        else:
            spans.append((token.start, token.end))
    return spans


def _ngrams(tokens: list[Token], n: int) -> set[tuple[str, ...]]:
    return {tuple(token.norm for token in tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def ngram_overlap(sentence: str, source: str, n: int = 3) -> Overlap:
    """Where `sentence` and `source` share runs of at least `n` consecutive words (case-insensitive).

    Each side's spans cover the words that belong to some n-gram also present on the other side;
    adjacent covered words are merged into one span. `n` >= 2 keeps single stopwords from lighting up.
    """
    if n < 1:
        raise ValueError(f"n-gram length must be at least 1, got {n}")
    sentence_tokens = tokenize(sentence)
    source_tokens = tokenize(source)
    shared = _ngrams(sentence_tokens, n) & _ngrams(source_tokens, n)
    if not shared:
        return Overlap((), ())
    return Overlap(
        tuple(_covered(sentence_tokens, shared, n)),
        tuple(_covered(source_tokens, shared, n)),
    )
