"""Compare: confusion matrices and agreement metrics between a reference and other label sources.

Every choice lives in the URL (level, reference, sources, mapping, topics, view, thresholds, pair,
dsplit, cell). The numbers come from `faithlens.compare`, the same core as
`python -m faithlens metrics`; each compared source is computed (and cached) on its own, so moving
one score source's threshold slider recomputes only that source.
"""

from __future__ import annotations

import streamlit as st

from components import confusion, shell
from components.markdown import md_escape
from faithlens import compare, mapping
from faithlens.compare import ALL, CompareResult, Example, PairResult, SourceChoice, Threshold
from faithlens.errors import FaithLensError
from faithlens.metrics import CLASSES, GRID_SIZE

ctx = shell.page_setup("Compare", icon=":material/compare_arrows:")

CHOICE_TEXT = {
    mapping.UNFAITHFUL: "counts as unfaithful",
    mapping.FAITHFUL: "counts as faithful",
    mapping.EXCLUDE: "is left out",
}
CELLS = [f"{ref},{cmp}" for ref in CLASSES for cmp in CLASSES]
IN_BETWEEN = set(mapping.DEFAULT.choices())


@st.cache_data(show_spinner=False, max_entries=32)
def _choices(db_path: str, version: str, dataset: str) -> tuple[dict[str, dict[str, SourceChoice]], bool]:
    with shell.root_connection(db_path).cursor() as cur:
        return compare.available_sources(cur, dataset), compare.has_topic_types(cur, dataset)


@st.cache_data(show_spinner=False, max_entries=64)
def _values_used(
    db_path: str, version: str, dataset: str, level: str, sources: tuple[str, ...]
) -> dict[str, dict[str, int]]:
    with shell.root_connection(db_path).cursor() as cur:
        return compare.values_used(cur, dataset, level, list(sources))


@st.cache_data(show_spinner=False, max_entries=1024)
def _pair(
    db_path: str,
    version: str,
    dataset: str,
    level: str,
    reference: str,
    source: str,
    mapping_text: str,
    threshold: float | None,
    by_topic: bool,
) -> CompareResult:
    thresholds = None if threshold is None else {source: threshold}
    with shell.root_connection(db_path).cursor() as cur:
        return compare.compare(
            cur, dataset, level, reference, [source], mapping.parse(mapping_text), thresholds, by_topic
        )


@st.cache_data(show_spinner=False, max_entries=64)
def _examples(
    db_path: str,
    version: str,
    dataset: str,
    level: str,
    reference: str,
    source: str,
    mapping_text: str,
    cell: str,
    split: str,
    threshold: float | None,
) -> list[Example]:
    reference_value, compared_value = cell.split(",")
    with shell.root_connection(db_path).cursor() as cur:
        return compare.drill_down(
            cur,
            dataset,
            level,
            reference,
            source,
            reference_value,
            compared_value,
            mapping.parse(mapping_text),
            split,
            ALL,
            threshold,
        )


# --- state: widgets start from the URL, and the URL follows the widgets -------------------------------


def _seed(key: str, value: object) -> None:
    """A widget's first appearance: start it from the URL (or the default)."""
    if key not in st.session_state:
        st.session_state[key] = value


def _from_url(name: str, options: list[str], default: str | None) -> str | None:
    value = st.query_params.get(name)
    return value if value in options else default


def _url_mapping() -> mapping.Mapping:
    try:
        return mapping.parse(st.query_params.get("mapping"))
    except FaithLensError:
        return mapping.DEFAULT


def _url_thresholds() -> dict[str, float]:
    """`thresholds=unieval=0.5,alignscore-roberta-large=0.7` -> {source: value}; bad items are ignored."""
    out = {}
    for item in (st.query_params.get("thresholds") or "").split(","):
        source, _, value = item.rpartition("=")
        try:
            out[source] = float(value)
        except ValueError:
            continue
    return out


