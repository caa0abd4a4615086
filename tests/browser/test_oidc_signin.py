"""Sign-in through a real OpenID Connect provider (tests/oidc.py) in Debian's Chromium.

- The plumbing: Streamlit's `st.login` / `st.user` (Authlib) in a tiny throwaway app with `[auth]` in
  its `.streamlit/secrets.toml`; two browser contexts sign in as two people through the provider's own
  authorize page, each sees their own `sub` and email, after a reload too; one signing out (through
  the provider's end-session page) leaves the other signed in. A failure here points at the plumbing.
- FaithLens itself with FAITHLENS_AUTH=oidc: the first person to sign in becomes admin and the second
  a viewer, each sees their own name, email and role, the People page is offered and open to the admin
  only, and signing out in one tab ends that browser's other tab at its next run.
"""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.browser import helpers
from tests.oidc import provider

pytestmark = pytest.mark.browser

PEOPLE = [
    {"sub": "sub-alice-7f3", "email": "alice@lab.example", "name": "Alice Doe"},
    {"sub": "sub-bob-21c", "email": "bob@lab.example", "name": "Bob Roe"},
]
APP = """
import streamlit as st

if st.user.is_logged_in:
    st.text(f"sub: {st.user.sub}")
    st.text(f"email: {st.user.email}")
    st.button("Sign out", on_click=st.logout)
else:
    st.text("signed out")
    st.button("Sign in", on_click=st.login)
"""


def write_app(folder: Path, app_port: int, metadata_url: str) -> None:
    (folder / ".streamlit").mkdir(parents=True)
    (folder / "app.py").write_text(APP, encoding="utf-8")
    write_secrets(folder / ".streamlit" / "secrets.toml", app_port, metadata_url)


def sign_in(context: BrowserContext, app_url: str, sub: str) -> Page:
    page = context.new_page()
    helpers.open_app(page, app_url)
    expect(page.get_by_text("signed out")).to_be_visible()
    page.get_by_role("button", name="Sign in").click()
    page.locator(f'button[value="{sub}"]').click()  # the provider's own authorize page
    page.wait_for_url(f"{app_url}/**")
    helpers.wait_for_app(page)
    return page


def shown(page: Page) -> list[str]:
    return page.locator('[data-testid="stText"]').all_inner_texts()


def test_two_people_sign_in_through_the_provider_and_each_sees_their_own_identity(browser: Browser, tmp_path: Path):
    app_port = helpers.free_port()
    with provider(PEOPLE, tmp_path / "idp.log") as idp:
        write_app(tmp_path / "app", app_port, idp.metadata_url)
        with helpers.running_server(
            tmp_path / "unused.duckdb", tmp_path / "app.log", app_dir=tmp_path / "app", port=app_port
        ) as server:
            app_url = f"http://localhost:{app_port}"
            contexts = [browser.new_context() for _ in PEOPLE]
            try:
                pages = [sign_in(ctx, app_url, person["sub"]) for ctx, person in zip(contexts, PEOPLE, strict=True)]
                for page, person in zip(pages, PEOPLE, strict=True):
                    helpers.open_app(page, app_url)  # a reload: the signed cookie carries the sign-in
                    assert shown(page) == [f"sub: {person['sub']}", f"email: {person['email']}"], server.log_tail()
                pages[0].get_by_role("button", name="Sign out").click()
                pages[0].get_by_role("button", name="End session").click()  # the provider's end-session page
                pages[0].wait_for_url(f"{app_url}/**")
                helpers.wait_for_app(pages[0])
                expect(pages[0].get_by_text("signed out")).to_be_visible()
                helpers.open_app(pages[1], app_url)
                assert shown(pages[1])[0] == f"sub: {PEOPLE[1]['sub']}", "the other person stays signed in"
            finally:
                for context in contexts:
                    context.close()


def write_secrets(path: Path, app_port: int, metadata_url: str) -> Path:
    """The `[auth]` of FAITHLENS_AUTH=oidc, in a file of the test's own (STREAMLIT_SECRETS_FILES names
    it), so the repository's .streamlit/ is left alone."""
    path.write_text(
        "[auth]\n"
        f'redirect_uri = "http://localhost:{app_port}/oauth2callback"\n'
        f'cookie_secret = "{secrets.token_urlsafe(32)}"\n'
        'client_id = "faithlens-test"\n'
        f'client_secret = "{secrets.token_urlsafe(16)}"\n'
        f'server_metadata_url = "{metadata_url}"\n',
        encoding="utf-8",
    )
    return path


def sign_in_to_faithlens(context: BrowserContext, app_url: str, sub: str) -> Page:
    """Through FaithLens's sign-in page and the provider's own authorize page."""
    page = context.new_page()
    helpers.open_app(page, app_url)
    expect(page.get_by_role("heading", name="Sign in to FaithLens")).to_be_visible()
    page.get_by_role("button", name="Sign in with localhost").click()
    page.locator(f'button[value="{sub}"]').click()
    page.wait_for_url(f"{app_url}/**")
    helpers.wait_for_app(page)
    return page


def identity(page: Page) -> str:
    return page.get_by_test_id("stSidebar").inner_text()


def test_faithlens_signs_people_in_through_the_provider_first_one_admin_and_sign_out_ends_every_tab(
    browser: Browser, browser_db: Path, tmp_path: Path
):
    app_port = helpers.free_port()
    db = helpers.copy_db(browser_db, tmp_path / "oidc.duckdb")
    with provider(PEOPLE, tmp_path / "idp.log") as idp:
        settings = {
            "FAITHLENS_AUTH": "oidc",
            "STREAMLIT_SECRETS_FILES": str(write_secrets(tmp_path / "secrets.toml", app_port, idp.metadata_url)),
        }
        with helpers.running_server(db, tmp_path / "app.log", extra_env=settings, port=app_port) as server:
            app_url = f"http://localhost:{app_port}"
            alice, bob = browser.new_context(), browser.new_context()
            try:
                first = sign_in_to_faithlens(alice, app_url, PEOPLE[0]["sub"])
                second = sign_in_to_faithlens(bob, app_url, PEOPLE[1]["sub"])
                for page, person, role in ((first, PEOPLE[0], "admin"), (second, PEOPLE[1], "viewer")):
                    helpers.open_app(page, app_url)  # a reload: the provider's sign-in is carried by its cookie
                    shown = identity(page)
                    assert f"Signed in as {person['name']}" in shown, server.log_tail()
                    assert person["email"] in shown and f"role: {role}" in shown
                assert "People" in identity(first) and "People" not in identity(second), "offered to admins only"
                helpers.open_app(second, f"{app_url}/people")
                expect(second.get_by_test_id("stAlertContentError")).to_contain_text("only admins manage people")

                other_tab = helpers.open_app(alice.new_page(), f"{app_url}/explore")
                first.get_by_test_id("stSidebar").get_by_role("button", name="Sign out").click()
                first.get_by_role("button", name="End session").click()  # the provider's end-session page
                first.wait_for_url(f"{app_url}/**")
                helpers.wait_for_app(first)
                expect(first.get_by_role("heading", name="Sign in to FaithLens")).to_be_visible()
                other_tab.get_by_test_id("stSidebar").get_by_text("fables", exact=True).click()  # its next run
                helpers.wait_for_app(other_tab)
                expect(other_tab.get_by_text("you were signed out")).to_be_visible()
                helpers.open_app(second, app_url)
                assert f"Signed in as {PEOPLE[1]['name']}" in identity(second), "the other person stays signed in"
            finally:
                alice.close()
                bob.close()
