"""`python -m faithlens llm ...` in a real subprocess, talking over HTTP to the scripted server in
this process: the JSON record, the cache across processes, the text output, and exit 2 with one
line on stderr for what a user can fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.llm.conftest import ANTHROPIC_KEY, OPENAI_KEY, ROOT, price, prompt_file
from tests.llmserver import LLMServer, Reply

SENTENCE_ID = "1e21553b47944b67bc2cdf67860d8e15#s2"
SENTENCE = "He finds a mermaid sitting on a rock, but the sky suddenly goes black and time stands still."
EXPLANATION = "The story says the sky turns dark, not black."
# Stemmed word edit distance: black -> dark, one substitution. Both sentences are 20 NLTK tokens (18
# words, the comma and the full stop), so it is 1/20 on ARM Table 3's normalised scale.
REWRITE = "He finds a mermaid sitting on a rock, but the sky suddenly goes dark and time stands still."
POINTS = ["The sky turns dark rather than black."]
SUMMARY_ID = "1e21553b47944b67bc2cdf67860d8e15"


def environment(server: LLMServer | None, **extra: str) -> dict[str, str]:
    """The test process's environment without any LLM setting of the developer's, plus `extra`;
    with a server, both providers point at it."""
    names = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "FAITHLENS_OPENAI_BASE_URL", "FAITHLENS_ANTHROPIC_BASE_URL")
    env = {k: v for k, v in os.environ.items() if k not in names and k != "FAITHLENS_LLM_PRICES"}
    if server is not None:
        env |= {"FAITHLENS_OPENAI_BASE_URL": server.openai_base_url}
        env |= {"FAITHLENS_ANTHROPIC_BASE_URL": server.anthropic_base_url}
    env |= {"FAITHLENS_LLM_TIMEOUT": "20", "PYTHONIOENCODING": "utf-8"}
    return env | extra


def faithlens(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "faithlens", *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120
    )


def rewrite_args(db: Path, *extra: str) -> list[str]:
    return ["llm", "rewrite", "--dataset", "storysumm", "--unit", SENTENCE_ID, "--provider", "openai"] + [
        "--model",
        "gpt-4o",
        "--json",
        "--db",
        str(db),
        *extra,
    ]


def test_rewrite_prints_the_stored_record_then_answers_from_the_cache(server: LLMServer, db_copy: Path) -> None:
    server.queue(
        Reply(f"{EXPLANATION}\n<answer>{REWRITE}</answer>", input_tokens=800, output_tokens=30),
        Reply(f"<item>{POINTS[0]}</item>", input_tokens=40, output_tokens=10),
    )
    env = environment(server, OPENAI_API_KEY=OPENAI_KEY)
    first = faithlens(rewrite_args(db_copy), env)
    assert first.returncode == 0, first.stderr
    record = json.loads(first.stdout)
    per_input, per_output = price("gpt-4o")
    assert {k: record[k] for k in ("label", "explanation", "rewrite", "edit_distance", "points", "source")} == {
        "label": "unfaithful",
        "explanation": EXPLANATION,
        "rewrite": REWRITE,
        "edit_distance": 1,
        "points": POINTS,
        "source": "llm/arm-rewrite-both/gpt-4o",
    }
    assert record["normalized_edit_distance"] == pytest.approx(1 / 20)
    assert (record["input_tokens"], record["output_tokens"], record["cached"]) == (840, 40, False)
    assert record["cost"] == pytest.approx((840 * per_input + 40 * per_output) / 1_000_000)
    assert REWRITE in record["raw_output"] and POINTS[0] in record["raw_output"]
    assert REWRITE in first.stderr, "the answer streams to stderr as it arrives"
    assert len(server.requests) == 2
    assert server.requests[0].system == prompt_file("arm-rewrite.both").system
    assert SENTENCE in server.requests[0].last_user_text()

    second = faithlens(rewrite_args(db_copy), env)
    assert second.returncode == 0, second.stderr
    again = json.loads(second.stdout)
    assert again["cached"] is True and len(server.requests) == 2, "a cached answer makes no call"
    assert {k: again[k] for k in ("label", "rewrite", "edit_distance", "points")} == {
        k: record[k] for k in ("label", "rewrite", "edit_distance", "points")
    }

    costs = faithlens(["llm", "costs", "--json", "--db", str(db_copy)], env)
    assert costs.returncode == 0, costs.stderr
    by_method = {row["method"]: row for row in json.loads(costs.stdout)}
    assert {m: r["calls"] for m, r in by_method.items()} == {"arm-rewrite": 1, "arm-explanation-points": 1}


def test_verify_text_output_says_the_label_and_an_unknown_cost(server: LLMServer, db_copy: Path) -> None:
    server.queue(Reply("No", input_tokens=100, output_tokens=1))
    args = ["llm", "verify", "--dataset", "storysumm", "--unit", SUMMARY_ID, "--method", "storysumm-binary"]
    done = faithlens(
        [*args, "--provider", "openai", "--model", "local-llama", "--db", str(db_copy)], environment(server)
    )
    assert done.returncode == 0, done.stderr
    assert "label: unfaithful (answer: No)" in done.stdout
    assert "100 in, 1 out; cost unknown" in done.stdout
    assert server.requests[0].headers["authorization"] == "Bearer not-needed", "a local server needs no key"


def test_a_bad_unit_id_exits_2_with_one_line(server: LLMServer, db_copy: Path) -> None:
    args = rewrite_args(db_copy)
    args[args.index(SENTENCE_ID)] = "no-such-unit#s9"
    done = faithlens(args, environment(server, OPENAI_API_KEY=OPENAI_KEY))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("error: ") and len(done.stderr.strip().splitlines()) == 1
    assert "no-such-unit#s9" in done.stderr
    assert server.requests == []


def test_a_summary_id_for_a_sentence_method_exits_2(server: LLMServer, db_copy: Path) -> None:
    args = rewrite_args(db_copy)
    args[args.index(SENTENCE_ID)] = SUMMARY_ID
    done = faithlens(args, environment(server, OPENAI_API_KEY=OPENAI_KEY))
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "summary" in done.stderr
    assert server.requests == []


def test_a_missing_anthropic_key_exits_2_naming_it(server: LLMServer, db_copy: Path) -> None:
    args = rewrite_args(db_copy)
    args[args.index("openai")] = "anthropic"
    done = faithlens([*args, "--base-url", server.anthropic_base_url], environment(None, OPENAI_API_KEY=OPENAI_KEY))
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and "ANTHROPIC_API_KEY" in done.stderr
    assert server.requests == []
    assert ANTHROPIC_KEY not in done.stderr


def test_a_missing_openai_key_without_a_base_url_exits_2_naming_it(db_copy: Path) -> None:
    if (ROOT / ".streamlit" / "secrets.toml").exists():
        pytest.skip("a secrets.toml could supply a key and send this to the real API")
    done = faithlens(rewrite_args(db_copy), environment(None))
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and "OPENAI_API_KEY" in done.stderr


def test_a_negative_k_is_refused_as_a_bad_option_before_any_call(server: LLMServer, db_copy: Path) -> None:
    args = ["llm", "verify", "--dataset", "storysumm", "--unit", SENTENCE_ID, "--method", "fables-verify"]
    args += ["--evidence", "bm25", "--k", "-1", "--provider", "openai", "--model", "gpt-4o", "--db", str(db_copy)]
    done = faithlens(args, environment(server, OPENAI_API_KEY=OPENAI_KEY))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "argument --k: expected a whole number of passages, 1 or more" in done.stderr.strip().splitlines()[-1]
    assert server.requests == []


def test_a_timeout_setting_that_is_not_a_number_exits_2_naming_it(server: LLMServer, db_copy: Path) -> None:
    env = environment(server, OPENAI_API_KEY=OPENAI_KEY, FAITHLENS_LLM_TIMEOUT="soon")
    done = faithlens(rewrite_args(db_copy), env)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "FAITHLENS_LLM_TIMEOUT" in done.stderr
    assert server.requests == []
