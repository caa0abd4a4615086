"""The team store in real browsers against two real app servers sharing one real PostgreSQL:

- the coding session is made through the core on server A's file only; server B's file gets it by
  pulling from the store. Coder alice codes on server A, coder bob on server B, the same session (each
  server in local mode, its one user named by FAITHLENS_USER: alice's A, bob's B);
- both servers' Sessions page show the same agreement figures and confusion matrix, equal to what
  scikit-learn, statsmodels and krippendorff give on the codes this test chose (test_coding's way);
- PostgreSQL stopped: a page shows "Writes are paused", a save shows "Not saved: the team store ..."
  and keeps the coder on the unit with the note typed; PostgreSQL started again, the same save goes
  through ("Saved") and the banner goes away. A save clicked while PostgreSQL is down and back a
  second later goes through by itself within the retry window (FAITHLENS_EVENTS_RETRY);
- server B killed with SIGKILL after bob's saves were acknowledged, alice saving meanwhile: a new
  server on B's file catches up and shows every acknowledged code of both coders;
- at the end PostgreSQL's event log and both DuckDB files hold each acknowledged save exactly once,
  the same coding_event rows (event ids included) in both files, and nothing else.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import psycopg
import pytest
from playwright.sync_api import Browser, Page, expect

from faithlens import config, store
from faithlens.coding import sessions
from faithlens.store import replica
from faithlens.store.team import describe
from tests.browser import helpers, protocols
from tests.browser.test_coding import (
    ALICE,
    BOB,
    DATASET,
    _code_button,
    _code_page,
    _code_with_mouse,
    _saved,
    as_user,
)
from tests.coders import ADMIN
from tests.pgcluster import Cluster

pytestmark = pytest.mark.browser

SESSION = "duo"
RETRY_S = 3
SYNC_MS = 10_000
"""How long another server may take to show a write ("within a few seconds")."""
SAVE_MS = (RETRY_S + 10) * 1000
"""A save waits up to RETRY_S for the store, then the page reruns."""
BEFORE_OUTAGE = 4
"""Both coders code the first units of ALICE and BOB before PostgreSQL goes down."""
EVENTS_URL = config.SETTINGS["events_url"].env


@dataclass
class Team:
    """The store, the two servers' database files, and every save a page acknowledged ("Saved")."""

    cluster: Cluster
    session: sessions.Session
    db_a: Path
    db_b: Path
    folder: Path
    acknowledged: list[tuple[str, str, str]] = field(default_factory=list)
    """(coder, unit, code) per "Saved" flash seen, in order."""

    @property
    def env(self) -> dict[str, str]:
        return {EVENTS_URL: self.cluster.url, "FAITHLENS_EVENTS_RETRY": str(RETRY_S)}

    def server(self, db: Path, name: str, user: str):
        """A local-mode server on `db` whose one user is `user`."""
        return helpers.running_server(db, self.folder / f"{name}.log", extra_env={**self.env, **as_user(user)})


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    made = Cluster()
    try:
        yield made.init()
    finally:
        made.remove()


@pytest.fixture
def team(cluster: Cluster, browser_db: Path, tmp_path: Path) -> Team:
    """Session `duo` made through the store on A's file; B's file is the template without it."""
    db_a = helpers.copy_db(browser_db, tmp_path / "a.duckdb")
    spec = sessions.SessionSpec(
        SESSION, DATASET, "sentence", "storysumm-faithfulness", sample=len(ALICE), seed=5, ordering="fixed",
        coders=("alice", "bob"),
    )  # fmt: skip
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(EVENTS_URL, cluster.url)
        conn = store.connect(db_a)
        try:
            session = sessions.create(conn, ADMIN, spec)
        finally:
            store.close(conn)  # also takes the replica out of this process's registry
    assert not replica._replicas, "the test process keeps a replica registered"
    db_b = helpers.copy_db(browser_db, tmp_path / "b.duckdb")
    return Team(cluster, session, db_a, db_b, tmp_path)


def _note(code: str) -> str | None:
    return "not in the story" if code == "unfaithful" else None


def _save(team: Team, page: Page, coder: str, position: int, code: str) -> None:
    _code_with_mouse(page, code, _note(code), position)
    team.acknowledged.append((coder, team.session.units[position - 1], code))


