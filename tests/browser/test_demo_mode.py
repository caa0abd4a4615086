"""A public demo server (FAITHLENS_MODE=demo) in a real browser: a visitor clicks through every page,
opens a summary's detail and its ask panel on Explore, replays a stored rewrite on Rewrite, and the
server makes 0 requests to the provider (the scripted OpenAI-protocol server it is pointed at, with a
key set, so a request would be counted) and writes nothing (every table's rows, fingerprinted, are the
same after as before). Nothing asks for an API key; the pages that write elsewhere (Code, Sessions,
Runs) say this is a demo server, and a blind session's codes stay unseen. Demo mode may listen beyond
loopback, `local` mode may not."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest
from playwright.sync_api import Page, expect

from faithlens import access, store
from faithlens.coding import events, sessions
from faithlens.coding.events import Submission
from faithlens.coding.sessions import SessionSpec
from faithlens.llm import ask, targets
from faithlens.llm.runs.spec import Selection
from tests import raw
from tests.browser import helpers
from tests.llmserver import LLMServer, Reply, Request

pytestmark = pytest.mark.browser

DANIEL = "1e21553b47944b67bc2cdf67860d8e15"
CLAIM = 4
"""Explore's claim C4 (`claim=4` in a link), unit `<summary>#c3`."""
SENTENCE = 5
"""Rewrite's sentence S5 (`sentence=5`), unit `<summary>#s4`."""
MODEL = "gpt-4o"
VERDICT_REASON = "The story never names the harbour."
REWRITE_TAIL = "in the demo story"
POINT = "The story only shows this scene."
SESSION = "pilot"
CODER_NOTE = "The lab's coder thinks the ending is invented."
KEY_TEXT = re.compile(r"api[ _]?key", re.IGNORECASE)


@dataclass(frozen=True)
class Demo:
    """The scripted provider, the demo server, its database file and that file's fingerprint as the lab
    left it, before the server started."""

    llm: LLMServer
    server: helpers.Server
    db: Path
    before: dict[str, tuple[int, int]]


def _answer(request: Request) -> Reply:
    """The provider's scripted answers: a verdict, a rewrite, the rewrite's explanation points."""
    text = request.last_user_text()
    if "Rewrite the following summary sentence" in text:
        sentence = raw.storysumm_records()[DANIEL]["summary"][SENTENCE - 1].strip().removesuffix(".")
        return Reply(f"<answer>{sentence} {REWRITE_TAIL}.</answer>\nThe summary adds detail the story lacks.")
    if "<item>" in text or "explanation" in text.lower() and "points" in text.lower():
        return Reply(f"<item>{POINT}</item>")
    return Reply(f"{VERDICT_REASON}\n<answer>No</answer>")


def fingerprint(db: Path) -> dict[str, tuple[int, int]]:
    """Every table's row count and a hash of all its rows (any insert, update or delete changes it)."""
    conn = duckdb.connect(str(db), read_only=True)
    try:
        names = [row[0] for row in conn.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall()]
        return {
            name: conn.execute(f'SELECT count(*), coalesce(sum(hash(t)::HUGEINT), 0) FROM "{name}" t').fetchone()
            for name in names
        }
    finally:
        conn.close()


def _coded(conn: duckdb.DuckDBPyConnection, lab: access.Actor) -> None:
    """A blind coding session still open, in which the lab coded one summary with a note."""
    spec = SessionSpec(SESSION, "storysumm", "summary", "storysumm-faithfulness", selection=Selection("val"))
    made = sessions.create(conn, lab, spec)
    sessions.join(conn, lab, made)
    events.save(conn, lab, made, Submission(made.units[0], ("unfaithful",), note=CODER_NOTE))


