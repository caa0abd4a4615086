"""The Compare page's controls: what to compare (level, reference, sources), the label mapping,
rows per topic type, and score sources' threshold sliders; plus the comparison they ask for.

Every widget is bound to the page's URL state (`urlstate.bind`); `Selection.state` and the
thresholds the sliders hold are what the page writes back.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components import confusion, urlstate
from components.compare import data as compare_data
from components.markdown import md_escape
from components.shell import PageContext
from faithlens.analysis import mapping
from faithlens.analysis.metrics import GRID_SIZE
from faithlens.analysis.thresholds import GRID, TUNINGS, Thresholds
from faithlens.querystate import ignored
from faithlens.views.compare import ALL, CompareResult, SourceChoice, Threshold
from faithlens.views.states import CompareState
from faithlens.vocab import GOLD

CHOICE_TEXT = {
    mapping.UNFAITHFUL: "counts as unfaithful",
    mapping.FAITHFUL: "counts as faithful",
    mapping.EXCLUDE: "is left out",
}
IN_BETWEEN = set(mapping.DEFAULT.choices())
REFERENCE_PX = 300
"""Width of the reference picker; the compared sources take the rest of its row."""
TUNING_CHOICES = {"grid": "150-point grid (release notebook)", "cutpoints": "Cut points (exhaustive)"}
FINE_STEPS = 10_000
"""A cut-point threshold lies between two scores, off the grid: its slider moves in finer steps."""


def key(dataset: str, *parts: object) -> str:
    """Session-state key of a Compare widget."""
    return urlstate.key(urlstate.COMPARE, dataset, *parts)


@dataclass(frozen=True)
class Selection:
    """What the controls above the tables chose, resolved (`level`, `reference`, `sources`), and
    `url`: the same choices as the URL should say them, where a value the page would pick by
    itself (the first level, the default reference, every source) stays out."""

    dataset: str
    level: str
    reference: str
    sources: list[str]
    label_mapping: mapping.Mapping
    url: CompareState
    by_topic: bool
    """Rows per topic type: asked for, and the dataset has topic types."""
    renewed: bool
    """The user just changed the level or reference: controls that depended on them start afresh."""
    nothing_to_compare: str | None = None
    """Why no table can be drawn (Markdown), when none can."""
    tuning: str = GRID
    """The score sources' threshold search (`thresholds.TUNINGS`)."""
    retuned: bool = False
    """The user just changed the threshold search: moved thresholds start afresh."""

    @property
    def threshold_context(self) -> tuple[str, ...]:
        """Part of each threshold slider's key: any other choice makes it a new slider, back at its tuned value."""
        return (self.level, self.reference, str(self.label_mapping), self.tuning)


def start_value(name: str, wanted: str | None, options: list[str], default: str, notes: list[str]) -> str:
    """What a control starts at: the URL's value when it is one of `options`, else `default` (with
    a note when the URL named something this dataset lacks)."""
    if wanted is None or wanted in options:
        return wanted or default
    notes.append(ignored(name, wanted, f"expected one of {', '.join(options)}"))
    return default


def unless(value: object, default: object) -> object:
    """`value` for the URL: None when it is what the page would pick by itself."""
    return None if value == default else value


