"""Spending on a real DuckDB file: counted from the stored answers charged to a person, by calendar
day and month; a paid call that would pass the budget is refused before it is made, saying what is
left; an admin without a budget has no limit; a model without a price cannot be counted."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from faithlens import store
from faithlens.access import BudgetExceeded, actors, check_budget, people, spending
from faithlens.access.directory import Budget
from faithlens.access.roster import roster
from faithlens.access.spending import spent
from faithlens.llm import records
from tests.coding.support import llm_call

COSTS = {"bob": [0.25, 0.35, None], "ann": [2.0]}
"""Answers charged to each person (None: a model without a price)."""


@pytest.fixture
def team(conn) -> tuple[actors.Actor, actors.Actor]:
    """ann (admin, first to sign in) and bob, a runner with $1 a day and $5 a month, and their answers."""
    sign = {"is_logged_in": True, "iat": 1}
    ann = actors.resolve_oidc(conn, store.data_version(conn), {**sign, "sub": "a", "email": "ann@lab.org"})
    actors.resolve_oidc(conn, store.data_version(conn), {**sign, "sub": "b", "email": "bob@lab.org"})
    people.set_role(conn, ann, "bob", "runner")
    people.set_budget(conn, ann, "bob", 1.0, 5.0)
    for person, costs in COSTS.items():
        for cost in costs:
            records.save(conn, llm_call(dataset=None, person=person, cost_usd=cost), None, "test answer")
    bob = actors.resolve_oidc(conn, store.data_version(conn), {**sign, "sub": "b", "email": "bob@lab.org"})
    return ann, bob


def test_spending_is_the_sum_of_the_answers_charged_to_the_person(conn, team):
    _, bob = team
    now = spending(conn, store.data_version(conn), bob)
    known = [c for c in COSTS["bob"] if c is not None]
    assert now.today_usd == pytest.approx(sum(known))
    assert now.month_usd == pytest.approx(sum(known))
    assert now.unknown_cost_calls == COSTS["bob"].count(None)
    assert now.left_usd() == pytest.approx(1.0 - sum(known))


def test_a_day_later_todays_spending_counts_for_the_month_only(conn, team):
    stamped = [row[0] for row in conn.execute("SELECT created_at FROM llm_call WHERE person = 'bob'").fetchall()]
    tomorrow = datetime.now() + timedelta(days=1)
    same_month = all(at.month == tomorrow.month and at.year == tomorrow.year for at in stamped)
    with conn.cursor() as cur:
        later = spent(cur, "bob", Budget(1.0, 5.0), now=tomorrow)
    assert later.today_usd == 0
    assert later.month_usd == pytest.approx(0.6 if same_month else 0)


def test_a_call_past_the_budget_is_refused_before_it_is_made_saying_what_is_left(conn, team):
    _, bob = team
    version = store.data_version(conn)
    assert check_budget(conn, version, bob, 0.30).left_usd() == pytest.approx(0.40)
    with pytest.raises(BudgetExceeded) as refused:
        check_budget(conn, version, bob, 0.50)
    assert "would cost about $0.50 and you have $0.40 left, spent $0.60 of $1.00 today and $0.60 of $5.00" in str(
        refused.value
    )
    assert check_budget(conn, version, bob, 0.0).left_usd() == pytest.approx(0.40), "a free call (cache hit) passes"


def test_a_model_without_a_price_is_refused_to_someone_with_a_limit_but_not_to_an_unlimited_admin(conn, team):
    ann, bob = team
    version = store.data_version(conn)
    with pytest.raises(BudgetExceeded, match="has no price"):
        check_budget(conn, version, bob, None)
    assert check_budget(conn, version, ann, None).left_usd() is None
    assert check_budget(conn, version, ann, 1000.0).month_usd == pytest.approx(2.0)


def test_someone_without_a_budget_has_nothing_to_spend(conn, team):
    ann, _ = team
    actors.resolve_oidc(conn, store.data_version(conn), {"is_logged_in": True, "sub": "c", "email": "cy@lab.org"})
    people.set_role(conn, ann, "cy", "runner")
    cy = actors.resolve_oidc(
        conn, store.data_version(conn), {"is_logged_in": True, "sub": "c", "email": "cy@lab.org", "iat": 2}
    )
    with pytest.raises(BudgetExceeded, match=r"\$0.00 left"):
        check_budget(conn, store.data_version(conn), cy, 0.01)


def test_the_people_table_shows_each_persons_budget_and_spending(conn, team):
    with conn.cursor() as cur:
        members = {m.person.id: m for m in roster(cur)}
    assert members["bob"].role == "runner"
    assert members["bob"].spending.budget == Budget(1.0, 5.0)
    assert members["bob"].spending.today_usd == pytest.approx(sum(c for c in COSTS["bob"] if c is not None))
    assert members["bob"].spending.unknown_cost_calls == COSTS["bob"].count(None)
    assert members["ann"].spending.month_usd == pytest.approx(sum(COSTS["ann"]))
    assert members["ann"].spending.describe_left() == "no budget limit"
