"""A long source shown as excerpts around its marks: what is shown, what the gaps say, and the marks
landing on the same words as in the whole text."""

from __future__ import annotations

import html
import re

from faithlens.views import excerpts
from faithlens.views.highlight import ALIGN_BEST, ALIGN_OTHER, Span

WORDS = [f"w{i}" for i in range(30_000)]
TEXT = " ".join(WORDS)


def _at(word: int) -> int:
    """Character offset of word number `word`."""
    return len(" ".join(WORDS[:word])) + (1 if word else 0)


def _span(first: int, last: int, cls: str) -> Span:
    return Span(_at(first), _at(last) + len(WORDS[last]), cls)


def test_only_long_texts_are_cut() -> None:
    assert excerpts.is_long(TEXT) and not excerpts.is_long(TEXT[: excerpts.LONG_CHARS])


def test_excerpts_hold_each_mark_with_context_and_say_how_many_words_each_gap_leaves_out() -> None:
    spans = [_span(100, 104, ALIGN_BEST), _span(20_000, 20_002, ALIGN_OTHER)]
    markup, shown = excerpts.render_excerpts(TEXT, spans, context=60)
    marked = [html.unescape(text) for text in re.findall(r"<mark[^>]*>(.*?)</mark>", markup)]
    assert marked == ["w100 w101 w102 w103 w104", "w20000 w20001 w20002"]
    gaps = [int(n.replace(",", "")) for n in re.findall(r"\[… ([\d,]+) words …\]", markup)]
    kept = [
        text.split() for text in re.findall(r'<div class="fl-doc">(.*?)</div>', re.sub(r"</?mark[^>]*>", "", markup))
    ]
    assert shown == sum(len(words) for words in kept)
    assert sum(gaps) + shown == len(WORDS), "every word is either shown or counted in a gap"
    assert all(words[0] in WORDS and words[-1] in WORDS for words in kept), "excerpts cut at word boundaries"
    assert len(kept) == 2 and len(gaps) == 3


def test_excerpts_that_touch_are_merged_and_nothing_marked_shows_the_opening() -> None:
    spans = [_span(100, 101, ALIGN_BEST), _span(110, 111, ALIGN_OTHER)]
    assert len(excerpts.windows(TEXT, spans, context=60)) == 1
    ((start, end),) = excerpts.windows(TEXT, [], context=60)
    assert start == 0 and TEXT[end - 1] != " " and end < 200
