"""The Errors page in AppTest: TofuEval's error types per generator and per topic type and
StorySumm's recall per difficulty carry the counts of the raw files, every count links to Explore
(which then counts the same units), bad URL values are dropped with a note, hostile tag values are
escaped, and every section offers its CSV.

The page is reached through app.py and `switch_page`, as in the real app, so its links resolve.
Heatmaps are read back from the page's own HTML with `html.parser`, which also unescapes it."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from faithlens import config
from faithlens.build import ingest
from tests import raw
from tests.apptest import clean

PAGE = "pages/errors.py"
EXPLORE = "pages/explore.py"
ROOT = Path(__file__).resolve().parents[2]
EXTRINSIC = "Extrinsic Information"
FABLES = "fables-gpt-4-turbo-preview"
HOSTILE = "<img src=x onerror=alert(1)>"
HOSTILE_MODEL = "<script>alert('model')</script>"


@dataclass
class Cell:
    count: int
    pct: float | None
    href: str | None


@dataclass
class Heatmap:
    """One `fl-hm` table: its corner, column headers, and each row's cells (None: an empty cell)."""

    corner: str = ""
    columns: list[str] = field(default_factory=list)
    rows: dict[str, list[Cell | None]] = field(default_factory=dict)

    def column(self, name: str) -> int:
        """Index of the column named `name` (its header may add "(tagged of units)" or the units counted)."""
        (index,) = [i for i, c in enumerate(self.columns) if c == name or c.startswith(f"{name} (")]
        return index

    def cell(self, row: str, column: str) -> Cell | None:
        return self.rows[row][self.column(column)]


class _Reader(HTMLParser):
    """Collects every `<div class="fl-hm">` table, text unescaped as a browser shows it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.maps: list[Heatmap] = []
        self.hrefs: list[str] = []
        self.text: list[str] | None = None
        self.href: str | None = None
        self.head = self.corner = False
        self.row: tuple[str, list[Cell | None]] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "a" and found.get("href") is not None:
            self.hrefs.append(found["href"])
            self.href = found["href"]
        if tag == "div" and found.get("class") == "fl-hm":
            self.maps.append(Heatmap())
        elif tag == "thead":
            self.head, self.corner = True, True
        elif tag in ("th", "td"):
            self.text, self.href = [], None
        elif tag == "br" and self.text is not None:
            self.text.append(" ")

    def handle_data(self, data: str) -> None:
        if self.text is not None:
            self.text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "thead":
            self.head = False
        elif tag == "th" and self.text is not None:
            text, self.text = "".join(self.text), None
            current = self.maps[-1]
            if self.corner:
                current.corner, self.corner = text, False
            elif self.head:
                current.columns.append(text)
            else:
                self.row = (text, [])
        elif tag == "td" and self.text is not None:
            text, self.text = "".join(self.text).strip(), None
            numbers = re.match(r"([\d,]+)(?:\s+([\d.]+)%)?", text)
            cell = Cell(int(numbers[1].replace(",", "")), float(numbers[2]) if numbers[2] else None, self.href)
            self.row[1].append(cell if text else None)
        elif tag == "tr" and self.row is not None:
            self.maps[-1].rows[self.row[0]] = self.row[1]
            self.row = None


def read_html(at) -> _Reader:
    reader = _Reader()
    for block in at.html:
        reader.feed(block.value)
    return reader


def heatmaps(at) -> list[Heatmap]:
    return read_html(at).maps


def markup(at) -> str:
    return "\n".join(block.value for block in at.html)


@pytest.fixture
def errors_page(open_page):
    def make(**params: str | list[str]):
        return open_page(PAGE, **params)

    return make


def error_types(row: dict[str, str]) -> list[str]:
    return [t.strip() for t in row["type"].split(",") if t.strip()]


def tofueval_by_topic_type() -> list[tuple[str, dict[str, str]]]:
    """(main|marginal, row) for every TofuEval sentence, the topic type from its corpus's category file."""
    found = []
    folder = raw.DATA / "tofueval" / "factual_consistency"
    for corpus in ("mediasum", "meetingbank"):
        path = raw.DATA / "tofueval" / "topic_category" / f"{corpus}_topic_category.json"
        categories = json.loads(path.read_text(encoding="utf-8"))
        found += [(categories[r["topic"]], r) for r in raw.tofueval_rows(sorted(folder.glob(f"{corpus}_*.csv")))]
    return found


def one_decimal(pct: float) -> float:
    """A percentage as the page should show it: rounded once, to one decimal."""
    return float(f"{pct:.1f}")


