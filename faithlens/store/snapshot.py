"""Reading the database while another process (the app) holds it read-write.

DuckDB lets no other process open a file that one process holds read-write, not even read-only.
Read-only commands then read a snapshot: the file and its write-ahead log copied into a private
temporary folder. Every commit of the holder is in one of the two files, so the copy holds every
committed write. Between checkpoints the holder only appends to the log, so a log copied while a
commit is being appended ends in a torn entry, which DuckDB's replay drops as it does after a crash:
the copy holds every commit before it. A checkpoint rewrites the database file and empties the log,
so the copy is retried when the database file's (size, mtime_ns, inode) changed while copying or
the log was emptied.

A server's replica of a team store is brought up to date first, when the store answers: the events
other servers wrote since its last pull are applied to the file itself when no process holds it (as
its server would on its next start), else to the snapshot. When the store does not answer, or no
FAITHLENS_EVENTS_URL names it, the file is read as it is and `Reading.team` says which event of the
store its figures stand at (`faithlens.store.standing`)."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import duckdb

from faithlens.errors import FaithLensError
from faithlens.store import standing
from faithlens.store.connection import DatabaseInUseError, connect
from faithlens.store.replica import catch_up, close

ATTEMPTS = 8
RETRY_PAUSE_S = 0.05


@dataclass(frozen=True)
class Reading:
    """A connection to read, a note to show the user when it reads a snapshot, and for a replica of a
    team store, one saying that it caught up or what its figures stand at."""

    conn: duckdb.DuckDBPyConnection
    note: str | None = None
    team: str | None = None


@contextmanager
def open_for_reading(path: Path | str) -> Iterator[Reading]:
    """The database at `path` to read; while another process holds it, a snapshot of it; a replica
    brought up to date with its team store first when the store answers (see the module docstring).

    The connection is closed, and the snapshot deleted, when the block ends.
    """
    path = Path(path)
    with ExitStack() as stack:
        try:
            conn, note, target = connect(path, read_only=True), None, path
        except DatabaseInUseError as exc:
            target, taken = _snapshot(path, stack)
            conn = connect(target, read_only=True)
            note = f"{exc.holder} holds {path}; these figures come from a snapshot of it taken at {taken:%H:%M:%S}"
        try:
            conn, team = _caught_up(conn, path, target, stack)
        except BaseException:
            conn.close()
            raise
        stack.callback(close, conn)
        yield Reading(conn, note, team)


def _snapshot(path: Path, stack: ExitStack) -> tuple[Path, datetime]:
    folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="faithlens-snapshot-")))
    return _copy_consistent(path, folder)


def _caught_up(
    conn: duckdb.DuckDBPyConnection, path: Path, target: Path, stack: ExitStack
) -> tuple[duckdb.DuckDBPyConnection, str | None]:
    """`conn` (read-only on `target`: `path` or its snapshot) when it is no replica or cannot catch up;
    else a read-write connection to `target` that applied what the store has that it had not. When
    another process opened `path` since, the events go to a snapshot of it instead."""
    found = standing.of(conn)
    if found is None:
        return conn, None
    why_not = standing.unreachable(path.name)
    if why_not is not None:
        return conn, standing.note(found, why_not)
    conn.close()
    try:
        conn = connect(target)
    except DatabaseInUseError:
        target = _snapshot(path, stack)[0]
        conn = connect(target)
    try:
        health, _, where = catch_up(conn)
    except BaseException:
        close(conn)
        raise
    why_not = None if health.up else f"the team store {where} stopped answering ({health.reason})"
    return conn, standing.note(standing.of(conn), why_not, where)


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    return info.st_size, info.st_mtime_ns, info.st_ino


def _log_kept(log: Path, copied: Path, inode: int | None) -> bool:
    """Whether the log copied to `copied` is still the start of `log`: same file, not emptied."""
    now = _stamp(log)
    if not copied.exists():
        return now is None or now[2] == inode
    return now is not None and now[2] == inode and now[0] >= copied.stat().st_size


def _copy_consistent(path: Path, folder: Path) -> tuple[Path, datetime]:
    """Copy the database and its WAL into `folder`, with no checkpoint by the holder while copying."""
    log = path.with_name(path.name + ".wal")
    for attempt in range(ATTEMPTS):
        taken = datetime.now()
        before, log_before = _stamp(path), _stamp(log)
        for source in (path, log):
            target = folder / source.name
            target.unlink(missing_ok=True)
            try:
                shutil.copyfile(source, target)
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise FaithLensError(
                    f"{path}: could not copy it for a snapshot: {exc.strerror}",
                    f"free space in {folder.parent} (or point TMPDIR elsewhere), or stop the app and rerun",
                ) from None
        if _stamp(path) == before and _log_kept(log, folder / log.name, log_before[2] if log_before else None):
            return folder / path.name, taken
        time.sleep(RETRY_PAUSE_S * (attempt + 1))
    raise FaithLensError(
        f"{path} kept changing while a snapshot of it was taken ({ATTEMPTS} tries)",
        "rerun this command in a moment, or stop the app and rerun",
    )
