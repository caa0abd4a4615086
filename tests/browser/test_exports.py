"""Exports in a real browser. Database A holds a run of StorySumm Binary over the val split and an ARM
rewrite of one sentence, bought from the scripted server (then stopped): Compare downloads the run's
source (Parquet) and gold (CSV), Runs the run's source (JSON Lines), each read back and counted against
the raw file; Runs' demo-pack panel downloads the pack of one summary, and a second server, on a
database without answers, imports it by upload (and refuses a broken file in one error box)."""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import duckdb
import pytest
from playwright.sync_api import Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from faithlens import querystate
from faithlens.views.states import CompareState
from tests import raw
from tests.browser import helpers
from tests.llm.conftest import prompt_file
from tests.llm.test_cli_llm import environment, faithlens
from tests.llmserver import LLMServer, Reply

pytestmark = pytest.mark.browser

MODEL = "gpt-4o"
SOURCE = f"llm/storysumm-binary/{MODEL}"
VAL = sorted(i for i, r in raw.storysumm_records().items() if r["split"] == "val")
SUMMARY = VAL[0]
SENTENCE = raw.storysumm_records()[SUMMARY]["summary"][0].strip()


def _respond(request) -> Reply:
    """ARM's points, ARM's rewrite of the sentence, else a binary verdict: "No" for every other val summary."""
    text = request.last_user_text()
    if "Summarize the key reasons" in text:
        return Reply("<item>It names the gift.</item>")
    if "should be rewritten" in text:
        return Reply(f"The story never says so.\n<answer>{SENTENCE.removesuffix('.')} plainly.</answer>")
    return Reply("No" if raw.storysumm_summary_in(text) in VAL[::2] else "Yes")


@pytest.fixture
def office_db(browser_db: Path, tmp_path: Path) -> Path:
    """Database A: the run and the rewrite, asked through the CLI with a key; the server then stopped."""
    db = helpers.copy_db(browser_db, tmp_path / "office.duckdb")
    with LLMServer(_respond) as llm:
        env = environment(llm, OPENAI_API_KEY="sk-office")
        common = ["--dataset", "storysumm", "--provider", "openai", "--model", MODEL, "--db", str(db)]
        run = faithlens(
            ["llm", "run", "--level", "summary", "--method", "storysumm-binary", "--split", "val", *common], env
        )
        assert run.returncode == 0, run.stderr
        rewrite = faithlens(["llm", "rewrite", "--unit", f"{SUMMARY}#s0", *common], env)
        assert rewrite.returncode == 0, rewrite.stderr
    return db


@pytest.fixture
def office(office_db: Path, tmp_path: Path) -> Iterator[helpers.Server]:
    with helpers.running_server(office_db, tmp_path / "office.log") as server:
        yield server


def _download(page: Page, button: Locator, folder: Path) -> Path:
    """Click `button` once the app is idle and keep the file under the name the app gave it. The file is
    written on click (a deferred download), which under a full suite's load can take a while."""
    helpers.wait_for_app(page)
    expect(button).to_be_visible()
    with page.expect_download(timeout=90_000) as download:
        button.click()
    saved = folder / download.value.suggested_filename
    download.value.save_as(saved)
    return saved


def _row(page: Page, source: str) -> Locator:
    """The downloads of `source`: the block holding its name and its buttons (the innermost such)."""
    return page.get_by_test_id("stVerticalBlock").filter(has=page.get_by_text(source, exact=True)).last


