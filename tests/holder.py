"""A real second process holding a database file read-write, as the running app does."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JUST_HOLD = """
import sys, time
import duckdb
conn = duckdb.connect(sys.argv[1])
print("held", flush=True)
time.sleep(120)
"""


@contextmanager
def holding(db: Path, script: str = JUST_HOLD) -> Iterator[subprocess.Popen[str]]:
    """A second process that opens `db` read-write, runs `script` (which prints "held" once it
    holds the file) and keeps the file open until the block ends."""
    holder = subprocess.Popen([sys.executable, "-c", script, str(db)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield holder
    finally:
        holder.kill()
        holder.wait()
