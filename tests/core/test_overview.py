"""The Overview: counts, per-generator tables as the papers compute them, label distributions and
what an empty dataset shows. Expected figures come from the raw files in data/ (tests/raw.py and
the naive readers below), never from the code under test."""

from __future__ import annotations

import csv
import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from faithlens import store
from faithlens.analysis import generators
from faithlens.build import ingest
from faithlens.errors import FaithLensError, NotFoundError
from faithlens.views import overview
from tests import raw
from tests.core import storysumm_expected
from tests.core import storysumm_published as typed

BUNDLED = ("storysumm", "fables", "tofueval")
FABLES_LABELS = raw.FABLES_LABELS
# The release's `claude` is Claude-2 on val and Claude-3 on test (StorySumm paper, section 2.2).
STORYSUMM_PAPER_NAMES = {
    ("claude", "val"): "Claude-2 (raw: claude, val)",
    ("claude", "test"): "Claude-3 (raw: claude, test)",
}


@pytest.fixture(scope="module")
def reports(built_db: Path) -> dict[str, overview.Overview]:
    conn = store.connect(built_db, read_only=True)
    try:
        return {name: overview.build(conn.cursor(), name) for name in BUNDLED}
    finally:
        conn.close()


def _row(table, generator: str) -> dict:
    rows = [row for row in table.records() if row["generator"] == generator]
    assert len(rows) == 1, f"expected one row for {generator!r}"
    return rows[0]


def _pct(part: int, whole: int) -> float:
    return round(100 * part / whole, 1)


@pytest.mark.parametrize("name", BUNDLED)
def test_counts_match_the_raw_files(reports: dict[str, overview.Overview], name: str) -> None:
    expected = getattr(raw, f"{name}_expected")()
    counts = reports[name].headline.counts
    assert (counts.documents, counts.summaries, counts.sentences, counts.claims) == (
        expected["documents"],
        expected["summaries"],
        expected["sentences"],
        expected["claims"],
    )


def test_storysumm_table_2_per_generator(reports: dict[str, overview.Overview]) -> None:
    records = raw.storysumm_records().values()
    per_model: dict[str, list[dict]] = defaultdict(list)
    for record in records:
        per_model[STORYSUMM_PAPER_NAMES.get((record["model"], record["split"]), record["model"])].append(record)
    (figure,) = reports["storysumm"].headline.generators
    assert "gold" in figure.caption and "summary level" in figure.caption and "annotator-only" in figure.caption
    for model, items in [*per_model.items(), (generators.OVERALL, list(records))]:
        row = _row(figure.table, model)
        faithful = sum(r["label"] == 1 for r in items)
        assert row["summaries"] == len(items)
        assert row["% faithful"] == _pct(faithful, len(items))
        for value in ("easy", "hard"):
            assert row[f"# {value}"] == sum(r["label"] == 0 and r["difficulty"] == value for r in items)


def test_storysumm_table_2_beside_the_papers_table_2_and_table_6(reports: dict[str, overview.Overview]) -> None:
    (figure,) = reports["storysumm"].headline.generators
    beside = figure.beside
    assert beside.reference.startswith("StorySumm (Subbiah et al., EMNLP 2024), Table 2")
    ours = storysumm_expected.generator_table()
    paper_rows = dict(
        zip(
            ["Davinci-3", "GPT-3.5", "ChatGPT", "GPT-4", "Claude-2", "Claude-3", "Overall"],
            typed.PAPER_TABLE_2,
            strict=True,
        )
    )
    assert [row.paper_row for row in beside.rows] == [*paper_rows, "Gold (Table 6)"]
    for row in beside.rows[:-1]:
        key = paper_rows[row.paper_row]
        for cell, printed, mine in zip(row.compared, typed.PAPER_TABLE_2[key], ours[key], strict=True):
            assert float(cell.paper.text) == printed and cell.ours == pytest.approx(mine)
            assert cell.status == ("matches" if storysumm_expected.within_printed(mine, printed) else "differs")
            if cell.status == "differs":
                assert "annotator labels alone" in cell.cause and "which ours match" in cell.cause
        assert row.compared[0].status == "matches", "the summaries per generator are the paper's"
    gold = beside.rows[-1]
    assert gold.ours_is == generators.OVERALL and gold.status == "matches"
    assert [float(c.paper.text) for c in gold.compared] == list(typed.PAPER_TABLE_6_GOLD)
    assert [c.ours for c in gold.compared] == pytest.approx(list(ours[("Overall", "all")][1:]))
    assert "differ" in figure.caption and "beside ours below" in figure.caption


