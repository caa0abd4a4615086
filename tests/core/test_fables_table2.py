"""FABLES Table 2 on the Overview, in its two views, against FABLES.json and the paper: over all 26 books
every row but CLAUDE-3-OPUS's verdict shares matches the printed one; leaving out the two books where
CLAUDE-3-OPUS declined to merge its chunk summaries reproduces its printed shares exactly, while its
printed claims per summary count all 26 books. Printed figures are typed in
tests/core/tofueval_fables_published.py; ours are recomputed here from the release's JSON."""

from __future__ import annotations

import statistics
from collections import Counter
from pathlib import Path

import duckdb
import pytest

from faithlens.analysis.published import DIFFERS, MATCHES, MISSING
from faithlens.views import overview
from tests import raw
from tests.core import tofueval_fables_published as typed

VERDICTS = ("faithful", "unfaithful", "partial", "unverifiable")


@pytest.fixture(scope="module")
def views(built_db: Path) -> tuple:
    with duckdb.connect(str(built_db), read_only=True) as conn, conn.cursor() as cur:
        return overview.build_headline(cur, "fables").generators


def _row(model: str, left_out: tuple[str, ...] = ()) -> dict[str, float]:
    """Our figures of `model` from FABLES.json: claims per summary over every book, verdict shares over
    the books not left out."""
    books = raw.fables_books()
    claims = [len(models[model]["claims"]) for models in books.values() if model in models]
    labels = Counter(
        raw.FABLES_LABELS[claim["label"]]
        for book, models in books.items()
        if model in models and book not in left_out
        for claim in models[model]["claims"].values()
    )
    total = labels.total()
    shares = {verdict: 100 * labels[verdict] / total for verdict in VERDICTS}
    return {"avg_claims": statistics.fmean(claims), "std_claims": statistics.pstdev(claims), **shares}


def _rounds_to(ours: float, printed: str) -> bool:
    """`ours` at the table's two decimals is the printed figure ('17.2' is 17.20 with its zero dropped)."""
    return f"{ours:.2f}" == f"{float(printed):.2f}"


def test_the_two_books_are_the_refusals_and_dropping_them_reproduces_claudes_row() -> None:
    books = raw.fables_books()
    refusals = sorted(
        b for b, m in books.items() if "do not appear to be related to the same story" in m["CLAUDE-3-OPUS"]["summary"]
    )
    assert tuple(refusals) == typed.FABLES_DECLINED
    printed = typed.FABLES_TABLE2["CLAUDE-3-OPUS"]
    every, paper = _row("CLAUDE-3-OPUS"), _row("CLAUDE-3-OPUS", typed.FABLES_DECLINED)
    assert all(_rounds_to(paper[v], p) for v, p in zip(VERDICTS, printed[3:], strict=True)), (
        "90.89 / 2.10 / 6.65 / 0.35"
    )
    assert not any(_rounds_to(every[v], p) for v, p in zip(VERDICTS, printed[3:], strict=True))
    assert (f"{every['avg_claims']:.2f}", f"{every['std_claims']:.2f}") == printed[1:3], "claims counted over 26 books"


def _beside(figure) -> dict:
    return {row.paper_row: row for row in figure.beside.rows}


def test_all_26_books_the_default_view(views) -> None:
    every, _ = views
    assert every.title.endswith("all 26 books") and "24 of the 26 books" in every.caption
    rows = _beside(every)
    assert set(rows) == set(typed.FABLES_TABLE2)
    for model, printed in typed.FABLES_TABLE2.items():
        ours = _row(model)
        cells = {cell.column: cell for cell in rows[model].compared}
        assert cells["chunk_size"].status == MISSING and "does not record" in cells["chunk_size"].cause
        for column, text in zip(("avg_claims", "std_claims", *VERDICTS), printed[1:], strict=True):
            assert cells[column].ours == pytest.approx(ours[column]) and cells[column].paper.text == text
            expected = MATCHES if _rounds_to(ours[column], text) else DIFFERS
            assert cells[column].status == expected, (model, column)
        if model == "CLAUDE-3-OPUS":
            assert rows[model].status == DIFFERS
            assert all(cells[v].status == DIFFERS for v in VERDICTS)
            assert all(book in cells["faithful"].cause for book in typed.FABLES_DECLINED), "the cause names the books"
        else:
            assert rows[model].status == MATCHES, model


def test_the_papers_24_books_view_matches_every_printed_figure(views) -> None:
    _, paper = views
    assert "the paper's 24 books" in paper.title and "Table 24" in paper.caption
    for model, row in _beside(paper).items():
        ours = _row(model, typed.FABLES_DECLINED if model == "CLAUDE-3-OPUS" else ())
        assert row.status == MATCHES, model
        for cell in row.compared:
            if cell.column != "chunk_size":
                assert cell.ours == pytest.approx(ours[cell.column]), (model, cell.column)
    claude = next(r for r in paper.table.records() if r["generator"] == "CLAUDE-3-OPUS")
    assert (claude["summaries"], claude["summaries in the shares"]) == (26, 24)
    (note,) = paper.beside.notes
    assert "The Guest (CLAUDE-3-OPUS: 11 claims" in note and "Same Time Next Year (CLAUDE-3-OPUS: 12 claims" in note
    assert "not possible to merge" in note, "how the books were found is said beside the figure"
