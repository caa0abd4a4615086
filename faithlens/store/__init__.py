"""The DuckDB file: opening it, its schema, the one write path, and SQL helpers.

DuckDB allows one read-write process per file; inside a process, every unit of work takes its own
cursor from the root connection (`with root.cursor() as cur:`), never sharing one across threads.
Every write goes through `write()`, which owns the transaction and appends to `write_log`, whose
latest id is the `data_version` that page caches are keyed on. Read-only commands open the file
with `open_for_reading()`, which reads a snapshot while another process (the app) holds it.

With a team store (FAITHLENS_EVENTS_URL), the file is a replica: shared writes go to PostgreSQL
first (`team`, `replica`), and `catch_up()` before a page run applies what other servers wrote.
"""

from faithlens.store.connection import DatabaseInUseError, Holder, connect, ensure_schema, get_meta, set_meta
from faithlens.store.replica import Health, catch_up, close, is_replica, listen
from faithlens.store.snapshot import Reading, open_for_reading
from faithlens.store.sql import LATEST_LABEL, execute_named, fetch_all, fetch_one, natural_key
from faithlens.store.writes import data_version, new_id, next_id, stamp, write, write_grouped, write_retrying

__all__ = [
    "LATEST_LABEL",
    "DatabaseInUseError",
    "Health",
    "Holder",
    "Reading",
    "catch_up",
    "close",
    "connect",
    "data_version",
    "ensure_schema",
    "execute_named",
    "natural_key",
    "new_id",
    "next_id",
    "fetch_all",
    "fetch_one",
    "get_meta",
    "is_replica",
    "listen",
    "open_for_reading",
    "set_meta",
    "stamp",
    "write",
    "write_grouped",
    "write_retrying",
]
