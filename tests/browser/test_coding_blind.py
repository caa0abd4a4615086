"""Blind stays blind, in Chromium against a `links`-mode server (issue 28, item 3): alice has coded a
blind session's unit with a note; bob, a coder of the same session signed in by his own link, opens
every URL that could show her work — the Code page with `coder=alice` and the unit, the Sessions page
with each of its tabs — and neither the page HTML nor any websocket message the server sends him
holds alice's note, the unit's gold explanation or another coder's agreement figures. The link's
`coder=alice` is refused with a note and bob sees his own work.
Outside the coding pages too: vic, a viewer, finds no trace of alice's codes on Explore or Compare
(a blind session's codes become a label source only when it closes), and bob, who codes the unit, finds
its summary left out of Explore's list and refused by URL, and Compare, Errors and Rewrite refused for
the dataset, until the close.
Once an admin closes the session, the same pages show bob alice's note and the agreement, and Explore
shows alice's codes as a label source."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from faithlens import store
from faithlens.coding import sessions
from faithlens.coding.events import Submission
from tests import coders
from tests.browser import helpers
from tests.browser.test_coding import DATASET, _clean_words, _unfaithful_sentence, sign_in
from tests.coders import ADMIN

pytestmark = pytest.mark.browser

SECRET = "alice-secret-7f3: the ending contradicts line two"
TABS = ("Coders", "Agreement", "Adjudication", "Export and links")


@pytest.fixture
def blind(browser_db: Path, tmp_path: Path) -> Iterator[tuple[helpers.Server, dict[str, str], Path, str]]:
    db = helpers.copy_db(browser_db, tmp_path / "blind.duckdb")
    _, unit, _ = _unfaithful_sentence()
    conn = store.connect(db)
    try:
        spec = sessions.SessionSpec(
            "secret", DATASET, "sentence", "storysumm-faithfulness", units=(unit,), units_from="the test",
            coders=("alice", "bob"),
        )  # fmt: skip
        made = sessions.create(conn, ADMIN, spec)
        coders.code(conn, made, "alice", Submission(unit, ("unfaithful",), SECRET))
    finally:
        conn.close()
    roles = {"alice": "coder", "bob": "coder", "lead": "admin", "vic": "viewer"}
    with helpers.links_server(db, tmp_path / "server.log", roles) as (server, links):
        yield server, links, db, unit


def _listening(browser: Browser, server: helpers.Server, link: str) -> tuple[Page, list[bytes]]:
    """A signed-in page whose every websocket message from the server is kept (as bytes)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(30_000)
    page = sign_in(context, server, link)
    frames: list[bytes] = []

    def keep(payload: str | bytes) -> None:
        frames.append(payload.encode() if isinstance(payload, str) else payload)

    page.on("websocket", lambda socket: socket.on("framereceived", keep))
    return page, frames


def _every_tab(page: Page) -> str:
    """The Sessions page's HTML with each tab opened in turn."""
    html = []
    for tab in TABS:
        page.get_by_role("tab", name=tab).click()
        helpers.wait_for_app(page)
        html.append(page.content())
    return "".join(html)


def test_a_coder_never_receives_another_coders_work_whatever_the_url(browser: Browser, blind) -> None:
    server, links, _, unit = blind
    _, _, explanation = _unfaithful_sentence()
    gold = _clean_words(explanation)
    bob, frames = _listening(browser, server, links["bob"])

    helpers.open_app(bob, f"{server.url}/code?dataset={DATASET}&session=secret&coder=alice&unit={unit}")
    expect(bob.get_by_text("coder='alice' in the link was ignored", exact=False)).to_be_visible()
    expect(bob.get_by_text("0 of 1 unit coded by bob")).to_be_visible()
    code_html = bob.content()

    helpers.open_app(bob, f"{server.url}/sessions?dataset={DATASET}&session=secret&pair=alice,bob")
    sessions_html = _every_tab(bob)
    expect(bob.get_by_text("coders see it once an admin closes the session").first).to_be_attached()
    helpers.assert_no_exception(bob)

    assert any(b"unit coded by bob" in frame for frame in frames), "the websocket messages are read"
    for what, html in (("Code", code_html), ("Sessions", sessions_html)):
        assert "alice-secret-7f3" not in html, f"alice's note is in the {what} page"
        assert gold not in html, f"the gold explanation is in the {what} page"
    assert not [f for f in frames if b"alice-secret-7f3" in f], "alice's note was sent to bob's browser"
    assert not [f for f in frames if gold.encode() in f], "the gold explanation was sent to bob's browser"
    assert not [f for f in frames if b"fl-cm" in f or b"Fleiss" in f], "agreement was sent to bob's browser"


