"""A small canonical import with hand-checkable recall (see tests/core/test_errors_recall.py): three
summaries' sentences with gold labels and error types A and B, and a coder who labels each one.

    unit     gold         types  ann
    s1#s0    unfaithful   A      unfaithful
    s1#s1    unfaithful   A, B   faithful
    s1#s2    faithful     -      faithful
    s2#s0    unfaithful   B      unfaithful
    s2#s1    unfaithful   A      faithful
    s2#s2    partial      A      unfaithful
    s3#s0    faithful     A      unfaithful
"""

from __future__ import annotations

import json
from pathlib import Path

from faithlens import store
from faithlens.build import ingest
from faithlens.coding import events, sessions
from tests.coders import ADMIN

DATASET = "hand"
ROWS = {
    "s1": [("unfaithful", ["A"]), ("unfaithful", ["A", "B"]), ("faithful", [])],
    "s2": [("unfaithful", ["B"]), ("unfaithful", ["A"]), ("partial", ["A"])],
    "s3": [("faithful", ["A"])],
}
ANN = {
    "s1#s0": "unfaithful",
    "s1#s1": "faithful",
    "s1#s2": "faithful",
    "s2#s0": "unfaithful",
    "s2#s1": "faithful",
    "s2#s2": "unfaithful",
    "s3#s0": "unfaithful",
}
CODER_SOURCE = "coding/check/ann"


def build_hand_db(built_db: Path, folder: Path) -> Path:
    """A copy of the bundled database with the import and the coder's codes added."""
    db = folder / "hand.duckdb"
    db.write_bytes(built_db.read_bytes())
    lines = [
        {
            "document_id": "d",
            "summary_id": summary,
            "model": "gen-x",
            "sentences": [
                {"text": f"{summary} sentence {i}.", "label": label, "error_types": types}
                for i, (label, types) in enumerate(sentences)
            ],
        }
        for summary, sentences in ROWS.items()
    ]
    path = folder / f"{DATASET}.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    ingest.import_file(db, path, "canonical")
    conn = store.connect(db)
    try:
        spec = sessions.SessionSpec(
            "check", DATASET, "sentence", "storysumm-faithfulness", ordering="fixed", blind=False
        )
        session = sessions.create(conn, ADMIN, spec)
        codes = [
            ("ann", events.Submission(unit, (code,), "why" if code == "unfaithful" else None))
            for unit, code in ANN.items()
        ]
        events.save_many(conn, ADMIN, session, codes)
    finally:
        conn.close()
    return db
