"""Pages on a public demo server (FAITHLENS_MODE=demo, issue 28 item 6) in AppTest on a private copy of the
bundled database: the Rewrite page lists the stored rewrites and replays one with no request and no write;
nothing offers a new answer or a fresh sample; the Runs page starts no run and says why."""

from __future__ import annotations

import pytest

from faithlens import config, store
from faithlens.llm import ask, targets
from tests.llm.conftest import ME
from tests.llmserver import LLMServer

REWRITE_PAGE, RUNS_PAGE = "pages/rewrite.py", "pages/runs.py"
SUMMARY = "1e21553b47944b67bc2cdf67860d8e15"
UNIT = f"{SUMMARY}#s2"
SENTENCE = "He finds a mermaid sitting on a rock, but the sky suddenly goes black and time stands still."
REWRITE = SENTENCE.replace("black", "dark")


def writes(db_copy) -> int:
    """Committed writes of the app's database (its write log), read from the file."""
    conn = store.connect(db_copy)
    try:
        return conn.execute("SELECT count(*) FROM write_log").fetchone()[0]
    finally:
        store.close(conn)


@pytest.fixture
def demo(db_copy, monkeypatch):
    """One gpt-4o rewrite of the sentence stored beforehand (with keys, at the office); then the demo
    server on the copy, with no key and its provider gone. Yields the provider's request log."""
    with LLMServer() as server:
        server.queue(f"<answer>{REWRITE}</answer>")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-office")
        conn = store.connect(db_copy)
        with conn.cursor() as cur:
            unit = targets.resolve(cur, "storysumm", UNIT)
        ask.ask(conn, unit, ask.Ask("arm-rewrite", "openai", "gpt-4o", "both", base_url=server.openai_base_url), ME)
        store.close(conn)
        monkeypatch.delenv("OPENAI_API_KEY")
        monkeypatch.setenv(config.SETTINGS["db"].env, str(db_copy))
        monkeypatch.setenv("FAITHLENS_MODE", "demo")
        server.reset()
        yield server


def test_the_rewrite_page_lists_stored_demos_and_replays_one_with_no_request_and_no_write(
    open_page, demo, db_copy
) -> None:
    before = writes(db_copy)
    at = open_page(REWRITE_PAGE, dataset="storysumm")
    listed = at.selectbox(key="rewrite.demo")
    (shown,) = listed.options
    assert "S3: He finds a mermaid" in shown and "gpt-4o (both)" in shown
    assert not [box for box in at.checkbox if "Fresh sample" in box.label], "no new answer is offered"
    assert not [b for b in at.button if b.label in ("Rewrite", "Ask")]
    at.button(key="rewrite.demo.go").click().run()
    assert not at.exception and not at.error
    assert any("from cache" in caption.value for caption in at.caption), [c.value for c in at.caption]
    assert demo.requests == []
    assert writes(db_copy) == before


def test_the_runs_page_starts_no_run_on_a_demo_server(open_page, demo, db_copy) -> None:
    before = writes(db_copy)
    at = open_page(RUNS_PAGE, dataset="storysumm")
    assert any("public demo server: no run can start here" in info.value for info in at.info)
    assert not [b for b in at.button if b.label in ("Estimate", "Start run", "Import pack")]
    assert demo.requests == [] and writes(db_copy) == before
