"""Coding sessions in a real browser against a real server:

- two coders, signed in by link in two browser contexts (a `links`-mode server), code one blind
  session at the same time (one with the keyboard shortcuts, one with the mouse); neither page ever
  holds the other's notes; a coder is told the agreement waits for the session's close, and the
  admin's Sessions page shows the agreement and confusion matrix, equal to what scikit-learn,
  statsmodels and krippendorff give on the codes this test chose;
- the server is killed with SIGKILL while a coder works: every code the page acknowledged ("Saved")
  is in the database afterwards;
- a blind session's coding page shows no gold label, difficulty, gold explanation or evaluator
  verdict anywhere in the page, while the same unit in an open session shows the gold explanation.

Sessions are made through the core before the server starts (the server then holds the database). The
tests in local mode (no sign-in) code as the one local user, named by FAITHLENS_USER."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from playwright.sync_api import Browser, Page, expect

from faithlens import config, store
from faithlens.coding import sessions
from tests import coders, raw
from tests.browser import helpers, protocols
from tests.coders import ADMIN

pytestmark = pytest.mark.browser

DATASET = "storysumm"
CODE_NAMES = {"faithful": "Yes (consistent)", "unfaithful": "No (inconsistent)", "na": "N/A, just commentary"}
SHORTCUT = {"faithful": "1", "unfaithful": "2", "na": "3"}
ALICE = ("faithful", "na", "unfaithful", "faithful", "na", "faithful")
BOB = ("faithful", "na", "unfaithful", "na", "faithful", "faithful")


def _make(db: Path, spec: sessions.SessionSpec) -> sessions.Session:
    conn = store.connect(db)
    try:
        return sessions.create(conn, ADMIN, spec)
    finally:
        conn.close()


def as_user(name: str) -> dict[str, str]:
    """A local-mode server's settings with `name` its one user (an admin, who codes as themself)."""
    return {config.SETTINGS["user"].env: name}


@pytest.fixture
def duo(browser_db: Path, tmp_path: Path) -> Iterator[tuple[helpers.Server, dict[str, str]]]:
    """A links-mode server with a blind session for alice and bob, and lead, an admin; yields the server
    and each person's sign-in link."""
    db = helpers.copy_db(browser_db, tmp_path / "coding.duckdb")
    spec = sessions.SessionSpec(
        "duo", DATASET, "sentence", "storysumm-faithfulness", sample=len(ALICE), seed=5, ordering="fixed",
        coders=("alice", "bob"),
    )  # fmt: skip
    _make(db, spec)
    roles = {"alice": "coder", "bob": "coder", "lead": "admin"}
    with helpers.links_server(db, tmp_path / "server.log", roles) as (server, links):
        yield server, links


