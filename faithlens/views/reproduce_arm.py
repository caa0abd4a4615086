"""ARM's Tables 2-5 on the Reproduced figures page (`faithlens.views.reproduced`), built on
`faithlens.views.arm_tables`: ours beside the paper's printed figures once their sources exist; until
then each printed figure is listed as "no figure of ours", its cause saying what to create and its link
opening the page to create it on.

- Table 2 (subjectivity detection) and Table 3's Subj. and Subj. ∨ Unfaith. columns are scored against
  ARM's subjectivity labels of StorySumm's claims, which no bundled dataset has: no figure of ours.
- Table 3's # Rewrites and Avg. edit dist. per ARM rewrite label source of a Claude or GPT-4 model
  (`arm_tables.table3_rows`), and its Unfaith. column: balanced accuracy of r ≠ s against the dataset's
  gold labels of the same units (`arm_tables.unfaith_balanced_accuracy`). Open on the Rewrite page.
- Table 4 per ARM faithfulness session (agreement, faithful) and ARM preference session (preferred), and
  Table 5 per preference session, from the session report (`faithlens.coding.report`); open on Sessions.
"""

from __future__ import annotations

import duckdb

from faithlens.analysis import published
from faithlens.analysis.published import Compared, PaperTable, Row
from faithlens.coding import report, sessions
from faithlens.coding.sessions import Session
from faithlens.views import arm_tables
from faithlens.views.reproduced import Figure, Link
from faithlens.views.states import RewriteState, RunsState, SessionsState
from faithlens.views.storysumm_paper import bundled_dataset

PAPER = arm_tables.PAPER
FAITHFULNESS, PREFERENCE = "arm-faithfulness", "arm-preference"
SUBJECTIVITY_LABELS = "subjectivity labels"
NO_SOURCE, NO_SESSION = "no rewrite source", "no coding session"
OTHER_CLAIMS = "other claims, model or coders"
FAMILY_NAMES = {"claude": "Claude", "gpt-4": "GPT-4"}
PAPER_STUDY = (
    "the paper's: Claude's subjectivity-prompt rewrites of StorySumm claims, each judged by three Upwork "
    "annotators (section 5.4)"
)


def arm_figures(cur: duckdb.DuckDBPyConnection) -> list[Figure] | None:
    """ARM Tables 2-5; None when neither StorySumm nor any ARM rewrite source or session is loaded."""
    storysumm = bundled_dataset(cur)
    rewritten = [
        name
        for (name,) in cur.execute(
            "SELECT DISTINCT dataset FROM label_source WHERE prompt_version LIKE ? ORDER BY dataset",
            [arm_tables.REWRITE_PROMPT + "%"],
        ).fetchall()
    ]
    coded = [s for s in reversed(sessions.listed(cur)) if s.mode in (FAITHFULNESS, PREFERENCE)]
    if storysumm is None and not rewritten and not coded:
        return None
    home = storysumm or (rewritten or [coded[0].dataset])[0]
    return [
        *_table2(home),
        *_table3(cur, home, rewritten),
        *_table4(cur, home, coded),
        *_table5(cur, home, coded),
    ]


def _runs(dataset: str) -> Link:
    return Link("runs", RunsState(dataset=dataset), "Open Runs")


def _new_session(dataset: str) -> Link:
    return Link("sessions", SessionsState(dataset=dataset, view="new"), "Open Sessions (new session)")


def _missing(table: PaperTable, row: Row, causes: dict[str, str], kind: str, link: Link, how: str) -> list[Figure]:
    """Each printed figure of `row` with no figure of ours, the cause per column (`''`: every column)."""
    return [
        Figure(PAPER, table, row, Compared(c.column, c.paper, None, causes.get(c.column, causes[""])), kind, how, link)
        for c in published.compare(table, row.key, {})
    ]


def _table2(home: str) -> list[Figure]:
    table = published.table(PAPER, "table2")
    cause = (
        f"{arm_tables.SUBJECTIVITY}: its rows score each method against them. The methods themselves run from the "
        "Runs page (arm-zero-shot, arm-few-shot, arm-self-consistency, and arm-rewrite (both) for the ARM rows), "
        "but there is nothing to score their labels against"
    )
    how = "balanced accuracy and F1-macro against ARM's subjectivity labels"
    return [f for row in table.rows for f in _missing(table, row, {"": cause}, SUBJECTIVITY_LABELS, _runs(home), how)]


def _table3(cur: duckdb.DuckDBPyConnection, home: str, datasets: list[str]) -> list[Figure]:
    table = published.table(PAPER, "table3")
    found = [(dataset, row) for dataset in datasets for row in arm_tables.table3_rows(cur, dataset)]
    figures = []
    for printed in table.rows:
        mine = [(dataset, row) for dataset, row in found if row.ours.paper_key == printed.key]
        if not mine:
            figures += _table3_missing(table, printed, home)
        for dataset, row in mine:
            figures += _table3_ours(cur, table, printed, dataset, row)
    return figures


def _table3_missing(table: PaperTable, printed: Row, home: str) -> list[Figure]:
    family, method = printed.key.split("/")
    variant = method.removeprefix("arm-rewrite-")
    create = (
        f"no ARM rewrite source of {FAMILY_NAMES[family]} with the {variant} prompt: run arm-rewrite ({variant}) "
        f"with a {FAMILY_NAMES[family]} model on StorySumm's summary sentences (ARM's claims) from the Runs page"
    )
    causes = {"": create, "subj": arm_tables.SUBJECTIVITY, "subj_or_unfaith": arm_tables.SUBJECTIVITY}
    how = "ARM rewrite label sources (llm/arm-rewrite-<prompt>/<model>)"
    return _missing(table, printed, causes, NO_SOURCE, _runs(home), how)


