"""Escaping for the few places where Streamlit renders Markdown around our data."""

from __future__ import annotations

import re

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$])")


def md_escape(text: object) -> str:
    """Backslash-escape Markdown punctuation so dataset text shows literally (no links, images, HTML)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", str(text))
