"""The highlight renderer: spans land on the right characters, every piece of text is escaped,
overlaps never nest, bad spans are refused, and labels are spelled out beside the colours."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import pytest

from faithlens.views import highlight as hl
from faithlens.views.highlight import ALIGN_BEST, ALIGN_OTHER, NGRAM, Span
from faithlens.views.tag_html import HIT, Tag

PAYLOAD = (
    "<script>alert(1)</script> <img src=x onerror=\"alert('x')\"> "
    "<iframe srcdoc=\"<script>parent.document.title='p'</script>\"></iframe> "
    '<a href="javascript:alert(1)">map</a> <div style="position:fixed;inset:0">O</div> & \'quotes\''
)


class _Markup(HTMLParser):
    """Collects tags, attributes and text of rendered markup."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str | None]] = []
        self.text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes.extend(attrs)

    def handle_data(self, data: str) -> None:
        self.text += data


def parse(markup: str) -> _Markup:
    parser = _Markup()
    parser.feed(markup)
    parser.close()
    return parser


def marked(markup: str) -> list[tuple[str, str]]:
    """(classes, text) of each <mark>."""
    return [(c, html.unescape(t)) for c, t in re.findall(r'<mark class="([^"]*)">(.*?)</mark>', markup, re.S)]


def test_spans_wrap_exactly_their_characters() -> None:
    text = "The seal bit down hard. The teeth broke."
    markup = hl.render_highlight(text, [Span(4, 8, ALIGN_BEST), Span(24, 33, ALIGN_OTHER)])
    assert marked(markup) == [(ALIGN_BEST, "seal"), (ALIGN_OTHER, "The teeth")]
    assert parse(markup).text == text


def test_every_segment_is_escaped_and_no_dataset_text_reaches_markup() -> None:
    spans = [Span(0, 25, ALIGN_BEST), Span(10, 60, NGRAM)]
    markup = hl.render_highlight(PAYLOAD, spans)
    parsed = parse(markup)
    assert set(parsed.tags) <= {"div", "mark"}
    assert {name for name, _ in parsed.attributes} == {"class"}
    assert all(value in hl.CLASSES for _, value in parsed.attributes for value in (value or "").split())
    assert parsed.text == PAYLOAD
    assert "<script" not in markup and "<img" not in markup
    assert "&#x27;quotes&#x27;" in markup and "&amp;" in markup and "&quot;" in markup


def test_overlapping_spans_are_cut_not_nested_and_order_does_not_matter() -> None:
    text = "abcdefghij"
    spans = [Span(2, 6, ALIGN_BEST), Span(4, 9, NGRAM), Span(0, 3, ALIGN_OTHER)]
    first = hl.render_highlight(text, spans)
    assert first == hl.render_highlight(text, list(reversed(spans)))
    assert marked(first) == [
        (ALIGN_OTHER, "ab"),
        (f"{ALIGN_BEST} {ALIGN_OTHER}", "c"),
        (ALIGN_BEST, "d"),
        (f"{ALIGN_BEST} {NGRAM}", "ef"),
        (NGRAM, "ghi"),
    ]
    assert re.search(r"<mark[^>]*>[^<]*<mark", first) is None
    assert parse(first).text == text


def test_adjacent_or_repeated_spans_merge() -> None:
    markup = hl.render_highlight("abcdef", [Span(0, 2, NGRAM), Span(2, 4, NGRAM), Span(1, 3, NGRAM)])
    assert marked(markup) == [(NGRAM, "abcd")]


@pytest.mark.parametrize(
    "span",
    [Span(-1, 2, NGRAM), Span(3, 3, NGRAM), Span(4, 2, NGRAM), Span(0, 99, NGRAM), Span(0, 2, "evil onclick")],
)
def test_invalid_spans_are_refused(span: Span) -> None:
    with pytest.raises(ValueError):
        hl.render_highlight("abcdef", [span])


