"""TofuEval's charts on the Reproduced figures page: Figures 2, 4 and 5 are bar charts that print no
numbers (`published.unprinted`), so each is listed with the key numbers of ours that stand for it
(status "no printed number") and a link to the Errors view that computes them; nothing is read off
the bars. The numbers Figure 4's prose states (GPT-3.5-Turbo detects "only ... 50%" of Extrinsic
Information, "approximately 30% lower" than the non-LLM metrics) are compared where a figure of ours
stands for them: a TofuEval prompt's sentence labels from a GPT-3.5-Turbo model; the release holds
none.

- Figure 2: the error types' % of the sentences with an error (gold tags), all together (its left
  panel), per topic type, and per generator group (its right panel is per summarizer; the release
  shuffles model_A–E per topic, so ours pools them beside Model-Extra).
- Figure 4: the sentences carrying one error type only (the subsets the recall is computed on), and
  each evaluator's recall per type against gold, as the Errors page.
- Figure 5: as Figure 2, over every sentence (Appendix F).
"""

from __future__ import annotations

import duckdb

from faithlens.analysis import published
from faithlens.analysis.generator_names import SLOTS_POOLED
from faithlens.analysis.published import Compared, PaperTable, Printed, Unprinted
from faithlens.analysis.tag_stats import Family
from faithlens.errors import NotFoundError
from faithlens.views import errors
from faithlens.views.reproduced import Figure, Link
from faithlens.views.states import ErrorsState, RunsState
from faithlens.vocab import GOLD

CHART = "published as a chart; no printed numbers to compare"
FAMILY, LEVEL = "error_type", "sentence"
EXTRINSIC = "Extrinsic Information"
PAPER_EVALUATOR = "gpt-3.5-turbo"
"""Figure 4's prose figure is GPT-3.5-Turbo's; a source stands for it when a TofuEval prompt labelled the
sentences with a model of that name."""
BREAKDOWNS = (
    ("none", "all", "every sentence together (Figure 2's left panel)"),
    ("topic_type", "main", "main topics"),
    ("topic_type", "marginal", "marginal topics"),
    ("generator_group", SLOTS_POOLED, SLOTS_POOLED),
    ("generator_group", "Model-Extra", "Model-Extra (added to the release after the paper)"),
)
"""(the Errors page's breakdown, its group, the row's label)."""
SUBSETS_HOW = (
    "sentences carrying exactly one error type (gold tags): Figure 4's subsets, each the denominator of an "
    "evaluator's recall of that type"
)
SUBSETS_WHY = (
    "The release holds none of the paper's evaluators' predictions, so no recall of ours stands for its bars: "
    "these are the subsets it is computed on, and an evaluator's labels (a run on the Runs page) add its recall"
)
PER_SUMMARIZER = (
    "The paper's right panel is per summarizer and topic type; the release shuffles model_A–E per topic, so "
    "ours pools the five slots (the paper's five models) beside Model-Extra, and pools the summarizers per "
    "topic type."
)


def chart_figures(cur: duckdb.DuckDBPyConnection, dataset: str) -> list[Figure]:
    """Figures 2, 4 and 5 with ours beside them; none when the dataset has no gold error types."""
    try:
        family = errors.find_family(cur, dataset, FAMILY, LEVEL)
    except NotFoundError:
        return []
    charts = {chart.key: chart for chart in published.unprinted("tofueval")}
    return [
        *_distribution_figures(cur, dataset, family, charts["figure2"], errors.OF_TAGGED),
        *_figure4(cur, dataset, family, charts["figure4"]),
        *_distribution_figures(cur, dataset, family, charts["figure5"], errors.OF_ALL),
    ]


def _errors_link(dataset: str, family: Family, **state: object) -> Link:
    return Link("errors", ErrorsState(dataset=dataset, family=family.key, **state), "Open in Errors")


def _distribution_figures(
    cur: duckdb.DuckDBPyConnection, dataset: str, family: Family, chart: Unprinted, of: str
) -> list[Figure]:
    """Each error type's % of the sentences with an error (`of='tagged'`, Figure 2) or of every sentence
    (`of='all'`, Figure 5), all together, per topic type and per generator group."""
    tagged_by = family.tagged_by(None)
    shown = {
        by: errors.distribution(cur, dataset, family, None if by == "none" else by, of, tagged_by)
        for by in dict.fromkeys(by for by, _group, _label in BREAKDOWNS)
    }
    rows = [(by, group, label) for by, group, label in BREAKDOWNS if group in shown[by].groups]
    table = chart.chart(shown["none"].values, [(f"{by}:{group}", label) for by, group, label in rows])
    pct = {(by, row.group, row.value): row.pct for by, found in shown.items() for row in found.rows}
    causes = {
        "none": CHART + ".",
        "topic_type": f"{CHART}. {PER_SUMMARIZER}",
        "generator_group": f"{CHART}. {PER_SUMMARIZER}",
    }
    if of == errors.OF_TAGGED:
        causes["topic_type"] += _extrinsic_words(pct)
    figures = []
    for (by, group, _label), row in zip(rows, table.rows, strict=True):
        link = _errors_link(dataset, family, by=by, of=of)
        how = shown[by].how()
        for column in table.columns:
            cell = Compared(column, Printed(""), pct.get((by, group, column)), causes[by])
            figures.append(Figure("tofueval", table, row, cell, "", how, link))
    return figures