def _write_url(state: dict[str, str | None]) -> None:
    for name, value in state.items():
        if value in (None, ""):
            if name in st.query_params:
                del st.query_params[name]
        elif st.query_params.get(name) != value:
            st.query_params[name] = value


# --- controls ---------------------------------------------------------------------------------------


def _pick_mapping(values: dict[str, dict[str, int]]) -> mapping.Mapping:
    """Three choices (partial, unverifiable, ambiguous), the vocabulary each source uses, and the
    resulting mapping in plain English."""
    used = {value for counts in values.values() for value in counts} & IN_BETWEEN
    keys = {name: f"cmp_map_{name}" for name in mapping.DEFAULT.choices()}
    for name, value in _url_mapping().choices().items():
        _seed(keys[name], value)
    current = mapping.Mapping(**{name: st.session_state[key] for name, key in keys.items()})
    with st.expander(f"Label mapping to binary: {current}", expanded=bool(used)):
        for source, counts in values.items():
            st.text(f"{source} uses: " + ", ".join(f"{value} {n:,}" for value, n in counts.items()))
        if not used:
            st.caption("These sources use only faithful and unfaithful here, so the mapping changes nothing.")
        for column, (name, key) in zip(st.columns(3), keys.items(), strict=True):
            column.selectbox(
                f"{name} {'(used here)' if name in used else '(not used here)'}",
                mapping.CHOICES,
                format_func=CHOICE_TEXT.get,
                key=key,
            )
        st.markdown("\n".join(f"- {md_escape(line)}" for line in current.describe()))
        st.caption(
            "FABLES' auto-rater experiments leave partial and unverifiable claims out (partial=exclude); "
            "counting partial as unfaithful is the stricter reading."
        )
    return current


def _slider_key(context: str, source: str) -> str:
    return f"cmp_thr|{context}|{source}"


def _threshold_value(source: str, tuned: Threshold, context: str, wanted: dict[str, float]) -> float:
    """The value of a score source's slider (which is drawn later, in its section)."""
    key = _slider_key(context, source)
    _seed(key, min(max(wanted.get(source, tuned.value), tuned.low), tuned.high))
    return float(st.session_state[key])


def _reset(key: str, value: float) -> None:
    st.session_state[key] = value


def _slider(source: str, tuned: Threshold, context: str) -> None:
    key = _slider_key(context, source)
    left, right = st.columns([5, 1], vertical_alignment="bottom")
    left.slider(
        "Threshold: faithful when the score is above it",
        tuned.low,
        tuned.high,
        step=(tuned.high - tuned.low) / (GRID_SIZE - 1),
        format="%.4f",
        key=key,
        help=confusion.DEFINITIONS["threshold"],
    )
    right.button("Reset to tuned", key=f"reset|{key}", on_click=_reset, args=(key, tuned.value))
    in_sample = " (no val/dev split: tuned and reported on all units, so in-sample)" if tuned.tuned_on == ALL else ""
    st.caption(
        f"Tuned on the {tuned.tuned_on} split{in_sample}: {tuned.value:.4f}, the first of {GRID_SIZE} evenly "
        f"spaced thresholds in [{tuned.low:g}, {tuned.high:g}] that reaches the highest balanced accuracy."
    )


# --- sections ---------------------------------------------------------------------------------------

GRID_COLUMNS = 3


def _coverage(result: CompareResult, pair: PairResult) -> str:
    left_out = f", of which {pair.excluded:,} are left out by the mapping" if pair.excluded else ""
    return (
        f"{pair.source.name}: {pair.source.describe_mode()}. {result.reference.name} labels "
        f"{result.reference_labelled:,} units here and {pair.source.name} {pair.labelled:,}; "
        f"{pair.both:,} are labelled by both{left_out}."
    )


