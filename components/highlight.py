"""Emit the markup built by `faithlens.highlight` (already escaped) with its stylesheet.

`st.html` is the only sink: it sanitises again with DOMPurify, runs no scripts, and is what
TECH-NOTES section 4 settled on. Nothing here touches dataset text; the core escaped it.
"""

from __future__ import annotations

import streamlit as st

from faithlens.highlight import STYLESHEET


def show(markup: str) -> None:
    """Render markup from `faithlens.highlight` (every dataset string in it is escaped)."""
    st.html(f"<style>{STYLESHEET}</style>{markup}")
