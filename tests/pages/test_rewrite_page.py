"""The Rewrite page in AppTest on a private database copy: earlier rewrites of a sentence listed with
ARM's signals (r != s, the edit distance on Table 3's 0-1 scale, the word edits), and the Table 3
toggle putting each ARM rewrite source beside the paper's row for its model and prompt. The rewrites
are bought through the real ask path from the scripted local server."""

from __future__ import annotations

import pytest

from faithlens import config, store
from faithlens.llm import ask, targets
from tests.llm.conftest import ME
from tests.llmserver import LLMServer

PAGE = "pages/rewrite.py"
SUMMARY = "1e21553b47944b67bc2cdf67860d8e15"
UNIT = f"{SUMMARY}#s2"
SENTENCE = "He finds a mermaid sitting on a rock, but the sky suddenly goes black and time stands still."
# black -> dark: one substitution of 20 NLTK tokens (18 words, a comma, a full stop) -> 1/20.
REWRITE = SENTENCE.replace("black", "dark")


@pytest.fixture
def rewritten(db_copy, monkeypatch):
    """One gpt-4o rewrite of the sentence, stored as the app stores it; the app then runs on the copy."""
    with LLMServer() as server:
        server.queue(f"<answer>{REWRITE}</answer>")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-rewrite")
        conn = store.connect(db_copy)
        with conn.cursor() as cur:
            unit = targets.resolve(cur, "storysumm", UNIT)
        assert unit.text == SENTENCE
        ask.ask(conn, unit, ask.Ask("arm-rewrite", "openai", "gpt-4o", "both", base_url=server.openai_base_url), ME)
        conn.close()
    monkeypatch.setenv(config.SETTINGS["db"].env, str(db_copy))


def test_earlier_rewrites_show_the_normalised_edit_distance_and_the_word_edits(open_page, rewritten) -> None:
    at = open_page(PAGE, dataset="storysumm", summary=SUMMARY, sentence="3")
    earlier = next(d.value for d in at.dataframe if "word edits" in d.value.columns)
    (row,) = earlier.to_dict("records")
    assert (row["rewrite"], row["r ≠ s"], row["word edits"]) == (REWRITE, True, 1)
    assert row["edit distance (0–1)"] == pytest.approx(1 / 20)


def test_the_table_3_toggle_puts_each_rewrite_source_beside_the_papers_row(open_page, rewritten) -> None:
    at = open_page(PAGE, dataset="storysumm", summary=SUMMARY, sentence="3")
    at.toggle(key="rewrite.table3").set_value(True).run()
    table = next(d.value for d in at.dataframe if "# rewrites (paper)" in d.value.columns)
    (row,) = table.to_dict("records")
    assert (row["source"], row["prompt"], row["claims"], row["# rewrites"]) == (
        "llm/arm-rewrite-both/gpt-4o",
        "both",
        1,
        1,
    )
    assert row["avg. edit dist."] == pytest.approx(0.05)
    # ARM section 5.3, Table 3, "GPT-4 both": 203 rewrites, average edit distance 0.22.
    assert (row["paper row"], row["# rewrites (paper)"], row["avg. edit dist. (paper)"]) == (
        "GPT-4 both",
        "203",
        "0.22",
    )
    assert any("longer word list" in c.value for c in at.caption)


def test_a_split_that_fails_is_said_beside_the_rewrite_and_asked_again_alone(open_page, db_copy, monkeypatch) -> None:
    """ARM A.3's explanation points that do not parse: the rewrite stands (it is stored and counts), the page
    says the split failed and why, and "Ask for the points again" asks the split alone."""
    with LLMServer() as server:
        server.queue(f"It says black where the story says dark.\n<answer>{REWRITE}</answer>", "It says dark.")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-rewrite")
        monkeypatch.setenv("FAITHLENS_OPENAI_BASE_URL", server.openai_base_url)
        monkeypatch.setenv(config.SETTINGS["db"].env, str(db_copy))
        at = open_page(PAGE, dataset="storysumm", summary=SUMMARY, sentence="3")
        at.button(key="rewrite.dataset.go").click().run()
        (warning,) = at.warning
        assert (
            "Explanation points \\(ARM A\\.3\\) failed\\: parse\\_failure\\: expected points between" in warning.value
        )
        assert any(m.label == "Rewritten (r ≠ s)" and m.value == "yes" for m in at.metric)
        (points,) = [m for m in at.metric if m.label == "Explanation points |E|"]
        assert (points.value, points.delta) == ("–", "not parsed"), "never a bare ?"
        again = next(b for b in at.button if b.label == "Ask for the points again")
        server.queue("<item>It says dark, as the story does.</item>")
        again.click().run()
        assert not at.warning and len(server.requests) == 3
        assert (
            server.requests[-1].last_user_text().startswith("Summarize the key reasons described in this explanation")
        )
        assert any(t.value == "• It says dark, as the story does." for t in at.text)
        assert any(m.label == "Explanation points |E|" and m.value == "1" for m in at.metric)
