"""The Overview of one dataset: counts, what is missing, label distributions per source and
level, and each generator's faithfulness tabulated the way the benchmark's paper does it (the
dataset adapter names that table; `faithlens.analysis.generators` computes it).

Every figure carries one caption line naming its label source, level and denominator. Counting
happens in DuckDB; plain Python reshapes the small aggregated rows into charts and tables.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from faithlens import datasets
from faithlens.analysis.figures import BAR_COLUMNS, BarFigure, ScoreFigure, Table, round1
from faithlens.analysis.generators import NO_MODEL
from faithlens.errors import NotFoundError
from faithlens.store.claim_sets import ClaimSet
from faithlens.views import catalog
from faithlens.vocab import GOLD, LEVELS, VERDICTS


@dataclass(frozen=True)
class Counts:
    """How much of a dataset is loaded."""

    documents: int
    documents_with_text: int
    summaries: int
    sentences: int
    claims: int
    """The dataset's own claims."""
    labels: int
    extracted: tuple[ClaimSet, ...] = ()
    """The sets of claims models extracted, counted apart from the dataset's own."""

    @property
    def extracted_claims(self) -> int:
        return sum(claim_set.claims for claim_set in self.extracted)


@dataclass(frozen=True)
class Headline:
    """The top of the Overview: what the dataset holds and lacks, and its per-generator tables."""

    dataset: str
    format: str
    description: str | None
    citation: str | None
    counts: Counts
    missing: tuple[str, ...]
    """Plain sentences saying what this dataset lacks (texts, claims, labels, ...)."""
    generators: tuple[BarFigure, ...]


@dataclass(frozen=True)
class LabelFigures:
    """The bottom of the Overview: label distributions per source and level, and score quartiles."""

    labels: BarFigure | None
    scores: ScoreFigure | None


@dataclass(frozen=True)
class Overview:
    """Everything the Overview page shows for one dataset."""

    headline: Headline
    figures: LabelFigures


def build(cur: duckdb.DuckDBPyConnection, dataset: str) -> Overview:
    """The Overview of `dataset`; raises NotFoundError when no such dataset is loaded."""
    return Overview(build_headline(cur, dataset), build_label_figures(cur, dataset))


def build_headline(cur: duckdb.DuckDBPyConnection, dataset: str, info: catalog.DatasetInfo | None = None) -> Headline:
    """Counts, what is missing and the generator tables: computed apart from the label figures so
    the page can draw its first chart before the slower label distributions are ready. `info` is the
    dataset's entry of `catalog.list_datasets` when the caller has it (the page's sidebar list, read
    at the same data version), which spares counting it again."""
    if info is None:
        found = catalog.list_datasets(cur, dataset)
        if not found:
            raise NotFoundError(f"no dataset named {dataset!r} is loaded", "pick one in the sidebar")
        (info,) = found
    n_labels = cur.execute("SELECT count(*) FROM current_label WHERE dataset = ?", [dataset]).fetchone()[0]
    counts = Counts(
        info.documents,
        info.documents_with_text,
        info.summaries,
        info.sentences,
        info.claims,
        int(n_labels),
        info.claim_sets,
    )
    generators = datasets.paper_tables(info.format)(cur, dataset)
    return Headline(
        dataset=dataset,
        format=info.format,
        description=info.description,
        citation=info.citation,
        counts=counts,
        missing=tuple(missing(cur, dataset, counts)),
        generators=tuple(generators),
    )


def build_label_figures(cur: duckdb.DuckDBPyConnection, dataset: str) -> LabelFigures:
    return LabelFigures(labels=label_distribution(cur, dataset), scores=score_distribution(cur, dataset))


def missing(cur: duckdb.DuckDBPyConnection, dataset: str, counts: Counts) -> list[str]:
    """What the dataset lacks, one sentence each, so pages can say it instead of showing blanks."""
    notes = []
    if counts.summaries == 0:
        notes.append("No summaries: this dataset holds nothing to show.")
    without_text = counts.documents - counts.documents_with_text
    if without_text:
        row = cur.execute(
            "SELECT mode(text_note) FROM document WHERE dataset = ? AND text IS NULL", [dataset]
        ).fetchone()
        why = f" {row[0]}" if row and row[0] else ""
        notes.append(f"No source text for {without_text:,} of {counts.documents:,} documents.{why}")
    if counts.summaries and counts.sentences == 0:
        notes.append("No sentences: summaries are not split into labelled sentences in this dataset.")
    if counts.summaries and counts.claims == 0:
        extracted = " (only claims a model extracted, counted apart)" if counts.extracted else ""
        notes.append(f"No claims: summaries are not decomposed into claims in this dataset{extracted}.")
    if counts.summaries and counts.labels == 0:
        notes.append("No labels: no label source has labelled anything in this dataset yet.")
    empty_sources = cur.execute(
        """
        SELECT s.source FROM label_source s
        WHERE s.dataset = ? AND NOT EXISTS (SELECT 1 FROM label l WHERE l.dataset = s.dataset AND l.source = s.source)
        ORDER BY s.source
        """,
        [dataset],
    ).fetchall()
    if counts.labels and empty_sources:
        names = ", ".join(row[0] for row in empty_sources)
        notes.append(f"Label sources with no labels: {names}.")
    no_model = cur.execute("SELECT count(*) FROM summary WHERE dataset = ? AND model IS NULL", [dataset]).fetchone()[0]
    if no_model:
        subject = "1 summary names" if no_model == 1 else f"{no_model:,} summaries name"
        notes.append(f"{subject} no generator model; they are grouped as {NO_MODEL!r}.")
    return notes


