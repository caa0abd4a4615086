"""Coding sessions: a code's save as the page waits for it, and the agreement table of a large session.

- Save: `events.save` of one code (check against session and codebook, the coding event and the
  coder's label event in one committed transaction), as the Code page calls it before saying
  "Saved": median of SAVES, on the bundled database and on the 100x synthetic one (500k units), whose
  bigger `label` table is what a save could slow down on. Budget 50 ms.
- Agreement: `report.session_agreement` (current codes read from `coding_event`, then Cohen's kappa
  per pair, Fleiss' kappa, Krippendorff's alpha, % all agree, and the same per code) for a session of
  10,000 synthetic sentences and 5 coders (50,000 codes, planted with one INSERT ... SELECT: the bench
  times the reading, not the planting). Budget 300 ms.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
from pathlib import Path

from bench.measure import Measure, median_ms
from bench.synthetic import DATASET, bundled_and_synthetic
from faithlens import access, store
from faithlens.coding import events, report, sessions

SAVES = 25
CODERS = ("ana", "ben", "cai", "dee", "eli")
UNITS = 10_000
SAVE_BUDGET_MS = 50.0
AGREEMENT_BUDGET_MS = 300.0


def _save_ms(db: Path, dataset: str, name: str) -> float:
    conn = store.connect(db)
    try:
        spec = sessions.SessionSpec(name, dataset, "sentence", "storysumm-faithfulness", sample=SAVES + 5, seed=1)
        ana = access.cli_actor("ana")
        session = sessions.create(conn, ana, spec)
        sessions.join(conn, ana, session)
        units = itertools.cycle(session.units)
        codes = itertools.cycle((("faithful",), ("na",)))
        return median_ms(
            lambda: events.save(conn, ana, session, events.Submission(next(units), next(codes))),
            repeat=SAVES,
            warmup=3,
        )
    finally:
        conn.close()


def _plant_codes(conn, session: sessions.Session) -> None:
    """Five coders' codes on every unit: mostly the same code, each coder differing on some units."""
    with store.write(conn, "bench codes") as cur:
        cur.execute(
            """
            INSERT INTO coding_event (session_id, coder, unit_id, action, codes, codebook_version, made_by)
            SELECT ?, coder, unit_id, 'code',
                   [CASE WHEN hash(unit_id) % 5 = 0 OR hash(unit_id || coder) % 7 = 0 THEN 'unfaithful'
                         WHEN hash(unit_id || coder) % 11 = 0 THEN 'na' ELSE 'faithful' END],
                   ?, coder
            FROM unnest(?) AS u(unit_id), unnest(?) AS c(coder)
            """,
            [session.session_id, session.codebook_version, list(session.units), list(CODERS)],
        )


def _agreement_ms(db: Path) -> tuple[float, int]:
    conn = store.connect(db)
    try:
        spec = sessions.SessionSpec("bench-agreement", DATASET, "sentence", "storysumm-faithfulness", sample=UNITS)
        session = sessions.create(conn, access.cli_actor(), spec)
        _plant_codes(conn, session)
        found = report.session_agreement(conn, session)
        return median_ms(lambda: report.session_agreement(conn, session), repeat=5), found.overall.complete
    finally:
        conn.close()


def run() -> list[Measure]:
    with tempfile.TemporaryDirectory() as folder:
        bundled, synthetic = bundled_and_synthetic(folder)
        shutil.copy(synthetic, Path(folder) / "synthetic-agreement.duckdb")
        save_bundled = _save_ms(bundled, "storysumm", "bench-save")
        save_synthetic = _save_ms(synthetic, DATASET, "bench-save")
        agreement_ms, complete = _agreement_ms(Path(folder) / "synthetic-agreement.duckdb")
    return [
        Measure("coding: save one code, acknowledged (bundled StorySumm, median)", save_bundled, "ms", SAVE_BUDGET_MS),
        Measure("coding: save one code, acknowledged (100x synthetic, median)", save_synthetic, "ms", SAVE_BUDGET_MS),
        Measure(
            f"coding: session agreement + per code, {complete:,} units x {len(CODERS)} coders (median)",
            agreement_ms,
            "ms",
            AGREEMENT_BUDGET_MS,
        ),
    ]
