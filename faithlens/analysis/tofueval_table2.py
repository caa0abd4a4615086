"""TofuEval Table 2 on the Overview: % of unfaithful sentences and summaries per corpus and main /
marginal topic, for what the release's generators are, beside the paper's printed Average.

The paper's rows are five models; the release shuffles them per topic into slots A–E, so rows are
groups that mean something (`faithlens.analysis.generator_names`): the five slots pooled, which is
the paper's Average (Model-Extra left out: it is not in the paper), then Model-Extra, then every
generator pooled (labelled as not the paper's), with each slot last and named as a slot. The table
puts the printed Average under ours; `Beside` compares them cell by cell and says why a cell
differs, with the evidence `faithlens.analysis.tofueval_release` measures.
"""

from __future__ import annotations

import duckdb

from faithlens.analysis import published, tofueval_evidence
from faithlens.analysis import tofueval_release as release
from faithlens.analysis.beside import Beside, BesideRow
from faithlens.analysis.figures import BAR_COLUMNS, BarFigure, Table, round1
from faithlens.analysis.generator_names import OVERALL, SLOT_NOTE, SLOTS_POOLED, display_order, is_slot
from faithlens.analysis.tofueval_release import CORPORA, TOPIC_TYPES, Tally

PRINTED_AVERAGE = "Table 2 as printed: Average"
NAMES = {"mediasum": "MediaSum", "meetingbank": "MeetingBank"}


def _all_pooled(generators: set[str]) -> str:
    """The row pooling every generator: named so that it is not read as the paper's Average."""
    others = [g for g in display_order(generators) if not is_slot(g)]
    if any(is_slot(g) for g in generators) and others:
        return f"every generator pooled (with {', '.join(others)}; not the paper's Average)"
    return OVERALL


def _rows(found: tuple[Tally, ...], level: str) -> tuple[list[str], dict[tuple[str, str], release.Rate], str]:
    """(row names in order, the rate per (row, series), the every-generator row's name)."""
    at_level = [t for t in found if t.level == level]
    generators = {t.generator for t in at_level}
    everything = _all_pooled(generators)
    slots = [g for g in display_order(generators) if is_slot(g)]
    singles = [g for g in display_order(generators) if not is_slot(g)]
    order = ([SLOTS_POOLED, PRINTED_AVERAGE] if slots else []) + singles + [everything] + slots
    rates: dict[tuple[str, str], release.Rate] = {}
    for t in at_level:
        series = f"{t.corpus} {t.topic_type}".strip() or "all"
        for row in {t.generator, t.group, everything}:
            old = rates.get((row, series), release.Rate(0, 0))
            rates[row, series] = release.Rate(old.unfaithful + t.unfaithful, old.n + t.n)
    return order, rates, everything


def _column(level: str, series: str) -> str | None:
    """Table 2's column for one of our series ('mediasum main'), None when the paper has none."""
    corpus, _, topic_type = series.partition(" ")
    return f"{level}_{corpus}_{topic_type}" if corpus in CORPORA and topic_type in TOPIC_TYPES else None


def _tables(found: tuple[Tally, ...], level: str) -> tuple[Table, Table, str]:
    """(bars, the table, the every-generator row's name) of one level."""
    order, rates, everything = _rows(found, level)
    all_series = sorted({series for _row, series in rates})
    table2 = published.table("tofueval", "table2")
    charted = {SLOTS_POOLED, everything, *(row for row in order if not is_slot(row) and row != PRINTED_AVERAGE)}
    bars, rows = [], []
    for name in order:
        line: list[object] = [name]
        for series in all_series:
            if name == PRINTED_AVERAGE:
                column = _column(level, series)
                printed = table2.printed("average", column) if column else None
                line += [printed.value if printed else None, None]
                continue
            counted = rates.get((name, series))
            if counted is None:
                line += [None, None]
                continue
            if name in charted:
                bars.append((name, series, counted.pct, counted.unfaithful, counted.n))
            line += [round1(counted.pct), counted.n]
        rows.append(line)
    columns = [f"{series} {what}" for series in all_series for what in ("% unfaithful", "n")]
    return Table.of(BAR_COLUMNS, bars), Table.of(["generator", *columns], rows), everything