def test_fables_table_2_per_generator(reports: dict[str, overview.Overview]) -> None:
    labels: dict[str, Counter] = defaultdict(Counter)
    for models in raw.fables_books().values():
        for model, summary in models.items():
            labels[model].update(FABLES_LABELS[c["label"]] for c in summary["claims"].values())
    figure, paper_books = reports["fables"].headline.generators
    assert "claim level" in figure.caption and "all 26 books" in figure.title
    assert "the paper's 24 books" in paper_books.title
    for model, counter in labels.items():
        row = _row(figure.table, model)
        total = sum(counter.values())
        assert row["labelled"] == total
        for verdict in ("faithful", "unfaithful", "partial", "unverifiable"):
            assert row[f"% {verdict}"] == round(100 * counter[verdict] / total, 2), "two decimals, as Table 2"
    # The paper's Table 2 (population std over 26 books) for a model it computes on all books.
    assert (_row(figure.table, "MIXTRAL")["avg # claims"], _row(figure.table, "MIXTRAL")["std # claims"]) == (
        27.5,
        4.61,
    )


def _tofueval_raw() -> tuple[dict, dict]:
    """(sentence labels, summary labels) per (model, corpus, topic type), read from the CSVs."""
    folder = raw.DATA / "tofueval"
    topic_types = {}
    for corpus in ("mediasum", "meetingbank"):
        topic_types[corpus] = json.loads((folder / "topic_category" / f"{corpus}_topic_category.json").read_text())
    sentences: dict[tuple, Counter] = defaultdict(Counter)
    summaries: dict[tuple, dict] = defaultdict(dict)
    seen = set()
    for path in sorted((folder / "factual_consistency").glob("*.csv")):
        corpus = path.name.split("_")[0]
        with path.open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                if tuple(row.values()) in seen:
                    continue
                seen.add(tuple(row.values()))
                key = (row["model_name"], corpus, topic_types[corpus][row["topic"]])
                sentences[key][row["sent_label"]] += 1
                summary = (row["doc_id"], row["topic"])
                summaries[key][summary] = summaries[key].get(summary, False) or row["sent_label"] == "no"
    return sentences, summaries


def test_tofueval_table_2_by_generator_corpus_and_topic_type(reports: dict[str, overview.Overview]) -> None:
    sentences, summaries = _tofueval_raw()
    by_level = {f.key: f for f in reports["tofueval"].headline.generators}
    assert set(by_level) == {"generators_sentence", "generators_summary"}
    for level, counted in (("sentence", _per_row(sentences)), ("summary", _per_row(summaries))):
        table = by_level[f"generators_{level}"].table
        for (name, corpus, topic_type), (unfaithful, total) in counted.items():
            row = _row(table, name)
            assert row[f"{corpus} {topic_type} n"] == total, (level, name)
            assert row[f"{corpus} {topic_type} % unfaithful"] == _pct(unfaithful, total), (level, name)
        rows = table.column("generator")
        assert rows[:3] == [raw.TOFUEVAL_SLOTS_POOLED, "Table 2 as printed: Average", "Model-Extra"]
        assert rows[-5:] == [raw.tofueval_generator(f"model_{x}") for x in "ABCDE"], "slots last, named as slots"


