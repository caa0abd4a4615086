"""One simulated app server for `bench_team`: its own DuckDB replica of the team store, one thread
per coder, each saving a code on `saves` units of the session, one after another as a coder does
after reading each unit (`think` seconds), and saving again after a "Not saved". Prints one JSON
line per acknowledged save: {"coder", "unit", "event_id", "ms" from the first Save to "Saved"},
then {"done": true}.

    python -m bench.team_coders DB SESSION SAVES THINK CODER [CODER ...]
"""

from __future__ import annotations

import json
import random
import sys
import threading
import time

from faithlens import access, store
from faithlens.coding import events, sessions
from faithlens.errors import WritesPausedError

_print_lock = threading.Lock()
RESAVE_S = 0.5


def _code(conn, session: sessions.Session, coder: str, saves: int, think: float) -> None:
    chooser = random.Random(coder)
    sessions.join(conn, access.cli_actor(coder), session)
    for unit in session.order_for(coder)[:saves]:
        time.sleep(chooser.uniform(0, 2 * think))
        code = chooser.choice(("faithful", "faithful", "na"))
        started = time.perf_counter()
        event_id = _save_until_saved(conn, session, coder, events.Submission(unit, (code,)))
        ms = (time.perf_counter() - started) * 1000
        with _print_lock:
            print(json.dumps({"coder": coder, "unit": unit, "event_id": event_id, "ms": ms}), flush=True)


def _save_until_saved(conn, session: sessions.Session, coder: str, sub: events.Submission) -> int:
    """Save as a coder does: after "Not saved" (the store did not answer), save again."""
    while True:
        try:
            return events.save(conn, access.cli_actor(coder), session, sub)
        except WritesPausedError:
            time.sleep(RESAVE_S)


def main(db: str, name: str, saves: str, think: str, *coders: str) -> None:
    conn = store.connect(db)
    store.catch_up(conn)
    store.listen(conn)
    session = sessions.get(conn, name)
    threads = [
        threading.Thread(target=_code, args=(conn, session, coder, int(saves), float(think))) for coder in coders
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(json.dumps({"done": True}), flush=True)
    store.close(conn)


if __name__ == "__main__":
    main(*sys.argv[1:])
