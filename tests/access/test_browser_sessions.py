"""A browser's session from start to end, as the app's sign-in routes and Sign out buttons drive it:
opening a link gives a sealed cookie that resolves to its person; signing out ends that session (not
the person's other ones) and writes nothing a second time; the People page's table is an admin's;
`make run` picks the server with the sign-in routes in `links` mode only."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from faithlens import config, store
from faithlens.access import PermissionDenied, SignedOut, actors, links, people, roster, tokens
from faithlens.errors import FaithLensError
from tests.access.conftest import row_counts

ROOT = Path(__file__).resolve().parents[2]
SECRET = "s" * 40


@pytest.fixture
def links_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(config.SETTINGS["auth"].env, "links")
    monkeypatch.setenv(config.SETTINGS["cookie_secret"].env, SECRET)


@pytest.fixture
def admin(conn) -> actors.Actor:
    actor = actors.cli_actor("pi")
    people.add_person(conn, actor, "eve", "Eve E", "eve@lab.org")
    people.set_role(conn, actor, "eve", "coder")
    return actor


def resolve(conn, sealed: str):
    return actors.resolve(conn, store.data_version(conn), sealed=sealed)


def test_a_link_opened_twice_signs_in_two_browsers_and_signing_out_ends_only_that_one(conn, admin, links_mode):
    _, token = links.create(conn, admin, "eve")
    person, first = actors.open_link(conn, token, "192.0.2.1")
    _, second = actors.open_link(conn, token, "192.0.2.9")
    assert person.id == "eve" and first != second
    assert (resolve(conn, first).id, resolve(conn, first).role) == ("eve", "coder")
    assert actors.sign_out(conn, sealed=first).id == "eve"
    with pytest.raises(SignedOut):
        resolve(conn, first)
    assert resolve(conn, second).id == "eve", "her other browser stays signed in"
    before = row_counts(conn)
    assert actors.sign_out(conn, sealed=first) is None, "already ended"
    assert actors.sign_out(conn, sealed=first[:-2] + "xx") is None, "altered"
    assert actors.sign_out(conn, sealed=None) is None
    assert row_counts(conn) == before


def test_opening_a_link_without_a_cookie_secret_is_refused_before_the_link_is_spent(conn, admin, monkeypatch):
    monkeypatch.setenv(config.SETTINGS["cookie_secret"].env, "too-short")
    _, token = links.create(conn, admin, "eve")
    before = row_counts(conn)
    with pytest.raises(FaithLensError, match="cookie secret is missing or shorter"):
        actors.open_link(conn, token, "192.0.2.1")
    assert row_counts(conn) == before


def test_a_provider_sign_out_ends_that_sign_in_and_the_next_sign_in_is_a_new_session(conn):
    claims = {"is_logged_in": True, "sub": "sub-ann", "email": "ann@lab.org", "name": "Ann", "iat": 100}
    version = store.data_version(conn)
    assert actors.resolve_oidc(conn, version, claims).role == "admin", "the first to sign in"
    assert actors.sign_out(conn, claims=claims).id == "ann"
    with pytest.raises(SignedOut):
        actors.resolve_oidc(conn, store.data_version(conn), claims)
    again = actors.resolve_oidc(conn, store.data_version(conn), {**claims, "iat": 200})
    assert (again.id, again.role) == ("ann", "admin")
    assert actors.sign_out(conn, claims={"is_logged_in": False}) is None


def test_the_people_table_is_an_admins_and_shows_when_each_link_was_last_used(conn, admin, links_mode):
    link_id, token = links.create(conn, admin, "eve")
    unused_id, _ = links.create(conn, admin, "eve")
    actors.open_link(conn, token, "192.0.2.1")
    eve = resolve(conn, actors.open_link(conn, token, "192.0.2.1")[1])
    before = row_counts(conn)
    with pytest.raises(PermissionDenied, match="only admins manage people"):
        roster.members(conn, eve)
    assert row_counts(conn) == before
    member = {m.person.id: m for m in roster.members(conn, admin)}["eve"]
    assert set(member.link_uses) == {link_id}, "the unused link has no last use"
    assert member.link_uses[link_id] == member.last_seen
    assert unused_id in {link.link_id for link in member.links}
    assert tokens.digest(token) not in repr(roster.members(conn, admin))


@pytest.mark.parametrize(("auth", "entry"), [("local", "app.py"), ("oidc", "app.py"), ("links", "serve.py")])
def test_make_run_serves_the_sign_in_routes_in_links_mode_only(auth: str, entry: str):
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("FAITHLENS_")}, "FAITHLENS_AUTH": auth}
    done = subprocess.run(
        ["make", "-s", "-n", "run"], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    ).stdout
    command = done.strip().splitlines()[-1]
    shell = subprocess.run(
        ["bash", "-c", command.split(" && .venv/bin/python -m streamlit", 1)[0] + " && echo $entry"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert shell.stdout.strip() == entry
    assert "streamlit run $entry" in command
    assert (ROOT / entry).is_file()


def test_the_auth_mode_command_says_the_mode_or_refuses_an_unknown_one():
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAITHLENS_")}
    ok = subprocess.run(
        [sys.executable, "-m", "faithlens.access", "auth-mode"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert (ok.returncode, ok.stdout) == (0, "local\n")
    bad = subprocess.run(
        [sys.executable, "-m", "faithlens.access", "auth-mode"],
        cwd=ROOT,
        env={**env, "FAITHLENS_AUTH": "ldap"},
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and bad.stderr.startswith("error: FAITHLENS_AUTH='ldap' is not a known value")