def assert_counts_match(shown: Heatmap, grouped: list[tuple[str, dict[str, str]]]) -> None:
    """Every cell, the `all` column, the headers and the % of tagged sentences, against the raw rows."""
    counts = Counter((t, group) for group, row in grouped for t in error_types(row))
    totals = Counter(t for _, row in grouped for t in error_types(row))
    tagged = Counter(group for group, row in grouped if error_types(row))
    units = Counter(group for group, _ in grouped)
    groups = sorted(units)
    tagged["all"], units["all"] = sum(tagged.values()), len(grouped)
    assert shown.corner == "error_type"
    assert shown.columns == [f"{g} ({tagged[g]:,} of {units[g]:,})" for g in (*groups, "all")]
    assert list(shown.rows) == [t for t, _ in totals.most_common()], "most frequent error type first"
    for value in totals:
        for group in (*groups, "all"):
            expected = totals[value] if group == "all" else counts[(value, group)]
            cell = shown.cell(value, group)
            assert cell.count == expected, (value, group)
            assert cell.pct == one_decimal(100 * expected / tagged[group]), (value, group, expected, tagged[group])


def test_tofueval_defaults_to_topic_types_and_the_gold_tags(errors_page) -> None:
    """A slot is no model (the release shuffles models per topic), so TofuEval opens on what means
    something: main against marginal topics, counting the dataset's own tags."""
    at = errors_page(dataset="tofueval")
    assert at.selectbox(key="errors.tofueval.family").value == "error_type@sentence"
    assert at.selectbox(key="errors.tofueval.by").value == "topic_type"
    assert at.selectbox(key="errors.tofueval.by").options[:3] == [
        "topic type (main / marginal)",
        "corpus",
        "generator, shuffled slots pooled",
    ]
    assert dict(at.query_params) == {"dataset": "tofueval"}, "choices the page made itself stay out of the URL"
    grouped = tofueval_by_topic_type()
    assert len(grouped) == len(raw.tofueval_rows()), "every sentence has a topic type"
    shown = heatmaps(at)[0]
    assert_counts_match(shown, grouped)
    assert "tagged by gold" in markup(at).replace("&#x27;", "'")
    link = parse_qs(urlsplit(shown.cell(EXTRINSIC, "marginal").href).query)
    assert link == {
        "dataset": ["tofueval"],
        "topic_type": ["marginal"],
        "unit_level": ["sentence"],
        "unit_tags": [f"error_type: {EXTRINSIC}"],
        "tagged_by": ["gold"],
    }, "the link counts the same tag source as the cell"


def test_tofueval_per_generator_names_the_slots_and_says_what_they_are(errors_page) -> None:
    at = errors_page(dataset="tofueval", by="generator")
    assert at.query_params["by"] == "generator"
    rows = raw.tofueval_rows()
    assert_counts_match(heatmaps(at)[0], [(raw.tofueval_generator(row["model_name"]), row) for row in rows])
    assert "slot A (shuffled per topic; raw: model_A)" in heatmaps(at)[0].columns[1]
    assert any("shuffles their order per topic" in c.value for c in at.caption), "said beside the breakdown"


def test_tofueval_percent_of_every_sentence(errors_page) -> None:
    at = errors_page(dataset="tofueval", by="generator")
    at.radio(key="errors.tofueval.of").set_value("all").run()
    clean(at)
    assert at.query_params["of"] == "all"
    rows = raw.tofueval_rows()
    sentences = Counter(raw.tofueval_generator(row["model_name"]) for row in rows)
    shown = heatmaps(at)[0]
    for name, n in sentences.items():
        count = sum(EXTRINSIC in error_types(row) for row in rows if raw.tofueval_generator(row["model_name"]) == name)
        assert shown.cell(EXTRINSIC, name).pct == one_decimal(100 * count / n), name


def test_model_extra_against_the_pooled_slots_rewrites_the_url_and_follows_the_raw_counts(
    errors_page, app_test
) -> None:
    at = errors_page(dataset="tofueval")
    at.selectbox(key="errors.tofueval.by").set_value("generator_group").run()
    clean(at)
    assert dict(at.query_params) == {"dataset": "tofueval", "by": "generator_group"}
    shown = heatmaps(at)[0]
    assert_counts_match(shown, [(raw.tofueval_group(row["model_name"]), row) for row in raw.tofueval_rows()])
    cell = shown.cell(EXTRINSIC, raw.TOFUEVAL_SLOTS_POOLED)
    assert parse_qs(urlsplit(cell.href).query)["generator"] == [raw.TOFUEVAL_SLOTS_POOLED]
    assert explore_count(cell.href, app_test)[0] == cell.count, "Explore's generator filter takes the pooled slots"


