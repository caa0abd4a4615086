"""Data out and in from any page: a label source's downloads (CSV, JSON Lines, Parquet, the file
`python -m faithlens export` writes), and demo packs (the stored answers about chosen summaries as one
file, and its import by upload), all through the core (`faithlens.exports.labels`, `faithlens.llm.packs`).

Compare and Runs call `source_downloads`; Runs shows `pack_panel`; a page that shows one summary (Rewrite,
Explore) can offer its pack with `pack_download(db_path, dataset, [summary_id], key)`.
"""

from __future__ import annotations

import streamlit as st

from components import shell
from components.markdown import md_escape
from faithlens import access
from faithlens.errors import FaithLensError
from faithlens.exports import labels
from faithlens.llm import packs

_LABELS = {"csv": "CSV", "jsonl": "JSONL", "parquet": "Parquet"}
_RESULT = "exports.pack_import.result"


def source_downloads(ctx: shell.PageContext, dataset: str, source: str, key: str, check: bool = False) -> None:
    """One line: the source's name and a download per format, each written on click (not on every run).
    `check`: first ask whether the source has labels yet (a run that has stored none), and say so if not.
    Someone coding part of the dataset blind gets a line saying why there is no download yet."""
    db_path = ctx.db_path
    refused = shell.blindfold(ctx).dataset_refusal(dataset)
    if refused is not None:
        st.caption(md_escape(f"No download of {source}: {refused.message}."))
        return
    if check:
        with shell.root_connection(db_path).cursor() as cur:
            if not labels.has_labels(cur, dataset, source):
                st.caption(md_escape(f"No labels of {source} to download yet."))
                return
    with st.container(gap="small"):
        st.caption(md_escape(source))
        for column, fmt in zip(st.columns(len(labels.FORMATS)), labels.FORMATS, strict=True):
            column.download_button(
                _LABELS[fmt],
                data=lambda fmt=fmt: labels.export_bytes(shell.root_connection(db_path), dataset, source, fmt),
                file_name=labels.file_name(dataset, source, fmt),
                mime=labels.MIME[fmt],
                key=f"{key}.{fmt}",
                icon=":material/download:",
                on_click="ignore",
                width="stretch",
                help=f"Every current label of {source} with its unit's text (document, summary, sentence or claim); "
                "for an LLM source also the answer behind each: prompt and version, model, parameters, tokens, cost, when",
            )


def pack_download(
    db_path: str, dataset: str, summaries: list[str], key: str, label: str = "Download demo pack"
) -> None:
    """The stored answers about `summaries` (with their sentences and claims) as one pack file."""
    st.download_button(
        label,
        data=lambda: packs.export(shell.root_connection(db_path), dataset, list(summaries)).data,
        file_name=packs.file_name(dataset, list(summaries)),
        mime="application/json",
        key=key,
        icon=":material/download:",
        on_click="ignore",
        disabled=not summaries,
        help="Import it on another machine (Runs → Demo packs, or `python -m faithlens demo-pack import FILE`): "
        "asking the same there answers from the cache, with no call and no key.",
    )


def pack_panel(ctx: shell.PageContext) -> None:
    """Runs' demo packs: pick summaries with stored answers and download their pack; import one by upload."""
    with st.expander("Demo packs: replay stored answers offline on another machine", icon=":material/luggage:"):
        st.caption(
            "Ask beforehand (Explore, Rewrite or a run), download the pack of the demo's summaries, import it on "
            "the presenting machine: the same asks answer from the cache there, with no call. It replays with the "
            "same provider, base URL and model; an answer stored there already is never overwritten."
        )
        with ctx.root.cursor() as cur:
            found = packs.answered(cur, ctx.dataset)
        by_id = {a.summary_id: a for a in found}
        chosen = st.multiselect(
            "Summaries with stored answers",
            list(by_id),
            format_func=lambda s: _answered_line(by_id[s]),
            key=f"exports.pack.{ctx.dataset}.summaries",
            placeholder="none yet: ask a model first" if not found else "choose the demo's summaries",
        )
        pack_download(ctx.db_path, ctx.dataset, chosen, f"exports.pack.{ctx.dataset}.download")
        _pack_upload(ctx)


def _answered_line(found: packs.Answered) -> str:
    """A summary in the picker (plain text: option labels are not Markdown)."""
    answers = f"{found.answers} answer{'s' if found.answers != 1 else ''}"
    return f"{found.title or found.summary_id} · {found.generator or 'no generator'} · {answers} · last {found.newest}"


def _pack_upload(ctx: shell.PageContext) -> None:
    if not access.allowed(ctx.actor, "import_answers"):
        st.caption("Importing a pack is open to runners and admins; you can download packs.")
        return
    uploaded = st.file_uploader("Import a pack", type=["json"], key="exports.pack.file")
    st.button(
        "Import pack",
        key="exports.pack.import",
        icon=":material/upload:",
        disabled=uploaded is None,
        on_click=_import,
        args=(ctx.db_path, ctx.actor),
    )
    result = st.session_state.get(_RESULT)
    if isinstance(result, FaithLensError):
        shell.show_error(result)
    elif result is not None:
        st.success(md_escape(result[0]), icon=":material/check_circle:")
        for line in result[1:]:
            st.caption(md_escape(line))


def _import(db_path: str, actor: access.Actor) -> None:
    """The Import button's callback: the core checks the whole file, then stores it in one transaction."""
    uploaded = st.session_state.get("exports.pack.file")
    if uploaded is None:
        return
    try:
        done = packs.import_pack(shell.root_connection(db_path), uploaded.name, uploaded.getvalue(), actor)
        st.session_state[_RESULT] = done.lines()
    except FaithLensError as exc:
        st.session_state[_RESULT] = exc
