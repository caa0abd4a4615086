"""The Overview of one dataset: counts, what is missing, label distributions per source and
level, and each generator's faithfulness tabulated the way the benchmark's paper does it.

Every figure carries one caption line naming its label source, level and denominator. Counting
happens in DuckDB; pandas only reshapes the small aggregated frames into charts and tables.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import duckdb
import pandas as pd

from faithlens import catalog
from faithlens.errors import NotFoundError
from faithlens.vocab import GOLD, LEVELS, VERDICTS, Level, Verdict

NO_MODEL = "(no model named)"
OVERALL = "Overall"
BAR_COLUMNS = ["group", "series", "percent", "n", "total"]


@dataclass(frozen=True)
class Counts:
    """How much of a dataset is loaded."""

    documents: int
    documents_with_text: int
    summaries: int
    sentences: int
    claims: int
    labels: int


@dataclass(frozen=True)
class BarFigure:
    """Percentages per group (a generator, a label source): drawn as bars, listed as a table."""

    key: str
    """Stable id: widget keys and the CSV file name."""
    title: str
    caption: str
    """One line: which label source, which level, which denominator."""
    bars: pd.DataFrame
    """Long form, one bar segment a row: group, series, percent, n, total."""
    table: pd.DataFrame
    """The same figures laid out like the paper's table; this is what the CSV holds."""
    stacked: bool
    """True: series are shares stacking to 100% per group. False: side-by-side rates."""
    axis: str
    """Value axis title."""


@dataclass(frozen=True)
class ScoreFigure:
    """Score-only label sources (a score, no verdict): their score distribution per level."""

    key: str
    title: str
    caption: str
    table: pd.DataFrame
    """One row per (source, level): n, min, q1, median, q3, max, mean."""


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


def build_headline(cur: duckdb.DuckDBPyConnection, dataset: str) -> Headline:
    """Counts, what is missing and the generator tables: computed apart from the label figures so
    the page can draw its first chart before the slower label distributions are ready."""
    found = catalog.list_datasets(cur, dataset)
    if not found:
        raise NotFoundError(f"no dataset named {dataset!r} is loaded", "pick one in the sidebar")
    (info,) = found
    n_labels = cur.execute("SELECT count(*) FROM current_label WHERE dataset = ?", [dataset]).fetchone()[0]
    counts = Counts(
        info.documents, info.documents_with_text, info.summaries, info.sentences, info.claims, int(n_labels)
    )
    generators = GENERATOR_TABLES.get(info.format, generic_generators)(cur, dataset)
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
        notes.append("No claims: summaries are not decomposed into claims in this dataset.")
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
    """Current labels per (source, level): the share of each verdict; score-only sources noted."""
    counted = cur.execute(
        """
        SELECT l.source, s.kind, l.level, l.value::VARCHAR AS value, count(*) AS n, count(l.score) AS scored
        FROM current_label l LEFT JOIN label_source s ON s.dataset = l.dataset AND s.source = l.source
        WHERE l.dataset = ?
        GROUP BY ALL
        """,
        [dataset],
    ).df()
    if counted.empty:
        return None
    rows, bars = [], []
    for (source, kind, level), part in counted.groupby(["source", "kind", "level"], dropna=False, sort=False):
        verdicts = part.dropna(subset=["value"]).set_index("value")["n"]
        without = part[part["value"].isna()]
        labelled = int(verdicts.sum())
        row = {"source": source, "kind": kind, "level": level, "labelled": labelled}
        for verdict, n in verdicts.items():
            row[verdict] = int(n)
            row[f"{verdict} %"] = round(100 * n / labelled, 1)
            bars.append((f"{source} · {level}", verdict, 100 * n / labelled, int(n), labelled))
        scored_only = int(without["scored"].sum())
        row["score only"] = scored_only
        row["note"] = _label_note(labelled, scored_only, int(without["n"].sum()) - scored_only)
        rows.append(row)
    table = _order_sources(pd.DataFrame(rows))
    columns = ["source", "kind", "level", "labelled"]
    for verdict in VERDICTS:
        if verdict in table:
            columns += [verdict, f"{verdict} %"]
    table = table[[*columns, "score only", "note"]]
    has_verdicts = table["labelled"] > 0
    for verdict in VERDICTS:
        if verdict in table:
            table[verdict] = table[verdict].where(~has_verdicts, table[verdict].fillna(0)).astype("Int64")
            share = f"{verdict} %"
            table[share] = table[share].where(~has_verdicts, table[share].fillna(0.0))
    order = {f"{s} · {lv}": i for i, (s, lv) in enumerate(zip(table["source"], table["level"], strict=True))}
    bar_frame = pd.DataFrame(bars, columns=BAR_COLUMNS)
    bar_frame = bar_frame.assign(_g=bar_frame["group"].map(order), _s=bar_frame["series"].map(VERDICTS.index))
    bar_frame = bar_frame.sort_values(["_g", "_s"])[BAR_COLUMNS]
    return BarFigure(
        key="label_distribution",
        title="Label distribution per label source and level",
        caption=(
            "Current label per target and source; share of each verdict among the targets that source labelled "
            "at that level (denominator: labels with a verdict). Score-only sources have no verdict: see their "
            "score distribution."
        ),
        bars=bar_frame.reset_index(drop=True),
        table=table.reset_index(drop=True),
        stacked=True,
        axis="% of labelled targets",
    )


