"""The Compare page's controls: what to compare (level, reference, sources), the label mapping,
rows per topic type, and score sources' threshold sliders; plus the comparison they ask for.

Every widget is bound to the page's URL state (`urlstate.bind`); `Selection.state` and the
thresholds the sliders hold are what the page writes back.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components import compare_data, confusion, urlstate
from components.markdown import md_escape
from components.shell import PageContext
from faithlens.analysis import mapping
from faithlens.analysis.metrics import GRID_SIZE
from faithlens.analysis.thresholds import Thresholds
from faithlens.views.compare import ALL, CompareResult, SourceChoice, Threshold
from faithlens.views.states import CompareState

CHOICE_TEXT = {
    mapping.UNFAITHFUL: "counts as unfaithful",
    mapping.FAITHFUL: "counts as faithful",
    mapping.EXCLUDE: "is left out",
}
IN_BETWEEN = set(mapping.DEFAULT.choices())


def key(dataset: str, *parts: object) -> str:
    """Session-state key of a Compare widget."""
    return urlstate.key(urlstate.COMPARE, dataset, *parts)


@dataclass(frozen=True)
class Selection:
    """What the controls above the tables chose; `state` is the page's URL state so far."""

    state: CompareState
    sources: list[str]
    by_topic: bool
    """Rows per topic type: asked for, and the dataset has topic types."""
    nothing_to_compare: str | None = None
    """Why no table can be drawn (Markdown), when none can."""

    @property
    def dataset(self) -> str:
        return self.state.dataset

    @property
    def level(self) -> str:
        return self.state.level

    @property
    def reference(self) -> str:
        return self.state.reference

    @property
    def label_mapping(self) -> mapping.Mapping:
        return self.state.mapping

    @property
    def threshold_context(self) -> tuple[str, ...]:
        """Part of each threshold slider's key: any other choice makes it a new slider, back at its tuned value."""
        return (self.level, self.reference, str(self.label_mapping))


def pick(
    ctx: PageContext, wanted: CompareState, choices: dict[str, dict[str, SourceChoice]], has_topics: bool
) -> Selection:
    """Level, reference, compared sources, label mapping and (when the dataset has topic types)
    rows per topic type. Stops short, with `nothing_to_compare` set, when the reference is the
    level's only source or no compared source is chosen."""
    dataset = wanted.dataset
    levels = list(choices)
    level_start = wanted.level if wanted.level in levels else levels[0]
    level = st.radio("Level", levels, horizontal=True, key=urlstate.bind(key(dataset, "level"), level_start, levels))
    at_level = choices[level]
    left, right = st.columns([1, 2])
    reference = _pick_reference(left, wanted, level, at_level)
    state = CompareState(dataset=dataset, level=level, reference=reference)
    options = [name for name in at_level if name != reference]
    if not options:
        note = (
            f"Only {md_escape(reference)} labels the {level} level of {md_escape(dataset)}, so there is nothing to "
            "compare it with. Pick another level, or import another label source."
        )
        return Selection(state, [], False, note)
    start = [name for name in wanted.sources if name in options] or options
    sources = right.multiselect(
        "Compared sources (columns)",
        options,
        key=urlstate.bind(key(dataset, "sources", level, reference), start, options),
    )
    used = compare_data.values_used(ctx.db_path, ctx.version, dataset, level, (reference, *sources))
    state = replace(
        state,
        sources=tuple(sources) if sources != options else (),
        mapping=_pick_mapping(dataset, wanted.mapping, used),
    )
    if has_topics:
        topics = st.toggle(
            "Rows per topic type (main / marginal)", key=urlstate.bind(key(dataset, "topics"), wanted.topics)
        )
        state = replace(state, topics=topics)
    by_topic = has_topics and state.topics
    return Selection(state, sources, by_topic, None if sources else "Choose at least one source to compare.")


def _pick_reference(column: DeltaGenerator, wanted: CompareState, level: str, at_level: dict[str, SourceChoice]) -> str:
    """The rows' source: any label source at this level (score sources are only compared)."""
    references = [name for name, choice in at_level.items() if choice.mode != "score"]
    start = wanted.reference if wanted.reference in references else references[0]
    reference = column.selectbox(
        "Reference (rows)",
        references,
        key=urlstate.bind(key(wanted.dataset, "reference", level), start, references),
        help="Usually the dataset's gold labels.",
    )
    if at_level[reference].mode == "derived":
        column.caption(md_escape(at_level[reference].describe_mode()))
    return reference


