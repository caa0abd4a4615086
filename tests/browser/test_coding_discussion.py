"""Coding in Chromium at 1400 px (issue 27, items 1-3):

- a multi-choice codebook (tofueval-errors) offers No error, which clears the other codes (and any other
  code clears it); coding every unit No error brings progress to n of n;
- Enter with nothing chosen shows the very message the Save button shows;
- no code button breaks a word across lines (each word's rendered line boxes are measured);
- a code's definition shows when its button gets keyboard focus, and its example is one click away;
- a disputed unit's discussion: a coder's comment (hostile markup shown as text), which the other coder
  of the blind session does not see, and the adjudicator's answer on the Sessions page, which the coders
  of the blind session do not see either.

Sessions and the disputed codes are made through the core before the server starts (it then holds the file).
The server signs people in by link: ann and bob code, dee adjudicates, each in their own browser context."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Browser, Page, expect

from faithlens import store
from faithlens.coding import library, sessions
from faithlens.coding.events import Submission
from tests import coders
from tests.browser import helpers
from tests.browser.test_coding import sign_in
from tests.coders import ADMIN

pytestmark = pytest.mark.browser

TOFU = library.builtin()["tofueval-errors"]
HOSTILE = '<img src="x" class="fl-pwned"> ann\'s **reason** </div>'
ANSWER = "Bob, which line of the ending do you mean?"
BROKEN_WORDS = """(names) => {
  const broken = [];
  let words = 0;
  for (const button of document.querySelectorAll('[data-testid="stButton"] button')) {
    const label = button.querySelector('[data-testid="stMarkdownContainer"]');
    if (!label || !button.getClientRects().length) continue;
    if (!names.includes(label.innerText.trim())) continue;
    const walker = document.createTreeWalker(label, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const match of node.data.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const lines = new Set([...range.getClientRects()].map((box) => Math.round(box.top)));
        words += 1;
        if (lines.size > 1) broken.push(match[0]);
      }
    }
  }
  return [words, broken];
}"""
"""Every word of every code button's label with the number of lines its rendered boxes sit on: a word
broken inside ("Contradi|ction") sits on two."""


@pytest.fixture
def server(browser_db: Path, tmp_path: Path) -> Iterator[tuple[helpers.Server, sessions.Session, dict[str, str]]]:
    """A links-mode server with the sessions made; yields it, the blind session "talk" and the sign-in
    links of ann and bob (coders) and dee (adjudicator)."""
    db = helpers.copy_db(browser_db, tmp_path / "discussion.duckdb")
    conn = store.connect(db)
    try:
        sessions.create(
            conn,
            ADMIN,
            sessions.SessionSpec(
                "tofu", "tofueval", "sentence", TOFU.name, sample=3, seed=4, ordering="fixed", coders=("ann",)
            ),
        )
        talk = sessions.create(
            conn,
            ADMIN,
            sessions.SessionSpec(
                "talk", "storysumm", "summary", "storysumm-faithfulness", sample=2, seed=1, ordering="fixed",
                coders=("ann", "bob"),
            ),
        )  # fmt: skip
        coders.code(conn, talk, "ann", Submission(talk.units[0], ("faithful",)))
        coders.code(conn, talk, "bob", Submission(talk.units[0], ("unfaithful",), "the ending"))
    finally:
        conn.close()
    roles = {"ann": "coder", "bob": "coder", "dee": "adjudicator"}
    with helpers.links_server(db, tmp_path / "server.log", roles) as (running, links):
        yield running, talk, links


def _open(browser: Browser, running: helpers.Server, link: str, url: str) -> Page:
    """A new browser context signed in through `link`, at `url`."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(30_000)
    return helpers.open_app(sign_in(context, running, link), url)


def _errors(page: Page) -> list[str]:
    return page.locator('[data-testid="stAlertContentError"]').all_inner_texts()


def _code(page: Page, name: str):
    return page.get_by_role("button", name=re.compile("^" + re.escape(name)))


def _chosen(page: Page, name: str, chosen: bool) -> None:
    """The code's button is primary (chosen) or secondary; polled, since a pick reruns only a fragment."""
    expect(_code(page, name)).to_have_attribute("data-testid", f"stBaseButton-{'primary' if chosen else 'secondary'}")


def _press(page: Page, key: str) -> None:
    page.keyboard.press(key)
    helpers.wait_for_app(page)


