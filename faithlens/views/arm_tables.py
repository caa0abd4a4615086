"""ARM's tables as FaithLens computes them, each beside the paper's printed figures
(`faithlens/analysis/published/arm.toml`).

- Table 3, per ARM rewrite label source (`llm/arm-rewrite-<variant>/<model>`, or a run's own name):
  # rewrites (the claims with r != s) and "the average edit distance of rewrites relative to the
  originals", averaged over the rewritten claims, each claim's word edits divided by the longer word
  list (`signals.normalized_edit_distance`; the paper prints a 0-1 scale without defining it), with
  the raw word-edit count beside it. Its balanced-accuracy columns need ARM's subjectivity labels,
  which no bundled dataset carries: they stay "no figure of ours".
- A run of `arm-rewrite`: the same figures over the run's units (the Runs page, `llm run(s) --json`).
- Tables 4 and 5 for an ARM coding session, from `faithlens.coding.report`'s figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import duckdb

from faithlens.analysis import published
from faithlens.llm import signals
from faithlens.llm.runs import log
from faithlens.views import coding

PAPER = "arm"
REWRITE_PROMPT = "arm-rewrite."
PAPER_MODELS = {"claude": "Claude-3.5-Sonnet", "gpt-4": "GPT-4 (GPT-4o, section 4.4 says)", "": "model"}
NORMALISATION = (
    "Edit distance: word edits (NLTK tokens, lowercased, Snowball-stemmed; rapidfuzz Levenshtein) divided by "
    "the longer word list, averaged over the rewritten claims (r ≠ s). ARM's Table 3 prints its average on "
    "this 0-1 scale without defining the normalisation; dividing by the longer list is the standard one, ours."
)


@dataclass(frozen=True)
class RewriteFigures:
    """Table 3's last two columns for one ARM rewrite source at one level."""

    source: str
    level: str
    model: str | None
    variant: str | None
    """The rewrite prompt: both, subjectivity or unfaithfulness."""
    claims: int
    """Claims the source has a current rewrite of."""
    rewrites: int
    """Of those, rewritten: r != s."""
    avg_edit_distance: float | None
    """Mean normalised edit distance over the rewritten claims (Table 3's scale); None without rewrites."""
    avg_word_edits: float | None
    """Mean word edits (a count) over the same claims."""

    @property
    def paper_key(self) -> str | None:
        """The paper's row for this model and prompt ("claude/arm-rewrite-both"), None when it has none."""
        family = model_family(self.model)
        return f"{family}/arm-rewrite-{self.variant}" if family and self.variant else None

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def model_family(model: str | None) -> str | None:
    """The paper's model a model name belongs to: claude (Claude-3.5-Sonnet) or gpt-4 (its "GPT-4")."""
    name = (model or "").lower()
    if "claude" in name:
        return "claude"
    return "gpt-4" if name.startswith("gpt-4") else None


def rewrite_figures(
    cur: duckdb.DuckDBPyConnection, dataset: str, source: str, level: str, units: Sequence[str] | None = None
) -> RewriteFigures:
    """# rewrites and the average edit distances of `source`'s current rewrites at `level` (of `units` only,
    when given), recomputed from the claims' and rewrites' texts."""
    found = cur.execute(
        """
        SELECT u.text, l.rewrite FROM current_label l
        JOIN unit u ON u.dataset = l.dataset AND u.unit_id = l.target_id
        WHERE l.dataset = ? AND l.source = ? AND l.level = ? AND l.rewrite IS NOT NULL
          AND (? OR list_contains(?, l.target_id))
        """,
        [dataset, source, level, units is None, list(units or [])],
    ).fetchall()
    pairs = [(text, rewrite) for text, rewrite in found if signals.rewritten(text, rewrite)]
    model, prompt = cur.execute(
        "SELECT model, prompt_version FROM label_source WHERE dataset = ? AND source = ?", [dataset, source]
    ).fetchone() or (None, None)
    variant = (
        prompt.removeprefix(REWRITE_PROMPT).split("@")[0] if prompt and prompt.startswith(REWRITE_PROMPT) else None
    )
    return RewriteFigures(
        source=source,
        level=level,
        model=model,
        variant=variant,
        claims=len(found),
        rewrites=len(pairs),
        avg_edit_distance=_mean([signals.normalized_edit_distance(s, r) for s, r in pairs]),
        avg_word_edits=_mean([signals.edit_distance(s, r) for s, r in pairs]),
    )


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


@dataclass(frozen=True)
class Table3Row:
    """One ARM rewrite source: our figures, and the paper's row for its model and prompt beside them."""

    ours: RewriteFigures
    paper_label: str | None
    """The paper's row name ("Claude both"), None when the paper has no row for this model."""
    compared: tuple[published.Compared, ...]


