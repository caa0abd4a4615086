"""A private database where a model extracted claims through the real path (FABLES' extraction prompt,
answered by the scripted server in tests/llmserver), a coder tagged sentences and an extracted claim
through the coding events, and a model classified a sentence's ambiguity type: what the claim-set and
tag tests of Explore (AppTest and browser) read."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
import yaml

from faithlens import store
from faithlens.coding import events, sessions
from faithlens.llm import ask, targets
from faithlens.llm.runs.spec import Selection
from tests import coders
from tests.coders import ADMIN
from tests.llm.conftest import ME
from tests.llmserver import LLMServer, Request
from tests.raw import tofueval_rows

ROOT = Path(__file__).resolve().parents[1]
DANIEL = "1e21553b47944b67bc2cdf67860d8e15"
MODEL = "gpt-4o"
EXTRACTED_BY = f"llm/fables-extract-claims/{MODEL}"
AMBIGUITY_BY = f"llm/arm-ambiguity-type/{MODEL}"
VERIFIED_BY = f"llm/fables-verify-none/{MODEL}"
EXTRACTED = (
    "Daniel <b>meets</b> a stranger on the beach.",
    "The stranger gives Daniel a key.",  # the one the model's verification finds False
    "Daniel opens the door.",
    "Daniel is afraid of the sea.",
)
CODER, CLAIM_CODER = "coding/amb/ana", "coding/ctypes/bo"
AMBIGUITY = yaml.safe_load((ROOT / "faithlens/coding/codebooks/arm-ambiguity.yaml").read_text(encoding="utf-8"))
NAMES = {str(code["key"]): code["name"] for code in AMBIGUITY["codes"]}
"""ARM's ambiguity types by key, as the codebook file names them."""


def reply(request: Request) -> str:
    """FABLES' extraction prompt gets the claims, one per '- ' line; its verification prompt True, False
    for the claim about a key; the ambiguity prompt type 2."""
    asked = request.last_user_text()
    if "atomic claims" in asked:
        return "\n".join(f"- {claim}" for claim in EXTRACTED)
    if "Statement:" in asked:
        return "False" if EXTRACTED[1] in asked else "True"
    return "The summary assumes a detail the story does not state. <type>2</type>"


def _reasoning_error_summary() -> tuple[str, list[int]]:
    """A TofuEval summary with a Reasoning Error, and the 1-based numbers of its sentences carrying one."""
    rows = [r for r in tofueval_rows() if r["model_name"] == "Model-Extra"]
    doc, topic = next((r["doc_id"], r["topic"]) for r in rows if "Reasoning Error" in r["type"])
    mine = sorted((int(r["sent_idx"]), r) for r in rows if (r["doc_id"], r["topic"]) == (doc, topic))
    return f"{doc} / Model-Extra / {topic}", [n for n, (_, r) in enumerate(mine, 1) if "Reasoning Error" in r["type"]]


TOFU, TOFU_REASONING = _reasoning_error_summary()


def extracted_ids(conn: duckdb.DuckDBPyConnection, summary_id: str) -> list[str]:
    """The unit ids of a summary's claims outside the dataset's own `#c<n>`, in order."""
    rows = conn.execute(
        "SELECT unit_id FROM unit WHERE summary_id = ? AND kind = 'claim' AND unit_id NOT LIKE ? ORDER BY position",
        [summary_id, f"{summary_id}#c%"],
    ).fetchall()
    return [row[0] for row in rows]


def _ask(conn: duckdb.DuckDBPyConnection, server: LLMServer, dataset: str, target: str, method: str) -> None:
    with conn.cursor() as cur:
        resolved = targets.resolve(cur, dataset, target)
    answer = ask.ask(conn, resolved, ask.Ask(method, "openai", MODEL, base_url=server.openai_base_url), ME)
    assert answer.status == "ok", answer.failure


def seed(db: Path) -> Path:
    """Into `db` (a copy of the bundled data): claims the model extracts from DANIEL and TOFU, its verdicts
    on DANIEL's first two (True, False), coder ana's ambiguity types 2 on S2 and 4 on S4, the model's type
    2 on S5, coder bo's claim type `event` on DANIEL's first extracted claim."""
    conn = store.connect(db)
    with LLMServer(reply) as server, pytest.MonkeyPatch.context() as env:
        env.setenv("OPENAI_API_KEY", "sk-test-claim-sets")
        for dataset, target in (("storysumm", DANIEL), ("tofueval", TOFU)):
            _ask(conn, server, dataset, target, "fables-extract-claims")
        _ask(conn, server, "storysumm", f"{DANIEL}#s4", "arm-ambiguity-type")
        for unit in extracted_ids(conn, DANIEL)[:2]:
            _ask(conn, server, "storysumm", unit, "fables-verify")
    ambiguity = sessions.create(
        conn,
        ADMIN,
        sessions.SessionSpec(
            "amb",
            "storysumm",
            "sentence",
            "arm-ambiguity",
            ordering="fixed",
            units=(f"{DANIEL}#s1", f"{DANIEL}#s3"),
            blind=False,
        ),
    )
    coders.code(conn, ambiguity, "ana", events.Submission(f"{DANIEL}#s1", ("2",)))
    coders.code(conn, ambiguity, "ana", events.Submission(f"{DANIEL}#s3", ("4",)))
    first = extracted_ids(conn, DANIEL)[0]
    claim_types = sessions.create(
        conn,
        ADMIN,
        sessions.SessionSpec(
            "ctypes",
            "storysumm",
            "claim",
            "fables-claim-types",
            selection=Selection(claim_set=EXTRACTED_BY),
            ordering="fixed",
            units=(first,),
            blind=False,
        ),
    )
    coders.code(conn, claim_types, "bo", events.Submission(first, ("event",)))
    conn.close()
    return db
