"""A run's attempts: each call that gave no answer is recorded in `llm_run_attempt` as it happens (the
attempt that answered is the item's `llm_call`), and the pattern of a single-slot server is noticed.

A local server that answers one request at a time and drops the one in flight when the next arrives
(llama.cpp's and llama-cpp-python's servers by default) answers a run at concurrency 2 or more mostly
with empty or cut-off replies. Asking again only interrupts another request, so once most of the
recent attempts came back that way while other calls were in flight the run stops, saying what to
do, and the items caught in it stay to do (a new run at concurrency 1 asks them; stored answers are
taken from the cache).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import duckdb

from faithlens import store
from faithlens.llm import records, retrying

WINDOW = 12
"""Recent attempts the single-slot pattern is looked for in."""
INTERRUPTED_MIN = 6
"""At least this many of them, and more than half, empty or cut while other calls were in flight (a
few empty answers or cut streams among many good ones are ordinary faults, asked again)."""


@dataclass(frozen=True)
class Attempt:
    """One recorded attempt that gave no answer (a row of llm_run_attempt)."""

    target_id: str
    repeat: int
    request_key: str
    attempt: int
    cause: str
    message: str | None
    seconds: float | None
    in_flight: int | None
    wait_s: float | None
    created_at: datetime


def record(
    conn: duckdb.DuckDBPyConnection, run_id: int, unit: str, repeat: int, key: str, fault: retrying.Fault
) -> None:
    def body(cur: duckdb.DuckDBPyConnection) -> None:
        cur.execute(
            """
            INSERT INTO llm_run_attempt (attempt_id, run_id, target_id, repeat, request_key, attempt, cause, message,
                                         seconds, in_flight, wait_s, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                store.next_id(cur, "llm_run_event_seq"),
                run_id,
                unit,
                repeat,
                key,
                fault.attempt,
                fault.cause,
                fault.message,
                fault.seconds,
                fault.in_flight,
                fault.wait_s,
                fault.started_at,
            ],
        )

    store.write_retrying(conn, f"run {run_id} attempt", body, patience_s=records.PAID_PATIENCE_S)


def attempts(cur: duckdb.DuckDBPyConnection, run_id: int) -> dict[tuple[str, int], list[Attempt]]:
    """(unit, repeat) -> its attempts that gave no answer, in the order they were made."""
    found = store.fetch_all(
        cur,
        Attempt,
        "SELECT target_id, repeat, request_key, attempt, cause, message, seconds, in_flight, wait_s, created_at "
        "FROM llm_run_attempt WHERE run_id = ? ORDER BY attempt_id",
        [run_id],
    )
    grouped: dict[tuple[str, int], list[Attempt]] = {}
    for attempt in found:
        grouped.setdefault((attempt.target_id, attempt.repeat), []).append(attempt)
    return grouped


def cause_counts(cur: duckdb.DuckDBPyConnection, run_id: int) -> dict[str, int]:
    """Attempts that gave no answer, by cause (most first): what the run asked again or gave up on."""
    rows = cur.execute(
        "SELECT cause, count(*) FROM llm_run_attempt WHERE run_id = ? GROUP BY cause ORDER BY 2 DESC, 1", [run_id]
    ).fetchall()
    return dict(rows)


class SlotWatch:
    """Notices a single-slot server that interrupts: most recent attempts empty or cut off while
    other calls were in flight."""

    def __init__(self, where: str, watching: bool, stop: Callable[[str], None]) -> None:
        """`watching`: the run goes to a server given by base URL, at concurrency 2 or more."""
        self.where, self.watching, self._stop = where, watching, stop
        self._recent: deque[bool] = deque(maxlen=WINDOW)
        self._lock = threading.Lock()

    def saw(self, interrupted: bool) -> None:
        if not self.watching:
            return
        with self._lock:
            self._recent.append(interrupted)
            hits, seen = sum(self._recent), len(self._recent)
        if hits >= INTERRUPTED_MIN and 2 * hits > seen:
            self._stop(self.message(hits, seen))

    def message(self, hits: int, seen: int) -> str:
        return (
            f"{hits} of the last {seen} answers from {self.where} came back empty or cut off while other "
            f"requests were in flight: the server seems to answer one request at a time and to interrupt the "
            f"one in flight when the next arrives (llama.cpp's and llama-cpp-python's servers do by default; "
            f"asking again would interrupt another). Run it again at concurrency 1 (answers already stored "
            f"come from the cache), or give the server more slots: llama.cpp --parallel N (-np N), "
            f"llama-cpp-python --interrupt_requests False (queues instead), Ollama OLLAMA_NUM_PARALLEL=N"
        )


class ItemCalls(retrying.Calls):
    """The calls of one item of a run: each fault recorded, the single-slot pattern watched."""

    def __init__(
        self,
        traffic: retrying.Traffic,
        policy: retrying.Policy,
        conn: duckdb.DuckDBPyConnection,
        item: tuple[int, str, int],
        watch: SlotWatch,
        stopping: Callable[[], bool],
        retried: Callable[[retrying.Fault], None],
    ) -> None:
        super().__init__(traffic, policy)
        self.conn, self.item, self.watch = conn, item, watch
        self._stopping, self._retried = stopping, retried

    def fault(self, request_key: str, fault: retrying.Fault) -> None:
        run_id, unit, repeat = self.item
        record(self.conn, run_id, unit, repeat, request_key, fault)
        self._retried(fault)

    def seen(self, cause: str | None, others: int) -> None:
        self.watch.saw(cause in ("empty", "cut") and others > 0)

    def stopping(self) -> bool:
        return self._stopping()
