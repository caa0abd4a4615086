"""People and sign-ins on a real DuckDB file: the first person to sign in becomes admin, later ones
viewers; name-only coders of older sessions are people without a sign-in whose names nobody new can
take; roles and budgets only an admin changes, and a refusal writes nothing; signing out or a
revocation ends the browser session in every tab; the local user and the CLI act as admins."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from faithlens import config, store
from faithlens.access import PermissionDenied, actors, directory, links, people, roster, tokens
from faithlens.access.directory import Budget
from faithlens.coding import sessions
from faithlens.coding.events import Submission
from faithlens.coding.sessions import SessionSpec
from faithlens.errors import FaithLensError
from faithlens.llm.runs.spec import Selection
from tests import coders
from tests.access.conftest import row_counts
from tests.coders import ADMIN
from tests.coding.support import storysumm_ids


def claims(sub: str, email: str, name: str | None = None, iat: int = 1) -> dict[str, object]:
    """What `st.user` holds after a provider sign-in (OpenID Connect ID token claims)."""
    return {"is_logged_in": True, "sub": sub, "email": email, "name": name, "iss": "http://idp", "iat": iat}


def signed_in(conn: duckdb.DuckDBPyConnection, sub: str, email: str, iat: int = 1) -> actors.Actor:
    return actors.resolve_oidc(conn, store.data_version(conn), claims(sub, email, iat=iat))


def test_the_first_person_to_sign_in_to_an_empty_store_is_admin_and_later_ones_viewers(conn):
    ann = signed_in(conn, "sub-ann", "ann@lab.org")
    bob = signed_in(conn, "sub-bob", "bob@lab.org")
    assert (ann.id, ann.role) == ("ann", "admin")
    assert (bob.id, bob.role) == ("bob", "viewer")
    again = signed_in(conn, "sub-ann", "ann@lab.org", iat=2)
    assert (again.id, again.role) == ("ann", "admin"), "signing in again is the same person, still admin"
    assert conn.execute("SELECT count(*) FROM person").fetchone()[0] == 2
    with conn.cursor() as cur:
        found = directory.read(cur)
    assert found.people["ann"].email == "ann@lab.org" and found.people["ann"].subject == "sub-ann"


def test_a_page_run_of_someone_signed_in_writes_nothing(conn):
    signed_in(conn, "sub-ann", "ann@lab.org")
    before = row_counts(conn)
    for _ in range(3):
        assert signed_in(conn, "sub-ann", "ann@lab.org").role == "admin"
    assert row_counts(conn) == before


def test_name_only_coders_of_older_sessions_are_people_and_keep_their_names(db_copy: Path):
    conn = store.connect(db_copy)
    try:
        spec = SessionSpec("old", "storysumm", "summary", "storysumm-faithfulness", selection=Selection("val"))
        made = sessions.create(conn, ADMIN, spec)
        unit = storysumm_ids("val")[0]
        coders.code(conn, made, "alice", Submission(unit, ("faithful",)))
        sessions.join(conn, coders.person("carol"), made)
        with conn.cursor() as cur:
            listed = {m.person.id: (m.person.sign_in, m.role, m.last_seen) for m in roster.roster(cur)}
        assert listed == {"alice": ("legacy", "coder", None), "carol": ("legacy", "coder", None)}
        newcomer = signed_in(conn, "sub-x", "alice@elsewhere.org")
        assert newcomer.id == "alice-2", "a newcomer never takes an older coder's name (and so her codes)"
        link_id, _token = links.create(conn, newcomer, "alice")
        with conn.cursor() as cur:
            members = {m.person.id: m for m in roster.roster(cur)}
        assert list(members) == ["alice-2", "alice", "carol"], "signed-in people first, then name-only coders"
        assert members["alice"].person.sign_in == "link", "an admin's link gives alice a sign-in; her codes stay hers"
        assert [link.link_id for link in members["alice"].links] == [link_id]
        assert members["alice-2"].last_seen is not None
    finally:
        store.close(conn)


@pytest.mark.parametrize(
    "change",
    [
        lambda conn, who: people.set_role(conn, who, "ann", "viewer"),
        lambda conn, who: people.set_budget(conn, who, "bob", 100.0, None),
        lambda conn, who: people.add_person(conn, who, "mallory"),
        lambda conn, who: people.revoke_person(conn, who, "ann"),
        lambda conn, who: links.create(conn, who, "bob"),
    ],
    ids=["role", "budget", "add", "revoke", "link"],
)
def test_only_an_admin_changes_people_and_a_refusal_writes_nothing(conn, change):
    signed_in(conn, "sub-ann", "ann@lab.org")
    bob = signed_in(conn, "sub-bob", "bob@lab.org")
    before = row_counts(conn)
    with pytest.raises(PermissionDenied, match="only admins manage people"):
        change(conn, bob)
    assert row_counts(conn) == before


def test_roles_and_budgets_an_admin_sets_hold_at_the_next_run(conn):
    ann = signed_in(conn, "sub-ann", "ann@lab.org")
    signed_in(conn, "sub-bob", "bob@lab.org")
    people.set_role(conn, ann, "bob", "runner")
    people.set_budget(conn, ann, "bob", 2.5, 40.0)
    bob = signed_in(conn, "sub-bob", "bob@lab.org")
    assert bob.role == "runner"
    found = directory.current(conn, store.data_version(conn))
    assert found.budget("bob") == Budget(2.5, 40.0)
    assert found.budget("ann") == Budget(None, None), "an admin without a budget has no limit"
    people.set_role(conn, ann, "bob", "admin")
    people.set_role(conn, ann, "ann", "viewer")
    assert signed_in(conn, "sub-ann", "ann@lab.org").role == "viewer", "the latest role event wins"


def test_the_last_admin_cannot_step_down(conn):
    ann = signed_in(conn, "sub-ann", "ann@lab.org")
    before = row_counts(conn)
    with pytest.raises(FaithLensError, match="ann is the last admin"):
        people.set_role(conn, ann, "ann", "coder")
    assert row_counts(conn) == before


def test_signing_out_ends_the_session_in_every_tab_and_a_new_sign_in_starts_another(conn):
    ann = signed_in(conn, "sub-ann", "ann@lab.org", iat=10)
    tab_a = tab_b = claims("sub-ann", "ann@lab.org", iat=10)  # two tabs of one browser share the cookie
    people.sign_out(conn, ann, actors.oidc_session_key(tab_a))
    for tab in (tab_a, tab_b):
        with pytest.raises(actors.SignedOut):
            actors.resolve_oidc(conn, store.data_version(conn), tab)
    assert signed_in(conn, "sub-ann", "ann@lab.org", iat=11).role == "admin"


def test_revoking_a_person_ends_their_sessions_and_links(conn, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(config.SETTINGS["cookie_secret"].env, "s" * 40)
    ann = signed_in(conn, "sub-ann", "ann@lab.org")
    people.add_person(conn, ann, "dora", "Dora D")
    _, token = links.create(conn, ann, "dora")
    dora, session_key = links.redeem(conn, token, "10.0.0.9")
    cookie = tokens.seal(session_key, "s" * 40)
    assert actors.resolve_link(conn, store.data_version(conn), cookie).person == dora
    people.revoke_person(conn, ann, "dora")
    with pytest.raises(actors.SignedOut):
        actors.resolve_link(conn, store.data_version(conn), cookie)
    with pytest.raises(links.SignInRefused, match="revoked"):
        links.redeem(conn, token, "10.0.0.9")


def test_local_mode_is_one_admin_named_by_faithlens_user(conn, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(config.SETTINGS["user"].env, "pat")
    monkeypatch.delenv(config.SETTINGS["auth"].env, raising=False)
    monkeypatch.delenv(config.SETTINGS["mode"].env, raising=False)
    before = row_counts(conn)
    actor = actors.resolve(conn, store.data_version(conn), claims=claims("sub-evil", "evil@x.org"))
    assert (actor.id, actor.role, actor.person.sign_in) == ("pat", "admin", "local")
    assert row_counts(conn) == before, "local mode writes no sign-in"
    assert actors.cli_actor("sam").id == "sam" and actors.cli_actor().id == "pat"
    assert actors.cli_actor().role == "admin"


def test_demo_mode_is_a_visitor_whatever_the_sign_in(conn, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(config.SETTINGS["mode"].env, "demo")
    monkeypatch.setenv(config.SETTINGS["auth"].env, "oidc")
    before = row_counts(conn)
    actor = actors.resolve(conn, store.data_version(conn), claims=claims("sub-ann", "ann@lab.org"))
    assert (actor.id, actor.role, actor.mode) == ("visitor", "viewer", "demo")
    assert row_counts(conn) == before


def test_an_unknown_setting_is_one_clear_line(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(config.SETTINGS["auth"].env, "ldap")
    with pytest.raises(FaithLensError, match="FAITHLENS_AUTH='ldap' is not a known value.*local, oidc, links"):
        config.auth_mode()


def test_an_os_user_name_an_id_cannot_hold_is_made_usable_but_a_chosen_one_is_checked(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.delenv(config.SETTINGS["user"].env, raising=False)
    monkeypatch.setenv("LOGNAME", "ann@LAB.EXAMPLE")  # getpass.getuser reads LOGNAME first
    assert actors.local_actor().id == "ann-LAB.EXAMPLE"
    monkeypatch.setenv(config.SETTINGS["user"].env, "ann@lab")
    with pytest.raises(FaithLensError, match="person name 'ann@lab' is not usable"):
        actors.local_actor()
    with pytest.raises(FaithLensError, match="person name 'x/y' is not usable"):
        actors.cli_actor("x/y")