def _table3_ours(
    cur: duckdb.DuckDBPyConnection, table: PaperTable, printed: Row, dataset: str, row: arm_tables.Table3Row
) -> list[Figure]:
    ours = row.ours
    unfaith, scored = arm_tables.unfaith_balanced_accuracy(cur, dataset, ours.source, ours.level)
    label = f"{printed.label}: ours {ours.source} ({dataset}, {ours.claims:,} {ours.level}s)"
    shown = Row(printed.key, label, printed.values, printed.split, printed.note)
    link = Link("rewrite", RewriteState(dataset=dataset), "Open Rewrite")
    paper_model = arm_tables.PAPER_MODELS[arm_tables.model_family(ours.model) or ""]
    unfaith_cause = (
        f"{scored:,} {ours.level}s of {dataset} rewritten by {ours.model} here, scored against its gold labels; the "
        f"paper's: StorySumm's 568 sentences rewritten by its {paper_model}, against StorySumm's faithfulness labels"
        if scored
        else f"no gold faithful / unfaithful labels at the {ours.level} level of {dataset} to score r ≠ s against"
    )
    figures = []
    for cell in row.compared:
        if cell.column == arm_tables.UNFAITH:
            cell = Compared(cell.column, cell.paper, unfaith, unfaith_cause)
        kind = SUBJECTIVITY_LABELS if cell.cause == arm_tables.SUBJECTIVITY else OTHER_CLAIMS
        figures.append(Figure(PAPER, table, shown, cell, kind, _table3_how(ours), link))
    return figures


def _table3_how(ours: arm_tables.RewriteFigures) -> str:
    return (
        f"{ours.rewrites:,} of {ours.claims:,} {ours.level}s rewritten (r ≠ s); {arm_tables.NORMALISATION} Unfaith.: "
        "balanced accuracy of r ≠ s (flagged unfaithful) against the gold labels"
    )


def _session_figures(
    cur: duckdb.DuckDBPyConnection, table: PaperTable, printed: Row, session: Session, ours: dict, how: str
) -> list[Figure]:
    """The printed row beside this session's figures, each difference or gap with its cause."""
    shown, cause, link = _session_row(printed, session, cur)
    empty = (
        f"session {session.name} gives no figure for it yet: agreement needs a unit coded by two coders or more, "
        "Table 5 an explanation whose points a coder marked"
    )
    return [
        Figure(
            PAPER,
            table,
            shown,
            Compared(c.column, c.paper, c.ours, cause if c.ours is not None else empty),
            OTHER_CLAIMS if c.ours is not None else NO_SESSION,
            how,
            link,
        )
        for c in published.compare(table, printed.key, ours)
    ]


def _session_row(printed: Row, session: Session, cur: duckdb.DuckDBPyConnection) -> tuple[Row, str, Link]:
    """The printed row as this session's line, why they differ, and the session on the Sessions page."""
    coders = sessions.coders(cur, session)
    label = f"{printed.label}: ours, session {session.name} ({session.dataset})"
    cause = (
        f"session {session.name}: {len(session.units):,} {session.level}s of {session.dataset}, rewrites by "
        f"{session.suggestions}, {len(coders)} coder(s); {PAPER_STUDY}"
    )
    link = Link("sessions", SessionsState(dataset=session.dataset, session=session.name), "Open the session")
    return Row(printed.key, label, printed.values, printed.split, printed.note), cause, link


def _table4(cur: duckdb.DuckDBPyConnection, home: str, coded: list[Session]) -> list[Figure]:
    table = published.table(PAPER, "table4")
    how = "ARM session report (section 5.4's definitions; Sessions page, the session's ARM figures)"
    figures = []
    for printed in table.rows:
        mode = PREFERENCE if printed.key == "preferred" else FAITHFULNESS
        mine = [session for session in coded if session.mode == mode]
        if not mine:
            create = f"code an ARM {mode.removeprefix('arm-')} session (mode {mode}) on a rewrite source from Sessions"
            figures += _missing(table, printed, {"": create}, NO_SESSION, _new_session(home), how)
        for session in mine:
            arm = report.session_agreement(cur, session).arm
            ours = {column: arm.get(key) for key, (row, column) in arm_tables.TABLE4.items() if row == printed.key}
            figures += _session_figures(cur, table, printed, session, ours, how)
    return figures


def _table5(cur: duckdb.DuckDBPyConnection, home: str, coded: list[Session]) -> list[Figure]:
    table = published.table(PAPER, "table5")
    mine = [session for session in coded if session.mode == PREFERENCE]
    if not mine:
        create = (
            "code an ARM preference session (mode arm-preference) on a rewrite source with explanation points "
            "from Sessions: coders mark each point of a preferred rewrite's explanation"
        )
        how = arm_tables.TABLE5_HOW
        return [
            f for row in table.rows for f in _missing(table, row, {"": create}, NO_SESSION, _new_session(home), how)
        ]
    figures = []
    for session in mine:
        arm = report.session_agreement(cur, session).arm
        for prefix, (key, _label) in arm_tables.TABLE5_ROWS.items():
            ours = {column: arm.get(prefix + column) for column in arm_tables.TABLE5_COLUMNS}
            figures += _session_figures(cur, table, table.row(key), session, ours, arm_tables.TABLE5_HOW)
    return figures