def _per_row(counted: dict) -> dict[tuple[str, str, str], tuple[int, int]]:
    """(row, corpus, topic type) -> (unfaithful, n) for each shown generator, the pooled slots and every
    generator pooled, from per-(raw model, corpus, topic type) sentence counters or summary flags."""
    out: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0])
    for (model, corpus, topic_type), found in counted.items():
        unfaithful, total = (
            (found["no"], found.total()) if isinstance(found, Counter) else (sum(found.values()), len(found))
        )
        every = "every generator pooled (with Model-Extra; not the paper's Average)"
        for name in {raw.tofueval_generator(model), raw.tofueval_group(model), every}:
            out[name, corpus, topic_type][0] += unfaithful
            out[name, corpus, topic_type][1] += total
    return {key: (u, n) for key, (u, n) in out.items()}


def test_label_distribution_per_source_and_level(reports: dict[str, overview.Overview]) -> None:
    expected = raw.storysumm_expected()["labels"]
    table = reports["storysumm"].figures.labels.table
    for source, levels in expected.items():
        for level, counter in levels.items():
            (row,) = [row for row in table.records() if (row["source"], row["level"]) == (source, level)]
            assert row["labelled"] == sum(counter.values())
            assert {v: row[v] for v in counter} == counter
    assert table.column("source")[:2] == ["gold", "gold"], "gold comes first"


def test_score_only_sources_are_shown_not_dropped(reports: dict[str, overview.Overview]) -> None:
    predictions = raw.storysumm_predictions()
    score_only = {"alignscore-roberta-large", "unieval"}
    labels = reports["storysumm"].figures.labels.table
    for source in score_only:
        (row,) = [row for row in labels.records() if row["source"] == source]
        assert row["labelled"] == 0 and row["score only"] == len(predictions[source])
        assert row["note"].startswith("score only")
    scores = reports["storysumm"].figures.scores.table
    assert set(scores.column("source")) == score_only
    for row in scores.records():
        values = sorted(p["probs"] for p in predictions[row["source"]].values())
        assert row["n"] == len(values)
        assert (row["min"], row["max"]) == pytest.approx((values[0], values[-1]))


def test_every_figure_has_a_one_line_caption_naming_source_and_level(reports: dict[str, overview.Overview]) -> None:
    for report in reports.values():
        figures = [
            *report.headline.generators,
            report.figures.labels,
            *([report.figures.scores] if report.figures.scores is not None else []),
        ]
        for figure in figures:
            assert "\n" not in figure.caption
            assert "level" in figure.caption
            assert "source" in figure.caption


def test_missing_parts_are_named(reports: dict[str, overview.Overview]) -> None:
    assert any("No claims" in note for note in reports["tofueval"].headline.missing)
    assert any("No source text for 100 of 100 documents" in note for note in reports["tofueval"].headline.missing)
    assert any("No sentences" in note for note in reports["fables"].headline.missing)
    assert reports["storysumm"].headline.missing == ()


BARE = [
    {"document_id": "d1", "summary_id": "s1", "sentences": [{"text": "One."}, {"text": "Two."}]},
    {"document_id": "d2", "summary_id": "s2", "sentences": [{"text": "Three."}]},
]


def _import(db: Path, tmp_path: Path, name: str, records: list[dict]) -> None:
    path = tmp_path / f"{name}.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    ingest.import_file(db, path, "canonical", name)


def test_dataset_without_labels_texts_or_claims_says_what_is_missing(db_copy: Path, tmp_path: Path) -> None:
    _import(db_copy, tmp_path, "bare", BARE)
    conn = store.connect(db_copy, read_only=True)
    report = overview.build(conn.cursor(), "bare")
    conn.close()
    assert (report.headline.counts.summaries, report.headline.counts.sentences, report.headline.counts.claims) == (
        2,
        3,
        0,
    )
    notes = " ".join(report.headline.missing)
    for phrase in ("No source text for 2 of 2 documents", "No claims", "No labels", "name no generator model"):
        assert phrase in notes
    assert report.headline.generators == () and report.figures.labels is None and report.figures.scores is None


