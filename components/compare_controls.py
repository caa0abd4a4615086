"""The Compare page's controls: what to compare (level, reference, sources), the label mapping,
rows per topic type, and score sources' threshold sliders; plus the comparison those choices ask for.

Every widget starts from the URL (`compare_state`); `Selection.url` and `compute`'s thresholds
value are what the page writes back to it.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components import compare_data, confusion
from components.compare_state import UrlState, from_url, seed, url_by_topic, url_mapping, url_sources, url_thresholds
from components.markdown import md_escape
from components.shell import PageContext
from faithlens import mapping
from faithlens.compare import ALL, CompareResult, SourceChoice, Threshold
from faithlens.metrics import GRID_SIZE

CHOICE_TEXT = {
    mapping.UNFAITHFUL: "counts as unfaithful",
    mapping.FAITHFUL: "counts as faithful",
    mapping.EXCLUDE: "is left out",
}
IN_BETWEEN = set(mapping.DEFAULT.choices())


@dataclass(frozen=True)
class Selection:
    """What the controls above the tables chose, and their part of the URL."""

    dataset: str
    level: str
    reference: str
    sources: list[str]
    label_mapping: mapping.Mapping
    by_topic: bool
    url: UrlState
    nothing_to_compare: str | None = None
    """Why no table can be drawn (Markdown), when none can."""

    @property
    def threshold_context(self) -> str:
        """Part of each threshold slider's key: any other choice makes it a new slider, back at its tuned value."""
        return f"{self.dataset}|{self.level}|{self.reference}|{self.label_mapping}"


def pick(ctx: PageContext, dataset: str, choices: dict[str, dict[str, SourceChoice]], has_topics: bool) -> Selection:
    """Level, reference, compared sources, label mapping and (when the dataset has topic types)
    rows per topic type. Stops short, with `nothing_to_compare` set, when the reference is the
    level's only source or no compared source is chosen."""
    levels = list(choices)
    level_key = f"cmp_level|{dataset}"
    seed(level_key, from_url("level", levels, levels[0]))
    level = st.radio("Level", levels, horizontal=True, key=level_key)
    at_level = choices[level]
    left, right = st.columns([1, 2])
    reference = _pick_reference(left, dataset, level, at_level)
    url: UrlState = {"level": level, "reference": reference}
    options = [name for name in at_level if name != reference]
    if not options:
        note = (
            f"Only {md_escape(reference)} labels the {level} level of {md_escape(dataset)}, so there is nothing to "
            "compare it with. Pick another level, or import another label source."
        )
        return Selection(dataset, level, reference, [], mapping.DEFAULT, False, url, note)
    sources_key = f"cmp_sources|{dataset}|{level}|{reference}"
    seed(sources_key, url_sources(options) or options)
    sources = right.multiselect("Compared sources (columns)", options, key=sources_key)
    url["sources"] = ",".join(sources) if sources != options else None
    chosen = _pick_mapping(compare_data.values_used(ctx.db_path, ctx.version, dataset, level, (reference, *sources)))
    url["mapping"] = None if chosen == mapping.DEFAULT else str(chosen)
    by_topic = False
    if has_topics:
        topic_key = f"cmp_topics|{dataset}"
        seed(topic_key, url_by_topic())
        by_topic = st.toggle("Rows per topic type (main / marginal)", key=topic_key)
        url["topics"] = None if by_topic else "0"
    note = None if sources else "Choose at least one source to compare."
    return Selection(dataset, level, reference, sources, chosen, by_topic, url, note)


def _pick_reference(column: DeltaGenerator, dataset: str, level: str, at_level: dict[str, SourceChoice]) -> str:
    """The rows' source: any label source at this level (score sources are only compared)."""
    references = [name for name, choice in at_level.items() if choice.mode != "score"]
    ref_key = f"cmp_ref|{dataset}|{level}"
    seed(ref_key, from_url("reference", references, references[0]))
    reference = column.selectbox("Reference (rows)", references, key=ref_key, help="Usually the dataset's gold labels.")
    if at_level[reference].mode == "derived":
        column.caption(md_escape(at_level[reference].describe_mode()))
    return reference


def _pick_mapping(values: dict[str, dict[str, int]]) -> mapping.Mapping:
    """Three choices (partial, unverifiable, ambiguous), the vocabulary each source uses, and the
    resulting mapping in plain English."""
    used = {value for counts in values.values() for value in counts} & IN_BETWEEN
    keys = {name: f"cmp_map_{name}" for name in mapping.DEFAULT.choices()}
    for name, value in url_mapping().choices().items():
        seed(keys[name], value)
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


def compute(
    ctx: PageContext, selection: Selection
) -> tuple[dict[str, CompareResult], dict[str, Threshold], str | None]:
    """Each compared source against the reference, a score source at its slider's value (the tuned
    threshold unless the URL or the slider moved it).

    Returns the results by source, each score source's tuned threshold, and the URL's `thresholds`
    value (only the moved ones; None when none moved).
    """
    wanted = url_thresholds()
    results: dict[str, CompareResult] = {}
    tuned: dict[str, Threshold] = {}
    moved: list[str] = []
    for name in selection.sources:
        results[name] = _pair(ctx, selection, name, None)
        threshold = results[name].pairs[0].threshold
        if threshold is None:
            continue
        tuned[name] = threshold
        value = _threshold_value(name, threshold, selection.threshold_context, wanted)
        if abs(value - threshold.value) > 1e-9:
            moved.append(f"{name}={value:.6g}")
            results[name] = _pair(ctx, selection, name, value)
    return results, tuned, ",".join(moved) or None


def _pair(ctx: PageContext, selection: Selection, source: str, threshold: float | None) -> CompareResult:
    return compare_data.pair(
        ctx.db_path,
        ctx.version,
        selection.dataset,
        selection.level,
        selection.reference,
        source,
        str(selection.label_mapping),
        threshold,
        selection.by_topic,
    )


def _slider_key(context: str, source: str) -> str:
    return f"cmp_thr|{context}|{source}"


def _threshold_value(source: str, tuned: Threshold, context: str, wanted: dict[str, float]) -> float:
    """The value of a score source's slider (which is drawn later, by `threshold_sliders`)."""
    key = _slider_key(context, source)
    seed(key, min(max(wanted.get(source, tuned.value), tuned.low), tuned.high))
    return float(st.session_state[key])


def threshold_sliders(tuned: dict[str, Threshold], context: str) -> None:
    """A "Thresholds" section with one slider per score source; nothing when there is no score source."""
    if not tuned:
        return
    st.subheader("Thresholds")
    for name, threshold in tuned.items():
        st.markdown(f"**{md_escape(name)}**")
        _slider(name, threshold, context)


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