def _matrices(results: dict[str, CompareResult], view: str) -> None:
    """One heatmap per compared source for the chosen split (a score source without an 'all' row
    shows each split it is reported on)."""
    shown = []
    for result in results.values():
        pair = result.pairs[0]
        rows = [r for r in pair.rows if r.group == ALL and r.split == view]
        if not rows and view == ALL:
            rows = [r for r in pair.rows if r.group == ALL]
        shown += [(result.reference.name, row) for row in rows]
    if not shown:
        st.info(f"No compared source is reported on the {view} split.")
    for start in range(0, len(shown), GRID_COLUMNS):
        for column, (reference, row) in zip(
            st.columns(GRID_COLUMNS), shown[start : start + GRID_COLUMNS], strict=False
        ):
            with column:
                split = "all units" if row.split == ALL else f"{row.split} split"
                confusion.show_heatmap(row, reference, f"{row.source} · {split}", f"hm|{row.source}|{row.split}")


def _detail(results: dict[str, CompareResult], dataset: str, level: str, mapping_text: str, view: str) -> dict:
    """One pair in detail: its coverage, every metric row, and the units of one chosen cell."""
    st.subheader("One pair in detail")
    names = list(results)
    pair_key = f"cmp_pair|{dataset}|{level}"
    _seed(pair_key, _from_url("pair", names, names[0]))
    source = st.selectbox("Compared source", names, key=pair_key)
    result = results[source]
    reference, pair = result.reference.name, result.pairs[0]
    st.caption(md_escape(_coverage(result, pair)))
    confusion.show_metrics(list(pair.rows), with_source=False, key="tbl|pair")
    splits = list(dict.fromkeys(r.split for r in pair.rows))
    split_key = f"cmp_dsplit|{dataset}|{level}|{source}"
    _seed(split_key, _from_url("dsplit", splits, view if view in splits else splits[0]))
    split = st.radio("Split", splits, horizontal=True, key=split_key, format_func=md_escape)
    matrix = pair.row(split).confusion
    counts = {f"{r},{c}": matrix[i][j] for i, r in enumerate(CLASSES) for j, c in enumerate(CLASSES)}
    cell_key = f"cmp_cell|{dataset}|{level}"
    _seed(cell_key, _from_url("cell", CELLS, None))
    cell = st.segmented_control(
        "Cell: the reference's label, then the compared source's",
        CELLS,
        key=cell_key,
        format_func=lambda c: md_escape(f"{reference} {c.split(',')[0]} · {source} {c.split(',')[1]} ({counts[c]:,})"),
    )
    state = {"pair": source, "dsplit": split, "cell": cell}
    if cell is None:
        st.caption("Choose a cell to list its units, each with a link that opens it in Explore.")
        return state
    threshold = pair.threshold.value if pair.threshold else None
    examples = _examples(
        ctx.db_path, ctx.version, dataset, level, reference, source, mapping_text, cell, split, threshold
    )
    confusion.show_examples(examples, dataset, level, reference, source)
    return state


def _help() -> None:
    with st.expander("How the numbers are computed"):
        confusion.show_definitions()
        st.markdown(
            "- **Units compared**: those both sources label at this level and the mapping keeps.\n"
            "- **Summary level without summary labels**: aggregated as TofuEval does: unfaithful if any "
            "sentence (or claim) is unfaithful, faithful if all are.\n"
            "- **Splits**: *all* pools every unit; each split is also reported on its own. Score sources are "
            "reported on the split their threshold is tuned on and on the splits it is applied to."
        )