def table3_rows(cur: duckdb.DuckDBPyConnection, dataset: str) -> list[Table3Row]:
    """ARM Table 3 for every ARM rewrite label source of `dataset` (per level it labelled), beside the
    paper's row for the same model family and prompt. A figure that differs, or that we do not have,
    says why (`Compared.cause`)."""
    sources = cur.execute(
        """
        SELECT DISTINCT l.source, l.level FROM label l JOIN label_source s USING (dataset, source)
        WHERE l.dataset = ? AND s.prompt_version LIKE ? AND l.rewrite IS NOT NULL ORDER BY l.source, l.level
        """,
        [dataset, REWRITE_PROMPT + "%"],
    ).fetchall()
    table = published.table(PAPER, "table3")
    rows = []
    for source, level in sources:
        ours = rewrite_figures(cur, dataset, source, level)
        row = table.row(ours.paper_key) if ours.paper_key else None
        figures = {"rewrites": ours.rewrites, "avg_edit_distance": ours.avg_edit_distance}
        compared = [
            published.Compared(c.column, c.paper, c.ours, _cause(ours, c.column))
            for c in (published.compare(table, row.key, figures) if row else [])
        ]
        rows.append(Table3Row(ours, row.label if row else None, tuple(compared)))
    return rows


SUBJECTIVITY = (
    "balanced accuracy against ARM's subjectivity labels of StorySumm's claims (section 3.2), which no bundled "
    "dataset has"
)
"""Why Table 2 and Table 3's Subj. and Subj. ∨ Unfaith. columns have no figure of ours."""
UNFAITH = "unfaith"
"""Table 3's column scored against the faithfulness labels: `unfaith_balanced_accuracy`."""


def unfaith_balanced_accuracy(
    cur: duckdb.DuckDBPyConnection, dataset: str, source: str, level: str
) -> tuple[float | None, int]:
    """Table 3's Unfaith. column for `source`: balanced accuracy (%) of ARM's label (a claim rewritten,
    r ≠ s, is flagged unfaithful) against the dataset's gold faithful / unfaithful labels of the units
    it has a rewrite of; and how many units that is. (None, 0) without gold labels at `level`."""
    found = cur.execute(
        """
        SELECT u.text, l.rewrite, g.value::VARCHAR FROM current_label l
        JOIN unit u ON u.dataset = l.dataset AND u.unit_id = l.target_id
        JOIN current_label g ON g.dataset = l.dataset AND g.target_id = l.target_id AND g.level = l.level
        WHERE l.dataset = ? AND l.source = ? AND l.level = ? AND l.rewrite IS NOT NULL
          AND g.source = 'gold' AND g.value::VARCHAR IN ('faithful', 'unfaithful')
        """,
        [dataset, source, level],
    ).fetchall()
    if not found:
        return None, 0
    import numpy as np  # on use: scikit-learn behind the metrics, for the one page that scores this

    from faithlens.analysis import metrics

    flagged = ["unfaithful" if signals.rewritten(text, rewrite) else "faithful" for text, rewrite, _ in found]
    gold = [value for _, _, value in found]
    return metrics.balanced_accuracy(np.array(gold, dtype=object), np.array(flagged, dtype=object)), len(found)


TABLE3_COUNTS = (
    "# Rewrites counts the claims rewritten (r ≠ s) of those the source has a rewrite of; the paper's, of "
    "StorySumm's 568 sentences with its own model runs, so counts over other claims or models differ by design."
)


def table3_display(rows: Sequence[Table3Row]) -> list[dict[str, object]]:
    """Table 3 rows for a page: our figures and the paper's printed ones side by side."""
    out = []
    for row in rows:
        ours = row.ours
        paper = {c.column: c.paper.text for c in row.compared}
        out.append(
            {
                "source": ours.source,
                "level": ours.level,
                "prompt": ours.variant,
                "claims": ours.claims,
                "# rewrites": ours.rewrites,
                "# rewrites (paper)": paper.get("rewrites", ""),
                "avg. edit dist.": None if ours.avg_edit_distance is None else round(ours.avg_edit_distance, 2),
                "avg. edit dist. (paper)": paper.get("avg_edit_distance", ""),
                "avg. word edits": None if ours.avg_word_edits is None else round(ours.avg_word_edits, 2),
                "paper row": row.paper_label or "none for this model",
            }
        )
    return out


