"""Who pays for new answers: the check before a paid call is made, and nowhere else.

A stored answer (a cache hit) is free and open to every role that can read. A new one needs the
`ask_model` right with `cached=False` and a likely cost (`faithlens.llm.likely`) that fits what is left
of the asker's budget (`faithlens.access.check_budget`); both are checked before any request is sent,
so a refusal sends nothing and writes nothing. A run checks once when it starts and keeps to the
budget itself (`faithlens.llm.runs.engine`).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from faithlens import access, store
from faithlens.llm import likely

if TYPE_CHECKING:
    from faithlens.llm.ask import Ask, Asking, Prepared, Request


def charge(prepared: Prepared) -> Prepared:
    """The check before an on-demand ask: every request answered already (a cache hit) is free and
    open to every reader; otherwise the asker must be allowed new answers and their likely cost
    (the rewrite's explanation points included) must fit their budget. Returns the prepared requests
    marked checked."""
    asking = prepared.asking
    with asking.conn.cursor() as cur:
        stored = likely.stored_samples(cur, [request.key for request in prepared.requests])
    missing = [request for request in prepared.requests if not answered(stored, request.key, asking.what)]
    if not missing and not asking.what.fresh_points:
        access.require(asking.actor, "ask_model", cached=True)
        return prepared
    pay(asking, missing, with_points=prepared.method.action == "rewrite")
    return dataclasses.replace(prepared, asking=dataclasses.replace(asking, checked=True))


def answered(stored: set[tuple[str, int]], key: str, what: Ask) -> bool:
    """Whether `what` finds a stored answer to request `key` (its sample, else any unless fresh)."""
    if what.sample is not None:
        return (key, what.sample) in stored
    return not what.fresh and any(stored_key == key for stored_key, _ in stored)


def pay(asking: Asking, requests: list[Request], with_points: bool) -> None:
    """Refuse new answers the asker may not buy, or whose likely cost would pass their budget, before
    any request is made (the refusal says what is left)."""
    access.require(asking.actor, "ask_model", cached=False)
    with asking.conn.cursor() as cur:  # the root connection may be busy in another thread (two models at once)
        version = store.data_version(cur)
    if access.spending(asking.conn, version, asking.actor).left_usd() is None:
        return  # no limit (an admin without a budget, the local user, the CLI): nothing to estimate
    with asking.conn.cursor() as cur:
        calibration = likely.calibrate(cur, asking.endpoint.provider, asking.what.model)
    cost = likely.calls_cost(requests, with_points, asking.what.model, asking.prices, calibration).cost
    access.check_budget(asking.conn, version, asking.actor, cost)
