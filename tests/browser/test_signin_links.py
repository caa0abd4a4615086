"""Sign-in links (FAITHLENS_AUTH=links) on the real app, served as `make run` serves that mode (serve.py):
an admin makes a link on the People page and a second browser signs in with it; a revoked, an expired
and an unknown link, a forged cookie and a URL naming someone sign nobody in and write nothing; the
address is held back after too many failures; signing out, or an admin revoking someone, ends the
session in every tab at its next run."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import duckdb
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from faithlens import access, store
from faithlens.access import links, tokens
from tests.access.conftest import WRITTEN_TABLES
from tests.browser import helpers

pytestmark = pytest.mark.browser

SIGN_IN_PAGE = "Open your sign-in link"


def counts(db: Path) -> dict[str, int]:
    with duckdb.connect(str(db), read_only=True) as conn:
        return {table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in WRITTEN_TABLES}


def sidebar(page: Page):
    return page.get_by_test_id("stSidebar")


def main_text(page: Page) -> str:
    return page.get_by_test_id("stMain").inner_text()


def rerun(page: Page) -> None:
    """Make the page run again without reloading it (its browser session keeps its first cookies)."""
    sidebar(page).get_by_text("fables", exact=True).click()
    helpers.wait_for_app(page)


def refused(context: BrowserContext, url: str, why: str) -> None:
    page = context.new_page()
    response = page.goto(url)
    assert response is not None and response.status == 403
    expect(page.get_by_role("alert")).to_contain_text(why)
    page.close()


def test_refused_links_forged_cookies_and_urls_sign_nobody_in_and_write_nothing(browser: Browser, browser_db, tmp_path):
    db = helpers.copy_db(browser_db, tmp_path / "links.duckdb")
    valid = helpers.add_people(db, {"ann": "admin"})["ann"]
    admin = access.cli_actor(helpers.SIGN_IN_ADMIN)
    conn = store.connect(db)
    revoked_id, revoked = links.create(conn, admin, "ann")
    links.revoke(conn, admin, revoked_id)
    _, expired = links.create(conn, admin, "ann", valid_for=timedelta(seconds=1))
    store.close(conn)
    time.sleep(1.1)
    before = counts(db)
    with helpers.running_server(db, tmp_path / "server.log", extra_env=helpers.links_env()) as server:
        context = browser.new_context()
        try:
            refused(context, f"{server.url}/signin/link?token={revoked}", "this sign-in link was revoked")
            refused(context, f"{server.url}/signin/link?token={expired}", "this sign-in link expired on")
            forged = tokens.seal("a-made-up-session", "not-the-servers-secret-but-long-enough-0123")
            context.add_cookies([{"name": access.LINK_COOKIE, "value": forged, "url": server.url}])
            page = helpers.open_app(context.new_page(), f"{server.url}/people?person=ann&coder=ann&user=ann")
            expect(page.get_by_text(SIGN_IN_PAGE)).to_be_visible()
            expect(sidebar(page)).to_have_count(0)
            for attempt in range(links.MAX_FAILURES - 2):
                refused(context, f"{server.url}/signin/link?token=guess-{attempt}", "not known here")
            refused(context, f"{server.url}{valid}", "too many failed sign-in attempts")
        finally:
            context.close()
    assert counts(db) == before, "a refused sign-in writes nothing"


def pick_person(page: Page, person: str) -> None:
    """Pick whom the People page's controls change."""
    field = page.get_by_test_id("stSelectbox").filter(has=page.get_by_text("Person", exact=True)).locator("input")
    field.click()
    field.fill(person)
    page.get_by_role("option", name=person, exact=True).click()
    helpers.wait_for_app(page)
    expect(page.get_by_role("button", name="Change role")).to_be_visible()


