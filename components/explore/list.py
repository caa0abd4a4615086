"""The filtered list of summaries: caption, sortable table with row choice, and previous/next."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components import shell, urlstate
from components.markdown import md_escape
from faithlens.analysis.generator_names import slot_note
from faithlens.filters import Filters
from faithlens.views import explore
from faithlens.views.explore import ListResult
from faithlens.views.states import RunsState, SessionsState

HEADERS = {
    "summary_id": "summary",
    "document": "document",
    "generator": "generator",
    "split": "split",
    "topic": "topic",
    "topic_type": "topic type",
    "label": "label",
    "score": "score",
    "unfaithful_sentences": "unfaithful sentences",
    "unfaithful_claims": "unfaithful claims",
    "unfaithful_extracted_claims": "unfaithful extracted claims",
    "preview": "preview",
}
NAV_PX = 180
"""Width of the Previous and Next buttons, either side of where the summary sits in the list."""


@st.cache_data(show_spinner=False, max_entries=64)
def load_list(db_path: str, version: str, dataset: str, filters: Filters) -> ListResult:
    """The filtered list, cached per data version and filter state (a small frozen value)."""
    with shell.root_connection(db_path).cursor() as cur:
        return explore.list_summaries(cur, dataset, filters)


@st.cache_data(show_spinner=False, max_entries=64)
def _matched(db_path: str, version: str, dataset: str, filters: Filters, summary_id: str) -> list[int]:
    with shell.root_connection(db_path).cursor() as cur:
        return explore.matched_positions(cur, dataset, filters, summary_id)


def matched_here(ctx: shell.PageContext, filters: Filters, summary_id: str) -> None:
    """Under a unit filter (a link from the Errors page), which of this summary's units it matched."""
    level = filters.unit.unit_level
    if not filters.unit.active or level == "summary":
        return
    positions = _matched(ctx.db_path, ctx.version, ctx.dataset, filters, summary_id)
    if positions:
        named = ", ".join(f"{level} {p}" for p in positions)
        st.caption(md_escape(f"The unit filter matches {named} of this summary."))


def _open_key(dataset: str) -> str:
    return urlstate.key(urlstate.EXPLORE, dataset, "open")


def _open(dataset: str, summary_id: str) -> None:
    """Callback of Previous / Next: open that summary on the next run."""
    st.session_state[_open_key(dataset)] = summary_id


def opened(dataset: str) -> str | None:
    """The summary Previous or Next asked to open in this run, if one did."""
    return st.session_state.pop(_open_key(dataset), None)


def _frame(result: ListResult) -> pd.DataFrame:
    frame = pd.DataFrame(result.rows, columns=list(result.columns))
    empty = [column for column in frame.columns if column != "summary_id" and frame[column].isna().all()]
    return frame.drop(columns=empty).rename(columns=HEADERS)


def show(ctx: shell.PageContext, filters: Filters) -> tuple[ListResult, str | None]:
    """Draw the list; returns the result and the summary id of a row the user just chose (else None).

    The table hands back positions in the frame it was given; they are turned into a summary id
    at once (the selection is lost whenever the data changes, streamlit#9505).
    """
    fold = shell.blindfold(ctx)
    result, left_out = explore.without_summaries(
        load_list(ctx.db_path, ctx.version, ctx.dataset, filters), fold.hidden_summaries(ctx.dataset)
    )
    caption = filters.caption(len(result.ids), result.units)
    if filters.clauses():
        caption += f" (of {result.total:,}{' summaries' if result.units is not None else ''})"
    with st.container(horizontal=True, vertical_alignment="center"):
        st.markdown(f"**{md_escape(caption)}**", width="stretch")
        _run_link(ctx.dataset, filters)
    if left_out:
        st.caption(md_escape(fold.left_out_note(ctx.dataset, left_out)))
    note = slot_note([filters.generator]) if filters.generator else None
    if note:
        st.caption(md_escape(note))
    if not result.ids:
        st.info("No summary passes these filters. Loosen one above, or clear them.", icon=":material/info:")
        return result, None
    if len(result.rows) < len(result.ids):
        st.caption(f"The table shows the first {len(result.rows):,}; previous/next below walk all {len(result.ids):,}.")
    frame = _frame(result)
    key = urlstate.key(urlstate.EXPLORE, ctx.dataset, "table")
    event = st.dataframe(
        frame,
        key=key,
        on_select="rerun",
        selection_mode="single-row",
        hide_index=True,
        height=300 if len(frame) > 8 else "auto",
        width="stretch",
        placeholder="",
        column_config={
            "score": st.column_config.NumberColumn(format="%.3f"),
            "preview": st.column_config.TextColumn(width="large"),
        },
    )
    rows = tuple(event.selection.rows)
    seen_key = key + ".seen"
    if rows == st.session_state.get(seen_key, ()):
        return result, None
    st.session_state[seen_key] = rows
    return result, (frame["summary"].iloc[rows[0]] if rows else None)


def _run_link(dataset: str, filters: Filters) -> None:
    """Open the Runs page with this filter as the new run's unit set, or the Sessions page with it as a
    new coding session's (links only, nothing read)."""
    if shell.links_resolve():
        carried = filters if filters.clauses() else Filters()
        st.page_link(
            **urlstate.link(urlstate.RUNS, RunsState(dataset=dataset, filters=carried)),
            label="Run a method on the filtered set",
            icon=urlstate.RUNS.icon,
        )
        st.page_link(
            **urlstate.link(urlstate.SESSIONS, SessionsState(dataset=dataset, view="new", filters=carried)),
            label="Code the filtered set",
            icon=urlstate.SESSIONS.icon,
        )


def navigation(ctx: shell.PageContext, result: ListResult, summary_id: str) -> None:
    """'Previous' / 'Next' through the filtered list, and where this summary sits in it."""
    where = explore.neighbours(result.ids, summary_id)
    row = st.container(horizontal=True, vertical_alignment="center")
    row.button(
        "Previous",
        icon=":material/arrow_back:",
        disabled=where.previous is None,
        on_click=_open,
        args=(ctx.dataset, where.previous),
        key=urlstate.key(urlstate.EXPLORE, ctx.dataset, "previous"),
        width=NAV_PX,
    )
    if where.position is None:
        position = f"This summary is not among the {where.total:,} the filters keep; Next opens the first."
        target = where.first
    else:
        position = f"Summary {where.position:,} of {where.total:,} in the filtered list"
        target = where.next
    row.caption(position, width="stretch")
    row.button(
        "Next",
        icon=":material/arrow_forward:",
        disabled=target is None,
        on_click=_open,
        args=(ctx.dataset, target),
        key=urlstate.key(urlstate.EXPLORE, ctx.dataset, "next"),
        width=NAV_PX,
    )