def _extrinsic_words(pct: dict) -> str:
    """What ours says of the prose's reading of Figure 2 ('significantly more Extrinsic Information' on
    marginal topics), in numbers."""
    main, marginal = (pct.get(("topic_type", group, EXTRINSIC)) for group in ("main", "marginal"))
    if main is None or marginal is None:
        return ""
    return (
        f" The prose reads it as 'significantly more Extrinsic Information' on marginal topics: here {EXTRINSIC} "
        f"is {marginal:.1f}% of the marginal-topic sentences with an error, {main:.1f}% of the main-topic ones."
    )


def _figure4(cur: duckdb.DuckDBPyConnection, dataset: str, family: Family, chart: Unprinted) -> list[Figure]:
    """The single-type subsets' sizes, each evaluator's recall per type, and the prose's numbers."""
    tagged_by = family.tagged_by(None)
    subsets = errors.recall(cur, dataset, family, [GOLD], None, typed=errors.SINGLE, tagged_by=tagged_by)
    sizes = {row.value: row.total for row in subsets.rows}
    found = errors.recall(cur, dataset, family, reference=GOLD, typed=errors.SINGLE, tagged_by=tagged_by)
    evaluators = [choice.name for choice in found.sources]
    keys = [("subsets", "sentences carrying one error type only (the subsets recall is computed on)")]
    keys += [(name, f"recall of {name} (%), against gold") for name in evaluators]
    table = chart.chart(family.values, keys)
    recall = {(r.source, r.value): None if r.recall is None else 100 * r.recall for r in found.rows}
    figures = []
    for (key, _label), row in zip(keys, table.rows, strict=True):
        subset = key == "subsets"
        link = (
            _errors_link(dataset, family, reference="none", sources=(GOLD,))
            if subset
            else _errors_link(dataset, family, sources=(key,))
        )
        how = SUBSETS_HOW if subset else found.how()
        cause = f"{CHART}. " + (SUBSETS_WHY if subset else "The paper's evaluators are not this source.")
        for value in family.values:
            ours = sizes.get(value) if subset else recall.get((key, value))
            cell = Compared(value, Printed(""), ours, cause)
            figures.append(Figure("tofueval", table, row, cell, "", how, link))
    return figures + _figure4_prose(cur, dataset, family, chart.quoted, recall)


def _paper_evaluators(cur: duckdb.DuckDBPyConnection, dataset: str, scored: set[str]) -> list[str]:
    """The label sources of `scored` (those with a recall at the sentence level) a TofuEval prompt gave
    with a GPT-3.5-Turbo model."""
    rows = cur.execute(
        "SELECT source FROM label_source WHERE dataset = ? AND prompt_version LIKE 'tofueval-%' "
        "AND lower(model) LIKE ? ORDER BY source",
        [dataset, PAPER_EVALUATOR + "%"],
    ).fetchall()
    return [source for (source,) in rows if source in scored]


NOT_RELEASED = (
    "the release holds none of the paper's evaluators' predictions. The figure of ours that stands for the 50%: "
    "attach the transcripts (import tofueval-docs), run tofueval-dir or tofueval-exp with a GPT-3.5-Turbo model on "
    "TofuEval's sentences from the Runs page; its recall per error type is then listed here and on Errors"
)
NON_LLM = "the non-LLM metrics' predictions (AlignScore, SummaC, ...) are not in the release"
PROSE_HOW = f"recall of {EXTRINSIC}: sentences carrying it alone, flagged unfaithful by the source, gold unfaithful"


def _figure4_prose(
    cur: duckdb.DuckDBPyConnection, dataset: str, family: Family, quoted: PaperTable | None, recall: dict
) -> list[Figure]:
    """The prose's GPT-3.5-Turbo figures beside each source of ours that stands for them, or beside none."""
    if quoted is None:
        return []
    printed = quoted.rows[0]
    sources = _paper_evaluators(cur, dataset, {source for source, _value in recall})
    figures = []
    for source in sources or [None]:
        if source is None:
            row, why, link = printed, NOT_RELEASED, Link("runs", RunsState(dataset=dataset), "Open Runs")
        else:
            row = published.Row(printed.key, f"{printed.label}: ours {source}", printed.values)
            why = (
                "the paper's figure is approximate ('only ... 50%'), from its own GPT-3.5-Turbo runs (three at "
                f"temperature 0.7, section 5.1) over its sentences; ours: {source}'s labels against gold"
            )
            link = _errors_link(dataset, family, sources=(source,))
        ours = {"recall_extrinsic": recall.get((source, EXTRINSIC)) if source else None}
        for cell in published.compare(quoted, printed.key, ours):
            cause = NON_LLM if cell.column == "below_non_llm" else why
            kind = "approximate prose figure" if cell.ours is not None else "not in the release"
            compared = Compared(cell.column, cell.paper, cell.ours, cause)
            figures.append(Figure("tofueval", quoted, row, compared, kind, PROSE_HOW, link))
    return figures