def test_compare_and_runs_download_a_source_and_a_pack_imports_elsewhere(
    page: Page, office: helpers.Server, browser_db: Path, tmp_path: Path
) -> None:
    state = CompareState(dataset="storysumm", sources=(SOURCE,))
    helpers.open_app(page, f"{office.url}/compare?{urlencode(querystate.encode(state), doseq=True)}")
    page.get_by_text("Download the labels of each source").click()
    parquet = _download(page, _row(page, SOURCE).get_by_role("button", name="Parquet"), tmp_path)
    assert parquet.name == "storysumm_llm-storysumm-binary-gpt-4o.parquet"
    with duckdb.connect() as memory:
        found = memory.execute("SELECT unit_id, label, model, prompt_version FROM read_parquet(?)", [str(parquet)])
        rows = found.fetchall()
    assert sorted(r[0] for r in rows) == VAL
    assert {r[1] for r in rows if r[0] in VAL[::2]} == {"unfaithful"}
    assert {(r[2], r[3]) for r in rows} == {(MODEL, prompt_file("storysumm-binary").version)}
    gold = _download(page, _row(page, "gold").get_by_role("button", name="CSV"), tmp_path)
    with gold.open(encoding="utf-8", newline="") as handle:
        counted = len(list(csv.DictReader(handle)))
    expected = raw.storysumm_expected()["labels"]["gold"]
    assert counted == sum(sum(levels.values()) for levels in expected.values())
    helpers.assert_no_exception(page)

    helpers.open_app(page, f"{office.url}/runs?dataset=storysumm&run=1")
    jsonl = _download(page, _row(page, SOURCE).get_by_role("button", name="JSONL"), tmp_path)
    assert sorted(json.loads(line)["unit_id"] for line in jsonl.read_text().splitlines()) == VAL
    panel = page.get_by_test_id("stExpander").filter(has_text="Demo packs")
    panel.get_by_text("Demo packs").first.click()
    _choose_summary(page, panel, re.compile(r" · 3 answers · "))
    pack = _download(page, panel.get_by_role("button", name="Download demo pack"), tmp_path)
    held = json.loads(pack.read_text(encoding="utf-8"))
    assert {a["target_id"] for a in held["answers"]} == {SUMMARY, f"{SUMMARY}#s0"} and len(held["answers"]) == 3
    assert "sk-office" not in pack.read_text(encoding="utf-8")

    laptop = helpers.copy_db(browser_db, tmp_path / "laptop.duckdb")
    with helpers.running_server(laptop, tmp_path / "laptop.log") as server:
        helpers.open_app(page, f"{server.url}/runs?dataset=storysumm")
        panel = page.get_by_test_id("stExpander").filter(has_text="Demo packs")
        panel.get_by_text("Demo packs").first.click()
        broken = tmp_path / "broken.faithlens-pack.json"
        broken.write_bytes(pack.read_bytes()[:200])
        _upload_and_import(page, panel, broken)
        expect(page.get_by_test_id("stAlertContentError")).to_contain_text(
            "broken.faithlens-pack.json: not a JSON file"
        )
        _upload_and_import(page, panel, pack)
        expect(page.get_by_test_id("stAlertContentSuccess")).to_contain_text("3 answers about storysumm: 3 added")
        page.reload()
        helpers.wait_for_app(page)
        panel = page.get_by_test_id("stExpander").filter(has_text="Demo packs")
        panel.get_by_text("Demo packs").first.click()
        _open_options(page, panel)
        expect(page.get_by_role("option", name=re.compile(r" · 3 answers · "))).to_have_count(1)
        helpers.assert_no_exception(page)


def _open_options(page: Page, panel: Locator) -> None:
    """Open the panel's summary picker (a click while the expander still unfolds may not open it)."""
    for _ in range(5):
        panel.get_by_test_id("stMultiSelect").locator("input").click()
        try:
            expect(page.get_by_role("option").first).to_be_visible(timeout=2_000)
            return
        except AssertionError:
            continue
    expect(page.get_by_role("option").first).to_be_visible()


def _pick_option(page: Page, panel: Locator, name: re.Pattern) -> None:
    """Click the picker's option `name`, opening the list again when a rerun redrew it under the click."""
    for _ in range(5):
        _open_options(page, panel)
        try:
            page.get_by_role("option", name=name).click(timeout=5_000)
            return
        except PlaywrightTimeoutError:
            continue
    page.get_by_role("option", name=name).click()


def _choose_summary(page: Page, panel: Locator, name: re.Pattern) -> None:
    """Pick a summary for the pack until the download is offered: on a loaded machine a rerun can redraw
    the picker between the click and its effect, so the choice is checked, not assumed."""
    download = panel.get_by_role("button", name="Download demo pack")
    for _ in range(3):
        _pick_option(page, panel, name)
        panel.get_by_text(
            "Summaries with stored answers"
        ).click()  # closes the list (Escape would drop the click after)
        helpers.wait_for_app(page)
        try:
            expect(download).to_be_enabled(timeout=5_000)
            return
        except AssertionError:
            continue
    expect(download).to_be_enabled()


def _upload_and_import(page: Page, panel: Locator, path: Path) -> None:
    panel.locator("input[type=file]").set_input_files(str(path))
    helpers.wait_for_app(page)
    panel.get_by_role("button", name="Import pack").click()
    helpers.wait_for_app(page)
