"""The Compare page's sections below the controls: the agreement table, the grid of confusion
matrices, one pair in detail with the units of a chosen cell, and how the numbers are computed.

The widgets that belong to a section (the split shown, the pair, its split and cell) are drawn in
it, bound to the URL state, and come back as the section's part of that state.
"""

from __future__ import annotations

import streamlit as st

from components import confusion, exports, urlstate
from components.compare import data as compare_data
from components.compare.controls import Selection, key, start_value, unless
from components.markdown import md_escape
from components.shell import PageContext
from faithlens.views.compare import ALL, CompareResult, PairResult
from faithlens.views.states import CELLS, CompareState

GRID_COLUMNS = 3


def agreement(selection: Selection, results: dict[str, CompareResult], scored: bool) -> None:
    """Every metric row of every compared source in one table, and its CSV (every digit); `scored` when
    a score source is among them."""
    st.subheader(md_escape(f"Agreement with {selection.reference}"))
    table = confusion.metrics_table([r for res in results.values() for r in res.pairs[0].rows], with_source=True)
    st.html(confusion.metrics_html(table))
    if scored:
        st.caption(
            "Score sources have rows for the split their threshold is tuned on and the splits it is applied to "
            "(StorySumm: val / test); label sources for all units and for each split."
        )
    st.download_button(
        "Download CSV",
        data=lambda: table.to_csv().encode("utf-8"),  # written on click, not sent on every run
        file_name=f"{selection.dataset}_{selection.level}_agreement.csv",
        mime="text/csv",
        key=key(selection.dataset, "agreement_csv"),
        on_click="ignore",
        icon=":material/download:",
    )


def label_downloads(ctx: PageContext, selection: Selection) -> None:
    """Each compared source's labels (the reference first) as the file `python -m faithlens export` writes."""
    chosen = list(dict.fromkeys([selection.reference, *selection.sources]))
    with st.expander(f"Download the labels of each source ({len(chosen)})", icon=":material/download:"):
        st.caption(
            "Every current label of the source at every level, with the unit's text (document, summary, sentence or "
            "claim), the label and the source's own spelling of it; an LLM source's rows add the stored answer "
            "(explanation, raw output, prompt and version, model, parameters, tokens, cost, when)."
        )
        for source in chosen:
            exports.source_downloads(ctx, selection.dataset, source, key(selection.dataset, "labels", source))


def matrices(selection: Selection, results: dict[str, CompareResult], wanted: str | None, notes: list[str]) -> str:
    """The units shown (all, or one split) and one heatmap per compared source for them (a score
    source without an 'all' row shows each split it is reported on). Returns the chosen view."""
    st.subheader("Confusion matrices")
    views = [ALL, *next(iter(results.values())).splits]
    start = start_value("view", None if selection.renewed else wanted, views, ALL, notes)
    view = st.radio(
        "Units",
        views,
        horizontal=True,
        key=urlstate.bind(key(selection.dataset, "view"), start, views, reseed=selection.renewed),
        format_func=lambda v: "all units" if v == ALL else md_escape(f"{v} split"),
    )
    shown = []
    for result in results.values():
        pair = result.pairs[0]
        rows = [r for r in pair.rows if r.group == ALL and r.split == view]
        if not rows and view == ALL:
            rows = [r for r in pair.rows if r.group == ALL]
        shown += [(result.reference.name, row) for row in rows]
    if not shown:
        st.info(f"No compared source is reported on the {view} split.")
    titled = []
    for reference, row in shown:
        split = "all units" if row.split == ALL else f"{row.split} split"
        titled.append((reference, row, f"{row.source} · {split}"))
    confusion.show_heatmaps(titled, GRID_COLUMNS)
    return view


def _coverage(result: CompareResult, pair: PairResult) -> str:
    left_out = f", of which {pair.excluded:,} are left out by the mapping" if pair.excluded else ""
    return (
        f"{pair.source.name}: {pair.source.describe_mode()}. {result.reference.name} labels "
        f"{result.reference_labelled:,} units here and {pair.source.name} {pair.labelled:,}; "
        f"{pair.both:,} are labelled by both{left_out}."
    )


