"""One summary beside its source: coloured sentences with their labels and tags as text, the aligned
passages, claims grouped by claim set with evidence, TofuEval topic and key points, and every label
source's verdict. Tags a filter asked for are marked, and a caption names the units carrying them."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from components import highlight, shell, urlstate
from components.explore import alignment as explore_alignment
from components.explore import ask as explore_ask
from components.explore import verdicts as explore_verdicts
from components.markdown import md_escape, md_with_code
from faithlens.build.rankers import LABELS, SCALED
from faithlens.build.text import ngram_overlap
from faithlens.errors import NotFoundError
from faithlens.filters import Filters, join_words
from faithlens.querystate import ignored
from faithlens.views import excerpts, unit_tags
from faithlens.views import highlight as hl
from faithlens.views.alignments import select_matches
from faithlens.views.detail import Detail, UnitView, claim_unit, load_detail, resolve_selection
from faithlens.views.states import DetailState
from faithlens.views.tag_html import tags_text

NGRAM_CHOICES = (0, 2, 3, 4, 5)
"""Shortest shared word run to underline; 0 is off (a selectbox shows its placeholder for None)."""


def _unusable(detail: Detail, state: DetailState) -> list[str]:
    """Notes on the link's display settings this summary cannot use: without the source text there is
    nothing to align or underline; a word-run length the picker does not offer is off."""
    plain = DetailState()
    given = {name: getattr(state, name) for name in ("ranker", "passages", "min_score", "passage", "ngram")}
    if not (detail.document.text and (detail.sentences or detail.claims)):
        lacks = "no sentences or claims to align" if detail.document.text else "no source text here"
        why = f"this summary has {lacks}, so no passages are shown"
        return [ignored(name, str(value), why) for name, value in given.items() if value != getattr(plain, name)]
    if state.min_score != plain.min_score and explore_alignment.ranker_of(state) != SCALED:
        ranker = LABELS[explore_alignment.ranker_of(state)]
        why = f"only {LABELS[SCALED]} scores 0..100; {ranker} passages are shown by rank alone"
        return [ignored("min_score", str(state.min_score), why)]
    if state.ngram is not None and state.ngram not in NGRAM_CHOICES:
        offered = ", ".join(str(n) for n in NGRAM_CHOICES if n)
        return [ignored("ngram", str(state.ngram), f"expected one of {offered} (words), so shared word runs are off")]
    return []


def _without_passages(state: DetailState) -> DetailState:
    """`state` with the alignment and word-run settings at their defaults (a summary they cannot apply to)."""
    plain = DetailState()
    return replace(
        state,
        ranker=plain.ranker,
        passages=plain.passages,
        min_score=plain.min_score,
        passage=plain.passage,
        ngram=plain.ngram,
    )


def _key(dataset: str, *parts: str) -> str:
    return urlstate.key(urlstate.EXPLORE, dataset, *parts)


@st.cache_data(show_spinner=False, max_entries=128)
def cached_detail(db_path: str, version: str, dataset: str, summary_id: str, source: str) -> Detail:
    """One summary's detail, cached per data version and label source."""
    with shell.root_connection(db_path).cursor() as cur:
        return load_detail(cur, dataset, summary_id, source)


def _header(detail: Detail, source: str) -> None:
    summary, document = detail.summary, detail.document
    st.subheader(md_escape(f"{summary.model or 'unknown generator'} · {summary.summary_id}"))
    facts = [f"document: {document.title or document.document_id}"]
    facts += [f"{name}: {value}" for name, value in (("split", summary.split), ("corpus", document.source)) if value]
    if summary.tags:
        facts.append(tags_text(summary.tags))
    if summary.topic:
        facts.append(f"topic: “{summary.topic}” ({summary.topic_type or 'type unknown'})")
    verdict = detail.summary_label
    if verdict is not None and (verdict.label is not None or verdict.score is not None):
        facts.append(f"{source} says: {hl.describe(verdict.label, verdict.score)}")
    st.caption(md_escape(" · ".join(facts)))
    if summary.general_comment:
        highlight.show(
            '<div class="fl-expl"><b>Annotator\'s general comment.</b> ' + hl.esc(summary.general_comment) + "</div>"
        )


