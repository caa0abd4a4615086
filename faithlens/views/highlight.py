"""Escaped HTML for highlighted dataset text: with `tag_html` (a unit's tags), the only place that
turns dataset text into markup.

Rules: every piece of dataset or LLM text passes through
`html.escape(..., quote=True)` before it is wrapped; markup uses only the fixed tags below and
classes from CLASSES; no dataset text ever goes into an attribute. Pages emit the result with
`st.html` (which also sanitises) and never with `unsafe_allow_html`.

Colour is never the only carrier of a label: every coloured sentence also carries a glyph and its
number, and `render_sentence_list` spells out labels, scores and explanations as text.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from faithlens.views.tag_html import Tag, hit_badge, render_tags, tags_text
from faithlens.vocab import VERDICTS

LABEL_CLASSES = {verdict: "fl-label-" + verdict.replace("/", "") for verdict in VERDICTS}
NO_LABEL_CLASS = "fl-label-none"
SCORE_BUCKETS = 5
SCORE_CLASSES = tuple(f"fl-score-{i}" for i in range(SCORE_BUCKETS))
UNSCALED_SCORE_CLASS = "fl-score-unscaled"
# Span classes for the source view, in the order they combine on overlapping text.
ALIGN_BEST = "fl-align-best"
ALIGN_OTHER = "fl-align"
NGRAM = "fl-ngram"
SPAN_CLASSES = (ALIGN_BEST, ALIGN_OTHER, NGRAM)
CLASSES = frozenset(
    (
        *LABEL_CLASSES.values(),
        NO_LABEL_CLASS,
        *SCORE_CLASSES,
        UNSCALED_SCORE_CLASS,
        *SPAN_CLASSES,
        "fl-doc",
        "fl-gap",
        "fl-summary",
        "fl-sent",
        "fl-selected",
        "fl-chosen",
        "fl-mark",
        "fl-tip",
        "fl-list",
        "fl-sentences",
        "fl-claims",
        "fl-keypoints",
        "fl-badge",
        "fl-meta",
        "fl-expl",
        "fl-evidence",
        "fl-passages",
        "fl-empty",
        "fl-diff",
        "fl-del",
        "fl-ins",
        "fl-hit",
        "fl-tags",
    )
)
GLYPHS = {
    "faithful": "✓",
    "unfaithful": "✗",
    "partial": "◐",
    "unverifiable": "?",
    "ambiguous": "~",
    "n/a": "–",
}
NO_LABEL_GLYPH = "·"

STYLESHEET = """
.fl-doc, .fl-summary { white-space: pre-wrap; line-height: 1.65; font-size: 0.95rem; }
.fl-doc, .fl-summary, .fl-list, .fl-passages { overflow-wrap: anywhere; }
.fl-doc { max-height: 70vh; overflow-y: auto; padding: 0.6rem 0.8rem; border: 1px solid #d5dbe3;
  border-radius: 0.4rem; background: #fcfcfd; }
.fl-doc mark { background: none; color: inherit; padding: 0; }
.fl-gap { color: #5f6b7a; margin: 0.3rem 0; font-style: italic; }
.fl-doc mark.fl-align-best { background: #ffe08a; box-shadow: 0 0 0 1px #c99a00; }
.fl-doc mark.fl-align { background: #fff3c4; }
.fl-doc mark.fl-ngram { text-decoration: underline 2px #1f5f8b; text-underline-offset: 3px; }
.fl-summary .fl-sent { position: relative; padding: 0.1rem 0.15rem; border-radius: 0.2rem;
  border-bottom: 2px solid transparent; }
.fl-label-faithful { background: #d8f0df; border-bottom-color: #2e7d4f !important; }
.fl-label-unfaithful { background: #f8cfcc; border-bottom: 2px dashed #b3261e !important; }
.fl-label-partial { background: #fde7c4; border-bottom: 2px dotted #b26a00 !important; }
.fl-label-unverifiable { background: #e3e0f3; border-bottom: 2px dotted #5b4a9e !important; }
.fl-label-ambiguous { background: #dbe9f6; border-bottom: 2px dotted #1f5f8b !important; }
.fl-label-na, .fl-label-none { background: #eef0f3; }
.fl-score-0 { background: #f4b6b1; }
.fl-score-1 { background: #f8d3c4; }
.fl-score-2 { background: #f3ecc9; }
.fl-score-3 { background: #d6eed3; }
.fl-score-4 { background: #b5e2c0; }
.fl-score-unscaled { background: #eef0f3; }
.fl-summary .fl-selected { outline: 2px solid #1f5f8b; outline-offset: 1px; }
.fl-summary ins { text-decoration: underline 2px #1f5f8b; text-underline-offset: 3px; }
.fl-mark { font-size: 0.7rem; vertical-align: super; color: #3b4452; margin-left: 0.1rem; }
.fl-tip { display: none; position: absolute; left: 0; top: 1.6em; z-index: 20; width: min(32rem, 80vw);
  padding: 0.5rem 0.7rem; background: #1b1f24; color: #ffffff; border-radius: 0.3rem;
  font-size: 0.85rem; line-height: 1.4; white-space: pre-wrap; }
.fl-sent:hover .fl-tip, .fl-sent:focus .fl-tip { display: block; }
.fl-summary .fl-sent:focus { outline: 2px dotted #1f5f8b; outline-offset: 1px; }
.fl-list { padding-left: 1.4rem; margin: 0.3rem 0; }
.fl-list li { margin-bottom: 0.55rem; line-height: 1.45; }
.fl-list li.fl-selected { background: #eef4fa; border-radius: 0.3rem; }
.fl-claims li.fl-selected { outline: 2px solid #1f5f8b; outline-offset: 2px; }
.fl-chosen { padding: 0.5rem 0.7rem; border: 2px solid #1f5f8b; border-radius: 0.4rem; background: #eef4fa;
  line-height: 1.45; overflow-wrap: anywhere; }
.fl-badge.fl-chosen { padding: 0 0.35rem; border-width: 1px; border-radius: 0.6rem; }
.fl-badge { display: inline-block; font-size: 0.75rem; font-weight: 600; padding: 0 0.35rem;
  border-radius: 0.6rem; margin-right: 0.3rem; color: #1b1f24; }
.fl-meta { color: #4d5766; font-size: 0.8rem; }
.fl-expl { color: #30394a; font-size: 0.88rem; margin-top: 0.15rem; white-space: pre-wrap; }
.fl-evidence { margin: 0.2rem 0 0.2rem 0.4rem; padding-left: 0.6rem; border-left: 3px solid #c9d1dc;
  color: #30394a; font-size: 0.85rem; white-space: pre-wrap; }
.fl-passages { font-size: 0.88rem; }
.fl-empty { color: #5d6776; font-style: italic; }
.fl-diff { line-height: 1.65; font-size: 0.95rem; overflow-wrap: anywhere; }
.fl-diff del.fl-del { background: #f8cfcc; color: #7a1c16; }
.fl-tags .fl-hit { font-weight: 700; background: #fff3c4; border-radius: 0.2rem; padding: 0 0.15rem; }
.fl-badge.fl-hit { background: #fff3c4; border: 1px solid #c99a00; }
.fl-diff ins.fl-ins { background: #d8f0df; text-decoration: underline 2px #2e7d4f; text-underline-offset: 3px; }
"""


@dataclass(frozen=True)
class Span:
    """Characters [start, end) of a text to wrap in a `<mark>` with class `cls` (from CLASSES)."""

    start: int
    end: int
    cls: str


@dataclass(frozen=True)
class SentenceView:
    """What the summary renderer needs about one sentence, as plain data."""

    position: int
    text: str
    label: str | None = None
    score: float | None = None
    explanation: str | None = None
    tags: tuple[Tag, ...] = ()
    selected: bool = False
    marks: tuple[tuple[int, int], ...] = ()  # spans of `text` to underline (n-gram overlap with the source)
    verdicts: tuple[tuple[str, str | None, float | None], ...] = ()
    """(source, label, score) of every source that labels the sentence, listed in its tooltip."""


@dataclass(frozen=True)
class ClaimView:
    """One claim with its label, annotator evidence quotes and reasons; `selected` when the
    reader (or a link) chose it."""

    position: int
    text: str
    label: str | None = None
    explanation: str | None = None
    evidence: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    selected: bool = False
    tags: tuple[Tag, ...] = ()


def esc(text: object) -> str:
    """HTML-escape any value for text content (quotes included)."""
    return html.escape(str(text), quote=True)


def _classes(names: Iterable[str]) -> str:
    names = list(names)
    unknown = [name for name in names if name not in CLASSES]
    if unknown:
        raise ValueError(f"classes not in the allowlist: {unknown}")
    return " ".join(names)


def validate_spans(text: str, spans: Iterable[Span]) -> list[Span]:
    """The spans as a list, or ValueError naming the first bad one (bounds, emptiness, class)."""
    checked = []
    for span in spans:
        if not isinstance(span, Span):
            raise ValueError(f"expected a Span, got {type(span).__name__}")
        for value in (span.start, span.end):
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"span offsets must be integers: {span}")
        if not 0 <= span.start < span.end <= len(text):
            raise ValueError(f"span {span.start}..{span.end} is empty or outside a text of {len(text)} characters")
        if span.cls not in SPAN_CLASSES:
            raise ValueError(f"span class {span.cls!r} is not one of {SPAN_CLASSES}")
        checked.append(span)
    return checked


def segments(text: str, spans: Iterable[Span]) -> list[tuple[int, int, tuple[str, ...]]]:
    """Cut `text` at every span boundary: (start, end, classes covering it in SPAN_CLASSES order).

    Overlapping spans never nest: each piece of text carries every class that covers it, and
    neighbouring pieces with the same classes are merged, so the output does not depend on the
    order the spans were given in.
    """
    spans = validate_spans(text, spans)
    cuts = sorted({0, len(text), *(s.start for s in spans), *(s.end for s in spans)})
    pieces: list[tuple[int, int, tuple[str, ...]]] = []
    for start, end in zip(cuts, cuts[1:], strict=False):
        covering = {s.cls for s in spans if s.start <= start and end <= s.end}
        classes = tuple(cls for cls in SPAN_CLASSES if cls in covering)
        if pieces and pieces[-1][2] == classes and pieces[-1][1] == start:
            pieces[-1] = (pieces[-1][0], end, classes)
        else:
            pieces.append((start, end, classes))
    return pieces


def render_highlight(text: str, spans: Iterable[Span], container: str = "fl-doc") -> str:
    """`text` as escaped HTML inside `<div class=container>`, with `<mark>` around each span."""
    parts = []
    for start, end, classes in segments(text, spans):
        piece = esc(text[start:end])
        parts.append(f'<mark class="{_classes(classes)}">{piece}</mark>' if classes else piece)
    return f'<div class="{_classes([container])}">{"".join(parts)}</div>'


def score_class(score: float) -> str:
    """Bucket class of a score in [0, 1] (higher = more faithful); UNSCALED for other ranges."""
    if not 0.0 <= score <= 1.0:
        return UNSCALED_SCORE_CLASS
    return SCORE_CLASSES[min(int(score * SCORE_BUCKETS), SCORE_BUCKETS - 1)]


def sentence_class(label: str | None, score: float | None) -> str:
    """Colour class: the label when there is one, else the score bucket, else 'no label'."""
    if label is not None:
        if label not in LABEL_CLASSES:
            raise ValueError(f"unknown label {label!r}; expected one of {', '.join(VERDICTS)}")
        return LABEL_CLASSES[label]
    if score is not None:
        return score_class(score)
    return NO_LABEL_CLASS


def describe(label: str | None, score: float | None) -> str:
    """The label and score as words: 'unfaithful · score 0.12', 'score 0.73', 'no label'."""
    parts = [label] if label is not None else []
    if score is not None:
        parts.append(f"score {score:.2f}" if 0 <= score <= 1 else f"score {score:g}")
    return " · ".join(parts) or "no label"


def _glyph(label: str | None, score: float | None) -> str:
    if label is not None:
        return GLYPHS[label]
    return f"{score:.2f}" if score is not None else NO_LABEL_GLYPH


def _marked(text: str, marks: Sequence[tuple[int, int]]) -> str:
    spans = [Span(start, end, NGRAM) for start, end in marks]
    parts = []
    for start, end, classes in segments(text, spans):
        piece = esc(text[start:end])
        parts.append(f"<ins>{piece}</ins>" if classes else piece)
    return "".join(parts)


def _tip(sentence: SentenceView) -> str:
    lines = [f"S{sentence.position + 1}: {describe(sentence.label, sentence.score)}"]
    if sentence.tags:
        lines.append("Tags: " + tags_text(sentence.tags))
    if sentence.explanation:
        lines.append(sentence.explanation)
    if sentence.verdicts:
        lines.append("Every source:")
        lines += [f"  {source}: {describe(label, score)}" for source, label, score in sentence.verdicts]
    return f'<span class="fl-tip" aria-hidden="true">{esc(chr(10).join(lines))}</span>'


def render_summary(sentences: Sequence[SentenceView]) -> str:
    """The summary as running text, each sentence coloured by label (or score bucket), numbered,
    with a CSS-only tooltip holding its label, error types, explanation and every source's verdict,
    shown on hover and on keyboard focus (each sentence is a Tab stop)."""
    if not sentences:
        return '<div class="fl-summary"><span class="fl-empty">This summary has no sentences.</span></div>'
    parts = []
    for sentence in sentences:
        classes = ["fl-sent", sentence_class(sentence.label, sentence.score)]
        if sentence.selected:
            classes.append("fl-selected")
        mark = f'<span class="fl-mark">S{sentence.position + 1}{esc(_glyph(sentence.label, sentence.score))}</span>'
        parts.append(
            f'<span class="{_classes(classes)}" tabindex="0">{_marked(sentence.text, sentence.marks)}{mark}'
            f"{_tip(sentence)}</span>"
        )
    return f'<div class="fl-summary">{" ".join(parts)}</div>'


def _badge(label: str | None, score: float | None) -> str:
    return f'<span class="{_classes(["fl-badge", sentence_class(label, score)])}">{esc(describe(label, score))}</span>'


def render_sentence_list(sentences: Sequence[SentenceView]) -> str:
    """Every sentence as text: number, label and score in words, error types, explanation."""
    items = []
    for sentence in sentences:
        body = [
            hit_badge(sentence.tags),
            _badge(sentence.label, sentence.score),
            f"<b>S{sentence.position + 1}</b> ",
            esc(sentence.text),
            render_tags(sentence.tags),
        ]
        if sentence.explanation:
            body.append(f'<div class="fl-expl">{esc(sentence.explanation)}</div>')
        selected = ' class="fl-selected"' if sentence.selected else ""
        items.append(f"<li{selected}>{''.join(body)}</li>")
    return f'<ol class="fl-list fl-sentences">{"".join(items)}</ol>'


CHOSEN = "chosen"
"""The word beside a chosen claim in the list (colour and outline are not the only marker)."""


def _claim_body(claim: ClaimView) -> str:
    body = [
        hit_badge(claim.tags),
        _badge(claim.label, None),
        f"<b>C{claim.position + 1}</b> ",
        esc(claim.text),
        render_tags(claim.tags),
    ]
    for quote in claim.evidence:
        body.append(f'<div class="fl-evidence">{esc(quote)}</div>')
    for reason in claim.reasons:
        body.append(f'<div class="fl-expl">Reason: {esc(reason)}</div>')
    if claim.explanation:
        body.append(f'<div class="fl-expl">{esc(claim.explanation)}</div>')
    return "".join(body)


def render_claims(claims: Sequence[ClaimView]) -> str:
    """Claims with label badges, then annotators' evidence quotes and reasons; a selected claim
    is outlined and says so in words. The list counts from the first claim's number, so a claim set
    that continues a summary's claims (C15 on) is numbered as its claims are."""
    items = []
    for claim in claims:
        if claim.selected:
            marker = f'<span class="fl-badge fl-chosen">{CHOSEN}</span>'
            items.append(f'<li class="fl-selected" aria-current="true">{marker}{_claim_body(claim)}</li>')
        else:
            items.append(f"<li>{_claim_body(claim)}</li>")
    start = f' start="{int(claims[0].position) + 1}"' if claims and claims[0].position else ""
    return f'<ol class="fl-list fl-claims"{start}>{"".join(items)}</ol>'


def render_chosen_claim(claim: ClaimView) -> str:
    """One claim on its own, boxed, for the top of the detail view: label, evidence and reasons."""
    return f'<div class="fl-chosen">{_claim_body(claim)}</div>'


def render_passages(text: str, matches: Sequence[tuple[int, int, int, float]]) -> str:
    """The aligned passages as text, best first: (rank, start, end, score) -> '#1 · 87 · «…»'."""
    if not matches:
        return '<div class="fl-passages"><span class="fl-empty">No passage passes the filter.</span></div>'
    items = [
        f'<li><span class="fl-meta">#{rank} · score {score:.3g}</span> {esc(text[start:end])}</li>'
        for rank, start, end, score in matches
    ]
    return f'<div class="fl-passages"><ol class="fl-list">{"".join(items)}</ol></div>'


def render_key_points(points: Sequence[str]) -> str:
    """Key points as a plain list (TofuEval's own text already carries its numbers)."""
    return '<ul class="fl-list fl-keypoints">' + "".join(f"<li>{esc(point)}</li>" for point in points) + "</ul>"