def _context(browser: Browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(30_000)
    return context


def _code_page(browser: Browser, server: helpers.Server, session: str = "duo") -> Page:
    """The Code page of `session` as the local user (a local-mode server)."""
    return helpers.open_app(_context(browser).new_page(), f"{server.url}/code?dataset={DATASET}&session={session}")


COLD_OVERVIEW_MS = 120_000
"""A sign-in lands on the Overview, the slowest page of a fresh server (its first run builds its caches)."""


def sign_in(context, server: helpers.Server, link: str) -> Page:
    """`helpers.sign_in_by_link`, waiting longer for the Overview a fresh server draws first."""
    page = context.new_page()
    page.goto(f"{server.url}{link}")
    page.wait_for_url(f"{server.url}/")
    helpers.wait_for_app(page, COLD_OVERVIEW_MS)
    expect(page.get_by_test_id("stSidebar").get_by_text("Signed in as")).to_be_visible()
    return page


def _signed_in(browser: Browser, server: helpers.Server, link: str, url: str) -> Page:
    """A new browser context signed in through `link`, at `url` (a path)."""
    page = sign_in(_context(browser), server, link)
    return helpers.open_app(page, f"{server.url}{url}")


def _saved(page: Page, position: int) -> None:
    expect(page.get_by_text(re.compile(rf"^Saved unit {position}:"))).to_be_visible()


def _code_with_keys(page: Page, code: str, note: str | None, position: int) -> None:
    """Digits pick the code, Enter saves (the note, when needed, is typed first, then focus leaves it)."""
    if note:
        page.get_by_role("textbox", name="Note (your explanation)").fill(note)
    page.get_by_role("heading", name=re.compile("^Code")).click()
    page.keyboard.press(SHORTCUT[code])
    helpers.wait_for_app(page)
    page.keyboard.press("Enter")
    helpers.wait_for_app(page)
    _saved(page, position)


def _code_button(page: Page, code: str):
    """A code's button (its accessible name ends with the shortcut digit)."""
    return page.get_by_role("button", name=re.compile("^" + re.escape(CODE_NAMES[code]).replace("/", r"\/")))


def _code_with_mouse(page: Page, code: str, note: str | None, position: int) -> None:
    _code_button(page, code).click()
    helpers.wait_for_app(page)
    if note:
        page.get_by_role("textbox", name="Note (your explanation)").fill(note)
    page.get_by_role("button", name="Save and go on").click()
    helpers.wait_for_app(page)
    _saved(page, position)


def test_two_coders_at_once_then_the_agreement_table(browser: Browser, duo) -> None:
    server, links = duo
    code_url = f"/code?dataset={DATASET}&session=duo"
    alice, bob = (_signed_in(browser, server, links[who], code_url) for who in ("alice", "bob"))
    for position, (mine, theirs) in enumerate(zip(ALICE, BOB, strict=True), start=1):
        _code_with_keys(alice, mine, "alice-note: not in the story" if mine == "unfaithful" else None, position)
        _code_with_mouse(
            bob, theirs, "bob-note: the story says otherwise" if theirs == "unfaithful" else None, position
        )
        assert "bob-note" not in alice.content() and "alice-note" not in bob.content(), "blind: own notes only"
    expect(alice.get_by_text(f"{len(ALICE)} of {len(ALICE)} units coded by alice")).to_be_visible()
    helpers.assert_no_exception(alice)
    helpers.assert_no_exception(bob)

    told = helpers.open_app(alice, f"{server.url}/sessions?dataset={DATASET}&session=duo")
    told.get_by_role("tab", name="Agreement").click()
    expect(told.get_by_text("coders see it once an admin closes the session").first).to_be_visible()
    assert "bob-note" not in told.content()

    page = _signed_in(browser, server, links["lead"], f"/sessions?dataset={DATASET}&session=duo")
    page.get_by_role("tab", name="Agreement").click()
    helpers.wait_for_app(page)
    figures = protocols.agreement_figures(ALICE, BOB)
    line = page.get_by_text(re.compile("^Fleiss' κ")).first
    expect(line).to_contain_text(f"Fleiss' κ {figures['fleiss']:.3f} and all agree on {figures['agree']:.1f}%")
    expect(line).to_contain_text(f"over the {len(ALICE)} units both coders coded")
    expect(line).to_contain_text(f"Krippendorff's α {figures['alpha']:.3f}")
    expect(line).to_contain_text(f"Cohen's κ alice–bob {figures['cohen']:.3f} (n {len(ALICE)})")

    matrix = page.get_by_test_id("stHtml").locator(".fl-cm").filter(has_text="alice (rows) vs bob (columns)")
    labels = sorted(set(ALICE) | set(BOB))
    pairs = list(zip(ALICE, BOB, strict=True))
    for mine in labels:
        row = matrix.get_by_role("row").filter(has=page.get_by_role("rowheader", name=mine, exact=True))
        counts = [pairs.count((mine, theirs)) for theirs in labels]
        shares = [f"{count}{100 * count / sum(counts):.0f}% of row" for count in counts]  # count, then row share
        expect(row.get_by_role("cell")).to_have_text(shares)
    helpers.assert_no_exception(page)


def _current_codes(db: Path, session_id: int, coder: str) -> dict[str, list[str]]:
    conn = duckdb.connect(str(db))
    try:
        rows = conn.execute(
            """
            SELECT unit_id, codes FROM coding_event WHERE session_id = ? AND coder = ?
            QUALIFY row_number() OVER (PARTITION BY unit_id ORDER BY event_id DESC) = 1
            """,
            [session_id, coder],
        ).fetchall()
    finally:
        conn.close()
    return {unit: codes for unit, codes in rows if codes}


def test_kill_9_loses_no_acknowledged_code(browser: Browser, browser_db: Path, tmp_path: Path) -> None:
    db = helpers.copy_db(browser_db, tmp_path / "crash.duckdb")
    spec = sessions.SessionSpec("crash", DATASET, "sentence", "storysumm-faithfulness", sample=20, ordering="fixed")
    session = _make(db, spec)
    acknowledged: dict[str, str] = {}
    with helpers.running_server(db, tmp_path / "server.log", extra_env=as_user("carol")) as server:
        page = _code_page(browser, server, "crash")
        page.get_by_role("button", name="Join as carol").click()
        helpers.wait_for_app(page)
        for position in range(1, 9):
            code = ("faithful", "na")[position % 2]
            _code_with_mouse(page, code, None, position)
            acknowledged[session.units[position - 1]] = code
        _code_button(page, "faithful").click()
        helpers.wait_for_app(page)
        page.get_by_role("button", name="Save and go on").click()
        server.process.kill()  # SIGKILL while the ninth save may be in flight
        server.process.wait()
    stored = _current_codes(db, session.session_id, "carol")
    assert {unit: stored.get(unit) for unit in acknowledged} == {unit: [code] for unit, code in acknowledged.items()}
    assert set(stored) - set(acknowledged) <= {session.units[8]}, "at most the save in flight, and nothing else"


def _unfaithful_sentence() -> tuple[str, str, str]:
    """(summary id, its first unfaithful sentence's unit id, the gold explanation of that sentence)."""
    for summary_id, record in sorted(raw.storysumm_records().items()):
        explained = [text for text in record["explanations"] if len(text) > 40]
        if record["label"] == 0 and 0 in record["errors"] and explained:
            return summary_id, f"{summary_id}#s{record['errors'].index(0)}", explained[0]
    raise AssertionError("no explained unfaithful sentence in the raw file")


def _clean_words(text: str) -> str:
    """A run of the explanation without characters HTML would escape (so it can be found as written)."""
    return max(re.split(r"[\"'&<>]", text), key=len).strip()[:40]


@pytest.fixture
def blind_and_open(browser_db: Path, tmp_path: Path) -> Iterator[helpers.Server]:
    db = helpers.copy_db(browser_db, tmp_path / "blind.duckdb")
    summary_id, unit, _ = _unfaithful_sentence()
    for name, blind in (("blind", True), ("open", False)):
        spec = sessions.SessionSpec(
            name, DATASET, "sentence", "storysumm-faithfulness", blind=blind, units=(unit,), units_from="the test"
        )
        _make(db, spec)
    with helpers.running_server(db, tmp_path / "server.log", extra_env=as_user("dana")) as server:
        yield server


def test_a_blind_session_shows_no_gold_label_anywhere(browser: Browser, blind_and_open) -> None:
    server = blind_and_open
    summary_id, _, explanation = _unfaithful_sentence()
    difficulty = raw.storysumm_records()[summary_id]["difficulty"]
    evaluators = sorted(raw.storysumm_predictions())
    words = _clean_words(explanation)

    blind = _code_page(browser, server, "blind")
    blind.get_by_role("button", name="Join as dana").click()
    helpers.wait_for_app(blind)
    expect(blind.get_by_role("button", name="Save and go on")).to_be_visible()
    html, text = blind.content(), blind.locator("body").inner_text()
    assert words not in html, "the gold explanation is on the blind page"
    assert not re.search(r"\bgold\b", text, re.IGNORECASE)
    assert not re.search(rf"\b{difficulty}\b", text), "the summary's difficulty is on the blind page"
    assert not [name for name in evaluators if name in html], "an evaluator is named on the blind page"
    assert "unfaithful" not in html.replace("No (inconsistent)", ""), "a label value is on the blind page"

    shown = _code_page(browser, server, "open")
    shown.get_by_role("button", name="Join as dana").click()
    helpers.wait_for_app(shown)
    shown.get_by_text("Reference: the gold label").click()
    helpers.wait_for_app(shown)
    expect(shown.get_by_text(words, exact=False).first).to_be_visible()


NAMED = re.compile(r"rewrit\w*|original\w*", re.IGNORECASE)
REWORDED = "The ministers are shot at half past six in the rain."


def _said_lines(page: Page) -> list[str]:
    """Every line of text the coder can read in the page's main area."""
    main = page.get_by_test_id("stMain").inner_text()
    return [line for line in main.splitlines() if line.strip()]


def _named_beside_a_or_b(page: Page) -> list[str]:
    """Lines (and stretches of the page's HTML) where "rewrite" or "original" stands next to A or B."""
    beside = re.compile(rf"\b[AB]\b.{{0,80}}(?:{NAMED.pattern})|(?:{NAMED.pattern}).{{0,80}}\b[AB]\b", re.DOTALL)
    visible = re.sub(r"<[^>]+>", " ", page.content())
    lines = [line for line in _said_lines(page) if beside.search(line)]
    return lines + [m.group(0) for m in beside.finditer(visible)]


@pytest.fixture
def preference(browser_db: Path, tmp_path: Path) -> Iterator[tuple[helpers.Server, str, str]]:
    """An open ARM preference session on one claim of a story that never says 'original' or 'rewrite',
    with ben's code already saved; yields the server, the claim as written and its rewrite."""
    from faithlens.coding import events
    from tests.coding import support

    db = helpers.copy_db(browser_db, tmp_path / "prefer.duckdb")
    summary_id = next(
        sid
        for sid, record in sorted(raw.storysumm_records().items())
        if not NAMED.search(record["story"] + " ".join(record["summary"]) + " ".join(record["claims"]))
    )
    unit = f"{summary_id}#c0"
    conn = store.connect(db)
    try:
        support.plant_rewrite(conn, "llm/arm-rewrite-both/test", unit, REWORDED)
        support.plant_points(conn, "llm/arm-rewrite-both/test", unit, ["It names the wall.", "It keeps the rain."])
        spec = sessions.SessionSpec(
            "prefer", DATASET, "claim", "arm-preference", "arm-preference", suggestions="llm/arm-rewrite-both/test",
            blind=False, units=(unit,), units_from="the test", coders=("ana", "ben"),
        )  # fmt: skip
        made = sessions.create(conn, ADMIN, spec)
        coders.code(conn, made, "ben", events.Submission(unit, ("rewrite",), None, {"points": ["WRONG", "WRONG"]}))
    finally:
        conn.close()
    with helpers.running_server(db, tmp_path / "server.log", extra_env=as_user("ana")) as server:
        yield server, raw.storysumm_records()[summary_id]["claims"][0].strip(), REWORDED


def test_arm_preference_tells_the_coder_only_a_or_b(browser: Browser, preference) -> None:
    server, original, rewrite = preference
    page = _code_page(browser, server, "prefer")
    versions = page.locator(".flc-version").filter(has=page.locator(".flc-tag").get_by_text(re.compile("^[AB]$")))
    expect(versions).to_have_count(2)
    boxes = {versions.nth(i).inner_text().strip() for i in range(2)}
    letter = {text[1:].strip(): text[0] for text in boxes}
    assert set(letter) == {original, rewrite}
    page.get_by_text(re.compile("^Reference: ")).click()
    helpers.wait_for_app(page)
    expect(page.get_by_text(f"ben: {letter[rewrite]} is better")).to_be_visible()
    assert not _named_beside_a_or_b(page)

    def choose_and_save(text: str, marks: tuple[str, ...] = ()) -> None:
        page.get_by_role("button", name=re.compile(rf"^{letter[text]} is better")).click()
        helpers.wait_for_app(page)
        for number, mark in enumerate(marks, start=1):
            group = page.get_by_role("radiogroup", name=f"Point {number}", exact=True)
            group.get_by_text(mark, exact=True).click()
            helpers.wait_for_app(page)
        assert not _named_beside_a_or_b(page)
        page.get_by_role("button", name="Save and go on").click()
        helpers.wait_for_app(page)
        expect(page.get_by_text(f"Saved unit 1: {letter[text]} is better.")).to_be_visible()
        assert not _named_beside_a_or_b(page)

    choose_and_save(original)
    choose_and_save(rewrite, ("IMPORTANT", "NEUTRAL"))
    page.get_by_role("button", name=re.compile("^Undo last save")).click()
    helpers.wait_for_app(page)
    expect(page.get_by_text(f"Undone: unit 1 is back to {letter[original]} is better.")).to_be_visible()
    assert not _named_beside_a_or_b(page)
    told = [line for line in _said_lines(page) if re.search(r"^(Saved|Undone)|is better|Neither", line)]
    assert told and not [line for line in told if NAMED.search(line)]
    helpers.assert_no_exception(page)