def paper_beside(ours: RewriteFigures) -> str:
    """The paper's Table 3 figures for the same model family and prompt, in words, and how ours are computed."""
    table = published.table(PAPER, "table3")
    row = table.row(ours.paper_key) if ours.paper_key else None
    if row is None:
        paper = f"ARM's {table.name} has no row for {ours.model} with the {ours.variant or 'unknown'} prompt. "
    else:
        rewrites, distance = (table.printed(row.key, column).text for column in ("rewrites", "avg_edit_distance"))
        paper = (
            f"ARM's {table.name}, {row.label}: {rewrites} rewrites of StorySumm's 568 sentences, average edit "
            f"distance {distance} ({PAPER_MODELS[model_family(ours.model) or '']}; ours: {ours.model}). "
        )
    return paper + NORMALISATION


def _cause(ours: RewriteFigures, column: str) -> str:
    """Why our figure need not match the paper's: other claims and model, the normalisation; the
    labels a balanced-accuracy column scores against."""
    if column == UNFAITH:
        return "balanced accuracy of r ≠ s against the dataset's gold labels: shown on the Reproduced figures page"
    if column not in ("rewrites", "avg_edit_distance"):
        return SUBJECTIVITY
    return (
        f"{ours.claims:,} {ours.level}s rewritten by {ours.model} here, StorySumm's 568 sentences by the paper's "
        f"{PAPER_MODELS[model_family(ours.model) or '']} there; the paper does not define its edit-distance "
        "normalisation (ours: word edits / the longer word list)"
    )


def run_figures(cur: duckdb.DuckDBPyConnection, run_id: int) -> RewriteFigures | None:
    """Table 3's figures over the units of an `arm-rewrite` run (its source's current rewrites of them);
    None for a run of another method."""
    run = log.load(cur, run_id)
    if run is None or run.spec.method != "arm-rewrite":
        return None
    return rewrite_figures(cur, run.dataset, run.source, run.level, run.units)


TABLE4 = {
    "original_pct_all_agree": ("agreement", "original"),
    "rewrite_pct_all_agree": ("agreement", "rewrites"),
    "original_pct_faithful": ("faithful", "original"),
    "rewrite_pct_faithful": ("faithful", "rewrites"),
    "pct_original_preferred": ("preferred", "original"),
    "pct_rewrite_preferred": ("preferred", "rewrites"),
}
"""A session's ARM figure -> its cell of the paper's Table 4 (row, column)."""
TABLE5_ROWS = {"": ("individual", "Individual (each coder's marks)"), "majority_": ("majority", "Maj. vote")}
TABLE5_HOW = (
    "As ARM section 4.3: % important is the mean share of a rewrite explanation's points marked IMPORTANT, "
    "% none important the share of explanations with no IMPORTANT point; likewise WRONG. Individual: every "
    "coder's marked explanation. Maj. vote: one explanation per rewrite at least one coder marked, each point "
    "carrying the mark more than half of the unit's coders gave it (a coder who preferred the original or "
    "neither marked nothing); the paper's majority row counts 82 such rewrites."
)
TABLE5_COLUMNS = {
    "pct_important": "% important",
    "pct_none_important": "% none important",
    "pct_wrong": "% wrong",
    "pct_none_wrong": "% none wrong",
}


def figure_rows(arm: dict[str, float | int | None]) -> list[dict[str, object]]:
    """A session's ARM figures other than Table 5's as (metric, value) rows, each Table 4 figure with the
    paper's printed one beside it ("paper": "57.45 (Table 4)"; empty for figures the paper does not print)."""
    table = published.table(PAPER, "table4")
    shown = {key: value for key, value in arm.items() if not _table5_key(key)}
    rows = []
    for key, row in zip(shown, coding.arm_rows(shown), strict=True):
        cell = TABLE4.get(key)
        printed = table.printed(*cell) if cell else None
        rows.append({**row, "paper": f"{printed.text} ({table.name})" if printed else ""})
    return rows


def table5_rows(arm: dict[str, float | int | None]) -> list[dict[str, object]]:
    """ARM Table 5 for a preference session: the individual row and the majority-vote row, each as this
    session's figures and then the paper's printed ones."""
    table = published.table(PAPER, "table5")
    rows: list[dict[str, object]] = []
    for prefix, (key, label) in TABLE5_ROWS.items():
        ours = {"row": label, "figures": "this session", "explanations": arm.get(f"{prefix}explanations")}
        rows.append(ours | {name: arm.get(prefix + column) for column, name in TABLE5_COLUMNS.items()})
        paper = {"row": label, "figures": f"paper ({table.name})", "explanations": None}
        printed = {name: table.printed(key, column).value for column, name in TABLE5_COLUMNS.items()}
        rows.append(paper | printed)
    return rows


def _table5_key(key: str) -> bool:
    return any(key in (prefix + column, prefix + "explanations") for prefix in TABLE5_ROWS for column in TABLE5_COLUMNS)
