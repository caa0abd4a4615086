"""The DuckDB file: opening it, its schema, the one write path, and SQL helpers.

DuckDB allows one read-write process per file; inside a process, every unit of work takes its own
cursor from the root connection (`with root.cursor() as cur:`), never sharing one across threads.
Every write goes through `write()`, which owns the transaction and appends to `write_log`, whose
latest id is the `data_version` that page caches are keyed on. Read-only commands open the file
with `open_for_reading()`, which reads a snapshot while another process (the app) holds it.
"""

from faithlens.store.connection import DatabaseInUseError, Holder, connect, ensure_schema, get_meta, set_meta
from faithlens.store.snapshot import Reading, open_for_reading
from faithlens.store.sql import LATEST_LABEL, execute_named, fetch_all, fetch_one, natural_key
from faithlens.store.writes import data_version, write, write_retrying

__all__ = [
    "LATEST_LABEL",
    "DatabaseInUseError",
    "Holder",
    "Reading",
    "connect",
    "data_version",
    "ensure_schema",
    "execute_named",
    "natural_key",
    "fetch_all",
    "fetch_one",
    "get_meta",
    "open_for_reading",
    "set_meta",
    "write",
    "write_retrying",
]
