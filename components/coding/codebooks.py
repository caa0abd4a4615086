"""The Sessions page's Codebooks section: every codebook with its codes' definitions and examples; an
editor that makes a custom codebook (from scratch or from a copy of the one shown) and saves it as a new
version (`library.save`); and loading one from a YAML or JSON file (`codebook.read_file`). A codebook
the core refuses shows as one error box saying what to fix."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd
import streamlit as st

from components import shell, urlstate
from components.coding import data as coding_data
from components.markdown import md_escape
from faithlens import access, querystate
from faithlens.coding import codebook, library
from faithlens.coding.codebook import CHOICES, EXPLANATIONS, Codebook
from faithlens.errors import FaithLensError
from faithlens.views import coding
from faithlens.vocab import VERDICTS


def key(dataset: str, *parts: object) -> str:
    return urlstate.key(urlstate.SESSIONS, dataset, "codebooks", *parts)


def view(book: Codebook, origin: str) -> None:
    """One codebook: what it is, then each code with its definition and example."""
    st.markdown(f"**{md_escape(book.title)}**")
    kind = "codes are verdicts (label values)" if book.verdicts else f"codes are tags of the family {book.family}"
    choice = "one code per unit" if book.choice == "single" else "any number of codes per unit"
    st.caption(md_escape(f"{book.label} · {origin} · {choice} · {kind}"))
    if book.description:
        st.markdown(md_escape(book.description))
    if book.reference:
        st.caption(md_escape(f"Source: {book.reference}"))
    for code in book.codes:
        with st.container(border=True):
            facts = [f"key {code.key}", f"explanation {code.explanation}"]
            if code.verdict:
                facts.insert(1, f"verdict {code.verdict}")
            st.markdown(f"**{md_escape(code.name)}** · " + md_escape(" · ".join(facts)))
            st.markdown(md_escape(code.definition))
            if code.example:
                with st.expander("Example"):
                    st.markdown(md_escape(code.example))


def _flash(dataset: str) -> None:
    message = st.session_state.pop(key(dataset, "flash"), None)
    if message is not None:
        st.success(md_escape(message), icon=":material/check_circle:")


def _saved(dataset: str, book: Codebook) -> None:
    """After a save: say so, show the new version, and run again (the list now holds it)."""
    st.session_state[key(dataset, "flash")] = f"Saved {book.label}."
    st.session_state[key(dataset, "open")] = book.name
    st.rerun()


def _fields(dataset: str, start: Codebook | None, prefix: str) -> dict[str, object]:
    def seeded(name: str, value: object) -> str:
        return urlstate.bind(key(dataset, "edit", prefix, name), value)

    builtin = start is not None and start.name in library.builtin()
    left, right = st.columns(2)
    fields: dict[str, object] = {
        "name": left.text_input("Name (lowercase, digits, - or _)", key=seeded("name", _copy_name(start, builtin))),
        "title": right.text_input("Title", key=seeded("title", start.title if start else "")),
        "description": st.text_area("Description", key=seeded("description", start.description if start else "")),
        "reference": st.text_input("Reference (where the codes come from)", key=seeded("reference", _ref(start))),
    }
    left, middle, right = st.columns(3)
    fields["choice"] = left.selectbox("Choice", CHOICES, key=seeded("choice", start.choice if start else "single"))
    fields["family"] = middle.text_input(
        "Tag family (blank: codes are verdicts)",
        key=seeded("family", (start.family or "") if start else ""),
        help="Codes with a verdict become label events; codes of a tag family become tags (Explore's Tags filter).",
    ).strip()
    fields["explanation"] = right.selectbox(
        "Explanation by default", EXPLANATIONS, key=seeded("explanation", "optional")
    )
    return fields


def _copy_name(start: Codebook | None, builtin: bool) -> str:
    if start is None:
        return ""
    return f"{start.name}-custom" if builtin else start.name


def _ref(start: Codebook | None) -> str:
    return start.reference if start else ""


def editor(ctx: shell.PageContext, shown: Codebook) -> None:
    """Create or edit a custom codebook; saving makes a new version."""
    st.markdown("**Create or edit a custom codebook**")
    origin = st.radio(
        "Start from",
        ("copy", "empty"),
        key=key(ctx.dataset, "start"),
        horizontal=True,
        format_func=lambda o: f"a copy of {shown.name}" if o == "copy" else "an empty codebook",
    )
    start = shown if origin == "copy" else None
    prefix = shown.label if start else "empty"
    fields = _fields(ctx.dataset, start, prefix)
    edited = st.data_editor(
        pd.DataFrame(coding.editor_rows(start)),
        key=key(ctx.dataset, "edit", prefix, "codes"),
        num_rows="dynamic",
        hide_index=True,
        width="stretch",
        column_config={
            "verdict": st.column_config.SelectboxColumn("verdict", options=list(VERDICTS)),
            "explanation": st.column_config.SelectboxColumn("explanation", options=list(EXPLANATIONS)),
            "definition": st.column_config.TextColumn("definition", width="large"),
        },
    )
    st.caption("Every code needs a key, a name and a definition; give every code a verdict, or set a tag family.")
    if st.button("Save codebook", key=key(ctx.dataset, "save"), type="primary", icon=":material/save:"):
        try:
            book = codebook.parse(coding.editor_body(fields, edited.to_dict("records")), "the codebook editor")
            library.save(ctx.root, ctx.actor, book)
        except FaithLensError as exc:
            shell.show_error(exc)
            return
        _saved(ctx.dataset, book)


def _read_upload(upload) -> Codebook:
    """The uploaded file as a codebook: written under its own name in a temporary folder, then read."""
    name = Path(upload.name).name or "codebook.yaml"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(upload.getvalue())
        try:
            return codebook.read_file(path)
        except FaithLensError as exc:
            raise FaithLensError(exc.message.replace(str(path), name), exc.hint) from None


def upload(ctx: shell.PageContext) -> None:
    """Load a codebook from a YAML or JSON file, show it, and save it as a new version."""
    st.markdown("**Load a codebook from a file**")
    given = st.file_uploader(
        "A codebook file (YAML or JSON)", type=["yaml", "yml", "json"], key=key(ctx.dataset, "upload")
    )
    if given is None:
        return
    try:
        book = _read_upload(given)
    except FaithLensError as exc:
        shell.show_error(exc)
        return
    view(book, "from the file")
    if st.button(f"Save {book.name} as a new version", key=key(ctx.dataset, "save_upload"), type="primary"):
        try:
            library.save(ctx.root, ctx.actor, book)
        except FaithLensError as exc:
            shell.show_error(exc)
            return
        _saved(ctx.dataset, book)


def section(ctx: shell.PageContext, wanted: str | None, notes: list[str]) -> str | None:
    """The codebooks: the one shown, the editor, the upload. Returns the codebook for the URL."""
    books = coding_data.codebooks(ctx.db_path, ctx.version)
    names = list(books)
    if wanted is not None and wanted not in names:
        notes.append(querystate.ignored("codebook", wanted, "no codebook has that name"))
        wanted = None
    _flash(ctx.dataset)
    opened = st.session_state.pop(key(ctx.dataset, "open"), None)
    wanted = opened if opened in names else wanted
    chosen = st.selectbox(
        "Codebook",
        names,
        key=urlstate.bind(key(ctx.dataset, "shown"), wanted or names[0], names, reseed=opened is not None),
        format_func=lambda name: f"{books[name].title} ({name})",
    )
    builtin = chosen in library.builtin()
    view(books[chosen], "built in (from the paper)" if builtin else "the lab's own, newest version")
    st.divider()
    if ctx.actor is None or not access.allowed(ctx.actor, "manage_codebooks"):
        st.info("Codebooks are edited and loaded by admins.", icon=":material/lock:")
        return None if chosen == names[0] and wanted is None else chosen
    editor(ctx, books[chosen])
    st.divider()
    upload(ctx)
    return None if chosen == names[0] and wanted is None else chosen
