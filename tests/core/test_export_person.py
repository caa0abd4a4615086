"""Exports carry the person: a model's labels exported say who asked for each answer (`asked_by`, the
person it was charged to), answers asked by two people each under their own name; an answer carried
to another database in a demo pack and replayed there keeps the name of whoever bought it, not of who
imported or replayed it.
Answers come from the scripted OpenAI-protocol server, asked through the core as each person."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from faithlens import access, store
from faithlens.access import people
from faithlens.access.rules import Actor, Person
from faithlens.exports import labels
from faithlens.llm import ask, packs, targets
from tests.llmserver import LLMServer, Reply

DANIEL = "1e21553b47944b67bc2cdf67860d8e15"
SOURCE = "llm/arm-zero-shot/gpt-4o"


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[LLMServer]:
    with LLMServer(lambda request: Reply("The story says otherwise.\n<answer>No</answer>")) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-export")
        monkeypatch.setenv("FAITHLENS_OPENAI_BASE_URL", server.openai_base_url)
        monkeypatch.delenv("FAITHLENS_LLM_PRICES", raising=False)
        yield server


def _ask(conn: duckdb.DuckDBPyConnection, llm: LLMServer, unit: str, actor: Actor) -> None:
    with conn.cursor() as cur:
        target = targets.resolve(cur, "storysumm", unit)
    ask.ask(conn, target, ask.Ask("arm-zero-shot", "openai", "gpt-4o", base_url=llm.openai_base_url), actor)


def _exported(conn: duckdb.DuckDBPyConnection, out: Path) -> dict[str, dict]:
    labels.export(conn, "storysumm", SOURCE, "jsonl", out)
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return {row["unit_id"]: row for row in rows}


def test_each_model_label_says_who_asked_and_a_pack_keeps_the_buyer(
    llm: LLMServer, built_db: Path, db_copy: Path, tmp_path: Path
) -> None:
    claims = [f"{DANIEL}#c0", f"{DANIEL}#c1"]
    conn = store.connect(db_copy)
    try:
        lead = access.cli_actor("lead")
        people.add_person(conn, lead, "bob", "Bob B", role="runner")
        people.set_budget(conn, lead, "bob", 5.0, 50.0)
        bob = Actor(Person("bob", "Bob B", None, "link"), "runner")
        _ask(conn, llm, claims[0], bob)
        _ask(conn, llm, claims[1], lead)
        assert len(llm.requests) == 2
        here = _exported(conn, tmp_path / "here.jsonl")
        pack = packs.export(conn, "storysumm", [DANIEL]).data
    finally:
        store.close(conn)
    assert {unit: here[unit]["asked_by"] for unit in claims} == {claims[0]: "bob", claims[1]: "lead"}
    assert all(here[unit]["from_pack"] is None for unit in claims)

    conn = store.connect(shutil.copy(built_db, tmp_path / "elsewhere.duckdb"))
    try:
        carol = access.cli_actor("carol")
        packs.import_pack(conn, "demo.faithlens-pack.json", pack, carol)
        for unit in claims:  # replayed from the imported answers: the labels appear, no request is made
            _ask(conn, llm, unit, carol)
        assert len(llm.requests) == 2
        there = _exported(conn, tmp_path / "there.jsonl")
    finally:
        store.close(conn)
    assert {unit: there[unit]["asked_by"] for unit in claims} == {claims[0]: "bob", claims[1]: "lead"}, (
        "an imported answer names whoever bought it, not carol who imported it"
    )
    assert {there[unit]["from_pack"] for unit in claims} == {"demo.faithlens-pack.json"}