def pick(
    ctx: PageContext,
    wanted: CompareState,
    choices: dict[str, dict[str, SourceChoice]],
    has_topics: bool,
    notes: list[str],
) -> Selection:
    """Level, reference, compared sources, label mapping and (when the dataset has topic types)
    rows per topic type. Stops short, with `nothing_to_compare` set, when the reference is the
    level's only source or no compared source is chosen. Link values the dataset lacks add a note."""
    dataset = wanted.dataset
    levels = list(choices)
    level_start = start_value("level", wanted.level, levels, levels[0], notes)
    level = st.radio("Level", levels, horizontal=True, key=urlstate.bind(key(dataset, "level"), level_start, levels))
    if level != level_start:
        wanted = CompareState(dataset=dataset, mapping=wanted.mapping, topics=wanted.topics)
    at_level = choices[level]
    row = st.container(horizontal=True)
    reference_place = row.container(width=REFERENCE_PX)
    reference, default_reference, moved = _pick_reference(
        reference_place, wanted, level, at_level, notes, level != level_start
    )
    renewed = level != level_start or moved
    url = CompareState(dataset=dataset, level=unless(level, levels[0]), reference=unless(reference, default_reference))
    options = [name for name in at_level if name != reference]
    if not options:
        note = (
            f"Only {md_escape(reference)} labels the {level} level of {md_escape(dataset)}, so there is nothing to "
            "compare it with. Pick another level, or import another label source."
        )
        url = replace(url, tuning=wanted.tuning)
        return Selection(dataset, level, reference, [], wanted.mapping, url, False, renewed, note, wanted.tuning)
    notes += [
        ignored("sources", name, f"not a {level}-level source here") for name in wanted.sources if name not in at_level
    ]
    start = [name for name in wanted.sources if name in options] or options
    sources = row.multiselect(
        "Compared sources (columns)",
        options,
        key=urlstate.bind(key(dataset, "sources", level, reference), start, options, reseed=renewed),
    )
    used = compare_data.values_used(ctx.db_path, ctx.version, dataset, level, (reference, *sources))
    label_mapping = _pick_mapping(dataset, wanted.mapping, used)
    tuning = st.session_state[_kept(urlstate.bind(key(dataset, "tuning"), wanted.tuning, TUNINGS))]
    url = replace(url, sources=tuple(sources) if sources != options else (), mapping=label_mapping, tuning=tuning)
    by_topic = False
    if has_topics:
        topics = st.toggle(
            "Rows per topic type and corpus (TofuEval)", key=urlstate.bind(key(dataset, "topics"), wanted.topics)
        )
        url, by_topic = replace(url, topics=topics), topics
    renewed = renewed or label_mapping != wanted.mapping
    missing = None if sources else "Choose at least one source to compare."
    retuned = tuning != wanted.tuning
    return Selection(
        dataset, level, reference, sources, label_mapping, url, by_topic, renewed, missing, tuning, retuned
    )


def _pick_reference(
    column: DeltaGenerator,
    wanted: CompareState,
    level: str,
    at_level: dict[str, SourceChoice],
    notes: list[str],
    renew: bool,
) -> tuple[str, str, bool]:
    """The rows' source: any label source at this level (score sources are only compared); gold
    unless the URL names another. Returns the reference, the default one, and whether the user
    just chose another than the URL's."""
    references = [name for name, choice in at_level.items() if choice.mode != "score"]
    default = GOLD if GOLD in references else references[0]
    start = start_value("reference", wanted.reference, references, default, notes)
    reference = column.selectbox(
        "Reference (rows)",
        references,
        key=urlstate.bind(key(wanted.dataset, "reference", level), start, references, reseed=renew),
        help="Usually the dataset's gold labels.",
    )
    if at_level[reference].mode == "derived":
        column.caption(md_escape(at_level[reference].describe_mode()))
    return reference, default, reference != start


def _pick_mapping(dataset: str, wanted: mapping.Mapping, values: dict[str, dict[str, int]]) -> mapping.Mapping:
    """Three choices (partial, unverifiable, ambiguous), the vocabulary each source uses, and the
    resulting mapping in plain English."""
    used = {value for counts in values.values() for value in counts} & IN_BETWEEN
    keys = {
        name: _kept(urlstate.bind(key(dataset, "map", name), value, mapping.CHOICES))
        for name, value in wanted.choices().items()
    }
    current = mapping.Mapping(**{name: st.session_state[widget] for name, widget in keys.items()})
    box = _expander(f"Label mapping to binary: {current}", key(dataset, "mapping"), expanded=bool(used))
    if not box.open:
        return current
    with box:
        uses = [
            f"{source} uses: " + ", ".join(f"{v} {n:,}" for v, n in counts.items()) for source, counts in values.items()
        ]
        st.text("\n".join(uses))
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