def test_no_error_enter_words_definitions_and_examples(browser: Browser, server) -> None:
    running, _, links = server
    page = _open(browser, running, links["ann"], f"{running.url}/code?dataset=tofueval&session=tofu")
    names = [code.name for code in TOFU.codes]
    assert names[-1] == "No error"

    _press(page, "Enter")
    by_enter = _errors(page)
    page.get_by_role("button", name=re.compile("^Save and go on")).click()
    helpers.wait_for_app(page)
    assert by_enter == _errors(page) and "no code chosen" in by_enter[0], "Enter says what the button says"

    words, broken = page.evaluate(BROKEN_WORDS, names)
    assert words == sum(len(name.split()) for name in names), "every code button was measured"
    assert broken == [], f"words broken across lines at 1400 px: {broken}"

    focused = None
    for _ in range(80):
        page.keyboard.press("Tab")
        focused = page.evaluate("document.activeElement && document.activeElement.innerText")
        if focused and focused.startswith("Contradiction"):
            break
    assert focused and focused.startswith("Contradiction"), "the code button is reachable with Tab"
    expect(page.get_by_test_id("stTooltipContent")).to_have_text(TOFU.code("Contradiction").definition)

    page.get_by_role("button", name="Example").first.click()
    expect(page.get_by_text(TOFU.code("Contradiction").example[:60])).to_be_visible()
    page.keyboard.press("Escape")

    page.get_by_role("heading", name=re.compile("^Code")).click()
    _press(page, "1")
    _chosen(page, "Contradiction", True)
    _press(page, "8")
    _chosen(page, "No error", True)
    _chosen(page, "Contradiction", False)
    _press(page, "2")
    _chosen(page, "No error", False)
    _chosen(page, "Extrinsic Information", True)
    _press(page, "2")
    _chosen(page, "Extrinsic Information", False)
    for position in (1, 2, 3):
        _press(page, "8")
        _chosen(page, "No error", True)
        _press(page, "Enter")
        expect(page.get_by_text(f"Saved unit {position}: No error.")).to_be_visible()
    expect(page.get_by_text("3 of 3 units coded by ann")).to_be_visible()
    helpers.assert_no_exception(page)


def _discussion(page: Page, label: str) -> None:
    """Open a discussion expander unless it is open (it opens by itself when it holds comments)."""
    box = page.get_by_role("textbox", name=label)
    if not box.is_visible():
        page.get_by_text(re.compile(r"^Discussion")).first.click()
    expect(box).to_be_visible()


def test_a_disputed_units_discussion_stays_blind(browser: Browser, server) -> None:
    running, talk, links = server
    unit = talk.units[0]
    code_url = f"{running.url}/code?{urlencode({'dataset': 'storysumm', 'session': 'talk', 'unit': unit})}"

    ann = _open(browser, running, links["ann"], code_url)
    _discussion(ann, "Your comment")
    ann.get_by_role("textbox", name="Your comment").fill(HOSTILE)
    ann.get_by_role("button", name="Post comment").click()
    helpers.wait_for_app(ann)
    expect(ann.get_by_text(HOSTILE, exact=True)).to_be_visible()
    assert ann.locator("img.fl-pwned").count() == 0, "the comment is text, not markup"

    bob = _open(browser, running, links["bob"], code_url)
    expect(bob.get_by_text("Discussion of this unit (0)")).to_be_visible()
    assert "ann's" not in bob.locator('[data-testid="stMain"]').inner_text()

    sessions_page = _open(browser, running, links["dee"], f"{running.url}/sessions?dataset=storysumm&session=talk")
    sessions_page.get_by_role("tab", name="Adjudication").click()
    expect(sessions_page.get_by_text(HOSTILE, exact=True)).to_be_visible()
    _discussion(sessions_page, "Comment as the adjudicator")
    sessions_page.get_by_role("textbox", name="Comment as the adjudicator").fill(ANSWER)
    sessions_page.get_by_role("button", name="Post comment").click()
    helpers.wait_for_app(sessions_page)
    expect(sessions_page.get_by_text(ANSWER)).to_be_visible()
    expect(sessions_page.get_by_text(re.compile(r"dee \(adjudicator\)"))).to_be_visible()

    for page in (ann, bob):
        page.reload()
        helpers.wait_for_app(page)
    expect(ann.get_by_text(HOSTILE, exact=True)).to_be_visible()
    for page in (ann, bob):
        shown = page.locator('[data-testid="stMain"]').inner_text()
        assert ANSWER not in shown, "a blind session hides the adjudicator's comments from coders"
    assert "ann's" not in bob.locator('[data-testid="stMain"]').inner_text()
    helpers.assert_no_exception(sessions_page)
