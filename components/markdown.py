"""Escaping for the few places where Streamlit renders Markdown around our data."""

from __future__ import annotations

import re

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$:])")


def md_escape(text: object) -> str:
    """Backslash-escape Markdown punctuation so dataset text shows literally (no links, images, HTML).

    The colon is escaped too: without it `http://...` becomes an autolink, inside which the other
    escapes show as backslashes (`127\\.0\\.0\\.1`), and `:material/...:` or `:red[...]` in dataset text
    would turn into icons and colours."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", str(text))


_CODE_SPAN = re.compile(r"`[^`\n]+`|https?://[^\s`<>]*[^\s`<>.,;:!?)\]'\"]")
"""A backtick span, or a URL (its closing punctuation left out): Streamlit links a bare URL even when
escaped, and a presenter should read a provider's address, not click it."""


def md_with_code(text: object) -> str:
    """Our own messages (hints, notes, errors): escaped like `md_escape`, except that backtick spans such
    as `python -m faithlens ingest` show as code rather than as literal backticks, and URLs as code too."""
    text = str(text)
    pieces, last = [], 0
    for span in _CODE_SPAN.finditer(text):
        code = span.group(0)
        pieces += [md_escape(text[last : span.start()]), code if code.startswith("`") else f"`{code}`"]
        last = span.end()
    return "".join([*pieces, md_escape(text[last:])])