def _pick_mapping(dataset: str, wanted: mapping.Mapping, values: dict[str, dict[str, int]]) -> mapping.Mapping:
    """Three choices (partial, unverifiable, ambiguous), the vocabulary each source uses, and the
    resulting mapping in plain English."""
    used = {value for counts in values.values() for value in counts} & IN_BETWEEN
    keys = {
        name: urlstate.bind(key(dataset, "map", name), value, mapping.CHOICES)
        for name, value in wanted.choices().items()
    }
    current = mapping.Mapping(**{name: st.session_state[widget] for name, widget in keys.items()})
    with st.expander(f"Label mapping to binary: {current}", expanded=bool(used)):
        for source, counts in values.items():
            st.text(f"{source} uses: " + ", ".join(f"{value} {n:,}" for value, n in counts.items()))
        if not used:
            st.caption("These sources use only faithful and unfaithful here, so the mapping changes nothing.")
        for column, (name, widget) in zip(st.columns(3), keys.items(), strict=True):
            column.selectbox(
                f"{name} {'(used here)' if name in used else '(not used here)'}",
                mapping.CHOICES,
                format_func=CHOICE_TEXT.get,
                key=widget,
            )
        st.markdown("\n".join(f"- {md_escape(line)}" for line in current.describe()))
        st.caption(
            "FABLES' auto-rater experiments leave partial and unverifiable claims out (partial=exclude); "
            "counting partial as unfaithful is the stricter reading."
        )
    return current


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


def compute(ctx: PageContext, selection: Selection, wanted: Thresholds) -> tuple[dict[str, CompareResult], Thresholds]:
    """Each compared source against the reference. A score source is first computed at its tuned
    threshold, which sets its slider's range and reset value; the "Thresholds" section then draws
    the sliders (starting from `wanted`, the URL's), and a source whose slider left the tuned value
    is computed again at the slider's value.

    Returns the results by source and the thresholds that differ from the tuned ones (for the URL).
    """
    results = {name: _pair(ctx, selection, name, None) for name in selection.sources}
    tuned = {name: r.pairs[0].threshold for name, r in results.items() if r.pairs[0].threshold is not None}
    if not tuned:
        return results, Thresholds()
    st.subheader("Thresholds")
    moved: dict[str, float] = {}
    for name, threshold in tuned.items():
        st.markdown(f"**{md_escape(name)}**")
        value = _slider(selection, name, threshold, wanted.get(name, threshold.value))
        if abs(value - threshold.value) > 1e-9:
            moved[name] = value
            results[name] = _pair(ctx, selection, name, value)
    return results, Thresholds.of(moved)


def _slider_key(selection: Selection, source: str) -> str:
    return key(selection.dataset, "threshold", *selection.threshold_context, source)


def _reset(widget: str, value: float) -> None:
    st.session_state[widget] = value


def _slider(selection: Selection, source: str, tuned: Threshold, start: float) -> float:
    """One score source's threshold slider with a reset button; returns the value it holds."""
    widget = urlstate.bind(_slider_key(selection, source), min(max(start, tuned.low), tuned.high))
    left, right = st.columns([5, 1], vertical_alignment="bottom")
    value = left.slider(
        "Threshold: faithful when the score is above it",
        tuned.low,
        tuned.high,
        step=(tuned.high - tuned.low) / (GRID_SIZE - 1),
        format="%.4f",
        key=widget,
        help=confusion.DEFINITIONS["threshold"],
    )
    right.button("Reset to tuned", key=f"{widget}.reset", on_click=_reset, args=(widget, tuned.value))
    in_sample = " (no val/dev split: tuned and reported on all units, so in-sample)" if tuned.tuned_on == ALL else ""
    st.caption(
        f"Tuned on the {tuned.tuned_on} split{in_sample}: {tuned.value:.4f}, the first of {GRID_SIZE} evenly "
        f"spaced thresholds in [{tuned.low:g}, {tuned.high:g}] that reaches the highest balanced accuracy."
    )
    return float(value)