def test_non_integer_offsets_are_refused() -> None:
    with pytest.raises(ValueError):
        hl.render_highlight("abcdef", [Span(True, 2, NGRAM)])
    with pytest.raises(ValueError):
        hl.render_highlight("abcdef", [(0, 2, NGRAM)])


TAG = Tag("error_type", "<b>Tag</b>", "coding/<i>s</i>/ann")
TAG_WORDS = "error_type: <b>Tag</b> (coding/<i>s</i>/ann)"


def _sentences() -> list[hl.SentenceView]:
    return [
        hl.SentenceView(0, "He wakes up.", "faithful"),
        hl.SentenceView(1, PAYLOAD, "unfaithful", explanation=PAYLOAD, tags=(TAG,), selected=True),
        hl.SentenceView(2, "Maybe.", None, score=0.13),
        hl.SentenceView(3, "Nothing known.", None),
    ]


def test_summary_colours_by_label_then_score_bucket_and_escapes_tooltips() -> None:
    markup = hl.render_summary(_sentences())
    classes = re.findall(r'<span class="(fl-sent [^"]*)" tabindex="0">', markup)
    assert classes == [
        "fl-sent fl-label-faithful",
        "fl-sent fl-label-unfaithful fl-selected",
        "fl-sent fl-score-0",
        "fl-sent fl-label-none",
    ]
    parsed = parse(markup)
    assert "script" not in parsed.tags and "img" not in parsed.tags and "b" not in parsed.tags
    assert {name for name, _ in parsed.attributes} <= {"class", "aria-hidden", "tabindex"}
    assert "title" not in {name for name, _ in parsed.attributes}
    tip = re.search(
        r'<span class="fl-tip" aria-hidden="true">(.*?)</span>', markup.split("fl-label-unfaithful")[1], re.S
    )
    assert html.unescape(tip.group(1)) == f"S2: unfaithful\nTags: {TAG_WORDS}\n{PAYLOAD}"


def test_a_sentence_tooltip_lists_every_source_verdict_escaped() -> None:
    verdicts = (("gold", "unfaithful", None), (PAYLOAD, None, 0.42), ("judge", "faithful", None))
    markup = hl.render_summary([hl.SentenceView(0, "He wakes up.", "faithful", verdicts=verdicts)])
    tip = re.search(r'<span class="fl-tip" aria-hidden="true">(.*?)</span>', markup, re.S)
    lines = html.unescape(tip.group(1)).split("\n")
    assert lines == [
        "S1: faithful",
        "Every source:",
        "  gold: unfaithful",
        f"  {PAYLOAD}: score 0.42",
        "  judge: faithful",
    ]
    assert "<script" not in markup and set(parse(markup).tags) <= {"div", "span"}


def test_sentence_list_spells_out_labels_scores_and_explanations() -> None:
    markup = hl.render_sentence_list(_sentences())
    text = parse(markup).text
    assert "unfaithfulS2 " + PAYLOAD in text
    assert f"Tags: {TAG_WORDS}" in text and text.count(PAYLOAD) == 2
    assert "score 0.13S3 Maybe." in text
    assert "no labelS4 Nothing known." in text


def test_score_buckets_cover_zero_to_one_and_flag_other_ranges() -> None:
    assert [hl.score_class(s) for s in (0.0, 0.19, 0.2, 0.5, 0.99, 1.0)] == [
        "fl-score-0",
        "fl-score-0",
        "fl-score-1",
        "fl-score-2",
        "fl-score-4",
        "fl-score-4",
    ]
    assert hl.score_class(87.0) == hl.UNSCALED_SCORE_CLASS
    assert hl.describe("faithful", 0.912) == "faithful · score 0.91"
    assert hl.describe(None, 87.0) == "score 87"


def test_n_gram_marks_inside_a_sentence_are_escaped_too() -> None:
    sentence = hl.SentenceView(0, "a <b> c", "faithful", marks=((2, 5),))
    markup = hl.render_summary([sentence])
    assert "<ins>&lt;b&gt;</ins>" in markup


