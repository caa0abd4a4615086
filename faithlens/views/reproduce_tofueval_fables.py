"""TofuEval's and FABLES' reproducers for the Reproduced figures page (`faithlens.views.reproduced`):
one `Figure` per printed cell, ours and the cause of a difference taken from the Overview's tables
(`faithlens.analysis.tofueval_table2`, `faithlens.analysis.fables_table2`), so the page and the
Overview say the same thing.

- TofuEval Table 2: the Average against the five shuffled slots pooled (Model-Extra left out); the
  five model rows have no figure of ours (the release shuffles models per topic). Table 5's counts
  and main-topic shares, and section 3.3's counts, from the release.
- TofuEval Figures 2, 4 and 5, charts without printed numbers: `faithlens.views.reproduce_tofueval_charts`.
- FABLES Table 2 as the paper computes it: CLAUDE-3-OPUS's verdict shares over the 24 books it did
  not decline to merge, everything else over all 26.
"""

from __future__ import annotations

import duckdb

from faithlens.analysis import generators, published
from faithlens.analysis import tofueval_release as release
from faithlens.analysis.figures import BarFigure
from faithlens.analysis.generator_names import SLOTS_POOLED
from faithlens.analysis.published import DIFFERS, MISSING, Compared
from faithlens.views.reproduce_tofueval_charts import chart_figures
from faithlens.views.reproduced import Figure, Link
from faithlens.views.states import OverviewState

MARGINAL = "release data (marginal topics)"
SHUFFLED = "shuffled slots"
NOT_RELEASED = "not in the release"


def _dataset(cur: duckdb.DuckDBPyConnection, format_name: str) -> str | None:
    row = cur.execute("SELECT name FROM dataset WHERE name = ? AND format = ?", [format_name, format_name]).fetchone()
    return row[0] if row else None


def _kind(compared: Compared) -> str:
    if compared.status == MISSING:
        return SHUFFLED if "shuffles" in compared.cause else NOT_RELEASED
    return MARGINAL if compared.status == DIFFERS else ""


def tofueval_figures(cur: duckdb.DuckDBPyConnection) -> list[Figure] | None:
    """TofuEval Table 2 (both levels), Table 5, section 3.3 and ours beside Figures 2, 4 and 5
    (`reproduce_tofueval_charts`); None when `tofueval` is not loaded."""
    dataset = _dataset(cur, "tofueval")
    if dataset is None:
        return None
    link = Link("overview", OverviewState(dataset), "Open the Overview")
    table2 = published.table("tofueval", "table2")
    figures = []
    for figure in generators.tofueval_generators(cur, dataset):
        if figure.beside is None:
            continue
        how = f"gold {figure.key.removeprefix('generators_')} labels, slots A–E pooled, Model-Extra left out"
        for row in figure.beside.rows:
            printed = table2.row("average" if row.paper_row == "Average" else row.paper_row)
            figures += [Figure("tofueval", table2, printed, c, _kind(c), how, link) for c in row.compared]
    found = release.tallies(cur, dataset)
    figures += _table5(found, link) + _section3_3(cur, dataset, found, link)
    return figures + chart_figures(cur, dataset)


def _table5(found: tuple[release.Tally, ...], link: Link) -> list[Figure]:
    table5 = published.table("tofueval", "table5")
    figures = []
    for corpus in release.CORPORA:
        topics = {(t.topic_type, t.topic) for t in found if t.corpus == corpus}
        documents = {topic[0] for _, topic in topics}
        main = sum(1 for kind, _ in topics if kind == "main")
        generators_in = {t.group for t in found if t.corpus == corpus and t.group == SLOTS_POOLED}
        ours = {
            "documents": len(documents),
            "topics_per_doc": len(topics) / len(documents) if documents else None,
            "llms": 5 if generators_in else None,
            "main_topic_pct": 100 * main / len(topics) if topics else None,
        }
        cause = "the release does not include the dialogue transcripts"
        how = f"{corpus}: documents, topics and their categories (topic_category/{corpus}_topic_category.json)"
        for compared in published.compare(table5, corpus, ours, cause=cause):
            figures.append(Figure("tofueval", table5, table5.row(corpus), compared, _kind(compared), how, link))
    return figures


def _section3_3(cur: duckdb.DuckDBPyConnection, dataset: str, found: tuple, link: Link) -> list[Figure]:
    section = published.table("tofueval", "section3_3")
    slots = [t for t in found if t.group == SLOTS_POOLED]
    summaries = sum(t.n for t in slots if t.level == "summary")
    sentences = sum(t.n for t in slots if t.level == "sentence")
    topics = len({t.topic for t in found})
    gaps = release.sentence_gaps(cur, dataset)
    ours = {"generated": 5 * topics, "removed": 5 * topics - summaries, "summaries": summaries, "sentences": sentences}
    causes = {
        "removed": f"the paper's own count does not add up: 1,500 - 23 is 1,477, not the 1,479 it keeps (and the "
        f"release holds); {5 * topics - summaries} of the {topics} topics x 5 slot summaries are missing",
        "sentences": f"one sentence fewer in the release's slots A–E; its one repeated row is Model-Extra's, and "
        f"{gaps} sentence positions never annotated would make {sentences + gaps:,}: not determined",
    }
    how = "slots A–E of the release, every topic"
    figures = []
    for compared in published.compare(section, "five models", ours):
        cell = Compared(compared.column, compared.paper, compared.ours, causes.get(compared.column, ""))
        kind = (
            "" if cell.status != DIFFERS else "the paper's arithmetic" if cell.column == "removed" else "release data"
        )
        figures.append(Figure("tofueval", section, section.rows[0], cell, kind, how, link))
    return figures


def fables_figures(cur: duckdb.DuckDBPyConnection) -> list[Figure] | None:
    """FABLES Table 2 as the paper computes it; None when `fables` is not loaded."""
    dataset = _dataset(cur, "fables")
    if dataset is None:
        return None
    views: list[BarFigure] = generators.fables_generators(cur, dataset)
    paper_view = next((f for f in views if f.key == "generators_claim_paper_books"), views[0] if views else None)
    if paper_view is None or paper_view.beside is None:
        return []
    table2 = published.table("fables", "table2")
    link = Link("overview", OverviewState(dataset), "Open the Overview")
    how = (
        "gold claim labels per summarizer; CLAUDE-3-OPUS's verdict shares over the books it did not decline to "
        "merge, as the paper; claims per summary over every book"
    )
    return [
        Figure("fables", table2, table2.row(row.paper_row), cell, _kind(cell), how, link)
        for row in paper_view.beside.rows
        for cell in row.compared
    ]
