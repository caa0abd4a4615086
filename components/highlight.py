"""Emit the markup built by `faithlens.views.highlight` (already escaped) with its stylesheet.

`st.html` is the only sink: it sanitises again with DOMPurify and runs no scripts, where
`unsafe_allow_html` let an `<iframe srcdoc>` script through. Dataset text reaches this module only
as markup the core escaped, or through `Markup.heading`, which escapes it.
"""

from __future__ import annotations

import html

import streamlit as st

from faithlens.views.highlight import STYLESHEET

_HEADING_STYLE = ".fl-heading{margin:1rem 0 0.4rem}.fl-heading:first-of-type{margin-top:0}"


def show(markup: str) -> None:
    """Render markup from `faithlens.views.highlight` (every dataset string in it is escaped)."""
    st.html(f"<style>{STYLESHEET}</style>{markup}")


class Markup:
    """Bold headings and highlighted markup gathered into one `st.html` element, where a Markdown
    heading and an element per block made a page slower to draw. `flush()` emits what is gathered:
    call it before drawing any other element, so the page keeps its order."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def heading(self, title: str, note: str = "") -> None:
        """`title` in bold, then `note` (both plain text, escaped here)."""
        rest = f" {html.escape(note, quote=True)}" if note else ""
        self.parts.append(f'<p class="fl-heading"><b>{html.escape(title, quote=True)}</b>{rest}</p>')

    def add(self, markup: str) -> None:
        """Markup from `faithlens.views.highlight` (every dataset string in it is escaped)."""
        self.parts.append(markup)

    def flush(self) -> None:
        if self.parts:
            st.html(f"<style>{STYLESHEET}{_HEADING_STYLE}</style>{''.join(self.parts)}")
        self.parts = []
