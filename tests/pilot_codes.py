"""A lab's pilot coding of TofuEval sentences, written through the coding events (the core's real
write path), for the tests that check a coder's tags move a figure only when their source is chosen."""

from __future__ import annotations

from pathlib import Path

from faithlens import store
from faithlens.coding import events, sessions
from tests.coders import ADMIN

EXTRINSIC = "Extrinsic Information"
CODER = "coding/pilot/ann"


def error_types(row: dict[str, str]) -> set[str]:
    return {t.strip() for t in row["type"].split(",") if t.strip()}


def unit_ids(rows: list[dict[str, str]]) -> list[str]:
    """Each CSV row's sentence id as FaithLens stores it (sentences in sent_idx order, from 0)."""
    per: dict[tuple, list[tuple[int, int]]] = {}
    for index, row in enumerate(rows):
        per.setdefault((row["doc_id"], row["topic"], row["model_name"]), []).append((int(row["sent_idx"]), index))
    ids = [""] * len(rows)
    for (doc, topic, model), found in per.items():
        for position, (_, index) in enumerate(sorted(found)):
            ids[index] = f"{doc} / {model} / {topic}#s{position}"
    return ids


def untyped_model_extra(rows: list[dict[str, str]], count: int, skip: int = 0) -> list[int]:
    """Indexes of Model-Extra sentences that carry no gold error type."""
    found = [i for i, row in enumerate(rows) if row["model_name"] == "Model-Extra" and not error_types(row)]
    return found[skip : skip + count]


def code_extrinsic(db: Path, dataset: str, units: list[str]) -> None:
    """Coder `ann` of session `pilot` tags `units` Extrinsic Information (one import of codes)."""
    conn = store.connect(db)
    try:
        spec = sessions.SessionSpec(
            "pilot", dataset, "sentence", "tofueval-errors", ordering="fixed", units=tuple(units), blind=False
        )
        session = sessions.create(conn, ADMIN, spec)
        codes = [("ann", events.Submission(unit, (EXTRINSIC,), "pilot")) for unit in units]
        events.save_many(conn, ADMIN, session, codes)
    finally:
        conn.close()