def _kept(widget: str) -> str:
    """`widget` keeps its value through runs that do not draw it (its expander is closed): Streamlit
    drops a widget's value after such a run unless the value is set again before it is drawn."""
    if widget in st.session_state:
        st.session_state[widget] = st.session_state[widget]
    return widget


def _expander(label: str, widget: str, expanded: bool):
    """An expander that draws its content only while open (opening or closing it reruns the page), so
    its widgets are not sent on every run. A new label or default makes it a new widget: it stays
    open or closed as the user left it."""
    return st.expander(label, expanded=expanded, key=_kept(widget), on_change="rerun")


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
        selection.tuning,
    )


def compute(
    ctx: PageContext, selection: Selection, wanted: Thresholds, notes: list[str]
) -> tuple[dict[str, CompareResult], Thresholds]:
    """Each compared source against the reference. A score source is first computed at its tuned
    threshold, which sets its slider's range and reset value; the "Thresholds" section then draws
    the sliders (starting from `wanted`, the URL's, unless the level, reference or mapping just
    changed), and a source whose slider left the tuned value is computed again at the slider's value.

    Returns the results by source and the thresholds that differ from the tuned ones (for the URL).
    """
    results = {name: _pair(ctx, selection, name, None) for name in selection.sources}
    tuned = {name: r.pairs[0].threshold for name, r in results.items() if r.pairs[0].threshold is not None}
    wanted = Thresholds() if selection.renewed or selection.retuned else wanted
    notes += [
        ignored("thresholds", f"{name}={value:g}", "not a compared score source")
        for name, value in wanted.items()
        if name not in tuned
    ]
    if not tuned:
        return results, Thresholds()
    st.subheader("Thresholds")
    st.radio(
        "Threshold search",
        TUNINGS,
        key=key(selection.dataset, "tuning"),
        horizontal=True,
        format_func=TUNING_CHOICES.get,
        help=(
            "Where the tuned threshold comes from. The grid is the StorySumm release's notebook and reproduces its "
            "results table; the exhaustive cut-point search tries every split of the val scores and reproduces the "
            "paper's Table 8 UniEval val row, which no grid point reaches."
        ),
    )
    moved: dict[str, float] = {}
    for name, threshold in tuned.items():
        st.markdown(f"**{md_escape(name)}**")
        start = wanted.get(name, threshold.value)
        if not threshold.low <= start <= threshold.high:
            notes.append(
                ignored(
                    "thresholds",
                    f"{name}={start:g}",
                    f"outside the scores' range [{threshold.low:g}, {threshold.high:g}]",
                )
            )
            start = threshold.value
        value = _slider(selection, name, threshold, start)
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
    widget = urlstate.bind(_slider_key(selection, source), start, reseed=selection.renewed or selection.retuned)
    row = st.container(horizontal=True, vertical_alignment="bottom")
    steps = GRID_SIZE - 1 if tuned.tuning == GRID else FINE_STEPS
    value = row.slider(
        "Threshold: faithful when the score is above it",
        tuned.low,
        tuned.high,
        step=(tuned.high - tuned.low) / steps,
        format="%.4f",
        key=widget,
        help=confusion.DEFINITIONS["threshold"],
    )
    row.button("Reset to tuned", key=f"{widget}.reset", on_click=_reset, args=(widget, tuned.value))
    in_sample = " (no val/dev split: tuned and reported on all units, so in-sample)" if tuned.tuned_on == ALL else ""
    st.caption(f"Tuned on the {tuned.tuned_on} split{in_sample}: {tuned.value:.4f}, {md_escape(tuned.how_tuned())}.")
    return float(value)
