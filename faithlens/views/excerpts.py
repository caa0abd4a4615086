"""A long source shown as excerpts around its marked passages, so a 120k-word book's detail draws as fast
as a story's: the page offers the whole text on request.

Each excerpt is the marked span with CONTEXT_CHARS of text either side, widened to whole words;
excerpts that touch are merged; gaps between them are said in words ("[… 3,214 words …]"). With
nothing marked, the document's opening is shown."""

from __future__ import annotations

from collections.abc import Sequence

from faithlens.views.highlight import Span, render_highlight

LONG_CHARS = 60_000
"""Above this (about 11,000 words) the source shows excerpts unless the reader asks for the whole."""
CONTEXT_CHARS = 1_500


def is_long(text: str) -> bool:
    return len(text) > LONG_CHARS


def _word_edge(text: str, at: int, forward: bool) -> int:
    """`at` moved to the nearest whitespace outward, so an excerpt never starts or ends inside a word."""
    if forward:
        found = text.find(" ", at)
        return len(text) if found < 0 else found
    found = text.rfind(" ", 0, at)
    return 0 if found < 0 else found + 1


def windows(text: str, spans: Sequence[Span], context: int = CONTEXT_CHARS) -> list[tuple[int, int]]:
    """The excerpts' character ranges, in order, merged where they touch."""
    if not spans:
        return [(0, _word_edge(text, min(len(text), 2 * context), True))]
    ranges = sorted(
        (_word_edge(text, max(0, s.start - context), False), _word_edge(text, min(len(text), s.end + context), True))
        for s in spans
    )
    merged = [ranges[0]]
    for start, end in ranges[1:]:
        if start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _gap(words: int) -> str:
    return f'<p class="fl-gap">[… {words:,} words …]</p>'


def render_excerpts(text: str, spans: Sequence[Span], context: int = CONTEXT_CHARS) -> tuple[str, int]:
    """The excerpts as escaped markup with their spans marked, and how many words they show."""
    parts, shown, previous = [], 0, 0
    for start, end in windows(text, spans, context):
        if start > previous:
            parts.append(_gap(len(text[previous:start].split())))
        inside = [
            Span(max(s.start, start) - start, min(s.end, end) - start, s.cls)
            for s in spans
            if s.start < end and start < s.end
        ]
        parts.append(render_highlight(text[start:end], inside))
        shown += len(text[start:end].split())
        previous = end
    if previous < len(text):
        parts.append(_gap(len(text[previous:].split())))
    return "".join(parts), shown