def _preview(text: str) -> str:
    return text if len(text) <= 70 else text[:69] + "…"


def _claim_choice(dataset: str, detail: Detail, state: DetailState) -> int | None:
    """The chosen claim's number, as its label says it (C2 is 2; seeded from the link's `claim`), or None."""
    if not detail.claims:
        return None
    claims = {claim.position + 1: claim for claim in detail.claims}
    choices = [0, *claims]
    key = urlstate.bind(_key(dataset, "claim", detail.summary.summary_id), state.claim or 0, choices)

    def describe(number: int) -> str:
        if not number:
            return "(none)"
        claim = claims[number]
        origin = f" · extracted by {claim.claim_set}" if claim.claim_set else ""
        return f"C{number}{origin} · {hl.describe(claim.label, claim.score)} · {_preview(claim.text)}"

    chosen = st.selectbox(
        "Claim", choices, key=key, format_func=describe, help="Shows the claim first, with its evidence and reasons."
    )
    return chosen or None


def _controls(dataset: str, detail: Detail, state: DetailState) -> DetailState:
    """Sentence and claim choice, and (when the source text is there) how a sentence's support is shown."""
    state = _sentence_controls(dataset, detail, state)
    return replace(state, claim=_claim_choice(dataset, detail, state))


def _sentence_controls(dataset: str, detail: Detail, state: DetailState) -> DetailState:
    sentences = detail.sentences
    summary_id = detail.summary.summary_id
    if not sentences:
        return _without_passages(replace(state, sentence=None))
    with_text = bool(detail.document.text)
    row = st.container(horizontal=True)
    choices = list(range(len(sentences) + 1))
    key = urlstate.bind(
        _key(dataset, "sentence", summary_id), state.sentence if state.sentence in choices else 0, choices
    )

    def describe(position: int) -> str:
        if position == 0:
            return "(choose a sentence to see its support)" if with_text else "(none)"
        unit = sentences[position - 1]
        return f"S{position} · {hl.describe(unit.label, unit.score)} · {_preview(unit.text)}"

    sentence = row.selectbox("Sentence", choices, key=key, format_func=describe, help="Highlights its support.")
    if not with_text:
        return _without_passages(replace(state, sentence=sentence or None))
    state = explore_alignment.controls(dataset, row, state)
    ngram = row.selectbox(
        "Shared word runs",
        NGRAM_CHOICES,
        key=urlstate.bind(_key(dataset, "ngram"), state.ngram if state.ngram in NGRAM_CHOICES else 0, NGRAM_CHOICES),
        format_func=lambda n: f"{n}+ words" if n else "off",
        help="Underline runs of at least n words that the sentence and the source share.",
        width=explore_alignment.CONTROL_PX,
    )
    return replace(state, sentence=sentence or None, ngram=ngram or None)


def _source(
    ctx: shell.PageContext, detail: Detail, state: DetailState, chosen: UnitView | None
) -> tuple[DetailState, dict[str, int]]:
    """The source text with the chosen unit's passages marked, and the picked passage; returns the
    state with the passage the reader picked, and the units aligned to it (unit id -> its rank)."""
    document = detail.document
    out = highlight.Markup()
    out.heading("Source")
    if not document.text:
        out.flush()
        note = document.text_note or "This dataset gives no source text for this document."
        st.info(md_with_code(note), icon=":material/description:")
        return state, {}
    alignment = explore_alignment.load(ctx, detail, state)
    out.flush()
    if not alignment.stored or (chosen is not None and chosen.unit_id not in alignment.matches):
        explore_alignment.offer(ctx, detail, state)
        return replace(state, passage=None), {}
    explore_alignment.provenance(alignment)
    spans: list[hl.Span] = []
    if chosen is not None:
        stored = alignment.matches.get(chosen.unit_id, ())
        matches = select_matches(stored, state.passages, explore_alignment.min_score(state))
        spans += explore_alignment.unit_passages(out, detail, chosen, matches)
        if state.ngram is not None:
            overlap = ngram_overlap(chosen.text, document.text, state.ngram)
            spans += [hl.Span(start, end, hl.NGRAM) for start, end in overlap.source_spans]
    out.flush()
    state = replace(state, passage=explore_alignment.passage_choice(ctx.dataset, detail, state, alignment))
    span, lit = explore_alignment.picked(state, alignment)
    if span is not None:
        spans.append(hl.Span(*span, hl.ALIGN_BEST))
        explore_alignment.say_lit(detail, lit)
    _document_text(ctx, out, document.text, spans)
    return state, lit


