"""Sentence splitting, tokens and n-gram overlap: offsets point at the right characters."""

from __future__ import annotations

import pytest

from faithlens.build.text import ngram_overlap, split_sentences, tokenize, word_count


def _pieces(text: str) -> list[str]:
    return [text[start:end] for start, end in split_sentences(text)]


def test_sentences_end_at_terminal_punctuation_and_line_breaks() -> None:
    text = 'The sea roared. "Who is there?" he asked!  Nobody answered…\nA new paragraph starts here'
    assert _pieces(text) == [
        "The sea roared.",
        '"Who is there?" he asked!',
        "Nobody answered…",
        "A new paragraph starts here",
    ]


def test_abbreviations_initials_and_lowercase_continuations_do_not_split() -> None:
    text = "Mr. Smith met Dr. Jones in St. Louis. J. R. R. Tolkien wrote it, e.g. this one. Done."
    assert _pieces(text) == [
        "Mr. Smith met Dr. Jones in St. Louis.",
        "J. R. R. Tolkien wrote it, e.g. this one.",
        "Done.",
    ]


def test_sentence_spans_are_exact_offsets_without_surrounding_space() -> None:
    text = "  First one.   Second one.\n\n  Third.  "
    spans = split_sentences(text)
    assert [text[s:e] for s, e in spans] == ["First one.", "Second one.", "Third."]
    assert split_sentences("") == []
    assert split_sentences("   \n  ") == []


def test_tokens_are_lowercased_words_with_offsets() -> None:
    text = "Daniel's BOAT, 2 oars"
    tokens = tokenize(text)
    assert [t.norm for t in tokens] == ["daniel's", "boat", "2", "oars"]
    assert [text[t.start : t.end] for t in tokens] == ["Daniel's", "BOAT", "2", "oars"]
    assert word_count(text) == 4


def test_ngram_overlap_marks_shared_runs_on_both_sides() -> None:
    source = "The seal jumped from the rocks as the boat met them, knocking Daniel unconscious."
    sentence = "He crashes the boat, knocking Daniel unconscious at once."
    overlap = ngram_overlap(sentence, source, n=3)
    assert [sentence[s:e] for s, e in overlap.sentence_spans] == ["knocking Daniel unconscious"]
    assert [source[s:e] for s, e in overlap.source_spans] == ["knocking Daniel unconscious"]
    two = ngram_overlap(sentence, source, n=2)
    assert [source[s:e] for s, e in two.source_spans] == ["the boat", "knocking Daniel unconscious"]


def test_ngram_overlap_is_case_insensitive_and_empty_without_shared_runs() -> None:
    overlap = ngram_overlap("THE GRAY SEAL", "a gray seal swam", n=2)
    assert overlap.sentence_spans == ((4, 13),)
    assert overlap.source_spans == ((2, 11),)
    assert ngram_overlap("a b c", "d e f", n=2).source_spans == ()
    with pytest.raises(ValueError):
        ngram_overlap("a", "a", n=0)
