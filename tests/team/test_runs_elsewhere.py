"""A run works on the server that started it; the other servers of the team see its progress and
show it as running elsewhere, without the Resume that would ask again for what it is asking, until
it has been quiet longer than any call takes (then it was interrupted, as on one server)."""

from __future__ import annotations

from datetime import timedelta

from faithlens import store
from faithlens.llm.runs import log
from faithlens.views import runs
from tests.team.test_replication import _run_spec


def test_a_run_started_on_one_server_shows_as_running_elsewhere_on_the_other(servers):
    a, b = servers("a"), servers("b")
    run_id = log.create(a, _run_spec(), ["x"], "1 summary")
    log.record(a, run_id, "state", "running")
    store.catch_up(b)
    with b.cursor() as cur:
        (run,) = log.summaries(cur, dataset="storysumm")
    assert (run.run_id, run.state) == (run_id, "running")
    just_now = run.updated_at + timedelta(seconds=1)
    assert store.is_replica(b)
    elsewhere = runs.working_elsewhere(run, store.is_replica(b), just_now)
    assert runs.shown_state(run.state, alive=False, elsewhere=elsewhere) == runs.ELSEWHERE
    assert runs.ELSEWHERE not in runs.RESUMABLE
    quiet = run.updated_at + timedelta(seconds=runs.ELSEWHERE_QUIET_S + 1)
    assert not runs.working_elsewhere(run, True, quiet)
    assert not runs.working_elsewhere(run, False, just_now), "one server alone: no other server works on it"
    assert runs.shown_state(run.state, alive=False) == log.INTERRUPTED
