"""FABLES Table 2 on the Overview: per summarizer, claims per summary and the share of each claim
verdict, in two labelled views beside the paper's printed rows.

- All 26 books (the default): every released summary counts.
- The paper's 24 books: the paper computes CLAUDE-3-OPUS's verdict shares "from 24 out of 26 books.
  The model was unable to merge summaries for two books" (Table 2's caption; footnote 11, Table 24).
  The release keeps those two summaries: each says, instead of summarising, that the chunk summaries
  it was given cannot be merged ("... it is not possible to merge them into a single, comprehensive
  summary", as Table 24 quotes one). `declined_merges` finds them by that sentence (DECLINED), which
  in the bundled release picks exactly two, both CLAUDE-3-OPUS's: The Guest and Same Time Next Year.
  Leaving them out of CLAUDE-3-OPUS's verdicts reproduces the printed 90.89 / 2.10 / 6.65 / 0.35; its
  printed claims per summary (22.85, std 4.87) count all 26 summaries, so this view keeps them there.
Standard deviations are the population's, as the paper's figures are.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass

import duckdb

from faithlens.analysis import published
from faithlens.analysis.beside import Beside, BesideRow
from faithlens.analysis.figures import BAR_COLUMNS, BarFigure, Table
from faithlens.analysis.generator_names import NO_MODEL, OVERALL, generator_sql

DECLINED = "not possible to merge"
"""The sentence of a summary that declines to merge its chunk summaries (matched case-insensitively)."""
VERDICTS = ("faithful", "unfaithful", "partial", "unverifiable")
COLUMNS = {
    "faithful": "% faithful",
    "unfaithful": "% unfaithful",
    "partial": "% partial",
    "unverifiable": "% unverifiable",
}
HEADINGS = (
    ("chunk_size", "chunk size"),
    ("avg_claims", "avg # claims"),
    ("std_claims", "std # claims"),
    *((verdict, COLUMNS[verdict]) for verdict in VERDICTS),
)


@dataclass(frozen=True)
class Declined:
    """A summary that declines to merge its chunk summaries: the book, the summarizer, its claims."""

    summary_id: str
    book: str
    generator: str
    claims: int
    verdicts: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Summary:
    generator: str
    summary_id: str
    book: str
    claims: int
    verdicts: Counter


_SUMMARIES = f"""
SELECT coalesce({generator_sql("s")}, ?) AS generator, s.summary_id, s.document_id,
       count(u.unit_id) AS claims, list(l.value::VARCHAR) FILTER (l.value IS NOT NULL) AS verdicts
