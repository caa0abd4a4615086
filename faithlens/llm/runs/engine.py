"""The worker of a run: asks about each (unit, repeat) with bounded concurrency, records each outcome
as it arrives, keeps to the budget, and stops cleanly on cancel.

Each item goes through `ask.answer`, so the LLM cache decides what is bought: an answer already stored
(by this run before a restart, an earlier run, or an on-demand ask) is taken from it. A call that gave
no answer (429, 5xx, a timeout, a lost connection, a cut stream, a body that is not JSON, an empty
answer) is asked again within the run (`faithlens.llm.retrying`, every fault recorded in
`llm_run_attempt`); one that kept failing through FAITHLENS_LLM_ATTEMPTS has nothing stored, is listed
failed and asked again by a resume. An answer that came back unusable (refused, unparseable, empty
after the last attempt) is stored and kept failed until the user retries it. An item whose call was
cut short by the run stopping (cancel, budget, a single-slot server) stays to do. Never call Streamlit
from here.

Whoever starts, resumes or retries a run must be allowed `start_run`; the calls it makes are charged
to them, and it stops before passing the smaller of the run's budget and what was left of theirs when
it started (read once, then counted in memory: no query per call).
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import duckdb

from faithlens import access, store
from faithlens.errors import FaithLensError
from faithlens.llm import ask, costs, likely, providers, records, retrying, targets
from faithlens.llm.answers import Spend, combine
from faithlens.llm.runs import attempts, batch, log
from faithlens.llm.runs.log import Counts, Failure, ItemOutcome, StoredRun
from faithlens.llm.runs.spec import RunSpec, Selection, run_units

STOP_KINDS = ("no_key", "auth", "bad_request")
"""Provider errors every other item would repeat (no key, a wrong key, an unknown model): stop at once."""
SHOWN_FAILURES = 500


@dataclass(frozen=True)
class Item:
    target: targets.Target
    repeat: int
    retry: bool = False
    """Ask for a new sample: the stored answer of this item was refused, empty or unparseable."""
    retry_points: bool = False
    """Keep the stored rewrite and ask only its explanation points anew: they failed to parse."""


@dataclass(frozen=True)
class Snapshot(Counts):
    """A run's progress as the page and the CLI show it, taken under the runner's lock. Calls, tokens
    and `cost` are this process's session of the run; `cost_before` what earlier sessions paid."""

    run_id: int
    source: str
    cost_before: float
    state: str
    reason: str | None
    elapsed_s: float
    eta_s: float | None
    failures: tuple[Failure, ...]
    batch: str | None
    points_failures: tuple[Failure, ...] = ()
    """Done items whose ARM explanation points failed (`Counts.points_failed` counts them all)."""
    retried: int = 0
    """Attempts of this session that gave no answer (each recorded in llm_run_attempt)."""