def test_imported_dataset_gets_a_generic_per_generator_table(db_copy: Path, tmp_path: Path) -> None:
    records = [
        {"document_id": "d", "summary_id": "a", "model": "m1", "label": "faithful", "sentences": [{"text": "x"}]},
        {"document_id": "d", "summary_id": "b", "model": "m1", "label": "unfaithful", "sentences": [{"text": "y"}]},
        {"document_id": "d", "summary_id": "c", "model": "m2", "label": "unfaithful", "sentences": [{"text": "z"}]},
    ]
    _import(db_copy, tmp_path, "mine", records)
    conn = store.connect(db_copy, read_only=True)
    (figure,) = overview.build(conn.cursor(), "mine").headline.generators
    conn.close()
    assert _row(figure.table, "m1")["% faithful"] == 50.0
    assert _row(figure.table, "m2")["% unfaithful"] == 100.0
    assert _row(figure.table, generators.OVERALL)["labelled"] == 3


def test_unknown_dataset_is_a_not_found_error(built_db: Path) -> None:
    conn = store.connect(built_db, read_only=True)
    with pytest.raises(NotFoundError, match="no dataset named 'nope'"):
        overview.build(conn.cursor(), "nope")
    conn.close()


# ---------------------------------------------------------------- the page (AppTest)


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_overview_page_shows_counts_charts_captions_and_downloads(app_test) -> None:
    at = app_test("app.py", dataset="storysumm")
    at.run()
    assert not at.exception
    expected = raw.storysumm_expected()
    assert _metrics(at)["Summaries"] == f"{expected['summaries']:,}"
    assert _metrics(at)["Claims"] == f"{expected['claims']:,}"
    charts = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    assert len(charts) == 3, "generator table, label distribution, score distribution"
    first = {trace["name"]: trace for trace in charts[0]["data"]}
    assert set(first) == {"faithful", "unfaithful"}
    assert "customdata" in first["faithful"] and "%{customdata[0]" in first["faithful"]["hovertemplate"]
    assert len(at.get("download_button")) == 4, "generator table, its comparison with the paper, two distributions"
    assert sum("source 'gold'" in c.value for c in at.caption) >= 1
    beside = "Beside the paper: StorySumm (Subbiah et al., EMNLP 2024), Table 2"
    assert any(beside in m.value.replace("\\", "") for m in at.markdown)


def test_sidebar_switch_changes_the_overview(app_test) -> None:
    at = app_test("app.py", dataset="storysumm")
    at.run()
    at.radio(key="dataset_picker").set_value("tofueval").run()
    assert not at.exception
    assert _metrics(at)["Summaries"] == f"{raw.tofueval_expected()['summaries']:,}"
    assert at.query_params["dataset"] == "tofueval"


def test_unknown_dataset_in_the_url_warns_and_falls_back(app_test) -> None:
    at = app_test("app.py", dataset="no-such-set")
    at.run()
    assert not at.exception
    assert any("no\\-such\\-set" in w.value for w in at.sidebar.warning)
    assert at.radio(key="dataset_picker").value == "storysumm", "the default: the most label sources"


def test_empty_imported_dataset_page_shows_what_is_missing(
    app_test, db_copy: Path, tmp_path: Path, monkeypatch
) -> None:
    _import(db_copy, tmp_path, "bare", BARE)
    monkeypatch.setenv("FAITHLENS_DB", str(db_copy))
    at = app_test("app.py", dataset="bare")
    at.run()
    assert not at.exception and not at.error
    assert _metrics(at)["Claims"] == "0"
    shown = " ".join(i.value for i in at.info)
    assert "No labels" in shown and "No claims" in shown and "No source text" in shown
    assert not at.get("plotly_chart")


def test_core_errors_show_the_one_error_box(app_test, monkeypatch) -> None:
    def broken(cur, dataset, info=None):
        raise FaithLensError("the overview broke", "rebuild the database")

    monkeypatch.setattr(overview, "build_headline", broken)
    at = app_test("app.py", dataset="fables")
    at.run()
    assert not at.exception
    (box,) = at.error
    assert "the overview broke" in box.value and "rebuild the database" in box.value