# ---------------------------------------------------------------- label distributions


def _level_order(level: str) -> int:
    return LEVELS.index(level) if level in LEVELS else len(LEVELS)


def label_distribution(cur: duckdb.DuckDBPyConnection, dataset: str) -> BarFigure | None:
    """Current labels per (source, level): the share of each verdict; score-only sources noted. A source's
    labels of claims a model extracted are a level of their own, "claim (extracted by SOURCE)"."""
    counted = cur.execute(
        """
        SELECT l.source, s.kind, l.level, l.value::VARCHAR AS value, count(*) AS n, count(l.score) AS scored
        FROM current_label l LEFT JOIN label_source s ON s.dataset = l.dataset AND s.source = l.source
        WHERE l.dataset = ?
        GROUP BY ALL
        """,
        [dataset],
    ).fetchall()
    counted = _extracted_apart(cur, dataset, counted)
    if not counted:
        return None
    parts: dict[tuple[str, str, str], list[tuple]] = {}
    for source, kind, level, value, n, scored in counted:
        parts.setdefault((source, kind, level), []).append((value, n, scored))
    # Gold first, then sources by name; levels summary, sentence, claim.
    order = sorted(parts, key=lambda key: (key[0] != GOLD, key[0], _level_order(key[2])))
    present = {value for rows in parts.values() for value, _n, _scored in rows if value is not None}
    verdicts = [v for v in VERDICTS if v in present]
    records, bars = [], []
    for source, kind, level in order:
        found = {value: n for value, n, _scored in parts[source, kind, level] if value is not None}
        labelled = sum(found.values())
        record = {"source": source, "kind": kind, "level": level, "labelled": labelled}
        for verdict in verdicts if labelled else ():
            n = found.get(verdict, 0)
            record |= {verdict: n, f"{verdict} %": round1(100 * n / labelled)}
            if verdict in found:
                bars.append((f"{source} · {level}", verdict, 100 * n / labelled, n, labelled))
        without = [(n, scored) for value, n, scored in parts[source, kind, level] if value is None]
        scored_only = sum(scored for _n, scored in without)
        record["score only"] = scored_only
        record["note"] = _label_note(labelled, scored_only, sum(n for n, _scored in without) - scored_only)
        records.append(record)
    columns = ["source", "kind", "level", "labelled"]
    columns += [name for verdict in verdicts for name in (verdict, f"{verdict} %")]
    return BarFigure(
        key="label_distribution",
        title="Label distribution per label source and level",
        caption=(
            "Current label per target and source; share of each verdict among the targets that source labelled "
            "at that level (denominator: labels with a verdict). Score-only sources have no verdict: see their "
            "score distribution."
        ),
        bars=Table.of(BAR_COLUMNS, bars),
        table=Table.from_records([*columns, "score only", "note"], records),
        stacked=True,
        axis="% of labelled targets",
    )


def _extracted_apart(cur: duckdb.DuckDBPyConnection, dataset: str, counted: list[tuple]) -> list[tuple]:
    """`counted` (source, kind, level, value, n, scored) with each source's labels of claims a model
    extracted moved from level 'claim' to 'claim (extracted by SET)'."""
    extracted = catalog.extracted_label_counts(cur, dataset)
    if not extracted:
        return counted
    totals = {(source, level, value): [n, scored] for source, _kind, level, value, n, scored in counted}
    kinds = {source: kind for source, kind, *_ in counted}
    moved = []
    for _dataset, source, claim_set, value, n, scored in extracted:
        totals[source, "claim", value][0] -= n
        totals[source, "claim", value][1] -= scored
        moved.append((source, kinds[source], f"claim (extracted by {claim_set})", value, n, scored))
    kept = [(s, k, lvl, v, *totals[s, lvl, v]) for s, k, lvl, v, _n, _sc in counted if totals[s, lvl, v][0] > 0]
    return kept + moved


def _label_note(labelled: int, scored_only: int, empty: int) -> str:
    parts = []
    if not labelled and scored_only:
        parts.append("score only: see the score distribution")
    elif scored_only:
        parts.append(f"{scored_only:,} more with a score and no verdict")
    if empty:
        parts.append(f"{empty:,} labels with neither verdict nor score")
    return "; ".join(parts)


def score_distribution(cur: duckdb.DuckDBPyConnection, dataset: str) -> ScoreFigure | None:
    """Quartiles of each score-only source (labels with a score and no verdict), per level."""
    table = cur.execute(
        """
        SELECT source, level, count(*) AS n, min(score) AS min,
               quantile_cont(score, 0.25) AS q1, median(score) AS median, quantile_cont(score, 0.75) AS q3,
               max(score) AS max, avg(score) AS mean
        FROM current_label
        WHERE dataset = ? AND value IS NULL AND score IS NOT NULL
        GROUP BY ALL ORDER BY source, level
        """,
        [dataset],
    )
    columns = [column[0] for column in table.description]
    rows = table.fetchall()
    if not rows:
        return None
    return ScoreFigure(
        key="score_distribution",
        title="Score-only sources: score distribution",
        caption=(
            "Sources that give a score and no verdict, per level: box = quartiles, whiskers = min and max, "
            "over every target the source scored (n in the table). Any faithful/unfaithful threshold is applied "
            "later, at read time."
        ),
        table=Table.of(columns, rows),
    )
