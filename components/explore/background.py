"""Explore's background alignment of a long document by an embedding ranker: start it, watch its
progress, and pick it up again after the server restarted (the embeddings stored so far are kept)."""

from __future__ import annotations

import streamlit as st

from components import shell, urlstate
from components.markdown import md_escape
from faithlens import access
from faithlens.build import background
from faithlens.build.rankers import LABELS

POLL_S = 2.0


@st.cache_resource(show_spinner=False)
def jobs() -> background.Jobs:
    """The server process's background alignment jobs."""
    return background.Jobs()


def _progress(db_path: str, key: background.Key) -> background.Progress | None:
    """Read uncached: the embeddings are committed without a data version."""
    with shell.root_connection(db_path).cursor() as cur:
        return background.progress(cur, key)


def offer(ctx: shell.PageContext, key: background.Key) -> None:
    """The document is too long to align while the page waits: start the job, or show how far it is,
    resuming it when no thread of this server works on it (the server restarted since)."""
    label = LABELS[key[2]]
    now = _progress(ctx.db_path, key)
    may = access.allowed(ctx.actor, "compute_alignment")
    if now is not None and not now.finished and not now.error:
        if may and not jobs().alive(key):
            jobs().start(ctx.root, ctx.actor, key)
        _watch(ctx.db_path, key, label)
        return
    if now is not None and now.error:
        st.error(md_escape(f"Aligning by {label} in the background failed: {now.error}"), icon=":material/error:")
    if not may:
        return
    st.caption(
        "This document is long: its passages are embedded in the background, with progress here; you can "
        "leave the page, and a restarted server goes on where it stopped."
    )
    if st.button(
        f"Align by {label} in the background", key=urlstate.key(urlstate.EXPLORE, ctx.dataset, "background", key[2])
    ):
        background.request(ctx.root, ctx.actor, key)
        jobs().start(ctx.root, ctx.actor, key)
        st.rerun()


@st.fragment(run_every=POLL_S)
def _watch(db_path: str, key: background.Key, label: str) -> None:
    now = _progress(db_path, key)
    if now is None or now.finished or now.error:
        st.rerun(scope="app")
    share = now.embedded / now.total if now.total else 1.0
    st.progress(
        share, text=f"Aligning by {label} in the background: {now.embedded:,} of {now.total:,} passages embedded"
    )
