"""What people spend on paid calls, against their budgets.

Spending is counted from the stored answers themselves: `llm_call.cost_usd` of the rows whose
`person` is the asker. An answer is stored once and replicated to every server of a team store, so
two servers sharing one store count it once, and a cache hit (no new row) costs nothing. Answers of
unknown cost (a model without a price) add nothing to the sum; they are counted apart so a page can
say so. Days and months are the calendar ones of the clock that stamps rows (`store.stamp`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import duckdb

from faithlens.access import directory
from faithlens.access.directory import Budget
from faithlens.access.rules import Actor, PermissionDenied

SPENT = """
SELECT coalesce(sum(cost_usd) FILTER (created_at >= $day), 0),
       coalesce(sum(cost_usd) FILTER (created_at >= $month), 0),
       count(*) FILTER (cost_usd IS NULL AND created_at >= $month)
FROM llm_call WHERE person = $person AND created_at >= $month
"""


@dataclass(frozen=True)
class Spending:
    """One person's spending so far today and this month, beside their budget."""

    person: str
    today_usd: float
    month_usd: float
    unknown_cost_calls: int
    """Answers this month whose cost is unknown (no price for the model): not in the sums."""
    budget: Budget

    def left_usd(self) -> float | None:
        """Dollars left before either limit is reached (None: no limit)."""
        lefts = [
            limit - spent
            for limit, spent in ((self.budget.day_usd, self.today_usd), (self.budget.month_usd, self.month_usd))
            if limit is not None
        ]
        return max(0.0, min(lefts)) if lefts else None

    def describe_left(self) -> str:
        left = self.left_usd()
        if left is None:
            return "no budget limit"
        parts = []
        if self.budget.day_usd is not None:
            parts.append(f"${self.today_usd:.2f} of ${self.budget.day_usd:.2f} today")
        if self.budget.month_usd is not None:
            parts.append(f"${self.month_usd:.2f} of ${self.budget.month_usd:.2f} this month")
        return f"${left:.2f} left, spent {' and '.join(parts)}"


class BudgetExceeded(PermissionDenied):
    """A paid call refused before it was made: it would pass the asker's budget."""


def spent(cur: duckdb.DuckDBPyConnection, person_id: str, budget: Budget, now: datetime | None = None) -> Spending:
    """`person_id`'s spending today and this calendar month, with `budget` beside it."""
    now = now or datetime.now()
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    today, month, unknown = cur.execute(
        SPENT, {"person": person_id, "day": day, "month": day.replace(day=1)}
    ).fetchone()
    return Spending(person_id, float(today), float(month), int(unknown), budget)


def spending(conn: duckdb.DuckDBPyConnection, version: str, actor: Actor) -> Spending:
    """The actor's spending and what is left of their budget (as of data version `version`). With no
    budget set, the acting role decides: the local user and the CLI act as admins (no limit) though the
    directory may not know them."""
    found = directory.current(conn, version)
    budget = found.budgets.get(actor.id) or (directory.NO_LIMIT if actor.role == "admin" else directory.NOTHING)
    with conn.cursor() as cur:
        return spent(cur, actor.id, budget)


def check_budget(conn: duckdb.DuckDBPyConnection, version: str, actor: Actor, estimate_usd: float | None) -> Spending:
    """Refuse, before the call, a paid call whose estimated cost would pass the actor's budget; the
    refusal says what is left. An estimate of None (no price for the model) is refused whenever the
    actor has a limit: its cost could not be counted. Returns the spending as it stands."""
    now = spending(conn, version, actor)
    left = now.left_usd()
    if left is None:
        return now
    if estimate_usd is None:
        raise BudgetExceeded(
            actor,
            "ask_model",
            f"this model has no price, so its cost cannot be counted against your budget: {now.describe_left()}",
            "add the model's price to the price table that FAITHLENS_LLM_PRICES names, or ask an admin to lift your limit",
        )
    if estimate_usd > left:
        raise BudgetExceeded(
            actor,
            "ask_model",
            f"it would cost about ${estimate_usd:.2f} and you have {now.describe_left()}",
            "pick fewer units or a cheaper model, or ask an admin to raise your budget on the People page",
        )
    return now