def _banner(page: Page):
    return page.get_by_test_id("stAlertContentWarning").filter(has_text="Writes are paused:")


def _sentence(a: tuple[str, ...], b: tuple[str, ...]) -> str:
    """The Agreement tab's line for these codes, with the libraries' figures."""
    figures, n = protocols.agreement_figures(a, b), len(a)
    return (
        f"Fleiss' κ {figures['fleiss']:.3f} and all agree on {figures['agree']:.1f}% over the {n} units both coders "
        f"coded; Krippendorff's α {figures['alpha']:.3f} over all {n} units coded; "
        f"Cohen's κ alice–bob {figures['cohen']:.3f} (n {n})"
    )


def _assert_sessions_page(team: Team, page: Page, server: helpers.Server, a: tuple, b: tuple) -> None:
    """`server`'s Sessions page shows these codes' agreement and matrix, and every event applied."""
    helpers.open_app(page, f"{server.url}/sessions?dataset={DATASET}&session={SESSION}")
    page.get_by_role("tab", name="Agreement").click()
    helpers.wait_for_app(page)
    line = page.get_by_text(re.compile("^Fleiss' κ")).first
    expect(line).to_have_text(_sentence(a, b), timeout=SYNC_MS)
    matrix = page.get_by_test_id("stHtml").locator(".fl-cm").filter(has_text="alice (rows) vs bob (columns)")
    labels, pairs = sorted(set(a) | set(b)), list(zip(a, b, strict=True))
    for mine in labels:
        row = matrix.get_by_role("row").filter(has=page.get_by_role("rowheader", name=mine, exact=True))
        counts = [pairs.count((mine, theirs)) for theirs in labels]
        expect(row.get_by_role("cell")).to_have_text([f"{n}{100 * n / sum(counts):.0f}% of row" for n in counts])
    applied = f"{describe(team.cluster.url)}: {1 + len(team.acknowledged)} events applied"  # the session, the codes
    expect(page.get_by_test_id("stSidebar")).to_contain_text(applied, timeout=SYNC_MS)
    helpers.assert_no_exception(page)


def _save_while_the_store_is_down(team: Team, page: Page, coder: str, position: int, code: str) -> None:
    """Stopped store: banner, a refused save that keeps the unit and the note; started: the save goes."""
    team.cluster.stop()
    helpers.open_app(page, page.url)
    expect(_banner(page).get_by_role("paragraph")).to_have_text(
        re.compile(r"^Writes are paused: the team store 127\.0\.0\.1:\d+/faithlens")
    )
    expect(page.get_by_test_id("stSidebar")).to_contain_text("events applied, writes paused")
    _code_button(page, code).click()
    helpers.wait_for_app(page)
    note = page.get_by_role("textbox", name="Note (your explanation)")
    note.fill("typed while the store was down")
    page.get_by_role("button", name="Save and go on").click()
    helpers.wait_for_app(page, SAVE_MS)
    error = page.get_by_test_id("stAlertContentError").get_by_role("paragraph").first
    refused = rf"^Not saved: the team store 127\.0\.0\.1:\d+/faithlens did not answer for {RETRY_S} s"
    expect(error).to_have_text(re.compile(refused))
    expect(page.get_by_text(f"Unit {position} of {len(ALICE)} · not coded yet")).to_be_visible()
    expect(note).to_have_value("typed while the store was down")
    expect(page.get_by_text(re.compile(r"^Saved unit"))).to_have_count(0)

    team.cluster.start()
    page.get_by_role("button", name="Save and go on").click()
    helpers.wait_for_app(page, SAVE_MS)
    _saved(page, position)
    team.acknowledged.append((coder, team.session.units[position - 1], code))
    expect(_banner(page)).to_have_count(0)
    helpers.assert_no_exception(page)


def _save_across_a_quick_restart(team: Team, page: Page, coder: str, position: int, code: str) -> None:
    """Save clicked with the store down; it is back a second later, within the retry window."""
    _code_button(page, code).click()
    helpers.wait_for_app(page)
    team.cluster.stop()
    back = threading.Timer(1.0, team.cluster.start)
    back.start()
    try:
        page.get_by_role("button", name="Save and go on").click()
        helpers.wait_for_app(page, SAVE_MS)
        _saved(page, position)
    finally:
        back.join()
    team.acknowledged.append((coder, team.session.units[position - 1], code))
    expect(_banner(page)).to_have_count(0)
    helpers.assert_no_exception(page)