def _label_note(labelled: int, scored_only: int, empty: int) -> str:
    parts = []
    if not labelled and scored_only:
        parts.append("score only: see the score distribution")
    elif scored_only:
        parts.append(f"{scored_only:,} more with a score and no verdict")
    if empty:
        parts.append(f"{empty:,} labels with neither verdict nor score")
    return "; ".join(parts)


def _order_sources(table: pd.DataFrame) -> pd.DataFrame:
    """Gold first, then sources by name; levels summary, sentence, claim."""
    keys = table.assign(_gold=table["source"] != GOLD, _level=table["level"].map(_level_order), _source=table["source"])
    return keys.sort_values(["_gold", "_source", "_level"]).drop(columns=["_gold", "_level", "_source"])


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
    ).df()
    if table.empty:
        return None
    return ScoreFigure(
        key="score_distribution",
        title="Score-only sources: score distribution",
        caption=(
            "Sources that give a score and no verdict, per level: box = quartiles, whiskers = min and max, "
            "over every target the source scored (n in the table). Any faithful/unfaithful threshold is applied "
            "later, at read time."
        ),
        table=table,
    )


# ---------------------------------------------------------------- generators


def _verdicts_by_generator(cur: duckdb.DuckDBPyConnection, dataset: str, source: str, level: str) -> pd.DataFrame:
    """Current labels with a verdict from `source` at `level`, counted per generator, corpus, topic type."""
    return cur.execute(
        """
        SELECT coalesce(s.model, ?) AS generator, coalesce(d.source, '') AS corpus,
               coalesce(s.topic_type, '') AS topic_type, l.value::VARCHAR AS value, count(*) AS n
        FROM current_label l
        LEFT JOIN unit u ON l.level <> 'summary' AND u.dataset = l.dataset AND u.unit_id = l.target_id
        JOIN summary s ON s.dataset = l.dataset AND s.summary_id = coalesce(u.summary_id, l.target_id)
        LEFT JOIN document d ON d.dataset = s.dataset AND d.document_id = s.document_id
        WHERE l.dataset = ? AND l.source = ? AND l.level = ? AND l.value IS NOT NULL
        GROUP BY ALL
        """,
        [NO_MODEL, dataset, source, level],
    ).df()


def _summaries_by_generator(cur: duckdb.DuckDBPyConnection, dataset: str) -> pd.Series:
    """Summaries per generator, plus the Overall total."""
    per = (
        cur.execute(
            "SELECT coalesce(model, ?) AS generator, count(*) AS n FROM summary WHERE dataset = ? GROUP BY 1",
            [NO_MODEL, dataset],
        )
        .df()
        .set_index("generator")["n"]
    )
    per[OVERALL] = per.sum()
    return per


