"""Emit the markup built by `faithlens.views.highlight` (already escaped) with its stylesheet.

`st.html` is the only sink: it sanitises again with DOMPurify and runs no scripts, where
`unsafe_allow_html` let an `<iframe srcdoc>` script through. Nothing here touches dataset text;
the core escaped it.
"""

from __future__ import annotations

import streamlit as st

from faithlens.views.highlight import STYLESHEET


def show(markup: str) -> None:
    """Render markup from `faithlens.views.highlight` (every dataset string in it is escaped)."""
    st.html(f"<style>{STYLESHEET}</style>{markup}")