def test_claims_show_evidence_and_reasons_as_escaped_text() -> None:
    claim = hl.ClaimView(0, "Holly rents <i>Hill House</i>.", "partial", evidence=(PAYLOAD,), reasons=("<u>why</u>",))
    markup = hl.render_claims([claim])
    parsed = parse(markup)
    assert "i" not in parsed.tags and "u" not in parsed.tags and "iframe" not in parsed.tags
    assert "partialC1 Holly rents <i>Hill House</i>." in parsed.text
    assert PAYLOAD in parsed.text and "Reason: <u>why</u>" in parsed.text


def test_a_chosen_claim_is_outlined_named_and_boxed_on_its_own() -> None:
    claims = [hl.ClaimView(0, "first"), hl.ClaimView(1, "<i>second</i>", "unfaithful", selected=True, reasons=("r",))]
    items = re.findall(r"<li([^>]*)>(.*?)</li>", hl.render_claims(claims), re.S)
    assert [' class="fl-selected"' in attrs for attrs, _ in items] == [False, True]
    assert parse(items[1][1]).text == "chosenunfaithfulC2 <i>second</i>Reason: r"
    assert parse(items[0][1]).text == "no labelC1 first"
    boxed = hl.render_chosen_claim(claims[1])
    assert boxed.startswith('<div class="fl-chosen">') and "i" not in parse(boxed).tags
    assert parse(boxed).text == "unfaithfulC2 <i>second</i>Reason: r"


def test_tags_name_their_source_and_code_and_a_filtered_one_is_said_in_words() -> None:
    tags = (
        Tag("ambiguity_type", "2", "coding/amb/ana", "Detail", hit=True),
        Tag("ambiguity_type", "4", "coding/amb/ana", "<b>Explicit</b>"),
        Tag("ambiguity_type", "2", "llm/arm-ambiguity-type/gpt-4o", "Detail"),
        Tag("claim_type", "event", "<script>x</script>"),
    )
    claims = [hl.ClaimView(0, "first", tags=tags), hl.ClaimView(1, "second")]
    items = re.findall(r"<li([^>]*)>(.*?)</li>", hl.render_claims(claims), re.S)
    first = parse(items[0][1])
    assert first.tags == ["span", "span", "b", "div", "strong"], "badges, the number in bold, the tags line"
    assert first.text == (
        f"{HIT}no labelC1 firstTags: ambiguity_type: 2 “Detail”, 4 “<b>Explicit</b>” (coding/amb/ana); "
        "ambiguity_type: 2 “Detail” (llm/arm-ambiguity-type/gpt-4o); claim_type: event (<script>x</script>)"
    )
    assert '<strong class="fl-hit">2 “Detail”</strong>' in items[0][1], "only the tag the filter asked for is bold"
    assert items[0][1].count("fl-hit") == 2, "the bold value and the badge"
    assert parse(items[1][1]).text == "no labelC2 second", "no badge without a matching tag"


def test_a_claim_set_after_others_keeps_its_numbers_in_the_list() -> None:
    later = hl.render_claims([hl.ClaimView(25, "extracted"), hl.ClaimView(26, "next")])
    assert later.startswith('<ol class="fl-list fl-claims" start="26">')
    assert "C26" in parse(later).text and "C27" in parse(later).text
    assert hl.render_claims([hl.ClaimView(0, "own")]).startswith('<ol class="fl-list fl-claims">')


def test_passages_list_quotes_the_source_escaped() -> None:
    text = "One <b>two</b>. Three."
    markup = hl.render_passages(text, [(1, 0, 15, 87.4)])
    assert parse(markup).text == "#1 · score 87.4 One <b>two</b>.", "three significant digits, for every ranker's scale"
    assert "No passage" in parse(hl.render_passages(text, [])).text