def _shares(counted: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per generator plus an Overall row: (bars long frame, wide table of labelled and % per verdict)."""
    per_generator = counted.groupby(["generator", "value"], as_index=False)["n"].sum()
    overall = per_generator.groupby("value", as_index=False)["n"].sum().assign(generator=OVERALL)
    both = pd.concat([per_generator, overall], ignore_index=True)
    both["total"] = both.groupby("generator")["n"].transform("sum")
    both["percent"] = 100 * both["n"] / both["total"]
    verdicts = [v for v in VERDICTS if v in set(both["value"])]
    generators = sorted(set(per_generator["generator"]), key=str.lower) + [OVERALL]
    bars = both.rename(columns={"generator": "group", "value": "series"})
    bars = bars.assign(_g=bars["group"].map(generators.index), _s=bars["series"].map(verdicts.index)).sort_values(
        ["_g", "_s"]
    )
    wide = both.pivot_table(index="generator", columns="value", values="percent", fill_value=0.0).round(1)
    wide = wide.reindex(index=generators, columns=verdicts, fill_value=0.0)
    wide.columns = [f"% {v}" for v in verdicts]
    labelled = both.groupby("generator")["total"].first().reindex(generators)
    table = wide.assign(labelled=labelled).reset_index().rename(columns={"index": "generator"})
    return bars[BAR_COLUMNS].reset_index(drop=True), table


def _source_phrase(cur: duckdb.DuckDBPyConnection, dataset: str, source: str) -> str:
    row = cur.execute(
        "SELECT description FROM label_source WHERE dataset = ? AND source = ?", [dataset, source]
    ).fetchone()
    return f"source {source!r}" + (f" ({row[0].rstrip('.')})" if row and row[0] else "")


def generic_generators(cur: duckdb.DuckDBPyConnection, dataset: str) -> list[BarFigure]:
    """For any dataset: per level with gold verdicts, each generator's share of each verdict."""
    figures = []
    summaries = _summaries_by_generator(cur, dataset)
    for level in LEVELS:
        counted = _verdicts_by_generator(cur, dataset, GOLD, level)
        if counted.empty:
            continue
        bars, table = _shares(counted)
        table.insert(1, "summaries", table["generator"].map(summaries).astype(int))
        unit = "summaries" if level == Level.SUMMARY else f"{level}s"
        figures.append(
            BarFigure(
                key=f"generators_{level}",
                title=f"Verdicts per generator, {level} level",
                caption=(
                    f"{_source_phrase(cur, dataset, GOLD)}, {level} level: share of each verdict among the "
                    f"{unit} with a gold label, per generator; Overall pools all generators."
                ),
                bars=bars,
                table=table,
                stacked=True,
                axis=f"% of labelled {unit}",
            )
        )
    return figures


def storysumm_generators(cur: duckdb.DuckDBPyConnection, dataset: str) -> list[BarFigure]:
    """StorySumm Table 2: per generator, summaries, % faithful, and # easy / # hard unfaithful summaries."""
    counted = _verdicts_by_generator(cur, dataset, GOLD, Level.SUMMARY)
    if counted.empty:
        return []
    bars, table = _shares(counted)
    summaries = _summaries_by_generator(cur, dataset)
    table.insert(1, "summaries", table["generator"].map(summaries).astype(int))
    difficulty = cur.execute(
        """
        SELECT coalesce(s.model, ?) AS generator, t.value, count(DISTINCT t.target_id) AS n
        FROM tag t JOIN summary s ON s.dataset = t.dataset AND s.summary_id = t.target_id
        WHERE t.dataset = ? AND t.level = 'summary' AND t.kind = 'difficulty'
        GROUP BY ALL
        """,
        [NO_MODEL, dataset],
    ).df()
    for value in ("easy", "hard"):
        per = difficulty[difficulty["value"] == value].set_index("generator")["n"]
        per[OVERALL] = per.sum()
        table[f"# {value}"] = table["generator"].map(per).fillna(0).astype(int)
    return [
        BarFigure(
            key="generators_summary",
            title="StorySumm Table 2: faithful summaries per generator",
            caption=(
                f"{_source_phrase(cur, dataset, GOLD)}, summary level: % of labelled summaries per generator; "
                "# easy / # hard count unfaithful summaries by detection difficulty. The paper's Table 2 uses the "
                "annotator-only labels (63.5% faithful overall), so its figures differ; the release calls both "
                "Claude-2 and Claude-3 'claude'."
            ),
            bars=bars,
            table=table,
            stacked=True,
            axis="% of labelled summaries",
        )
    ]


def fables_generators(cur: duckdb.DuckDBPyConnection, dataset: str) -> list[BarFigure]:
    """FABLES Table 2: per generator, claims per summary and % of claims per 4-way verdict."""
    counted = _verdicts_by_generator(cur, dataset, GOLD, Level.CLAIM)
    if counted.empty:
        return []
    bars, table = _shares(counted)
    per_summary = cur.execute(
        """
        SELECT CASE WHEN grouping(generator) = 1 THEN ? ELSE generator END AS generator, count(*) AS summaries,
               round(avg(claims), 2) AS "avg # claims", round(stddev_pop(claims), 2) AS "std # claims"
        FROM (
            SELECT coalesce(s.model, ?) AS generator, count(u.unit_id) AS claims
            FROM summary s LEFT JOIN unit u ON u.dataset = s.dataset AND u.summary_id = s.summary_id AND u.kind = 'claim'
            WHERE s.dataset = ?
            GROUP BY s.summary_id, s.model
        )
        GROUP BY GROUPING SETS ((generator), ())
        """,
        [OVERALL, NO_MODEL, dataset],
    ).df()
    shares = [column for column in table.columns if column.startswith("% ")]
    table = table.merge(per_summary, on="generator", how="left")
    table = table[["generator", "summaries", "avg # claims", "std # claims", "labelled", *shares]]
    return [
        BarFigure(
            key="generators_claim",
            title="FABLES Table 2: claim verdicts per generator",
            caption=(
                f"{_source_phrase(cur, dataset, GOLD)}, claim level: % of labelled claims per generator and verdict; "
                "avg/std (population) of claims per summary. The paper computes CLAUDE-3-OPUS over 24 of 26 books; "
                "here every released summary counts."
            ),
            bars=bars,
            table=table,
            stacked=True,
            axis="% of labelled claims",
        )
    ]


def tofueval_generators(cur: duckdb.DuckDBPyConnection, dataset: str) -> list[BarFigure]:
    """TofuEval Table 2: % of unfaithful sentences and summaries per generator, corpus and topic type."""
    figures = []
    for level, unit in ((Level.SENTENCE, "sentences"), (Level.SUMMARY, "summaries")):
        counted = _verdicts_by_generator(cur, dataset, GOLD, level)
        if counted.empty:
            continue
        counted["series"] = (counted["corpus"] + " " + counted["topic_type"]).str.strip().replace("", "all")
        counted["unfaithful"] = counted["n"].where(counted["value"] == Verdict.UNFAITHFUL, 0)
        both = pd.concat([counted, counted.assign(generator=OVERALL)], ignore_index=True)
        grouped = both.groupby(["generator", "series"], as_index=False)[["unfaithful", "n"]].sum()
        grouped = grouped.rename(columns={"n": "total", "unfaithful": "n"})
        grouped["percent"] = 100 * grouped["n"] / grouped["total"]
        generators = sorted(set(counted["generator"]), key=str.lower) + [OVERALL]
        series = sorted(set(grouped["series"]))
        grouped = grouped.assign(
            _g=grouped["generator"].map(generators.index), _s=grouped["series"].map(series.index)
        ).sort_values(["_g", "_s"])
        bars = grouped.rename(columns={"generator": "group"})[BAR_COLUMNS].reset_index(drop=True)
        rate = grouped.pivot(index="generator", columns="series", values="percent").round(1)
        total = grouped.pivot(index="generator", columns="series", values="total")
        table = pd.DataFrame(index=generators)
        for name in series:
            table[f"{name} % unfaithful"] = rate[name]
            table[f"{name} n"] = total[name].astype("Int64")
        figures.append(
            BarFigure(
                key=f"generators_{level}",
                title=f"TofuEval Table 2, {level} level: unfaithful {unit} per generator, corpus and topic type",
                caption=(
                    f"{_source_phrase(cur, dataset, GOLD)}, {level} level: % of labelled {unit} marked unfaithful, "
                    f"per generator, corpus and main/marginal topic (n = labelled {unit}, dev and test pooled); "
                    "Overall pools generators. The release anonymises the generators, so rows cannot be matched "
                    "to the paper's model names."
                ),
                bars=bars,
                table=table.reset_index(names="generator"),
                stacked=False,
                axis=f"% unfaithful {unit}",
            )
        )
    return figures


GENERATOR_TABLES: dict[str, Callable[[duckdb.DuckDBPyConnection, str], list[BarFigure]]] = {
    "storysumm": storysumm_generators,
    "fables": fables_generators,
    "tofueval": tofueval_generators,
}
"""Dataset format -> the paper's per-generator table; other formats get `generic_generators`."""