def tofueval_generators(cur: duckdb.DuckDBPyConnection, dataset: str, source_phrase: str) -> list[BarFigure]:
    """TofuEval Table 2 at the sentence and the summary level (see the module docstring)."""
    found = release.tallies(cur, dataset)
    cells = release.collapse(found)
    gaps = release.sentence_gaps(cur, dataset) if release.has_slots(found) else 0
    figures = []
    for level, unit in (("sentence", "sentences"), ("summary", "summaries")):
        if not any(t.level == level for t in found):
            continue
        bars, table, everything = _tables(cells, level)
        slots = release.has_slots(found)
        figures.append(
            BarFigure(
                key=f"generators_{level}",
                title=f"TofuEval Table 2, {level} level: unfaithful {unit} per corpus and topic type",
                caption=(
                    f"{source_phrase}, {level} level: % of labelled {unit} marked unfaithful per corpus and "
                    f"main/marginal topic (n = labelled {unit}, dev and test pooled). "
                    + (
                        "The paper's Average is the five slots pooled (Model-Extra, added after the paper, left "
                        f"out); the chart shows it beside Model-Extra and {everything}; the table adds the "
                        "printed Average under ours and each slot."
                        if slots
                        else "Overall pools the generators."
                    )
                ),
                bars=bars,
                table=table,
                stacked=False,
                axis=f"% unfaithful {unit}",
                beside=_beside(found, level, unit, gaps) if slots else None,
                notes=(_slot_note(cells, level),) if slots else (),
            )
        )
    return figures


def _slot_note(found: tuple[Tally, ...], level: str) -> str:
    """SLOT_NOTE with how far shuffling squeezes the slots together in one cell, beside the paper's models."""
    spread = release.slot_spread(found, level, "mediasum", "main")
    table2 = published.table("tofueval", "table2")
    printed = [table2.printed(row.key, f"{level}_mediasum_main").value for row in table2.rows if row.key != "average"]
    if spread is None:
        return SLOT_NOTE
    return (
        f"{SLOT_NOTE} On MediaSum main topics the slots' {level}-level error rates lie within "
        f"{spread[0]:.1f}–{spread[1]:.1f}%, the paper's five models' within {min(printed):.1f}–{max(printed):.1f}%."
    )


def _beside(found: tuple[Tally, ...], level: str, unit: str, gaps: int) -> Beside:
    """The printed Table 2 rows of one level beside ours: the Average against the pooled slots (the
    marginal cells differ, and say why), the five models against nothing (the slots are shuffled)."""
    table2 = published.table("tofueval", "table2")
    cells = [(c, t) for c in CORPORA for t in TOPIC_TYPES]
    headings = tuple((f"{level}_{c}_{t}", f"{NAMES[c]} {t}") for c, t in cells)
    summed = release.collapse(found)
    ours = {f"{level}_{c}_{t}": release.rate(summed, release.cell(level, c, t)).pct for c, t in cells}
    main, marginal = "the gold labels here are not the release's, which reproduce this cell", _marginal_cause(level)
    average = [
        published.Compared(cell.column, cell.paper, cell.ours, main if cell.column.endswith("_main") else marginal)
        for cell in published.compare(table2, "average", ours)
        if cell.column in ours
    ]
    shuffled = "the release shuffles the five models per topic into slots A–E: no slot is this model"
    rows = [BesideRow("Average", SLOTS_POOLED, tuple(average))]
    rows += [
        BesideRow(
            row.label, "", tuple(c for c in published.compare(table2, row.key, {}, cause=shuffled) if c.column in ours)
        )
        for row in table2.rows
        if row.key != "average"
    ]
    return Beside(table2.reference, headings, tuple(rows), tofueval_evidence.notes(found, level, unit, gaps))


def _marginal_cause(level: str) -> str:
    more = "; the paper's Table 6 implies the release's rates" if level == "summary" else ""
    return (
        "the release's marginal topics carry more errors: not Model-Extra, one split or the 2% of topics merged "
        f"into 'marginal'{more}; what Table 2 counted is not in the release (see the notes)"
    )
