"""ARM Figures 4 and 7 on StorySumm claims: a coder's ambiguity types (a coding session with the
arm-ambiguity codebook) become a family of the Errors page, and each rewrite method's recall per
type counts the typed claims it rewrote (ARM's label r != s). StorySumm has no gold claim labels, so
every typed claim counts (no reference). Claims and codes are chosen here; the answers by hand."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from faithlens.coding import events, sessions
from faithlens.views import error_links, errors, explore
from tests.coders import ADMIN
from tests.coding.support import connected, plant_rewrite, storysumm_claim_count, storysumm_ids

CLAUDE, GPT = "llm/arm-rewrite-both/claude", "llm/arm-rewrite-both/gpt-4"


@pytest.fixture(scope="module")
def arm_db(built_db: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    db = tmp_path_factory.mktemp("arm") / "arm.duckdb"
    db.write_bytes(built_db.read_bytes())
    summary = next(s for s in storysumm_ids("test") if storysumm_claim_count(s) >= 6)
    claims = [f"{summary}#c{i}" for i in range(6)]
    types = ["1", "1", "1", "2", "2", "4"]
    rewritten = {CLAUDE: (True, True, False, True, False, False), GPT: (False, True, False, False, False, True)}
    with connected(db) as conn:
        spec = sessions.SessionSpec("ambig", "storysumm", "claim", "arm-ambiguity", units=tuple(claims), blind=False)
        session = sessions.create(conn, ADMIN, spec)
        codes = [("ann", events.Submission(c, (t,))) for c, t in zip(claims, types, strict=True)]
        events.save_many(conn, ADMIN, session, codes)
        for source, changed in rewritten.items():
            for claim, was in zip(claims, changed, strict=True):
                plant_rewrite(conn, source, claim, f"{claim} said plainly", changed=was)
    return db, claims


def test_coded_ambiguity_types_and_recall_per_rewrite_method(arm_db) -> None:
    db, claims = arm_db
    conn = duckdb.connect(str(db), read_only=True)
    try:
        cur = conn.cursor()
        family = errors.find_family(cur, "storysumm", "ambiguity_type", "claim")
        assert family.sources == ("coding/ambig/ann",)
        shown = errors.distribution(cur, "storysumm", family)
        assert {row.value: row.units for row in shown.rows} == {"1": 3, "2": 2, "4": 1}, "ARM Figure 4's breakdown"
        assert errors.default_reference(errors.sources_at(cur, "storysumm", family), family) is None
        result = errors.recall(cur, "storysumm", family, [CLAUDE, GPT], reference=None)
        got = {(row.source, row.value): (row.flagged, row.total) for row in result.rows if row.total}
        assert got == {
            (CLAUDE, "1"): (2, 3),
            (CLAUDE, "2"): (1, 2),
            (CLAUDE, "4"): (0, 1),
            (GPT, "1"): (1, 3),
            (GPT, "2"): (0, 2),
            (GPT, "4"): (1, 1),
        }
        row = next(r for r in result.rows if (r.source, r.value) == (CLAUDE, "1"))
        state = error_links.recall_cell("storysumm", result, row, True, (), None)
        assert explore.list_summaries(cur, "storysumm", state.filters).units == 2
        assert state.filters.caption(1, 2).startswith("2 claims of 1 summary where a claim carries ambiguity_type: 1")
    finally:
        conn.close()
