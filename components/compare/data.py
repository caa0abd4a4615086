"""Cached reads behind the Compare page, keyed on small scalars: the database path, its data
version (so other sessions' writes show), and the user's choices.

Each compared source is computed and cached on its own (`pair`), so moving one score source's
threshold slider recomputes only that source.
"""

from __future__ import annotations

import streamlit as st

from components import shell
from faithlens.analysis.mapping import Mapping
from faithlens.analysis.thresholds import GRID
from faithlens.views import compare, storysumm_paper
from faithlens.views.compare import ALL, CompareResult, Example, SourceChoice


@st.cache_data(show_spinner=False, max_entries=32)
def choices(db_path: str, version: str, dataset: str) -> tuple[dict[str, dict[str, SourceChoice]], bool]:
    """The label sources at each level, and whether the dataset has topic types (main / marginal)."""
    with shell.root_connection(db_path).cursor() as cur:
        return compare.available_sources(cur, dataset), compare.has_topic_types(cur, dataset)


@st.cache_data(show_spinner=False, max_entries=64)
def values_used(
    db_path: str, version: str, dataset: str, level: str, sources: tuple[str, ...]
) -> dict[str, dict[str, int]]:
    """How many units each source gives each vocabulary value at this level."""
    with shell.root_connection(db_path).cursor() as cur:
        return compare.values_used(cur, dataset, level, list(sources))


@st.cache_data(show_spinner=False, max_entries=1024)
def pair(
    db_path: str,
    version: str,
    dataset: str,
    level: str,
    reference: str,
    source: str,
    mapping_text: str,
    threshold: float | None,
    by_topic: bool,
    tuning: str = GRID,
) -> CompareResult:
    """One compared source against the reference; `threshold` None means a score source's tuned one
    (by the `tuning` search)."""
    thresholds = None if threshold is None else {source: threshold}
    with shell.root_connection(db_path).cursor() as cur:
        return compare.compare(
            cur, dataset, level, reference, [source], Mapping.parse(mapping_text), thresholds, by_topic, tuning
        )


@st.cache_data(show_spinner=False, max_entries=16)
def paper_evidence(db_path: str, version: str, dataset: str, source: str) -> storysumm_paper.Evidence:
    """What every threshold on a StorySumm score source's released scores gives against its printed
    rows: computed only when the page shows the paper's figures."""
    with shell.root_connection(db_path).cursor() as cur:
        return storysumm_paper.score_evidence(cur, dataset, source)


@st.cache_data(show_spinner=False, max_entries=64)
def examples(
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
    """The units of one confusion-matrix cell (`cell` is "reference value,compared value") on one split."""
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
            Mapping.parse(mapping_text),
            split,
            ALL,
            threshold,
        )