def test_outside_the_coding_pages_nobody_sees_the_open_blind_sessions_labels(browser: Browser, blind) -> None:
    server, links, _, unit = blind
    summary_id, _, explanation = _unfaithful_sentence()
    gold = _clean_words(explanation)
    alice_source = "coding/secret/alice"

    vic, vic_frames = _listening(browser, server, links["vic"])
    helpers.open_app(vic, f"{server.url}/explore?dataset={DATASET}&summary={summary_id}&source={alice_source}")
    expect(vic.get_by_text(f"source='{alice_source}' in the link was ignored", exact=False)).to_be_visible()
    expect(vic.get_by_text(gold, exact=False).first).to_be_attached()  # vic codes nothing: gold is his to read
    helpers.open_app(vic, f"{server.url}/compare?dataset={DATASET}&level=sentence&reference={alice_source}")
    expect(vic.get_by_text(f"reference='{alice_source}' in the link was ignored", exact=False)).to_be_visible()
    helpers.assert_no_exception(vic)
    assert not [f for f in vic_frames if b"alice-secret-7f3" in f], "alice's open blind codes reached a viewer"

    bob, bob_frames = _listening(browser, server, links["bob"])
    helpers.open_app(bob, f"{server.url}/explore?dataset={DATASET}")
    expect(bob.get_by_text("1 summary left out: you code them blind in session secret", exact=False)).to_be_visible()
    helpers.open_app(bob, f"{server.url}/explore?dataset={DATASET}&summary={summary_id}")
    expect(bob.get_by_text("you code this summary blind in session secret", exact=False)).to_be_visible()
    for page in ("compare", "errors", "rewrite"):
        helpers.open_app(bob, f"{server.url}/{page}?dataset={DATASET}")
        expect(bob.get_by_text(f"you code 1 sentence of {DATASET} blind (session secret)", exact=False)).to_be_visible()
    assert not [f for f in bob_frames if gold.encode() in f], "the gold explanation was sent to its blind coder"
    assert not [f for f in bob_frames if b"alice-secret-7f3" in f], "alice's note was sent to bob's browser"


def test_once_an_admin_closes_the_session_its_coders_see_the_rest(browser: Browser, blind) -> None:
    server, links, _, _ = blind
    summary_id, _, _ = _unfaithful_sentence()
    lead, _ = _listening(browser, server, links["lead"])
    helpers.open_app(lead, f"{server.url}/sessions?dataset={DATASET}&session=secret")
    lead.get_by_role("button", name="Close session").click()
    lead.get_by_role("button", name="Close secret now").click()
    helpers.wait_for_app(lead)
    expect(lead.get_by_text("Closed by lead: the codes are final.")).to_be_visible()

    bob, _ = _listening(browser, server, links["bob"])
    helpers.open_app(bob, f"{server.url}/sessions?dataset={DATASET}&session=secret")
    bob.get_by_role("tab", name="Adjudication").click()
    helpers.wait_for_app(bob)
    bob.get_by_role("tab", name="Export and links").click()
    helpers.wait_for_app(bob)
    expect(bob.get_by_role("button", name="Download codes CSV")).to_be_visible()
    helpers.open_app(bob, f"{server.url}/code?dataset={DATASET}&session=secret")
    expect(bob.get_by_text("Session secret was closed by lead: its codes are final.")).to_be_visible()
    expect(bob.get_by_role("button", name="Save and go on")).to_have_count(0)
    helpers.open_app(bob, f"{server.url}/explore?dataset={DATASET}&summary={summary_id}&source=coding/secret/alice")
    expect(bob.get_by_text("left out", exact=False)).to_have_count(0)
    expect(bob.get_by_text(SECRET).first).to_be_attached()
    helpers.assert_no_exception(bob)
