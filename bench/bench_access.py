"""Issue 28: what identity and permissions add to a page run (budget 5 ms), in a lab that has used
sign-in for a while: PEOPLE people, each signed in SIGN_INS times, with roles, budgets and links, and
ANSWERS stored answers charged to them.

A page run resolves its actor (`access.resolve`: the server's settings, then the directory cached
per data version) and passes `require` for what it offers. Measured, each the median of RUNS:
- warm: the data version as at the last run (the usual run);
- after a code is saved: the version moved, so one query tells the access tables did not;
- after someone signs in: the access tables changed, so the directory is read again (four small
  queries) and the browser session looked up;
- each mode: local (no directory at all), oidc (st.user's claims), links (the sealed cookie);
- before a paid call: `check_budget`, which sums the person's answers (not a page-run cost);
- for scale, a trivial DuckDB query on the same connection: on a busy machine every query costs
  several times its idle cost, and the runs after a write are a query or a few.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from bench.measure import Measure, environment, median_ms
from faithlens import access, config, store
from faithlens.access import actors, people, tokens
from faithlens.access.rules import Person

PEOPLE = 60
SIGN_INS = 50
ANSWERS = 20_000
RUNS = 201
BUDGET_MS = 5.0
PAID_BUDGET_MS = 20.0
"""check_budget runs before a paid call (a second or more), not on page runs."""
SECRET = "b" * 40


def _claims(n: int, iat: int) -> dict[str, object]:
    return {"is_logged_in": True, "sub": f"sub-{n}", "email": f"p{n}@lab.org", "iat": iat}


def _populate(conn) -> str:
    """The lab's history through the real insert functions, in one write; the links-mode session key
    of person 1's latest sign-in."""
    with store.write(conn, "bench access history") as cur:
        for n in range(PEOPLE):
            person = Person(f"p{n}", f"Person {n}", f"p{n}@lab.org", "oidc", f"sub-{n}")
            people.insert_person(cur, person, "p0")
            people.append_event(cur, person.id, "role", "p0", role=("admin", "runner", "coder")[n % 3])
            people.append_event(cur, person.id, "budget", "p0", day_usd=5.0, month_usd=50.0)
            for iat in range(SIGN_INS):
                key = actors.oidc_session_key(_claims(n, iat))
                people.append_event(cur, person.id, "sign_in", person.id, session_sha256=tokens.digest(key))
        cur.execute(
            "INSERT INTO llm_call (call_id, request_key, sample, provider, model, method, prompt_name, prompt_version, "
            "parameters, request, replies, status, cost_usd, person) "
            "SELECT i, 'k' || i, 0, 'openai', 'm', 'x', 'p', 'v', '{}', '{}', ['r'], 'ok', 0.001, 'p' || (i % $people) "
            "FROM range($answers) t(i)",
            {"people": PEOPLE, "answers": ANSWERS},
        )
        link_key = tokens.new_token()
        people.record_sign_in(cur, "p1", link_key, "bench-link")
    return link_key


def _page_run(conn, version: str, claims=None, sealed=None) -> None:
    """What a page run adds: its actor, and the checks behind what it offers (the data version is the
    shell's already, read once per run for every cached read)."""
    config.auth_mode()  # the shell reads the mode to know which cookie to pass (components/signin.py)
    actor = access.resolve(conn, version, claims=claims, sealed=sealed)
    access.allowed(actor, "manage_people")  # the sidebar offers the People page to admins only
    access.allowed(actor, "code", member=True, closed=False)
    access.allowed(actor, "read_blind_others", blind=True, closed=False)
    access.allowed(actor, "ask_model", cached=False)


def _once_ms(conn, version: str, claims) -> float:
    started = time.perf_counter()
    _page_run(conn, version, claims)
    return (time.perf_counter() - started) * 1000


def _after_write(conn, claims) -> float:
    """The median page run right after a write (each timed run follows an untimed write)."""
    samples = []
    for _ in range(RUNS // 2):
        with store.write(conn, "bench bump") as cur:
            cur.execute("INSERT INTO meta VALUES ('bench', 'x') ON CONFLICT DO UPDATE SET value = 'y'")
        version = store.data_version(conn)
        samples.append(_once_ms(conn, version, claims))
    return sorted(samples)[len(samples) // 2]


def _after_access_write(conn, claims) -> float:
    """The median page run right after someone signs in (the access tables changed: a new read)."""
    samples = []
    for n in range(RUNS // 4):
        actors.resolve_oidc(conn, store.data_version(conn), _claims(2, SIGN_INS + n))
        version = store.data_version(conn)
        samples.append(_once_ms(conn, version, claims))
    return sorted(samples)[len(samples) // 2]


def run() -> list[Measure]:
    with tempfile.TemporaryDirectory() as folder:
        conn = store.connect(Path(folder) / "access.duckdb")
        try:
            link_key = _populate(conn)
            claims = _claims(1, SIGN_INS - 1)
            sealed = tokens.seal(link_key, SECRET)
            with environment({config.SETTINGS["auth"].env: "oidc", config.SETTINGS["cookie_secret"].env: SECRET}):
                version = store.data_version(conn)
                warm = median_ms(lambda: _page_run(conn, version, claims), repeat=RUNS)
                moved = _after_write(conn, claims)
                changed = _after_access_write(conn, claims)
                version = store.data_version(conn)
                actor = access.resolve(conn, version, claims=claims)
                paid = median_ms(lambda: access.check_budget(conn, version, actor, 0.01), repeat=21)
            with environment({config.SETTINGS["auth"].env: "links", config.SETTINGS["cookie_secret"].env: SECRET}):
                linked = median_ms(lambda: _page_run(conn, version, sealed=sealed), repeat=RUNS)
            with environment({config.SETTINGS["auth"].env: "local"}):
                local = median_ms(lambda: _page_run(conn, version), repeat=RUNS)
            with conn.cursor() as cur:
                trivial = median_ms(lambda: cur.execute("SELECT 1").fetchall(), repeat=RUNS)
        finally:
            store.close(conn)
    history = f"{PEOPLE} people, {PEOPLE * SIGN_INS:,} sign-ins"
    return [
        Measure(f"access: page run's actor + require, oidc, warm ({history})", warm, "ms", BUDGET_MS),
        Measure(f"access: page run's actor + require, oidc, after a code is saved ({history})", moved, "ms", BUDGET_MS),
        Measure(
            f"access: page run's actor + require, oidc, after someone signs in ({history})", changed, "ms", BUDGET_MS
        ),
        Measure("access: page run's actor + require, links (sealed cookie), warm", linked, "ms", BUDGET_MS),
        Measure("access: page run's actor + require, local mode", local, "ms", BUDGET_MS),
        Measure(
            "for scale, not access: a trivial DuckDB query (SELECT 1) on this machine now", trivial, "ms", BUDGET_MS
        ),
        Measure(f"access: check_budget before a paid call ({ANSWERS:,} stored answers)", paid, "ms", PAID_BUDGET_MS),
    ]
