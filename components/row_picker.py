"""A list whose rows can be chosen one at a time (the Sessions and Runs lists): a click opens a row."""

from __future__ import annotations

import pandas as pd
import streamlit as st


def chosen_row(rows: list[dict], key: str, id_column: str, column_config: dict) -> object | None:
    """Draw `rows`; return the `id_column` value of a row the user has just chosen (else None).

    The table hands back positions, turned into an id at once (a selection is lost whenever the data
    changes, streamlit#9505); a selection already answered on an earlier run is not answered again."""
    event = st.dataframe(
        pd.DataFrame(rows),
        key=key,
        on_select="rerun",
        selection_mode="single-row",
        hide_index=True,
        width="stretch",
        height="auto" if len(rows) <= 6 else 240,
        column_config=column_config,
    )
    chosen = tuple(event.selection.rows)
    seen = key + ".seen"
    if chosen == st.session_state.get(seen, ()):
        return None
    st.session_state[seen] = chosen
    return rows[chosen[0]][id_column] if chosen else None