def test_two_servers_share_one_session_through_restarts_and_a_kill_9(browser: Browser, team: Team) -> None:
    with ExitStack() as servers:
        server_a = servers.enter_context(team.server(team.db_a, "a", "alice"))
        server_b = servers.enter_context(team.server(team.db_b, "b", "bob"))
        alice, bob = _code_page(browser, server_a), _code_page(browser, server_b)
        for position in range(1, BEFORE_OUTAGE + 1):
            _save(team, alice, "alice", position, ALICE[position - 1])
            _save(team, bob, "bob", position, BOB[position - 1])
        for page, server in ((alice, server_a), (bob, server_b)):
            _assert_sessions_page(team, page, server, ALICE[:BEFORE_OUTAGE], BOB[:BEFORE_OUTAGE])
            helpers.open_app(page, f"{server.url}/code?dataset={DATASET}&session={SESSION}")

        _save_while_the_store_is_down(team, alice, "alice", 5, ALICE[4])
        _save_across_a_quick_restart(team, bob, "bob", 5, BOB[4])
        _save(team, bob, "bob", 6, BOB[5])
        server_b.process.kill()  # SIGKILL, after bob's saves were acknowledged
        server_b.process.wait()
        _save(team, alice, "alice", 6, ALICE[5])  # while B is down: B's file must catch up on it

        server_b2 = servers.enter_context(team.server(team.db_b, "b2", "bob"))
        _assert_sessions_page(team, bob, server_b2, ALICE, BOB)
        _assert_sessions_page(team, alice, server_a, ALICE, BOB)
    _assert_nothing_lost_or_doubled(team)


def _logged_codes(url: str) -> tuple[list[tuple[str, str, list[str], int]], list[int]]:
    """(coder, unit_id, codes, event_id) of every coding_event insert in PostgreSQL's event log, and
    the ids of all its events."""
    rows, events = [], []
    with psycopg.connect(url) as conn:
        log = conn.execute("SELECT event_id, what, statements FROM faithlens_event ORDER BY event_id")
        for event_id, what, statements in log:
            events.append(event_id)
            for statement in json.loads(statements):
                found = re.match(r"\s*INSERT INTO coding_event \(([^)]*)\)", statement["sql"])
                if found:
                    row = dict(zip(re.split(r"\s*,\s*", found.group(1).strip()), statement["params"], strict=True))
                    assert what == f"coding code {SESSION} {row['coder']}", what
                    rows.append((row["coder"], row["unit_id"], row["codes"], row["event_id"]))
    return rows, events


def _replica_codes(db: Path, session_id: int) -> tuple[list[tuple[str, str, list[str], int]], int]:
    """The file's coding_event rows of the session, and the last team event it applied."""
    conn = duckdb.connect(str(db), read_only=True)
    try:
        rows = conn.execute(
            "SELECT coder, unit_id, codes, event_id FROM coding_event WHERE session_id = ? ORDER BY event_id",
            [session_id],
        ).fetchall()
        return rows, int(store.get_meta(conn, replica.PULLED_KEY))
    finally:
        conn.close()


def _assert_nothing_lost_or_doubled(team: Team) -> None:
    logged, events = _logged_codes(team.cluster.url)
    in_a, pulled_a = _replica_codes(team.db_a, team.session.session_id)
    in_b, pulled_b = _replica_codes(team.db_b, team.session.session_id)
    assert len(events) == 1 + len(team.acknowledged), "the log holds the session and the acknowledged saves only"
    assert pulled_a == pulled_b == events[-1], "a replica has not applied every event"
    assert in_a == in_b, "the two replicas hold different coding events"
    assert [tuple(row) for row in in_a] == [tuple(row) for row in logged], "a replica differs from the event log"
    saves = sorted((coder, unit, [code]) for coder, unit, code in team.acknowledged)
    assert sorted((coder, unit, codes) for coder, unit, codes, _ in logged) == saves
    assert len(logged) == len(team.acknowledged) == len(ALICE) + len(BOB)
    assert len({event_id for *_, event_id in logged}) == len(logged)