def _drill_choices(
    selection: Selection, results: dict[str, CompareResult], view: str, wanted: CompareState, notes: list[str]
) -> tuple[str, str, list[str], str]:
    """The pair and its split's widget key, the splits it is reported on and the default split.
    The split follows the matrices' view until the user picks another for this pair; a new level,
    reference, mapping, view or pair starts it afresh."""
    dataset, level = selection.dataset, selection.level
    names = list(results)
    pair_start = start_value("pair", None if selection.renewed else wanted.pair, names, names[0], notes)
    source = st.selectbox(
        "Compared source",
        names,
        key=urlstate.bind(key(dataset, "pair", level), pair_start, names, reseed=selection.renewed),
    )
    rows = results[source].pairs[0].rows
    splits = list(dict.fromkeys(r.split for r in rows))
    default = view if view in splits else splits[0]
    renew = selection.renewed or source != pair_start or view != (wanted.view or ALL)
    split_start = start_value("dsplit", None if renew else wanted.dsplit, splits, default, notes)
    split_key = urlstate.bind(key(dataset, "dsplit", level, source), split_start, splits, reseed=renew)
    return source, split_key, splits, default


def pair_detail(
    ctx: PageContext,
    selection: Selection,
    results: dict[str, CompareResult],
    view: str,
    wanted: CompareState,
    notes: list[str],
) -> dict[str, str | None]:
    """One pair in detail: its coverage, every metric row, and the units of one chosen cell.
    Returns the section's part of the URL state: pair, dsplit and cell, each None when it is what
    the page would pick by itself."""
    dataset, level = selection.dataset, selection.level
    st.subheader("One pair in detail")
    source, split_key, splits, default_split = _drill_choices(selection, results, view, wanted, notes)
    result = results[source]
    reference, pair = result.reference.name, result.pairs[0]
    st.caption(md_escape(_coverage(result, pair)))
    st.html(confusion.metrics_html(confusion.metrics_table(list(pair.rows), with_source=False)))
    split = st.radio("Split", splits, horizontal=True, key=split_key, format_func=md_escape)
    matrix = pair.row(split).confusion
    counts = dict(zip(CELLS, (n for line in matrix for n in line), strict=True))
    cell = st.segmented_control(
        "Cell: the reference's label, then the compared source's",
        CELLS,
        key=urlstate.bind(
            key(dataset, "cell", level),
            None if selection.renewed else wanted.cell,
            [*CELLS, None],
            reseed=selection.renewed,
        ),
        format_func=lambda c: md_escape(f"{reference} {c.split(',')[0]} · {source} {c.split(',')[1]} ({counts[c]:,})"),
    )
    url = {
        "pair": unless(source, next(iter(results))),
        "dsplit": unless(split, default_split),
        "cell": cell,
    }
    if cell is None:
        st.caption("Choose a cell to list its units, each with a link that opens it in Explore.")
        return url
    threshold = pair.threshold.value if pair.threshold else None
    examples = compare_data.examples(
        ctx.db_path,
        ctx.version,
        dataset,
        level,
        reference,
        source,
        str(selection.label_mapping),
        cell,
        split,
        threshold,
    )
    confusion.show_examples(examples, dataset, level, reference, result.pairs[0].source)
    return url


def how_computed(dataset: str) -> None:
    """A closed expander with the metric definitions and how units, levels and splits are counted,
    drawn only while it is open (opening it reruns the page)."""
    box = st.expander("How the numbers are computed", key=key(dataset, "how"), on_change="rerun")
    if box.open:
        box.markdown(
            confusion.definitions() + "\n"
            "- **Units compared**: those both sources label at this level and the mapping keeps.\n"
            "- **Summary level without summary labels**: aggregated as TofuEval does: unfaithful if any "
            "sentence (or claim) is unfaithful, faithful if all are.\n"
            "- **Splits**: *all* pools every unit; each split is also reported on its own. Score sources are "
            "reported on the split their threshold is tuned on and on the splits it is applied to."
        )