def explore_count(href: str, app_test) -> tuple[int, str]:
    """Open Explore on `href` as the link would; (the count its caption starts with, the caption)."""
    at = app_test(EXPLORE)
    for name, values in parse_qs(urlsplit(href).query).items():
        at.query_params[name] = values if len(values) > 1 else values[0]
    at.run()
    clean(at)
    assert not at.warning, [w.value for w in at.warning]
    caption = next(m.value for m in at.markdown if re.match(r"\*\*[\d,]+ (summar|sentence|claim)", m.value))
    return int(re.match(r"\*\*([\d,]+)", caption)[1].replace(",", "")), caption.replace("\\", "")


def test_a_topic_type_cell_opens_explore_on_exactly_its_sentences(errors_page, app_test) -> None:
    at = errors_page(dataset="tofueval", by="topic_type")
    cell = heatmaps(at)[0].cell(EXTRINSIC, "marginal")
    marginal = [row for topic_type, row in tofueval_by_topic_type() if topic_type == "marginal"]
    extrinsic = [row for row in marginal if EXTRINSIC in error_types(row)]
    summaries = {(row["doc_id"], row["topic"], row["model_name"]) for row in extrinsic}
    count, caption = explore_count(cell.href, app_test)
    assert cell.count == count == len(extrinsic)
    assert caption.startswith(f"**{len(extrinsic)} sentences of {len(summaries)} summaries where")


def storysumm_recall(source: str, difficulty: str) -> tuple[int, int]:
    """(summaries `source` labels unfaithful, summaries it labels) among the gold-unfaithful ones of `difficulty`."""
    records, predictions = raw.storysumm_records(), raw.storysumm_predictions()[source]
    counted = [i for i, r in records.items() if r["difficulty"] == difficulty and r["label"] == 0 and i in predictions]
    return sum(predictions[i]["label"] == 0 for i in counted), len(counted)


def test_storysumm_recall_per_difficulty_matches_the_raw_predictions(errors_page) -> None:
    at = errors_page(dataset="storysumm")
    assert at.selectbox(key="errors.storysumm.family").value == "difficulty@summary"
    assert at.selectbox(key="errors.storysumm.reference").value == "gold"
    distribution, recall = heatmaps(at)
    records = raw.storysumm_records()
    difficulties = Counter(r["difficulty"] for r in records.values() if r["difficulty"])
    assert {row: distribution.cell(row, "all").count for row in distribution.rows} == dict(difficulties)
    labelled = [s for s, p in raw.storysumm_predictions().items() if all("label" in v for v in p.values())]
    assert FABLES in labelled
    for source in labelled:
        for difficulty in ("easy", "hard"):
            flagged, total = storysumm_recall(source, difficulty)
            cell = recall.cell(difficulty, source)
            assert (cell.count, cell.pct) == (flagged, one_decimal(100 * flagged / total)), (source, difficulty)
    assert storysumm_recall(FABLES, "easy") == (14, 20) and recall.cell("easy", FABLES).pct == 70.0
    assert storysumm_recall(FABLES, "hard") == (21, 40) and recall.cell("hard", FABLES).pct == 52.5


def test_every_recall_cell_opens_explore_on_the_units_it_counts(errors_page, app_test) -> None:
    at = errors_page(dataset="storysumm")
    recall = heatmaps(at)[-1]
    cells = [cell for row in recall.rows.values() for cell in row if cell is not None]
    assert len(cells) == 2 * len(raw.storysumm_predictions())
    for cell in cells:
        assert explore_count(cell.href, app_test)[0] == cell.count, cell.href


@pytest.mark.parametrize(
    ("dataset", "name", "value"),
    [
        ("tofueval", "family", "nope@sentence"),
        ("tofueval", "by", "xyz"),
        ("storysumm", "sources", "nobody"),
        ("tofueval", "sources", "nobody"),
        ("tofueval", "reference", "nobody"),
        ("storysumm", "split", "nope"),
    ],
)
def test_a_bad_link_value_gets_one_note_and_the_default_view(errors_page, dataset, name, value) -> None:
    at = errors_page(dataset=dataset, **{name: value})
    notes = [w.value.replace("\\", "") for w in at.warning]
    assert len(notes) == 1 and f"{name}='{value}'" in notes[0] and "ignored" in notes[0], notes
    assert dict(at.query_params) == {"dataset": dataset}, "the URL says what is shown: the default"
    default = errors_page(dataset=dataset)
    assert heatmaps(at) == heatmaps(default)
    assert [s.value for s in at.selectbox] == [s.value for s in default.selectbox]
    assert [m.value for m in at.multiselect] == [m.value for m in default.multiselect]


