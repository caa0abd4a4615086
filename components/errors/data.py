"""Cached reads behind the Errors page, keyed on the database path, its data version (so other
sessions' writes show) and the user's choices (small strings)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components import shell
from faithlens.analysis import tag_stats, tally
from faithlens.analysis.tag_stats import Family
from faithlens.views import errors


@st.cache_data(show_spinner=False, max_entries=32)
def families(db_path: str, version: str, dataset: str) -> tuple[Family, ...]:
    with shell.root_connection(db_path).cursor() as cur:
        return tuple(tag_stats.families(cur, dataset))


@st.cache_data(show_spinner=False, max_entries=32)
def dimensions(db_path: str, version: str, dataset: str) -> tuple[str, ...]:
    with shell.root_connection(db_path).cursor() as cur:
        return errors.available_dimensions(cur, dataset)


@st.cache_data(show_spinner=False, max_entries=32)
def splits(db_path: str, version: str, dataset: str) -> tuple[str, ...]:
    with shell.root_connection(db_path).cursor() as cur:
        return tally.splits(cur, dataset)


@st.cache_data(show_spinner=False, max_entries=64)
def distribution(
    db_path: str, version: str, dataset: str, family: Family, by: str | None, of: str, tagged_by: str | None
) -> errors.Distribution:
    with shell.root_connection(db_path).cursor() as cur:
        return errors.distribution(cur, dataset, family, by, of, tagged_by)


@st.cache_data(show_spinner=False, max_entries=64)
def together(db_path: str, version: str, dataset: str, family: Family, tagged_by: str | None) -> pd.DataFrame:
    with shell.root_connection(db_path).cursor() as cur:
        return errors.together(cur, dataset, family, tagged_by)


@st.cache_data(show_spinner=False, max_entries=64)
def recall_options(
    db_path: str, version: str, dataset: str, family: Family
) -> tuple[tuple[tally.SourceChoice, ...], tuple[str, ...], str | None]:
    """(sources recall can be counted for, the sources that can be the reference, the default reference)."""
    with shell.root_connection(db_path).cursor() as cur:
        at_level = errors.sources_at(cur, dataset, family)
        compared = tuple(errors.recall_sources(at_level, family, None))
        return compared, errors.references(at_level, family), errors.default_reference(at_level, family)


@st.cache_data(show_spinner=False, max_entries=64)
def recall(
    db_path: str,
    version: str,
    dataset: str,
    family: Family,
    sources: tuple[str, ...],
    reference: str | None,
    split: str,
    typed: str,
    tagged_by: str | None,
) -> errors.Recall:
    with shell.root_connection(db_path).cursor() as cur:
        return errors.recall(
            cur, dataset, family, list(sources), reference, split=split, typed=typed, tagged_by=tagged_by
        )
