"""Each generator's faithfulness, tabulated the way each benchmark's paper does it (StorySumm Table 2,
FABLES Table 2 in `fables_table2`, TofuEval Table 2 in `tofueval_table2`), and a generic table for any
other dataset.

The dataset adapters (`faithlens.datasets`) name their paper table; datasets of other formats get
`generic_generators`. Counting happens in DuckDB; plain Python reshapes the small aggregated rows
(no pandas: the Overview draws its first chart before pandas is imported).
Generators are named as `faithlens.analysis.generator_names` shows them: StorySumm's two `claude`
models become the paper's Claude-2 (val) and Claude-3 (test), with the raw value beside; TofuEval's
shuffled model_A..model_E become slots.
"""

from __future__ import annotations

from collections import defaultdict

import duckdb

from faithlens.analysis.figures import BAR_COLUMNS, BarFigure, Table, round1
from faithlens.analysis.generator_names import NO_MODEL, OVERALL, generator_sql
from faithlens.vocab import GOLD, LEVELS, VERDICTS, Level

_GENERATOR = generator_sql("s")


def _verdicts_by_generator(
    cur: duckdb.DuckDBPyConnection, dataset: str, source: str, level: str
) -> list[tuple[str, str, str, str, int]]:
    """Current labels with a verdict from `source` at `level`, counted per generator, corpus, topic
    type: rows of (generator, corpus, topic_type, value, n)."""
    return cur.execute(
        f"""
        SELECT coalesce({_GENERATOR}, ?) AS generator, coalesce(d.source, '') AS corpus,
               coalesce(s.topic_type, '') AS topic_type, l.value::VARCHAR AS value, count(*) AS n
        FROM current_label l
        LEFT JOIN unit u ON l.level <> 'summary' AND u.dataset = l.dataset AND u.unit_id = l.target_id
        JOIN summary s ON s.dataset = l.dataset AND s.summary_id = coalesce(u.summary_id, l.target_id)
        LEFT JOIN document d ON d.dataset = s.dataset AND d.document_id = s.document_id
        WHERE l.dataset = ? AND l.source = ? AND l.level = ? AND l.value IS NOT NULL
        GROUP BY ALL
        """,
        [NO_MODEL, dataset, source, level],
    ).fetchall()


def _with_overall(per: dict[str, int]) -> dict[str, int]:
    return {**per, OVERALL: sum(per.values())}


def _summaries_by_generator(cur: duckdb.DuckDBPyConnection, dataset: str) -> dict[str, int]:
    """Summaries per generator, plus the Overall total."""
    rows = cur.execute(
        f"SELECT coalesce({_GENERATOR}, ?) AS generator, count(*) AS n FROM summary s WHERE s.dataset = ? GROUP BY 1",
        [NO_MODEL, dataset],
    ).fetchall()
    return _with_overall(dict(rows))


def _generator_order(names: set[str]) -> list[str]:
    """Generators by name (case-insensitive), then Overall."""
    return [*sorted(names, key=str.lower), OVERALL]


def _shares(counted: list[tuple]) -> tuple[Table, list[dict[str, object]]]:
    """Per generator plus an Overall row: (bars, one record per generator: generator, % per verdict
    present, labelled), in table order."""
    n: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for generator, _corpus, _topic_type, value, count in counted:
        n[generator][value] += count
        n[OVERALL][value] += count
    generators = _generator_order(set(n) - {OVERALL})
    verdicts = [v for v in VERDICTS if v in n[OVERALL]]
    bars, records = [], []
    for generator in generators:
        total = sum(n[generator].values())
        record: dict[str, object] = {"generator": generator}
        for verdict in verdicts:
            count = n[generator].get(verdict)
            if count is not None:
                bars.append((generator, verdict, 100 * count / total, count, total))
            record[f"% {verdict}"] = 0.0 if count is None else round1(100 * count / total)
        records.append({**record, "labelled": total})
    return Table.of(BAR_COLUMNS, bars), records


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
        if not counted:
            continue
        bars, records = _shares(counted)
        columns = ["generator", "summaries", *list(records[0])[1:]]
        table = Table.from_records(columns, ({**r, "summaries": summaries[r["generator"]]} for r in records))
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
    if not counted:
        return []
    bars, records = _shares(counted)
    summaries = _summaries_by_generator(cur, dataset)
    difficulty = cur.execute(
        f"""
        SELECT coalesce({_GENERATOR}, ?) AS generator, t.value, count(DISTINCT t.target_id) AS n
        FROM tag t JOIN summary s ON s.dataset = t.dataset AND s.summary_id = t.target_id
        WHERE t.dataset = ? AND t.level = 'summary' AND t.kind = 'difficulty'
        GROUP BY ALL
        """,
        [NO_MODEL, dataset],
    ).fetchall()
    per = {v: _with_overall({g: n for g, value, n in difficulty if value == v}) for v in ("easy", "hard")}
    table = Table.from_records(
        ["generator", "summaries", *list(records[0])[1:], "# easy", "# hard"],
        (
            {**r, "summaries": summaries[r["generator"]], **{f"# {v}": per[v].get(r["generator"], 0) for v in per}}
            for r in records
        ),
    )
    from faithlens.analysis import storysumm_table2  # on use: not on the cold path of another dataset's Overview

    return [
        BarFigure(
            key="generators_summary",
            title="StorySumm Table 2: faithful summaries per generator",
            caption=(
                f"{_source_phrase(cur, dataset, GOLD)}, summary level: % of labelled summaries per generator; "
                "# easy / # hard count unfaithful summaries by detection difficulty. The paper's Table 2 counts the "
                "annotator-only labels (63.5% faithful overall); the release holds only the expanded gold (Table 6's "
                "Gold row), so its % faithful and # easy / # hard differ: see the paper's rows beside ours below. The "
                "release calls both Claude models 'claude'; as the paper says (section 2.2), Claude-2 wrote the val "
                "summaries and Claude-3 the test ones, so they are named so here, with the raw model and split beside."
            ),
            bars=bars,
            table=table,
            stacked=True,
            axis="% of labelled summaries",
            beside=storysumm_table2.beside(table, bars),
        )
    ]


def fables_generators(cur: duckdb.DuckDBPyConnection, dataset: str) -> list[BarFigure]:
    """FABLES Table 2 over all 26 books and over the paper's 24 (`faithlens.analysis.fables_table2`)."""
    from faithlens.analysis import fables_table2  # on use: not on the cold path of another dataset's Overview

    return fables_table2.fables_generators(cur, dataset, _source_phrase(cur, dataset, GOLD))


def tofueval_generators(cur: duckdb.DuckDBPyConnection, dataset: str) -> list[BarFigure]:
    """TofuEval Table 2 per corpus and topic type (`faithlens.analysis.tofueval_table2`)."""
    from faithlens.analysis import tofueval_table2  # on use: not on the cold path of another dataset's Overview

    return tofueval_table2.tofueval_generators(cur, dataset, _source_phrase(cur, dataset, GOLD))