def _seed(db: Path, llm: LLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Answers asked beforehand by the lab (as the CLI's admin), which the demo replays from the cache."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("FAITHLENS_OPENAI_BASE_URL", llm.openai_base_url)
    conn = store.connect(db)
    try:
        lab = access.cli_actor("lab")
        with conn.cursor() as cur:
            claim = targets.resolve(cur, "storysumm", f"{DANIEL}#c{CLAIM - 1}")
            sentence = targets.resolve(cur, "storysumm", f"{DANIEL}#s{SENTENCE - 1}")
        ask.ask(conn, claim, ask.Ask("arm-zero-shot", "openai", MODEL, base_url=llm.openai_base_url), lab)
        rewrite = ask.Ask("arm-rewrite", "openai", MODEL, "both", base_url=llm.openai_base_url)
        ask.ask(conn, sentence, rewrite, lab)
        _coded(conn, lab)
        # A sentence without its stored alignment: elsewhere Explore offers to compute and store it.
        conn.execute("DELETE FROM alignment WHERE dataset = 'storysumm' AND unit_id = ?", [sentence.target_id])
    finally:
        store.close(conn)


@pytest.fixture
def demo(browser_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Demo]:
    """A demo server whose provider settings point at the scripted server, with a key: a request the
    demo made would reach it and be counted. The database holds the lab's stored answers."""
    with LLMServer(_answer) as llm:
        db = helpers.copy_db(browser_db, tmp_path / "demo.duckdb")
        _seed(db, llm, monkeypatch)
        settings = {
            "FAITHLENS_MODE": "demo",
            "OPENAI_API_KEY": "test-key",
            "ANTHROPIC_API_KEY": "test-key",
            "FAITHLENS_OPENAI_BASE_URL": llm.openai_base_url,
            "FAITHLENS_ANTHROPIC_BASE_URL": llm.anthropic_base_url,
        }
        before = fingerprint(db)
        with helpers.running_server(db, tmp_path / "server.log", extra_env=settings) as server:
            yield Demo(llm, server, db, before)


def _nothing_asks_for_a_key(page: Page, where: str) -> None:
    for field in page.locator("input[type=password]").all():
        raise AssertionError(f"{where}: a password field asks for a secret: {field.get_attribute('aria-label')}")
    labels = [
        label for label in page.locator("[data-testid=stWidgetLabel]").all_inner_texts() if KEY_TEXT.search(label)
    ]
    assert not labels, f"{where}: a control asks for a key: {labels}"
    shown = page.locator('[data-testid="stMain"]').inner_text()
    assert not KEY_TEXT.search(shown), f"{where}: the page speaks of API keys: {KEY_TEXT.search(shown)}"


def _visit(page: Page, url: str, where: str) -> None:
    helpers.open_app(page, url)
    helpers.assert_no_exception(page)
    _nothing_asks_for_a_key(page, where)


def _says_demo(page: Page) -> bool:
    notes = page.locator('[data-testid="stMain"]').get_by_text(re.compile(r"demo server|public demo", re.I))
    return notes.count() > 0 and notes.first.is_visible()


def _explore(page: Page, url: str) -> None:
    _visit(page, f"{url}/explore?dataset=storysumm&summary={DANIEL}&sentence={SENTENCE}", "Explore's sentence")
    expect(page.get_by_text("No stored alignment by BM25 for this document's summaries yet.")).to_be_visible()
    expect(
        page.get_by_role("button", name="Compute the alignment by BM25 now"), "nothing is stored here"
    ).to_have_count(0)
    _visit(page, f"{url}/explore?dataset=storysumm&summary={DANIEL}&claim={CLAIM}", "Explore")
    expect(page.locator(".fl-claims li.fl-selected")).to_contain_text(f"C{CLAIM} ")
    page.get_by_text(f"Ask a model about claim C{CLAIM}").click()
    helpers.wait_for_app(page)
    helpers.assert_no_exception(page)
    _nothing_asks_for_a_key(page, "Explore's ask panel")
    expect(page.get_by_text("This is a public demo", exact=False)).to_be_visible()
    method = page.get_by_test_id("stSelectbox").filter(has=page.get_by_text("Method", exact=True)).locator("input")
    method.click()
    method.fill("zero-shot")
    page.get_by_role("option", name="ARM Table 2 baseline: zero-shot", exact=True).click()
    helpers.wait_for_app(page)
    page.get_by_role("button", name="Show stored answer").click()
    helpers.wait_for_app(page)
    helpers.assert_no_exception(page)
    expect(page.get_by_text(VERDICT_REASON).first, "the stored answer replays").to_be_visible()
    ask_new = page.get_by_role("button", name="Ask", exact=True)
    if ask_new.count():
        expect(ask_new, "no new answer can be asked for").to_be_disabled()


def _rewrite(page: Page, url: str) -> None:
    _visit(page, f"{url}/rewrite?dataset=storysumm&summary={DANIEL}&sentence={SENTENCE}", "Rewrite")
    listed = page.locator('[data-testid="stMain"]').get_by_text(re.compile("stored|cached", re.I))
    expect(listed.first, "Rewrite lists the stored demos").to_be_visible()
    replay = page.get_by_role("button", name=re.compile(r"^(Rewrite|Replay)", re.I))
    if replay.count():
        replay.first.click()
        helpers.wait_for_app(page)
        helpers.assert_no_exception(page)
    expect(page.locator(".fl-diff ins.fl-ins").first, "the stored rewrite replays").to_have_text(REWRITE_TAIL)
    _nothing_asks_for_a_key(page, "Rewrite after the replay")


def test_a_visitor_clicks_through_every_page_without_a_request_or_a_write(
    page: Page, demo: Demo, screenshot_dir: Path
) -> None:
    llm, server, db, before = demo.llm, demo.server, demo.db, demo.before
    asked_before = len(llm.requests)
    for script, query in (
        ("app.py", ""),
        ("pages/compare.py", "?dataset=storysumm"),
        ("pages/errors.py", ""),
        ("pages/reproduced.py", ""),
    ):
        _visit(page, f"{server.url}{helpers.page_url(script)}{query}", script)
    _explore(page, server.url)
    helpers.screenshot(page, screenshot_dir, "demo_explore_ask")
    _rewrite(page, server.url)
    helpers.screenshot(page, screenshot_dir, "demo_rewrite")
    silent = []
    for script, query in (
        ("pages/runs.py", ""),
        ("pages/sessions.py", f"?dataset=storysumm&session={SESSION}"),
        ("pages/code.py", f"?dataset=storysumm&session={SESSION}&coder=lab"),
    ):
        _visit(page, f"{server.url}{helpers.page_url(script)}{query}", script)
        assert CODER_NOTE not in page.content(), f"{script} sent a coder's note of an open blind session"
        if not _says_demo(page):
            silent.append(script)
        expect(page.get_by_test_id("stFileUploader"), f"{script} takes no upload").to_have_count(0)
        helpers.screenshot(page, screenshot_dir, f"demo_{Path(script).stem}")
    assert llm.requests[asked_before:] == [], "the demo asked the provider"
    helpers.stop_process(server.process)  # it holds the file: stop it to read what it wrote
    after = fingerprint(db)
    changed = {name: (before.get(name), after.get(name)) for name in before.keys() | after.keys()}
    assert {name: was for name, was in changed.items() if was[0] != was[1]} == {}, "the demo wrote"
    assert silent == [], "the pages that write elsewhere say this is a demo server"


def test_demo_mode_may_listen_on_any_address_and_local_mode_only_on_loopback() -> None:
    def check(**settings: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("FAITHLENS_")} | settings
        command = [sys.executable, "-m", "faithlens.access", "check-listen", "0.0.0.0"]
        return subprocess.run(command, capture_output=True, text=True, cwd=helpers.ROOT, env=env, timeout=60)

    assert check(FAITHLENS_MODE="demo").returncode == 0
    refused = check()
    assert refused.returncode == 2 and "FAITHLENS_MODE=demo" in refused.stderr