def _document_text(ctx: shell.PageContext, out: highlight.Markup, text: str, spans: list[hl.Span]) -> None:
    """The source with its marks; a long one as excerpts around them, unless the reader asks for all of it."""
    if excerpts.is_long(text) and not st.session_state.get(_key(ctx.dataset, "whole")):
        markup, shown = excerpts.render_excerpts(text, spans)
        out.add(markup)
        out.flush()
        st.caption(f"A long document: {shown:,} of {len(text.split()):,} words shown, around the marked passages.")
    else:
        out.add(hl.render_highlight(text, spans))
        out.flush()
    if excerpts.is_long(text):
        st.toggle("Show the whole document", key=_key(ctx.dataset, "whole"), help="Slower to draw for a long text.")


def _sentence_views(
    detail: Detail, state: DetailState, asked: unit_tags.Asked, lit: dict[str, int]
) -> list[hl.SentenceView]:
    """Each sentence as the summary shows it: outlined when chosen or aligned to the picked passage."""
    views = []
    for unit in detail.sentences:
        selected = state.sentence == unit.position + 1 or unit.unit_id in lit
        marks: tuple[tuple[int, int], ...] = ()
        if selected and state.ngram is not None and detail.document.text:
            marks = ngram_overlap(unit.text, detail.document.text, state.ngram).sentence_spans
        tags = unit_tags.marked(unit.tags, asked)
        verdicts = tuple((v.source, v.label, v.score) for v in detail.unit_verdicts.get(unit.unit_id, ()))
        views.append(
            hl.SentenceView(
                unit.position, unit.text, unit.label, unit.score, unit.explanation, tags, selected, marks, verdicts
            )
        )
    return views


def _summary(detail: Detail, state: DetailState, source: str, asked: unit_tags.Asked, lit: dict[str, int]) -> None:
    out = highlight.Markup()
    out.heading("Summary")
    views = _sentence_views(detail, state, asked, lit)
    if not views:
        out.flush()
        st.caption(md_escape(f"The summary as published ({_claims_below(detail)} below)."))
        out.add('<div class="fl-summary">' + hl.esc(detail.summary.text) + "</div>")
    else:
        out.add(hl.render_summary(views))
        if all(v.label is None and v.score is None for v in views):
            out.flush()
            st.caption(md_escape(f"{source} gives no sentence labels for this summary; see its verdict below."))
        out.heading("Sentences")
        out.add(hl.render_sentence_list(views))
    for group in detail.claim_groups:
        out.heading(group.title(), f"({group.origin()}; {group.labels_of(source)})")
        out.add(hl.render_claims([_claim_view(c, state, asked, c.unit_id in lit) for c in group.claims]))
    flips = _flips(detail)
    if flips is not None:
        out.flush()
        st.caption(md_escape(f"⇄ The verdict of {source} flips across repeats on: {flips}"))
    if detail.key_points:
        out.heading("Key points", f"for “{detail.summary.topic}” (TofuEval completeness)")
        out.add(hl.render_key_points(detail.key_points))
    out.flush()


def _claims_below(detail: Detail) -> str:
    """'18 claims' or '14 claims of the dataset and 4 a model extracted'."""
    own = sum(1 for c in detail.claims if c.claim_set is None)
    extracted = len(detail.claims) - own
    if not extracted:
        return f"{own} claims"
    return f"{own} claims of the dataset and {extracted} a model extracted"


