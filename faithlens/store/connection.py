"""Opening the database file with its schema in place, and saying plainly why it cannot be opened."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

import duckdb

from faithlens import config
from faithlens.errors import DatabaseLockedError, FaithLensError
from faithlens.store import migrations
from faithlens.store.sql import LATEST_LABEL

SCHEMA_VERSION = "1"
CURRENT_LABEL_VIEW = f"CREATE OR REPLACE VIEW current_label AS SELECT * FROM label {LATEST_LABEL}"
STORE_KEY = "events_store"
"""meta key: the id of the team store a replica replays (set when it first joins one)."""
SCHEMA_DIGEST_KEY = "schema_digest"
"""meta key: the digest of the schema the file was last brought up to (`ensure_schema`)."""
BUILD_HINT = "run `python -m faithlens ingest` or `make run` to build it"


@dataclass(frozen=True)
class Holder:
    """The process DuckDB names as holding the file read-write, and its command line when /proc tells."""

    pid: int | None
    argv: tuple[str, ...] = ()

    @classmethod
    def of(cls, pid: int | None) -> Holder:
        try:
            raw = Path(f"/proc/{pid}/cmdline").read_bytes() if pid else b""
        except OSError:
            raw = b""
        return cls(pid, tuple(part.decode(errors="replace") for part in raw.split(b"\0") if part))

    @property
    def likely_app(self) -> bool:
        """A Streamlit server (the FaithLens app); also when /proc cannot say, the app being the usual holder."""
        return not self.argv or any(Path(part).name == "streamlit" for part in self.argv)

    @property
    def command(self) -> str:
        """`python -m faithlens ingest` for a FaithLens command, else the program's name (argv known)."""
        if "faithlens" in self.argv:
            at = self.argv.index("faithlens")
            return " ".join(["python -m faithlens", *self.argv[at + 1 : at + 2]])
        return Path(self.argv[0]).name

    def __str__(self) -> str:
        if self.pid is None:
            return "another process"
        if not self.argv:
            return f"process {self.pid}"
        if self.likely_app:
            return f"process {self.pid} (the FaithLens app)"
        return f"process {self.pid} (`{self.command}`)"


class DatabaseInUseError(DatabaseLockedError):
    """Another process holds the file read-write, so this one cannot open it at all."""

    def __init__(self, path: Path, holder: Holder) -> None:
        if holder.likely_app:
            how = "Ctrl+C in the terminal running it" + (f", or `kill {holder.pid}`" if holder.pid else "")
            what_to_do = (
                f"`ingest` and `import` need the database to themselves: stop the app ({how}), then rerun this command"
            )
        else:
            what_to_do = f"wait for process {holder.pid} to finish or stop it, then rerun this command"
        super().__init__(f"{path}: the database is in use by {holder}", what_to_do)
        self.path = path
        self.holder = holder


def connect(path: Path | str, read_only: bool = False, create: bool = True) -> duckdb.DuckDBPyConnection:
    """Open the database at `path` with the schema in place.

    Read-write with `create` (the building commands) makes the file if it is missing; never its
    folder, so a typo in FAITHLENS_DB or --db is reported instead of leaving stray files behind.
    """
    path = Path(path)
    if not path.parent.is_dir():
        raise FaithLensError(
            f"{path}: the folder {path.parent} does not exist",
            f"check FAITHLENS_DB or --db for a typo, or create the folder first: mkdir -p {path.parent}",
        )
    if (read_only or not create) and not path.exists():
        raise FaithLensError(f"{path}: no database here", BUILD_HINT)
    try:
        conn = duckdb.connect(str(path), read_only=read_only)
    except duckdb.Error as exc:
        raise _open_error(path, exc) from None
    if not read_only:
        ensure_schema(conn)
        _team(conn, path)
    return conn


def _team(conn: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Make a read-write connection a replica of the team store when one is set; refuse to write to a
    replica without it, which would part its history from the other servers' (and from the ids the
    store hands out)."""
    if url := config.get("events_url"):
        # Imported here: psycopg is loaded only by a server that has a team store.
        from faithlens.store import replica

        replica.join_team(conn, url, float(config.get("events_retry")))
    elif get_meta(conn, STORE_KEY) is not None:
        conn.close()
        raise FaithLensError(
            f"{path} is a server's copy of a team store, and FAITHLENS_EVENTS_URL is not set",
            "set FAITHLENS_EVENTS_URL to the store's URL (as `make run-team EVENTS_URL=...` does) to write to it, "
            "or point FAITHLENS_DB at another database file; read-only commands (stats, metrics) work as they are",
        )


def _open_error(path: Path, exc: duckdb.Error) -> FaithLensError:
    text = str(exc)
    if "could not set lock" in text.lower():
        pid = re.search(r"PID (\d+)", text)
        return DatabaseInUseError(path, Holder.of(int(pid.group(1)) if pid else None))
    if "not a valid DuckDB database" in text:
        return FaithLensError(
            f"{path} is not a DuckDB database",
            f"point FAITHLENS_DB or --db at the database file, by default data/faithlens.duckdb, "
            f"or move {path.name} away and {BUILD_HINT} there",
        )
    if path.is_dir():
        return FaithLensError(f"{path} is a folder", "point FAITHLENS_DB or --db at a .duckdb file inside it")
    return FaithLensError(
        f"{path}: cannot open the database: {text.splitlines()[0]}",
        "check that FAITHLENS_DB or --db names a DuckDB file this user may read and write",
    )


@cache
def _schema() -> tuple[str, str]:
    """schema.sql and the digest a file records once it has it (read once per process)."""
    ddl = resources.files("faithlens.store").joinpath("schema.sql").read_text(encoding="utf-8")
    return ddl, hashlib.sha256(f"{SCHEMA_VERSION}\n{ddl}\n{CURRENT_LABEL_VIEW}".encode()).hexdigest()


def ensure_schema(conn: duckdb.DuckDBPyConnection) -> None:
    """Create every table and view if missing (idempotent) and stamp the schema version.

    The file records a digest of the schema it was last brought up to; when it is this code's, the
    statements are skipped: running them costs more than opening the file (every page's first run).
    They run as one transaction: one commit rather than one per statement (a fresh `ingest`).
    """
    ddl, digest = _schema()
    try:
        if get_meta(conn, SCHEMA_DIGEST_KEY) == digest:
            return
    except duckdb.CatalogException:  # a new file: no meta table yet
        pass
    conn.begin()
    try:
        _create_schema(conn, ddl, digest)
    except BaseException:
        conn.rollback()
        raise
    conn.commit()


def _create_schema(conn: duckdb.DuckDBPyConnection, ddl: str, digest: str) -> None:
    """The statements of `ensure_schema`, inside its transaction."""
    migrations.before(conn)
    conn.execute(ddl)
    migrations.after(conn)
    conn.execute(CURRENT_LABEL_VIEW)
    found = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if found is None:
        conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", [SCHEMA_VERSION])
    elif found[0] != SCHEMA_VERSION:
        raise FaithLensError(
            f"database schema version {found[0]} differs from this code's {SCHEMA_VERSION}",
            "delete the database file and run `python -m faithlens ingest` to rebuild it",
        )
    set_meta(conn, SCHEMA_DIGEST_KEY, digest)


def get_meta(conn: duckdb.DuckDBPyConnection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
    return row[0] if row else None


def set_meta(conn: duckdb.DuckDBPyConnection, key: str, value: str) -> None:
    conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [key, value])