FROM summary s
LEFT JOIN unit u ON u.dataset = s.dataset AND u.summary_id = s.summary_id AND u.kind = 'claim'
LEFT JOIN current_label l ON l.dataset = u.dataset AND l.target_id = u.unit_id AND l.source = 'gold' AND l.level = 'claim'
WHERE s.dataset = ?
GROUP BY ALL
"""


def _summaries(cur: duckdb.DuckDBPyConnection, dataset: str) -> list[Summary]:
    rows = cur.execute(_SUMMARIES, [NO_MODEL, dataset]).fetchall()
    return [Summary(g, sid, book, claims, Counter(verdicts or [])) for g, sid, book, claims, verdicts in rows]


def declined_merges(
    cur: duckdb.DuckDBPyConnection, dataset: str, summaries: list[Summary] | None = None
) -> tuple[Declined, ...]:
    """The summaries whose text declines to merge their chunk summaries (DECLINED), by book
    (`summaries`: the dataset's, when already read)."""
    rows = cur.execute(
        f"""
        SELECT s.summary_id, coalesce(d.title, s.document_id), coalesce({generator_sql("s")}, ?)
        FROM summary s LEFT JOIN document d ON d.dataset = s.dataset AND d.document_id = s.document_id
        WHERE s.dataset = ? AND contains(lower(s.text), ?)
        ORDER BY 2
        """,
        [NO_MODEL, dataset, DECLINED],
    ).fetchall()
    found = {s.summary_id: s for s in (summaries if summaries is not None else _summaries(cur, dataset))}
    return tuple(
        Declined(sid, book, generator, found[sid].claims, tuple(sorted(found[sid].verdicts.items())))
        for sid, book, generator in rows
    )


def _row(name: str, counted: list[Summary], verdicts: Counter) -> dict[str, object]:
    claims = [s.claims for s in counted]
    labelled = sum(verdicts.values())
    record: dict[str, object] = {
        "generator": name,
        "summaries": len(counted),
        "avg # claims": round(statistics.fmean(claims), 2) if claims else None,
        "std # claims": round(statistics.pstdev(claims), 2) if claims else None,
        "labelled": labelled,
    }
    for verdict in VERDICTS:
        record[COLUMNS[verdict]] = round(100 * verdicts[verdict] / labelled, 2) if labelled else None
    return record


def _view(summaries: list[Summary], left_out: set[str]) -> tuple[Table, Table, dict[str, dict[str, float]]]:
    """(bars, table, our figures per generator in the paper's column keys) with the verdicts of the
    summaries in `left_out` not counted (their claims still count in the claims per summary)."""
    per: dict[str, list[Summary]] = defaultdict(list)
    for summary in summaries:
        per[summary.generator].append(summary)
    records, ours, bars = [], {}, []
    for name in [*sorted(per, key=str.lower), OVERALL]:
        counted = summaries if name == OVERALL else per[name]
        verdicts = sum((s.verdicts for s in counted if s.summary_id not in left_out), Counter())
        record = _row(name, counted, verdicts)
        record["summaries in the shares"] = sum(1 for s in counted if s.summary_id not in left_out)
        records.append(record)
        claims = [s.claims for s in counted]
        ours[name] = {"avg_claims": statistics.fmean(claims), "std_claims": statistics.pstdev(claims)}
        ours[name] |= {v: 100 * verdicts[v] / record["labelled"] for v in VERDICTS if record["labelled"]}
        bars += [
            (name, v, 100 * verdicts[v] / record["labelled"], verdicts[v], record["labelled"])
            for v in VERDICTS
            if verdicts[v]
        ]
    columns = ["generator", "summaries", "avg # claims", "std # claims", "labelled", "summaries in the shares"]
    table = Table.from_records([*columns, *COLUMNS.values()], records)
    return Table.of(BAR_COLUMNS, bars), table, ours


def _beside(ours: dict[str, dict[str, float]], causes: dict[str, str], notes: tuple[str, ...]) -> Beside:
    """The printed rows beside ours; `causes` per generator explains its verdict shares where they differ."""
    table2 = published.table("fables", "table2")
    rows = []
    for row in table2.rows:
        mine = ours.get(row.key, {})
        cells = []
        for cell in published.compare(table2, row.key, mine):
            if cell.column == "chunk_size":
                cause = "the release does not record the tokens per chunk each summarizer was given"
            elif cell.column in VERDICTS and row.key in causes:
                cause = causes[row.key]
            else:
                cause = "the claims or labels here are not the release's, which reproduce this figure"
            cells.append(published.Compared(cell.column, cell.paper, cell.ours, cause))
        rows.append(BesideRow(row.label, row.key if row.key in ours else "", tuple(cells)))
    return Beside(table2.reference, HEADINGS, tuple(rows), notes)


def fables_generators(cur: duckdb.DuckDBPyConnection, dataset: str, source_phrase: str) -> list[BarFigure]:
    """FABLES Table 2 over all 26 books, then as the paper counts it (see the module docstring)."""
    summaries = _summaries(cur, dataset)
    if not any(s.verdicts for s in summaries):
        return []
    declined = declined_merges(cur, dataset, summaries)
    books = _and([d.book for d in declined])
    figures = [_all_books(summaries, declined, source_phrase)]
    if declined:
        figures.append(_paper_books(summaries, declined, source_phrase, books))
    return figures


def _books(summaries: list[Summary]) -> int:
    return len({s.book for s in summaries})


def _and(names: list[str]) -> str:
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else "".join(names)


def _all_books(summaries: list[Summary], declined: tuple[Declined, ...], source_phrase: str) -> BarFigure:
    bars, table, ours = _view(summaries, set())
    books, n_books = _and([d.book for d in declined]), _books(summaries)
    causes = {
        d.generator: (
            f"the paper counts {d.generator}'s verdicts over the books where it did not decline to merge its chunk "
            f"summaries, leaving out {books}; the paper's 24 books view below reproduces them"
        )
        for d in declined
    }
    return BarFigure(
        key="generators_claim",
        title=f"FABLES Table 2: claim verdicts per generator, all {n_books} books",
        caption=(
            f"{source_phrase}, claim level: % of labelled claims per generator and verdict, every released summary "
            "counted; avg/std (population) of claims per summary. The paper computes CLAUDE-3-OPUS's shares over "
            "24 of the 26 books: see the paper's 24 books view."
        ),
        bars=bars,
        table=table,
        stacked=True,
        axis="% of labelled claims",
        beside=_beside(ours, causes, ()),
    )


def _paper_books(summaries: list[Summary], declined: tuple[Declined, ...], source_phrase: str, books: str) -> BarFigure:
    bars, table, ours = _view(summaries, {d.summary_id for d in declined})
    generators = sorted({d.generator for d in declined})
    found = "; ".join(
        f"{d.book} ({d.generator}: {d.claims} claims, judged {', '.join(f'{n} {v}' for v, n in d.verdicts)})"
        for d in declined
    )
    note = (
        f"How the books are found: the summaries whose text declines to merge the chunk summaries it was given "
        f"(it says it is '{DECLINED}' them, as the refusal the paper quotes in Table 24): {found}. The annotators "
        "judged those claims all the same; the paper leaves them out of the verdict shares and keeps them in the "
        "claims per summary, and so does this view."
    )
    return BarFigure(
        key="generators_claim_paper_books",
        title=(
            f"FABLES Table 2, the paper's {_books(summaries) - len({d.book for d in declined})} books: {', '.join(generators)} "
            "without the books it declined to merge"
        ),
        caption=(
            f"{source_phrase}, claim level: as the all-books view, but {', '.join(generators)}'s verdict shares "
            f"leave out {books}, as the paper's Table 2 does (caption, footnote 11, Table 24); claims per summary "
            "still count every summary, as the paper's do."
        ),
        bars=bars,
        table=table,
        stacked=True,
        axis="% of labelled claims",
        beside=_beside(ours, {}, (note,)),
    )