def change_role_and_budget(page: Page, role: str, day_usd: str) -> None:
    """On the People page, with a person picked: give them `role` and a daily budget."""
    page.get_by_test_id("stForm").filter(has_text="Change role").get_by_test_id("stSelectbox").locator("input").click()
    page.get_by_role("option", name=role, exact=True).click()
    page.get_by_role("button", name="Change role").click()
    helpers.wait_for_app(page)
    expect(page.get_by_text(f"is now {role}")).to_be_visible()
    budget = page.get_by_test_id("stForm").filter(has_text="Set budget")
    budget.get_by_label("Dollars a day (empty: no limit)").fill(day_usd)
    budget.get_by_role("button", name="Set budget").click()
    helpers.wait_for_app(page)
    expect(page.get_by_test_id("stAlertContentSuccess")).to_contain_text("'s budget")
    expect(page.get_by_test_id("stDataFrame").first).to_contain_text(f"${float(day_usd):,.2f}")


def make_link_on_people_page(admin_page: Page, base_url: str, person: str) -> str:
    """Add `person` as a coder and make them a link on the People page; returns the link shown once."""
    helpers.open_app(admin_page, f"{base_url}/people")
    form = admin_page.get_by_test_id("stForm").filter(has_text="Add a person")
    form.get_by_label("Person (what their codes record)").fill(person)
    form.get_by_label("Name shown").fill(f"{person.title()} Coder")
    form.get_by_role("button", name="Add person").click()
    helpers.wait_for_app(admin_page)
    expect(admin_page.get_by_text(f"Added {person} as coder")).to_be_visible()
    pick_person(admin_page, person)
    admin_page.get_by_role("button", name="Create sign-in link").click()
    helpers.wait_for_app(admin_page)
    link = admin_page.get_by_test_id("stCode").inner_text().strip()
    assert link.startswith(f"{base_url}/signin/link?token="), link
    return link


def test_an_admin_makes_a_link_on_the_people_page_and_sign_outs_end_every_tab(browser: Browser, browser_db, tmp_path):
    db = helpers.copy_db(browser_db, tmp_path / "links.duckdb")
    with helpers.links_server(db, tmp_path / "server.log", {"ann": "admin"}) as (server, made):
        ann, cara = browser.new_context(), browser.new_context()
        try:
            ann_page = helpers.sign_in_by_link(ann, server.url, made["ann"])
            expect(sidebar(ann_page)).to_contain_text("role: admin")
            link = make_link_on_people_page(ann_page, server.url, "cara")
            helpers.open_app(ann_page, f"{server.url}/people")
            assert link not in main_text(ann_page), "a new link is shown once"
            expect(ann_page.get_by_test_id("stDataFrame").first).to_contain_text("cara")

            cara_page = helpers.sign_in_by_link(cara, server.url, link.removeprefix(server.url))
            expect(sidebar(cara_page)).to_contain_text("Signed in as Cara Coder")
            expect(sidebar(cara_page)).to_contain_text("role: coder")
            expect(sidebar(cara_page).get_by_text("People", exact=True)).to_have_count(0)
            helpers.open_app(cara_page, f"{server.url}/people")
            expect(cara_page.get_by_test_id("stAlertContentError")).to_contain_text(
                "may not change people, roles, budgets or sign-in links"
            )

            helpers.open_app(ann_page, f"{server.url}/people")
            pick_person(ann_page, "cara")
            change_role_and_budget(ann_page, "runner", "2.5")
            rerun(cara_page)
            expect(sidebar(cara_page)).to_contain_text("role: runner")
            ann_page.get_by_role("button", name="Revoke all sessions and links").click()
            helpers.wait_for_app(ann_page)
            expect(ann_page.get_by_text("Signed cara out everywhere")).to_be_visible()
            helpers.open_app(cara_page, server.url)
            expect(cara_page.get_by_text("you were signed out")).to_be_visible()

            second_tab = helpers.open_app(ann.new_page(), f"{server.url}/explore")
            sidebar(ann_page).get_by_role("button", name="Sign out").click()
            ann_page.wait_for_url(f"{server.url}/")
            helpers.wait_for_app(ann_page)
            expect(ann_page.get_by_text(SIGN_IN_PAGE)).to_be_visible()
            assert access.LINK_COOKIE not in {cookie["name"] for cookie in ann.cookies()}, "the cookie is cleared"
            rerun(second_tab)
            expect(second_tab.get_by_text("you were signed out")).to_be_visible()
            expect(second_tab.get_by_text(SIGN_IN_PAGE)).to_be_visible()
        finally:
            ann.close()
            cara.close()
