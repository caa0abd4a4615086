"""A session's agreement on the Sessions page: every coder together (Fleiss' kappa, Krippendorff's
alpha, % all agree, units complete), Cohen's kappa per pair, the same per code, the confusion matrix of
any two coders (Compare's escaped HTML heatmap), ARM's figures for the ARM modes, and for line-by-line
the agreement on the sentences. The statistics are `faithlens.coding.report`'s; who may see them is
`faithlens.coding.visible`'s (adjudicators and admins; coders once an admin closes the session)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components import charts, shell, urlstate
from components.coding import data as coding_data
from components.markdown import md_escape
from faithlens import querystate
from faithlens.coding import agreement, sessions, visible
from faithlens.coding.codebook import Codebook
from faithlens.unit_filter import level_noun
from faithlens.views import arm_tables, coding

NUMBER = st.column_config.NumberColumn(format="%.3f")
PAIR_SEPARATOR = ","


def key(dataset: str, *parts: object) -> str:
    return urlstate.key(urlstate.SESSIONS, dataset, *parts)


def _table(rows: list[dict[str, object]], name: str) -> None:
    frame = pd.DataFrame(rows)
    numbers = {c: NUMBER for c in frame.columns if c.startswith(("κ", "Cohen", "Fleiss", "Krippendorff", "%"))}
    st.dataframe(frame, hide_index=True, width="stretch", column_config=numbers, key=name, placeholder="")


def _agreement(found: agreement.Agreement, name: str) -> None:
    st.caption(md_escape(coding.agreement_sentence(found)))
    _table([coding.agreement_row(found)], name + ".all")
    if found.pairs:
        st.markdown("**Cohen's κ per pair of coders** (over the units both coded)")
        _table(coding.pair_rows(found), name + ".pairs")


def _pair(dataset: str, name: str, coders: tuple[str, ...], wanted: str | None, notes: list[str]) -> tuple[str, str]:
    """The two coders whose confusion matrix is drawn: the URL's pair, else the first two."""
    given = tuple(wanted.split(PAIR_SEPARATOR)) if wanted else ()
    if wanted and (len(given) != 2 or not set(given) <= set(coders) or given[0] == given[1]):
        notes.append(querystate.ignored("pair", wanted, "it names no two coders of this session"))
        given = ()
    first, second = given or coders[:2]
    left, right = st.columns(2)
    a = left.selectbox("Coder A (rows)", coders, key=urlstate.bind(key(dataset, name, "pair_a"), first, coders))
    others = [c for c in coders if c != a]
    b = right.selectbox(
        "Coder B (columns)",
        others,
        key=urlstate.bind(key(dataset, name, "pair_b"), second if second in others else others[0], others),
    )
    return a, b


def _confusion(ctx: shell.PageContext, found: sessions.Session, coders: tuple[str, ...], wanted, notes) -> str | None:
    """The confusion matrix of two coders; line-by-line draws the sentences' beside the summaries'."""
    st.markdown("**Confusion matrix of two coders** (over the units both coded)")
    a, b = _pair(ctx.dataset, found.name, coders, wanted, notes)
    tables = {level_noun(found.level): coding_data.by_unit(ctx.db_path, ctx.version, found.name, ctx.actor)}
    if found.mode == "line-by-line":
        sentences = coding_data.sentence_codes(ctx.db_path, ctx.version, found.name, ctx.actor)
        tables = {"summaries": tables.popitem()[1], "sentences": sentences}
    blocks = []
    for noun, codes in tables.items():
        labels, counts = agreement.confusion(codes, a, b)
        if labels:
            both = sum(map(sum, counts))
            title, note = f"{noun.capitalize()}: {a} (rows) vs {b} (columns)", f"{both:,} {noun} both coded"
            blocks.append(charts.matrix_html(counts, labels, f"{a} says", f"{b} says", title, note))
    if not blocks:
        st.info(md_escape(f"{a} and {b} have no unit in common yet."))
    else:
        st.html(charts.matrix_grid_html(blocks, len(blocks)))
    chosen = PAIR_SEPARATOR.join((a, b))
    return None if (a, b) == tuple(coders[:2]) else chosen


def _arm(arm: dict[str, float | int | None], name: str) -> None:
    """ARM's figures beside the paper's: Table 4's, then Table 5's individual and majority-vote rows."""
    st.markdown("**ARM figures** (the paper's Table 4 beside this session's)")
    _table(arm_tables.figure_rows(arm), name)
    if "majority_explanations" in arm:
        st.markdown("**ARM Table 5: explanation points, per coder and by majority vote**")
        _table(arm_tables.table5_rows(arm), name + ".table5")
        st.caption(md_escape(arm_tables.TABLE5_HOW))


def show(ctx: shell.PageContext, found: sessions.Session, book: Codebook, wanted: str | None, notes) -> str | None:
    """The agreement section; returns the coder pair for the URL (None: the first two, not chosen)."""
    if ctx.actor is None or not visible.sees_agreement(ctx.actor, found):
        st.info(
            "Agreement is shown to adjudicators and admins; coders see it once an admin closes the session.",
            icon=":material/lock:",
        )
        return wanted
    report = coding_data.agreement(ctx.db_path, ctx.version, found.name, ctx.actor)
    overall = report.overall
    if len(overall.coders) < 2:
        st.info("Agreement needs codes from two coders or more.", icon=":material/info:")
        return wanted
    units = f"{report.session_units:,} {level_noun('unit', report.session_units)}"
    st.markdown("**All coders** " + md_escape(f"({', '.join(overall.coders)}) on {units}"))
    _agreement(overall, key(ctx.dataset, found.name, "agreement"))
    st.markdown("**Per code** (chose the code or not)")
    _table(coding.per_code_rows(report.per_code, book), key(ctx.dataset, found.name, "per_code"))
    if report.sentences is not None:
        st.markdown("**Line by line: agreement on the sentences** (StorySumm's annotators agree at this level)")
        _agreement(report.sentences, key(ctx.dataset, found.name, "sentences"))
        st.markdown("**Per code, on the sentences** (chose the code or not)")
        _table(coding.per_code_rows(report.sentence_per_code, book), key(ctx.dataset, found.name, "sentences_code"))
    if report.arm:
        _arm(report.arm, key(ctx.dataset, found.name, "arm"))
    return _confusion(ctx, found, overall.coders, wanted, notes)
