"""The DuckDB file: opening it, its schema, the one write path, and SQL helpers.

DuckDB allows one read-write process per file; inside a process, every unit of work takes its own
cursor from the root connection (`with root.cursor() as cur:`), never sharing one across threads.
Every write goes through `write()`, which owns the transaction and appends to `write_log`, whose
latest id is the `data_version` that page caches are keyed on.
"""

from faithlens.store.connection import connect, ensure_schema, get_meta, set_meta
from faithlens.store.sql import LATEST_LABEL, execute_named, fetch_all, fetch_one
from faithlens.store.writes import data_version, write

__all__ = [
    "LATEST_LABEL",
    "connect",
    "data_version",
    "ensure_schema",
    "execute_named",
    "fetch_all",
    "fetch_one",
    "get_meta",
    "set_meta",
    "write",
]
