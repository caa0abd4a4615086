"""Escaping for the few places where Streamlit renders Markdown around our data."""

from __future__ import annotations

import re

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$])")


def md_escape(text: object) -> str:
    """Backslash-escape Markdown punctuation so dataset text shows literally (no links, images, HTML)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", str(text))


_CODE_SPAN = re.compile(r"`[^`\n]+`")


def md_with_code(text: object) -> str:
    """Our own messages (hints, notes about a document): escaped like `md_escape`, except that
    backtick spans such as `python -m faithlens ingest` show as code rather than as literal backticks."""
    text = str(text)
    pieces, last = [], 0
    for span in _CODE_SPAN.finditer(text):
        pieces += [md_escape(text[last : span.start()]), span.group(0)]
        last = span.end()
    return "".join([*pieces, md_escape(text[last:])])
