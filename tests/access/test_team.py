"""Two app servers' files as replicas of one real PostgreSQL team store (a throwaway cluster): people,
roles, budgets, links and sign-outs made on one server hold on the other, the first sign-in across
both is the one admin, and spending on both servers adds up once. While the store is down, someone
known reads on and someone new waits, and nothing is written."""

from __future__ import annotations

import pytest

from faithlens import store
from faithlens.access import BudgetExceeded, actors, check_budget, directory, links, people, spending
from faithlens.errors import WritesPausedError
from faithlens.llm import records
from tests.coding.support import llm_call
from tests.team.conftest import events as store_events

ACCESS_ROWS = {
    "person": "SELECT * FROM person ORDER BY person_id",
    "sign_in_link": "SELECT * FROM sign_in_link ORDER BY link_id",
    "access_event": "SELECT * FROM access_event ORDER BY event_id",
    "llm_call": "SELECT call_id, person, cost_usd FROM llm_call ORDER BY call_id",
}


def rows(conn) -> dict[str, list[tuple]]:
    return {name: conn.execute(sql).fetchall() for name, sql in ACCESS_ROWS.items()}


def sign_in(conn, sub: str, email: str, iat: int = 1) -> actors.Actor:
    claims = {"is_logged_in": True, "sub": sub, "email": email, "iat": iat}
    return actors.resolve_oidc(conn, store.data_version(conn), claims)


def test_people_roles_budgets_and_links_made_on_one_server_hold_on_the_other(servers, team_url: str):
    a, b = servers("a"), servers("b")
    ann = sign_in(a, "sub-ann", "ann@lab.org")
    store.catch_up(b)
    bob = sign_in(b, "sub-bob", "bob@lab.org")
    assert (ann.role, bob.role) == ("admin", "viewer"), "one first sign-in across both servers"
    store.catch_up(a)
    people.set_role(a, ann, "bob", "adjudicator")
    people.set_budget(a, ann, "bob", 3.0, 30.0)
    link_id, token = links.create(a, ann, "bob")
    store.catch_up(b)

    on_b = sign_in(b, "sub-bob", "bob@lab.org")
    assert on_b.role == "adjudicator"
    found = directory.current(b, store.data_version(b))
    assert (found.budget("bob").day_usd, found.budget("bob").month_usd) == (3.0, 30.0)
    assert links.redeem(b, token, "203.0.113.5")[0].id == "bob", "a link made on a works on b"
    links.revoke(b, ann, link_id)
    store.catch_up(a)
    with pytest.raises(links.SignInRefused, match="revoked"):
        links.redeem(a, token, "203.0.113.5")
    store.catch_up(b)
    assert rows(a) == rows(b)
    made = [what for _, what in store_events(team_url) if what.startswith("access")]
    assert made == [
        "access sign-in (provider)",
        "access sign-in (provider)",
        "access role bob adjudicator",
        "access budget bob",
        "access link bob",
        "access sign-in (link)",
        f"access revoke link {link_id}",
    ], "one event per change, none twice, none for a run of someone already signed in"


def test_signing_out_on_one_server_ends_the_session_on_the_other(servers):
    a, b = servers("a"), servers("b")
    ann = sign_in(a, "sub-ann", "ann@lab.org", iat=7)
    store.catch_up(b)
    claims = {"is_logged_in": True, "sub": "sub-ann", "email": "ann@lab.org", "iat": 7}
    assert actors.resolve_oidc(b, store.data_version(b), claims).id == "ann"
    people.sign_out(a, ann, actors.oidc_session_key(claims))
    store.catch_up(b)
    with pytest.raises(actors.SignedOut):
        actors.resolve_oidc(b, store.data_version(b), claims)


def test_spending_on_both_servers_adds_up_once_and_the_budget_holds_on_both(servers):
    a, b = servers("a"), servers("b")
    ann = sign_in(a, "sub-ann", "ann@lab.org")
    sign_in(a, "sub-bob", "bob@lab.org")
    people.set_role(a, ann, "bob", "runner")
    people.set_budget(a, ann, "bob", 1.0, None)
    store.catch_up(b)
    records.save(a, llm_call(dataset=None, person="bob", cost_usd=0.30), None, "answer on a")
    records.save(b, llm_call(dataset=None, person="bob", cost_usd=0.45), None, "answer on b")
    store.catch_up(a)
    store.catch_up(b)
    for server in (a, b):
        bob = sign_in(server, "sub-bob", "bob@lab.org")
        now = spending(server, store.data_version(server), bob)
        assert now.today_usd == pytest.approx(0.75), "each answer counted once, wherever it was bought"
        with pytest.raises(BudgetExceeded, match=r"\$0.25 left"):
            check_budget(server, store.data_version(server), bob, 0.30)
    assert rows(a) == rows(b)


def test_while_the_store_is_down_someone_known_reads_on_and_someone_new_waits(servers, pg_cluster):
    a = servers("a")
    sign_in(a, "sub-ann", "ann@lab.org", iat=1)
    before = rows(a)
    pg_cluster.stop()
    try:
        again = sign_in(a, "sub-ann", "ann@lab.org", iat=2)
        assert (again.id, again.role) == ("ann", "admin")
        with pytest.raises(WritesPausedError):
            sign_in(a, "sub-new", "new@lab.org")
    finally:
        pg_cluster.start()
    assert rows(a) == before, "nothing was written while the store was down"
