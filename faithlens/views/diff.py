"""Escaped HTML for a claim's word diff against its rewrite, under the rules of `highlight`: every
piece of text is `html.escape`d, markup is fixed tags and classes, no text goes into an attribute.

Struck words are `<del>` and new words `<ins>`, which browsers and screen readers mark as removed
and inserted without relying on colour.
"""

from __future__ import annotations

from collections.abc import Sequence

from faithlens.llm.signals import DiffOp
from faithlens.views.highlight import esc

_WRAP = {"same": "{}", "delete": '<del class="fl-del">{}</del>', "insert": '<ins class="fl-ins">{}</ins>'}


def diff_html(ops: Sequence[DiffOp]) -> str:
    """The ops in order, deletions struck and insertions marked; the whitespace before an op stays
    outside its tag, so only words are struck or underlined."""
    return "".join(_wrapped(op) for op in ops)


def _wrapped(op: DiffOp) -> str:
    body = op.text.lstrip()
    return esc(op.text[: len(op.text) - len(body)]) + _WRAP[op.op].format(esc(body))
