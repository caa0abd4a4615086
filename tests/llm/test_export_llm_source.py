"""An LLM label source exported: each row carries the stored answer behind its label (prompt and version
as the prompt file gives them, model, parameters, tokens, cost, who asked and when, the raw output and
the explanation), in every format, and never a key. Answers come from the scripted server."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from faithlens.exports import labels
from faithlens.llm import ask
from tests import raw
from tests.llm.conftest import ME, OPENAI_KEY, asking, price, prompt_file, target
from tests.llmserver import LLMServer, Reply

SUMMARIES = sorted(raw.storysumm_records())
SOURCE = "llm/storysumm-cot/gpt-4o"
REASONING = "The summary puts the storm at night; the story says dawn."


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_an_llm_source_row_carries_its_answer(
    llm_env: LLMServer, conn: duckdb.DuckDBPyConnection, tmp_path: Path, fmt: str
) -> None:
    llm_env.queue(
        Reply(REASONING, input_tokens=1000, output_tokens=20), Reply("No", input_tokens=1030, output_tokens=1)
    )
    llm_env.queue(
        Reply("Yes, it is.", input_tokens=900, output_tokens=5), Reply("Yes", input_tokens=910, output_tokens=1)
    )
    for summary in SUMMARIES[:2]:
        ask.ask(conn, target(conn, "storysumm", summary), asking(llm_env, "storysumm-cot"), ME)
    out = tmp_path / f"llm.{fmt}"
    assert labels.export(conn, "storysumm", SOURCE, fmt, out) == 2
    if fmt == "jsonl":
        rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    else:
        with duckdb.connect() as memory:
            found = memory.execute("SELECT * FROM read_parquet(?)", [str(out)])
            names = [column[0] for column in found.description]
            rows = [dict(zip(names, row, strict=True)) for row in found.fetchall()]
    first = next(row for row in rows if row["unit_id"] == SUMMARIES[0])
    template = prompt_file("storysumm-cot")
    per_input, per_output = price("gpt-4o")
    assert (first["label"], first["raw_label"], first["explanation"]) == ("unfaithful", "No", REASONING)
    assert (first["prompt"], first["prompt_version"]) == ("storysumm-cot", template.version)
    assert (first["model"], first["provider"], first["base_url"]) == ("gpt-4o", "openai", llm_env.openai_base_url)
    parameters = first["parameters"] if isinstance(first["parameters"], dict) else json.loads(first["parameters"])
    assert parameters["temperature"] == template.temperature
    assert (first["input_tokens"], first["output_tokens"]) == (2030, 21)
    assert first["cost_usd"] == pytest.approx((2030 * per_input + 21 * per_output) / 1_000_000)
    assert REASONING in first["raw_output"] and first["raw_output"].endswith("No")
    assert first["asked_at"] is not None and first["sample"] == 0 and first["from_pack"] is None
    assert "asked_by" in first, "who asked: llm_call.person (empty until the asker is recorded, issue 28)"
    record = raw.storysumm_records()[SUMMARIES[0]]
    assert first["document_text"] == record["story"] and first["generator"] == record["model"]
    assert OPENAI_KEY not in out.read_bytes().decode("utf-8", errors="replace")
