"""Runs working in this process, each on its own thread: the app holds one `Jobs` in a
`cache_resource` so a run survives reruns, page switches and closed tabs, and every page of every
session sees the same progress. Nothing here touches Streamlit."""

from __future__ import annotations

import threading

import duckdb

from faithlens import access
from faithlens.errors import FaithLensError, NotFoundError
from faithlens.llm.runs import log
from faithlens.llm.runs.engine import Runner, Snapshot


class Jobs:
    """Start, watch and cancel runs; a finished runner stays here with its last snapshot."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runners: dict[int, tuple[Runner, threading.Thread]] = {}

    def start(
        self,
        conn: duckdb.DuckDBPyConnection,
        run_id: int,
        actor: access.Actor,
        retry_failed: bool = False,
        budget: float | None = None,
    ) -> None:
        """Work on run `run_id` in the background for `actor` (who must be allowed `start_run`, and pays
        for its calls): what is missing, or with `retry_failed` its failures too; `budget` replaces the
        run's (to go on after it stopped at its budget)."""
        with self._lock:
            if self.alive(run_id):
                raise FaithLensError(f"run {run_id} is already working", "wait for it, or cancel it first")
            with conn.cursor() as cur:
                run = log.load(cur, run_id)
            if run is None:
                raise NotFoundError(f"no run {run_id}", "pick a run from the list")
            if budget is not None and not budget > 0:
                raise FaithLensError(f"budget {budget} is not a positive amount of US dollars", "e.g. 5")
            runner = Runner(conn, run, actor, retry_failed=retry_failed, budget=budget)
            thread = threading.Thread(target=runner.execute, name=f"run-{run_id}", daemon=True)
            self._runners[run_id] = (runner, thread)
            thread.start()

    def alive(self, run_id: int) -> bool:
        found = self._runners.get(run_id)
        return found is not None and found[1].is_alive()

    def snapshot(self, run_id: int) -> Snapshot | None:
        """Live progress of a run this process worked on, or None."""
        found = self._runners.get(run_id)
        return found[0].snapshot() if found else None

    def cancel(self, run_id: int) -> None:
        found = self._runners.get(run_id)
        if found is not None:
            found[0].cancel()

    def cancelling(self, run_id: int) -> bool:
        """Whether the run's current worker was asked to stop and is storing the answers in flight (a
        resume starts a new worker, so a cancel before it does not count)."""
        found = self._runners.get(run_id)
        return found is not None and found[1].is_alive() and found[0].cancelled.is_set()

    def working(self) -> list[int]:
        with self._lock:
            return [run_id for run_id in self._runners if self.alive(run_id)]

    def join(self, run_id: int, timeout: float | None = None) -> None:
        """Wait for a run's thread (tests, and a server shutting down)."""
        found = self._runners.get(run_id)
        if found is not None:
            found[1].join(timeout)
