"""Explore's source pane: the ranker whose stored alignment it shows, the passages of the chosen
sentence or claim, and the other direction: a picked source passage and the units aligned to it."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components import highlight, shell, urlstate
from components.explore import background as explore_background
from components.markdown import md_escape
from faithlens import access
from faithlens.build import background
from faithlens.build.alignment import TOP_K, align_and_store
from faithlens.build.rankers import DEFAULT, EMBEDDING, LABELS, ON_PAGES, SCALED, page_label
from faithlens.views import alignments as al
from faithlens.views import highlight as hl
from faithlens.views.detail import Detail, UnitView
from faithlens.views.states import DetailState

CONTROL_PX = 180
"""Width of each control beside the sentence picker, which takes the rest of the row."""
PREVIEW_CHARS = 80


def _key(dataset: str, *parts: str) -> str:
    return urlstate.key(urlstate.EXPLORE, dataset, *parts)


def ranker_of(state: DetailState) -> str:
    return state.ranker or DEFAULT


@st.cache_data(show_spinner=False, max_entries=256)
def cached_alignment(
    db_path: str, version: str, dataset: str, document_id: str, unit_ids: tuple[str, ...], ranker: str
) -> al.StoredAlignment:
    """One summary's stored alignment by `ranker`, cached per data version."""
    with shell.root_connection(db_path).cursor() as cur:
        return al.load_alignment(cur, dataset, document_id, unit_ids, ranker)


def load(ctx: shell.PageContext, detail: Detail, state: DetailState) -> al.StoredAlignment:
    units = tuple(unit.unit_id for unit in (*detail.sentences, *detail.claims))
    return cached_alignment(ctx.db_path, ctx.version, ctx.dataset, detail.document.document_id, units, ranker_of(state))


def controls(dataset: str, row: DeltaGenerator, state: DetailState) -> DetailState:
    """Ranker, passages shown and (for the lexical ranker's 0..100 scores) a minimum score, in `row`."""
    ranker = row.selectbox(
        "Alignment by",
        ON_PAGES,
        key=urlstate.bind(_key(dataset, "ranker"), ranker_of(state), ON_PAGES),
        format_func=page_label,
        help="Which ranker's passages to show. BM25 is the default: it finds FABLES' evidence quotes best "
        "(python -m faithlens align-eval).",
        width=CONTROL_PX,
    )
    passages = row.slider(
        "Passages shown",
        1,
        TOP_K,
        key=urlstate.bind(_key(dataset, "passages"), state.passages),
        help="The best-matching passages, best first.",
        width=CONTROL_PX,
    )
    min_score = state.min_score
    if ranker == SCALED:
        min_score = row.slider(
            "Minimum match score",
            0,
            100,
            step=5,
            key=urlstate.bind(_key(dataset, "min_score"), state.min_score),
            help="rapidfuzz token_set_ratio, 0..100.",
            width=CONTROL_PX,
        )
    return replace(state, ranker=None if ranker == DEFAULT else ranker, passages=passages, min_score=min_score)


def min_score(state: DetailState) -> float | None:
    """The minimum score to apply: only the lexical ranker's scores have a fixed scale."""
    return state.min_score if ranker_of(state) == SCALED else None


def offer(ctx: shell.PageContext, detail: Detail, state: DetailState) -> None:
    """No stored alignment by the chosen ranker for this document: say so and offer to compute it,
    except to whoever may not (a demo server's visitor). The write bumps the data version, so the
    rerun reads it."""
    ranker = ranker_of(state)
    st.warning(
        md_escape(f"No stored alignment by {LABELS[ranker]} for this document's summaries yet."),
        icon=":material/warning:",
    )
    document = detail.document
    if background.needs_background(document.text or "", ranker):
        explore_background.offer(ctx, (ctx.dataset, document.document_id, ranker))
        return
    if not access.allowed(ctx.actor, "compute_alignment"):
        return
    if st.button(f"Compute the alignment by {LABELS[ranker]} now", key=_key(ctx.dataset, "align", ranker)):
        slow = " The first use loads the embedding model: about 10 s more." if ranker in EMBEDDING else ""
        with st.spinner(f"Aligning by {LABELS[ranker]}…{slow}"):
            align_and_store(ctx.root, ctx.actor, ctx.dataset, [detail.document.document_id], ranker)
        st.rerun()


def provenance(alignment: al.StoredAlignment) -> None:
    when = f"{alignment.aligned_at:%Y-%m-%d %H:%M}" if alignment.aligned_at else "unknown time"
    st.caption(md_escape(f"Aligned by {alignment.ranker} on {when}: {alignment.version}"))


def unit_name(detail: Detail, unit_id: str) -> str | None:
    for prefix, units in (("S", detail.sentences), ("C", detail.claims)):
        for unit in units:
            if unit.unit_id == unit_id:
                return f"{prefix}{unit.position + 1}"
    return None


def unit_passages(out: highlight.Markup, detail: Detail, chosen: UnitView, matches: list) -> list[hl.Span]:
    """The chosen unit's passages listed best first; returns their spans to mark in the source."""
    text = detail.document.text or ""
    name = unit_name(detail, chosen.unit_id)
    st.caption(md_escape(f"Passages that best match {name}, best first"))
    out.add(hl.render_passages(text, [(m.rank, m.start, m.end, m.score) for m in matches]))
    return [hl.Span(m.start, m.end, hl.ALIGN_BEST if m.rank == 1 else hl.ALIGN_OTHER) for m in matches]


def passage_choice(dataset: str, detail: Detail, state: DetailState, alignment: al.StoredAlignment) -> int | None:
    """The picked source passage's first character (None: none), among the passages shown for any unit."""
    text = detail.document.text or ""
    spans = al.passages(alignment, state.passages, min_score(state))
    starts = [0, *(start + 1 for start, _ in spans)]  # 0 is "none"; a passage is its start + 1
    ends = dict(spans)
    seeded = state.passage + 1 if state.passage is not None and state.passage in ends else 0

    def describe(value: int) -> str:
        if not value:
            return "(pick a passage to see what is aligned to it)"
        start = value - 1
        piece = " ".join(text[start : ends[start]].split())
        return piece if len(piece) <= PREVIEW_CHARS else piece[: PREVIEW_CHARS - 1] + "…"

    picked = st.selectbox(
        "Source passage",
        starts,
        key=urlstate.bind(_key(dataset, "passage", detail.summary.summary_id), seeded, starts),
        format_func=describe,
        help="Lights up the summary sentences and claims this passage is aligned to (among their passages shown).",
    )
    return picked - 1 if picked else None


def picked(state: DetailState, alignment: al.StoredAlignment) -> tuple[tuple[int, int] | None, dict[str, int]]:
    """The picked passage's span (None: none picked) and the units it lights: unit id -> its rank
    among that unit's shown passages."""
    if state.passage is None:
        return None, {}
    end = dict(al.passages(alignment, state.passages, min_score(state)))[state.passage]
    return (state.passage, end), al.aligned_to(alignment, state.passage, end, state.passages, min_score(state))


def say_lit(detail: Detail, lit: dict[str, int]) -> None:
    """Name the units the picked passage is aligned to, with its rank for each."""
    if not lit:
        st.caption("No sentence or claim has this passage among its passages shown.")
        return
    named = [(unit_name(detail, unit_id), rank) for unit_id, rank in lit.items()]
    order = sorted((name for name in named if name[0]), key=lambda item: (item[0][0] != "S", int(item[0][1:])))
    listed = ", ".join(f"{name} (#{rank})" for name, rank in order)
    st.caption(md_escape(f"This passage is aligned to {listed}: outlined in the summary."))
