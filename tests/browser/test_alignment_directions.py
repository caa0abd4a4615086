"""Explore's alignment in a real browser, both ways (issue 29): a picked source passage lights up every
summary sentence and claim aligned to it, chosen with the keyboard and kept in the URL; and a ranker
that has not aligned the document yet (semantic) is computed from the page and stored with its name
and version. The expected units are read from the database the server uses, not from the page's code."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import duckdb
import pytest
from playwright.sync_api import Page, expect

from tests import raw
from tests.browser import helpers

pytestmark = pytest.mark.browser

DANIEL = "1e21553b47944b67bc2cdf67860d8e15"
SHOWN = 3  # the page's default "Passages shown"


def _aligned_to_first_passage(db) -> tuple[tuple[int, int], list[str]]:
    """The source order's first passage shown for any unit of the summary (by BM25, the default), and
    the S/C names of the units that have it among their top SHOWN passages."""
    conn = duckdb.connect(str(db), read_only=True)
    try:
        rows = conn.execute(
            """
            SELECT u.kind, u.position, a.start_char, a.end_char FROM alignment a
            JOIN unit u ON u.dataset = a.dataset AND u.unit_id = a.unit_id
            WHERE a.dataset = 'storysumm' AND a.ranker = 'bm25' AND u.summary_id = ? AND a.rank <= ?
            """,
            [DANIEL, SHOWN],
        ).fetchall()
    finally:
        conn.close()
    first = min((start, end) for _, _, start, end in rows)
    names = sorted(
        (("S" if kind == "sentence" else "C"), position + 1)
        for kind, position, start, end in rows
        if (start, end) == first
    )
    return first, [f"{prefix}{number}" for prefix, number in sorted(names, key=lambda n: (n[0] != "S", n[1]))]


def test_a_picked_passage_lights_up_its_aligned_sentences_and_claims(
    page: Page, browser_db: Path, tmp_path: Path
) -> None:
    db = helpers.copy_db(browser_db, tmp_path / "passages.duckdb")
    passage, expected = _aligned_to_first_passage(db)
    with helpers.running_server(db, tmp_path / "server.log") as server:
        _pick_the_first_passage(page, server.url, passage, expected)


def _pick_the_first_passage(page: Page, url: str, passage: tuple[int, int], expected: list[str]) -> None:
    helpers.open_app(page, f"{url}/explore?dataset=storysumm&summary={DANIEL}")
    helpers.assert_no_exception(page)
    main = page.get_by_test_id("stMain")
    expect(main).to_contain_text("Aligned by bm25")
    picker = main.get_by_role("combobox", name="Source passage")
    start, end = passage
    opening = " ".join(raw.storysumm_records()[DANIEL]["story"][start:end].split()[:8])
    picker.focus()
    page.keyboard.type(opening)  # the list narrows to the passage; Enter picks it once it is offered
    expect(page.get_by_role("option").first).to_contain_text(opening)
    page.keyboard.press("Enter")
    helpers.wait_for_app(page)
    expect(main).to_contain_text("This passage is aligned to")
    assert parse_qs(urlparse(page.url).query)["passage"] == [str(start)]
    caption = main.get_by_text(re.compile("^This passage is aligned to")).inner_text()
    assert re.findall(r"\b([SC]\d+) \(#\d\)", caption) == expected
    sentences = [name for name in expected if name.startswith("S")]
    outlined = page.locator(".fl-summary .fl-selected")
    expect(outlined).to_have_count(len(sentences))

    helpers.open_app(page, page.url)  # the link opens the same passage
    expect(main).to_contain_text("This passage is aligned to")
    expect(page.locator(".fl-summary .fl-selected")).to_have_count(len(sentences))


def test_an_unstored_ranker_is_computed_from_the_page_and_stored_with_its_version(
    page: Page, browser_db: Path, tmp_path: Path
) -> None:
    db = helpers.copy_db(browser_db, tmp_path / "semantic.duckdb")
    with helpers.running_server(db, tmp_path / "server.log") as server:
        _compute_semantic(page, server.url)
    conn = duckdb.connect(str(db), read_only=True)
    try:
        recorded = conn.execute(
            "SELECT version FROM alignment_ranker WHERE dataset = 'storysumm' AND ranker = 'semantic'"
        ).fetchall()
        rows = conn.execute("SELECT count(*) FROM alignment WHERE ranker = 'semantic'").fetchone()[0]
    finally:
        conn.close()
    assert len(recorded) == 1 and recorded[0][0].startswith("all-MiniLM-L6-v2 (")
    assert rows > 0


def _compute_semantic(page: Page, url: str) -> None:
    helpers.open_app(page, f"{url}/explore?dataset=storysumm&summary={DANIEL}&sentence=1&ranker=semantic")
    helpers.assert_no_exception(page)
    main = page.get_by_test_id("stMain")
    expect(main).to_contain_text("No stored alignment by Semantic (all-MiniLM-L6-v2)")
    main.get_by_role("button", name="Compute the alignment by Semantic (all-MiniLM-L6-v2) now").click()
    expect(main).to_contain_text("Aligned by semantic", timeout=180_000)
    expect(main).to_contain_text("Passages that best match S1")
    expect(page.locator("mark.fl-align-best").first).to_be_visible()
    assert parse_qs(urlparse(page.url).query)["ranker"] == ["semantic"]


def test_hovering_or_tabbing_to_a_sentence_shows_every_source_verdict(page: Page, app_url: str) -> None:
    record = raw.storysumm_records()[DANIEL]
    labelling = {
        name: p[DANIEL]["sentence_labels"]
        for name, p in raw.storysumm_predictions().items()
        if DANIEL in p and p[DANIEL].get("sentence_labels") is not None
    }
    helpers.open_app(page, f"{app_url}/explore?dataset=storysumm&summary={DANIEL}")
    helpers.assert_no_exception(page)
    sentences = page.locator(".fl-summary .fl-sent")
    expect(sentences).to_have_count(len(record["summary"]))

    def shows_every_source(position: int) -> None:
        tip = sentences.nth(position).locator(".fl-tip")
        expect(tip).to_be_visible()
        gold = "faithful" if record["errors"][position] else "unfaithful"
        expect(tip).to_contain_text(f"gold: {gold}")
        for name, labels in labelling.items():
            expect(tip).to_contain_text(f"{name}: {'faithful' if labels[position] else 'unfaithful'}")

    sentences.nth(0).hover()
    shows_every_source(0)
    page.mouse.move(0, 0)
    sentences.nth(0).focus()
    page.keyboard.press("Tab")  # each sentence is a Tab stop: the next one shows its verdicts
    shows_every_source(1)
    expect(sentences.nth(0).locator(".fl-tip")).to_be_hidden()