def main() -> None:
    st.title("Compare")
    st.caption(
        "How far do two label sources agree? The reference is on the rows, each compared source on the columns. "
        "The numbers follow the StorySumm paper's definitions and match `python -m faithlens metrics`."
    )
    if ctx.dataset is None:
        st.stop()
    dataset = ctx.dataset
    choices, has_topics = _choices(ctx.db_path, ctx.version, dataset)
    if not choices:
        st.info("This dataset has no labels yet.")
        st.stop()
    levels = list(choices)
    level_key = f"cmp_level|{dataset}"
    _seed(level_key, _from_url("level", levels, levels[0]))
    level = st.radio("Level", levels, horizontal=True, key=level_key)
    at_level = choices[level]
    references = [name for name, choice in at_level.items() if choice.mode != "score"]
    ref_key = f"cmp_ref|{dataset}|{level}"
    _seed(ref_key, _from_url("reference", references, references[0]))
    left, right = st.columns([1, 2])
    reference = left.selectbox("Reference (rows)", references, key=ref_key, help="Usually the dataset's gold labels.")
    state: dict[str, str | None] = {"level": level, "reference": reference}
    if at_level[reference].mode == "derived":
        left.caption(md_escape(at_level[reference].describe_mode()))
    options = [name for name in at_level if name != reference]
    if not options:
        st.info(
            f"Only {md_escape(reference)} labels the {level} level of {md_escape(dataset)}, so there is nothing to "
            "compare it with. Pick another level, or import another label source."
        )
        _write_url(state)
        st.stop()
    wanted_sources = [name for name in (st.query_params.get("sources") or "").split(",") if name in options]
    sources_key = f"cmp_sources|{dataset}|{level}|{reference}"
    _seed(sources_key, wanted_sources or options)
    sources = right.multiselect("Compared sources (columns)", options, key=sources_key)
    state["sources"] = ",".join(sources) if sources != options else None
    chosen = _pick_mapping(_values_used(ctx.db_path, ctx.version, dataset, level, (reference, *sources)))
    state["mapping"] = None if chosen == mapping.DEFAULT else str(chosen)
    by_topic = False
    if has_topics:
        topic_key = f"cmp_topics|{dataset}"
        _seed(topic_key, st.query_params.get("topics") != "0")
        by_topic = st.toggle("Rows per topic type (main / marginal)", key=topic_key)
        state["topics"] = None if by_topic else "0"
    if not sources:
        st.info("Choose at least one source to compare.")
        _write_url(state)
        st.stop()

    context = f"{dataset}|{level}|{reference}|{chosen}"
    wanted = _url_thresholds()
    results: dict[str, CompareResult] = {}
    tuned: dict[str, Threshold] = {}
    moved: list[str] = []
    for name in sources:
        results[name] = _pair(ctx.db_path, ctx.version, dataset, level, reference, name, str(chosen), None, by_topic)
        threshold = results[name].pairs[0].threshold
        if threshold is None:
            continue
        tuned[name] = threshold
        value = _threshold_value(name, threshold, context, wanted)
        if abs(value - threshold.value) > 1e-9:
            moved.append(f"{name}={value:.6g}")
            results[name] = _pair(
                ctx.db_path, ctx.version, dataset, level, reference, name, str(chosen), value, by_topic
            )
    state["thresholds"] = ",".join(moved) or None

    st.subheader(md_escape(f"Agreement with {reference}"))
    confusion.show_metrics([r for res in results.values() for r in res.pairs[0].rows], with_source=True, key="tbl|all")
    if tuned:
        st.caption(
            "Score sources have rows for the split their threshold is tuned on and the splits it is applied to "
            "(StorySumm: val / test); label sources for all units and for each split."
        )
        st.subheader("Thresholds")
        for name, threshold in tuned.items():
            st.markdown(f"**{md_escape(name)}**")
            _slider(name, threshold, context)
    st.subheader("Confusion matrices")
    views = [ALL, *next(iter(results.values())).splits]
    view_key = f"cmp_view|{dataset}"
    _seed(view_key, _from_url("view", views, ALL))
    view = st.radio(
        "Units",
        views,
        horizontal=True,
        key=view_key,
        format_func=lambda v: "all units" if v == ALL else md_escape(f"{v} split"),
    )
    state["view"] = None if view == ALL else view
    _matrices(results, view)
    state.update(_detail(results, dataset, level, str(chosen), view))
    _help()
    _write_url(state)


with shell.guard():
    main()