def _flips(detail: Detail) -> str | None:
    """Which verdicts of the colouring source change between the repeats of its runs (None: no run repeats them)."""
    if not detail.flipping:
        return None
    parts = ["the summary"] if detail.summary.summary_id in detail.flipping else []
    parts += [f"S{u.position + 1}" for u in detail.sentences if u.unit_id in detail.flipping]
    parts += [f"C{u.position + 1}" for u in detail.claims if u.unit_id in detail.flipping]
    return ", ".join(parts)


def _claim_view(claim: UnitView, state: DetailState, asked: unit_tags.Asked, lit: bool = False) -> hl.ClaimView:
    return hl.ClaimView(
        claim.position,
        claim.text,
        claim.label,
        claim.explanation,
        claim.evidence,
        claim.reasons,
        selected=claim.position + 1 == state.claim or lit,
        tags=unit_tags.marked(claim.tags, asked),
    )


def _chosen_claim(detail: Detail, state: DetailState, source: str, asked: unit_tags.Asked) -> None:
    """The chosen claim first, boxed, with its label, evidence and reasons (it is also outlined in the list)."""
    chosen = claim_unit(detail, state.claim)
    if chosen is not None:
        origin = f"extracted by {chosen.claim_set}; " if chosen.claim_set else ""
        label = f"{source} label" if chosen.label is not None or chosen.score is not None else f"no {source} label"
        st.markdown(f"**Chosen claim C{chosen.position + 1}** " + md_escape(f"({origin}{label})"))
        highlight.show(hl.render_chosen_claim(_claim_view(chosen, state, asked)))


def _tag_hits(detail: Detail, asked: unit_tags.Asked) -> None:
    """After a filter on tags (Error types, Tags, Difficulty): which parts of this summary carry them."""
    if not asked:
        return
    parts = ["the summary"] if any(t.hit for t in unit_tags.marked(detail.summary.tags, asked)) else []
    for prefix, units in (("S", detail.sentences), ("C", detail.claims)):
        parts += [f"{prefix}{u.position + 1}" for u in units if any(t.hit for t in unit_tags.marked(u.tags, asked))]
    if parts:
        st.caption(md_escape(f"The tags the filters ask for are on {join_words(parts, 'and')} of this summary."))


def load(ctx: shell.PageContext, summary_id: str | None, source: str) -> Detail | None:
    """The summary's detail labelled by `source`; None when there is no such summary."""
    if summary_id is None:
        return None
    refused = shell.blindfold(ctx).summary_refusal(ctx.dataset, summary_id)
    if refused is not None:
        raise refused
    try:
        return cached_detail(ctx.db_path, ctx.version, ctx.dataset, summary_id, source)
    except NotFoundError:
        return None


def show(ctx: shell.PageContext, detail: Detail, state: DetailState, filters: Filters) -> DetailState:
    """Draw `detail` as `state` asks, coloured by the filters' source, marking the tags they ask for;
    returns the state the widgets now hold."""
    source, asked = filters.source, unit_tags.asked_for(filters)
    state, notes = resolve_selection(detail, state)
    notes += _unusable(detail, state)
    for note in notes:
        st.warning(md_escape(note), icon=":material/link_off:")
    _header(detail, source)
    _tag_hits(detail, unit_tags.asked_for(filters, unit=False))  # the unit filter names its own units
    state = _controls(ctx.dataset, detail, state)
    _chosen_claim(detail, state, source, asked)
    chosen = detail.sentences[state.sentence - 1] if state.sentence else claim_unit(detail, state.claim)
    if detail.document.text:
        left, right = st.columns(2, gap="large")
        with left:
            state, lit = _source(ctx, detail, state, chosen)
        with right:
            _summary(detail, state, source, asked, lit)
    else:
        state, lit = _source(ctx, detail, state, chosen)
        _summary(detail, state, source, asked, lit)
    explore_ask.section(ctx, detail, state)
    explore_verdicts.show(detail.verdicts)
    return state