class Runner:
    """One run being worked on in this process; `execute()` blocks until it ends."""

    def __init__(
        self,
        conn: duckdb.DuckDBPyConnection,
        run: StoredRun,
        actor: access.Actor,
        prices: dict[str, costs.Price] | None = None,
        retry_failed: bool = False,
        budget: float | None = None,
    ) -> None:
        """`actor` starts (or resumes) the run and pays for its calls: PermissionDenied, or BudgetExceeded
        for a model without a price when they have a limit, before anything is written. `budget`
        replaces the run's (a resume after it stopped at its budget); the start says so."""
        access.require(actor, "start_run")
        if budget is not None:
            run = dataclasses.replace(run, spec=dataclasses.replace(run.spec, budget=budget))
        self.conn, self.run, self.retry_failed, self.new_budget = conn, run, retry_failed, budget
        self.prices = prices if prices is not None else costs.load_prices()
        priced = costs.price_for(run.spec.model, self.prices) is not None
        self.actor = actor
        with conn.cursor() as cur:
            version = store.data_version(cur)
        self.spending = access.check_budget(conn, version, actor, 0.0 if priced else None)
        self.cancelled = threading.Event()
        self._lock = threading.Lock()
        self._status: dict[tuple[str, int], str] = {}
        self._cached: set[tuple[str, int]] = set()
        self._failures: dict[tuple[str, int], Failure] = {}
        self._points_failures: dict[tuple[str, int], Failure] = {}
        self._spent = Spend()
        self._paid_items = 0
        self._reserved = 0.0
        self._spent_before = 0.0
        self._finished_now = 0
        self._started = time.monotonic()
        self._state, self._reason, self._batch = "running", None, None
        self._stop: tuple[str, str] | None = None
        self.calibration: likely.Calibration | None = None
        self._retried = 0
        self._traffic = retrying.Traffic(run.spec.concurrency)
        self._policy = retrying.Policy.from_settings(run.spec.attempts)
        endpoint = providers.Endpoint.resolve(run.spec.provider, run.spec.base_url)
        watching = bool(endpoint.base_url) and run.spec.concurrency > 1
        self._watch = attempts.SlotWatch(str(endpoint), watching, lambda why: self.stop("stopped", why))

    def cancel(self) -> None:
        self.cancelled.set()
        self._traffic.wake()

    def stopping(self) -> bool:
        return self.cancelled.is_set() or self._stop is not None

    def stop(self, state: str, reason: str) -> None:
        with self._lock:
            self._stop = self._stop or (state, reason)
        self._traffic.wake()

    def set_batch(self, text: str | None) -> None:
        with self._lock:
            self._batch = text

    def execute(self) -> Snapshot:
        """Work through what is missing, record the final state, and return the last snapshot."""
        spec = self.run.spec
        why = ["retrying failed items"] if self.retry_failed else []
        why += [f"budget now ${self.new_budget:g}"] if self.new_budget is not None else []
        log.record(self.conn, self.run.run_id, "state", "running", "; ".join(why) or None)
        try:
            pending = self._pending()
            if spec.batch:
                batch.execute(self, pending)
            else:
                self._threads(pending)
        except Exception as exc:  # noqa: BLE001 - a database or programming error ends the run with its reason
            self.stop("stopped", f"{type(exc).__name__}: {exc}")
        state, reason = self._final()
        log.record(self.conn, self.run.run_id, "state", state, reason)
        with self._lock:
            self._state, self._reason = state, reason
        return self.snapshot()

    def _final(self) -> tuple[str, str]:
        done, failed, total = self._count("ok"), self._count("failed"), self.run.total
        if self._stop is not None:
            return self._stop
        if self.cancelled.is_set():
            return "cancelled", f"cancelled after {done:,} of {total:,} items; resume asks only for the rest"
        points = len(self._points_failures)
        also = f"; explanation points failed for {points:,} (Retry failed asks them again)" if points else ""
        return "finished", f"{done:,} done, {failed:,} failed of {total:,}{also}"

    def _pending(self) -> list[Item]:
        """The items to ask about now; what is done, and stored failures unless retrying, are counted."""
        run, spec = self.run, self.run.spec
        with self.conn.cursor() as cur:
            states = log.item_states(cur, run.run_id)
            kept = {(f.target_id, f.repeat): f for f in log.failures(cur, run.run_id)}
            pointless = {(f.target_id, f.repeat): f for f in log.points_failures(cur, run.run_id)}
            self._spent_before = log.spent(cur, run.run_id)
            self.calibration = likely.calibrate(cur, spec.provider, spec.model)
        wanted: list[tuple[str, int, bool, bool]] = []
        for unit in run.units:
            for repeat in range(spec.repeats):
                key, state = (unit, repeat), states.get((unit, repeat))
                if state is None or not (state.status == "ok" or (state.bought and not self.retry_failed)):
                    wanted.append((unit, repeat, state is not None and state.bought, False))
                    continue
                if self.retry_failed and key in pointless:
                    wanted.append((unit, repeat, False, True))
                    continue
                self._status[key] = state.status
                if state.status == "failed":
                    self._failures[key] = kept[key]
                elif state.cached:
                    self._cached.add(key)
                if key in pointless:
                    self._points_failures[key] = pointless[key]
        with self.conn.cursor() as cur:
            chosen = sorted({w[0] for w in wanted})
            found = {t.target_id: t for t in targets.resolve_many(cur, spec.dataset, spec.level, chosen)}
        return [Item(found[unit], repeat, retry, points) for unit, repeat, retry, points in wanted]

    def _threads(self, pending: list[Item]) -> None:
        if pending:  # one client before the workers start, not one SDK import and client per worker at once
            spec = self.run.spec
            with contextlib.suppress(providers.ProviderError):  # no key: stored answers still count, calls stop the run
                providers.client(providers.Endpoint.resolve(spec.provider, spec.base_url))
        items = iter(pending)
        # Twice as many workers as calls in flight: while some store their answers (DuckDB commits one
        # at a time), others keep the provider busy; the semaphore around each call keeps the limit.
        workers = [
            threading.Thread(target=self._work, args=(items,), name=f"run-{self.run.run_id}-{n}", daemon=True)
            for n in range(min(2 * self.run.spec.concurrency, len(pending)))
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()

    def _work(self, items: Iterator[Item]) -> None:
        while True:
            with self._lock:
                item = None if self.stopping() else next(items, None)
            if item is None:
                return
            try:
                done = self.ask(item)
                if done is not None:
                    self.finish(*done)
            except Exception as exc:  # noqa: BLE001 - recording failed too: end the run with the reason
                self.stop("stopped", f"{type(exc).__name__}: {exc}")
                return

    def ask(self, item: Item) -> tuple[ItemOutcome, bool] | None:
        """Answer one item within the budget: (its outcome, whether that is already recorded), or None
        when the run stopped before it (the budget, or a provider error every item would repeat). An item that is one new answer has its event
        written in the answer's own transaction."""
        unit = item.target.target_id
        what = self.run.spec.ask(item.repeat, retry_failed=item.retry, retry_points=item.retry_points)
        reserved = 0.0
        recorded: list[ItemOutcome] = []
        try:
            calls = self._item_calls(item)
            prepared = ask.prepare(
                self.conn, item.target, what, self.actor, prices=self.prices, calls=calls, checked=True
            )
            reserved = self._reserve(prepared, item)
            if reserved < 0:
                return None

            def also(cur: duckdb.DuckDBPyConnection, call: records.Call) -> None:
                outcome = ItemOutcome.of_answer(unit, item.repeat, combine(prepared.method.name, [call]))
                log.insert_item(cur, self.run.run_id, outcome)
                recorded[:] = [outcome]

            single = len(prepared.requests) == 1 and prepared.method.action != "rewrite"
            answer = ask.answer(prepared, also if single else None)
        except providers.ProviderError as exc:
            if exc.kind in STOP_KINDS:  # not the item's fault: it stays to do, for a resume once fixed
                self.stop("stopped", f"{exc.message} ({exc.hint})" if exc.hint else exc.message)
            if self.stopping():  # its attempts were cut short by the stop: it stays to do
                return None
            return ItemOutcome(unit, item.repeat, "failed", exc.message), False
        except FaithLensError as exc:
            return ItemOutcome(unit, item.repeat, "failed", exc.message), False
        finally:
            with self._lock:
                self._reserved -= max(reserved, 0.0)
        return (recorded[0], True) if recorded else (ItemOutcome.of_answer(unit, item.repeat, answer), False)

    def _item_calls(self, item: Item) -> attempts.ItemCalls:
        """The item's calls: through the run's limit on calls in flight, each fault recorded."""
        where = (self.run.run_id, item.target.target_id, item.repeat)
        return attempts.ItemCalls(
            self._traffic, self._policy, self.conn, where, self._watch, self.stopping, self._count_retry
        )

    def _count_retry(self, _fault: retrying.Fault) -> None:
        with self._lock:
            self._retried += 1

    def limits(self) -> list[tuple[float, str, float]]:
        """The budgets this session keeps to, as (dollars, their words, what was spent against them
        before it began): the run's own, and what was left of its starter's when it started."""
        found = []
        if self.run.spec.budget is not None:
            found.append((self.run.spec.budget, f"the budget of ${self.run.spec.budget:g}", self._spent_before))
        left = self.spending.left_usd()
        if left is not None:
            words = f"the budget of {self.actor.person.name} ({self.spending.describe_left()} when the run started)"
            found.append((left, words, 0.0))
        return found

    def _reserve(self, prepared: ask.Prepared, item: Item) -> float:
        """Set aside this item's likely cost; -1 when that would pass a budget (the run then stops)."""
        limits = self.limits()
        if not limits:
            return 0.0
        with self.conn.cursor() as cur:
            stored = likely.stored_samples(cur, [r.key for r in prepared.requests])
        cost_of_item = likely.item_cost(prepared, item.repeat, stored, self.calibration)
        if not cost_of_item.calls and not (item.retry or item.retry_points):
            return 0.0
        with self._lock:
            paid_now = self._spent.cost or 0.0
            each = paid_now / self._paid_items if self._paid_items and paid_now else cost_of_item.cost or 0.0
            for limit, words, before in limits:
                if before + paid_now + self._reserved + each > limit:
                    self._stop = self._stop or (
                        "budget",
                        f"stopped before passing {words}: spent {costs.describe_cost(before + paid_now)}, "
                        f"and the next item would cost about {costs.describe_cost(each)}",
                    )
                    return -1.0
            self._reserved += each
            return each

    def finish(self, outcome: ItemOutcome, recorded: bool = False) -> None:
        """Store the outcome (unless its answer's transaction did), then count it: what the page shows
        is always already committed."""
        if not recorded:
            log.record_item(self.conn, self.run.run_id, outcome)
        key = (outcome.target_id, outcome.repeat)
        with self._lock:
            self._status[key] = outcome.status
            self._finished_now += 1
            if outcome.status == "ok" and outcome.cached:
                self._cached.add(key)
            else:
                self._cached.discard(key)
            if outcome.status == "failed":
                self._failures[key] = Failure(
                    outcome.target_id, outcome.repeat, outcome.reason or "", bool(outcome.call_ids)
                )
            else:
                self._failures.pop(key, None)
            if outcome.status == "ok" and outcome.points_failure:
                reason = log.POINTS_REASON + outcome.points_failure
                self._points_failures[key] = Failure(outcome.target_id, outcome.repeat, reason, True)
            else:
                self._points_failures.pop(key, None)
            self._spent += outcome.spent
            self._paid_items += bool(outcome.spent.calls)

    def _count(self, status: str) -> int:
        return sum(1 for s in self._status.values() if s == status)

    def snapshot(self) -> Snapshot:
        with self._lock:
            done, failed = self._count("ok"), self._count("failed")
            elapsed = time.monotonic() - self._started
            remaining = self.run.total - done - failed
            rate = self._finished_now / elapsed if elapsed > 0 else 0
            eta = remaining / rate if rate and self._state == "running" else None
            failures = tuple(self._failures.values())[-SHOWN_FAILURES:]
            points_failures = tuple(self._points_failures.values())[-SHOWN_FAILURES:]
            return Snapshot(
                run_id=self.run.run_id,
                source=self.run.source,
                total=self.run.total,
                done=done,
                failed=failed,
                cached=len(self._cached),
                elapsed_s=elapsed,
                eta_s=eta,
                calls=self._spent.calls,
                input_tokens=self._spent.input_tokens,
                output_tokens=self._spent.output_tokens,
                cost=self._spent.cost,
                cost_before=self._spent_before,
                state=self._state,
                reason=self._reason,
                failures=failures,
                batch=self._batch,
                points_failed=len(self._points_failures),
                points_failures=points_failures,
                retried=self._retried,
            )


def create_run(conn: duckdb.DuckDBPyConnection, spec: RunSpec, selection: Selection, actor: access.Actor) -> int:
    """Check `actor` may start runs and the run can be made (units exist, the method can judge them, a
    budget can be kept), and store it as theirs."""
    access.require(actor, "start_run")
    spec = spec.resolved()
    with conn.cursor() as cur:
        units, words = run_units(cur, spec, selection)
        first = targets.resolve_many(cur, spec.dataset, spec.level, units[:1])[0]
    ask.prepare(conn, first, dataclasses.replace(spec.ask(0), evidence="none"), actor)
    if spec.budget is not None and costs.price_for(spec.model, costs.load_prices()) is None:
        raise FaithLensError(
            f"{spec.model} has no price in the price table, so a budget cannot be kept",
            "add the model to the price table (FAITHLENS_LLM_PRICES) or run without a budget",
        )
    return log.create(conn, spec, units, words, actor.id)
