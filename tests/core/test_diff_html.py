"""The word-diff renderer: struck and inserted words land in the right tags, and rewrite text is
escaped, never markup or attribute values."""

from __future__ import annotations

import html
import re

from faithlens.llm.signals import DiffOp, word_diff
from faithlens.views.diff import diff_html
from tests.core.test_highlight import PAYLOAD, parse

ABDUCTED = "The protagonist gets abducted by aliens."
PULLED = "The protagonist is pulled into the sky by a beam of light."


def tagged(markup: str, tag: str) -> list[str]:
    return [html.unescape(text) for text in re.findall(rf'<{tag} class="fl-{tag}">(.*?)</{tag}>', markup, re.S)]


def test_struck_and_inserted_words_are_in_their_tags() -> None:
    markup = diff_html(word_diff(ABDUCTED, PULLED))
    assert tagged(markup, "del") == ["gets abducted", "aliens"]
    assert tagged(markup, "ins") == ["is pulled into the sky", "a beam of light"]
    assert markup.startswith("The protagonist <del")
    assert markup.endswith("</ins>.")
    assert parse(markup).text == "The protagonist gets abducted is pulled into the sky by aliens a beam of light."


def test_payload_in_a_rewrite_is_escaped() -> None:
    markup = diff_html(word_diff("A quiet claim.", f"A quiet {PAYLOAD} claim."))
    parsed = parse(markup)
    assert set(parsed.tags) == {"ins"}
    assert parsed.attributes == [("class", "fl-ins")]
    assert "<img" not in markup and "<script" not in markup
    assert " ".join(PAYLOAD.split()) in parsed.text


def test_every_op_is_escaped_quotes_included() -> None:
    ops = [DiffOp("same", '<b>"x"</b>'), DiffOp("delete", " a & b"), DiffOp("insert", " 'c' > d")]
    assert diff_html(ops) == (
        "&lt;b&gt;&quot;x&quot;&lt;/b&gt; "
        '<del class="fl-del">a &amp; b</del> '
        '<ins class="fl-ins">&#x27;c&#x27; &gt; d</ins>'
    )


def test_no_ops_render_nothing() -> None:
    assert diff_html([]) == ""