@pytest.mark.parametrize("params", [{"dataset": "tofueval"}, {"dataset": "storysumm"}, {"dataset": "fables"}])
def test_every_link_in_the_html_is_a_relative_explore_link(errors_page, params) -> None:
    at = errors_page(**params)
    hrefs = read_html(at).hrefs
    assert hrefs
    for href in hrefs:
        assert href.startswith("/explore?") and "javascript:" not in href.lower(), href


@pytest.mark.parametrize(
    ("params", "sections"),
    [
        ({"dataset": "tofueval"}, 2),  # where the values occur, values on the same unit (no other source)
        ({"dataset": "tofueval", "family": "verdict:gold@summary"}, 1),
        ({"dataset": "storysumm"}, 2),  # where, recall (no summary carries both difficulties)
    ],
)
def test_each_section_shown_offers_its_csv(errors_page, params, sections: int) -> None:
    at = errors_page(**params)
    buttons = at.get("download_button")
    assert len(heatmaps(at)) == len(buttons) == sections
    assert all(button.proto.label == "Download CSV" for button in buttons)


HOSTILE_LINES = [
    {
        "document_id": "doc-1",
        "summary_id": "sum-1",
        "model": HOSTILE_MODEL,
        "sentences": [
            {"text": "Ann sailed south.", "label": "unfaithful", "error_types": [HOSTILE, "Contradiction"]},
            {"text": "A storm came.", "label": "faithful"},
        ],
    },
    {
        "document_id": "doc-1",
        "summary_id": "sum-2",
        "model": "plain-model",
        "sentences": [{"text": "Ann went to sea.", "label": "unfaithful", "error_types": [HOSTILE]}],
    },
]


@pytest.fixture
def hostile_page(apptest_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The Errors page on a copy of the database that also holds dataset `hostile` (imported in the
    canonical format), whose error types and generator are markup."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    db, lines = tmp_path / "own.duckdb", tmp_path / "hostile.jsonl"
    shutil.copy(apptest_db, db)
    lines.write_text("\n".join(json.dumps(line) for line in HOSTILE_LINES) + "\n", encoding="utf-8")
    ingest.import_file(db, lines, "canonical")
    monkeypatch.setenv(config.SETTINGS["db"].env, str(db))
    st.cache_data.clear()
    st.cache_resource.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    at.query_params["dataset"] = "hostile"
    at.switch_page(PAGE)
    yield at
    st.cache_data.clear()
    st.cache_resource.clear()


def test_hostile_tag_values_are_escaped_and_shown_literally(hostile_page) -> None:
    at = hostile_page.run()
    clean(at)
    text = markup(at)
    assert "<img" not in text and "<script" not in text
    assert "&lt;img src=x onerror=alert(1)&gt;" in text and "&lt;script&gt;" in text
    distribution, pairs = heatmaps(at)
    assert distribution.cell(HOSTILE, "all").count == 2, "shown literally, as the browser reads the escaped text"
    assert distribution.cell(HOSTILE, HOSTILE_MODEL).count == 1
    assert pairs.cell(HOSTILE, "Contradiction").count == 1
    hrefs = read_html(at).hrefs
    assert hrefs and all(href.startswith("/explore?") and "javascript:" not in href for href in hrefs)
    link = parse_qs(urlsplit(distribution.cell(HOSTILE, HOSTILE_MODEL).href).query)
    assert link["generator"] == [HOSTILE_MODEL] and link["unit_tags"] == [f"error_type: {HOSTILE}"]


def test_choosing_another_family_and_back_restores_its_recall_defaults(errors_page) -> None:
    at = errors_page(dataset="storysumm")
    first = heatmaps(at)[-1]
    at.selectbox(key="errors.storysumm.family").set_value("verdict:gold@summary").run()
    clean(at)
    assert at.query_params["family"] == "verdict:gold@summary"
    at.selectbox(key="errors.storysumm.family").set_value("difficulty@summary").run()
    clean(at)
    assert at.selectbox(key="errors.storysumm.reference").value == "gold"
    assert dict(at.query_params) == {"dataset": "storysumm"}
    assert heatmaps(at)[-1] == first


def test_clearing_every_source_shows_no_recall_rather_than_all(errors_page) -> None:
    at = errors_page(dataset="storysumm")
    at.multiselect(key="errors.storysumm.sources").set_value([]).run()
    clean(at)
    assert len(heatmaps(at)) == 1, "only the distribution is left"
    assert any("at least one source" in i.value for i in at.info)
