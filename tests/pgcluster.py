"""A throwaway PostgreSQL cluster for the team-store tests and bench: Debian's `initdb` and `pg_ctl`
(installed by `make test` through scripts/install-postgresql.sh) in a temporary folder, listening on
a free port of 127.0.0.1 only, trusted for local connections, removed when stopped.

PostgreSQL refuses to run as root; run as root (CI, this machine), the cluster belongs to Debian's
`postgres` user and its programs run as that user."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

DEBIAN_BIN = Path("/usr/lib/postgresql")


def _bin(program: str) -> str:
    """`program` from Debian's versioned folder (the newest), else from PATH."""
    versions = sorted(DEBIAN_BIN.glob("*/bin"), key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0)
    for folder in reversed(versions):
        if (folder / program).is_file():
            return str(folder / program)
    found = shutil.which(program)
    if found is None:
        raise RuntimeError(f"{program} not found: run `bash scripts/install-postgresql.sh` (make test does)")
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Cluster:
    """One PostgreSQL server on 127.0.0.1:`port` with a database `faithlens`; `url` connects to it."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="faithlens-pg-"))
        self.data = self.folder / "data"
        self.port = free_port()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/faithlens"
        self._as_user: list[str] = []
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(self.folder, user.pw_uid, user.pw_gid)
            self._as_user = ["runuser", "-u", "postgres", "--"]

    def _run(self, *argv: str) -> None:
        done = subprocess.run([*self._as_user, *argv], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv[:2])} failed: {done.stderr.strip() or done.stdout.strip()}")

    def init(self) -> Cluster:
        self._run(_bin("initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
        self.start()
        self._run(_bin("createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "faithlens")
        return self

    def start(self) -> None:
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.folder} -c fsync=off"
        self._run(_bin("pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(self.folder / "log"), "-w", "start")

    def stop(self, mode: str = "fast") -> None:
        self._run(_bin("pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")

    def restart(self) -> None:
        self.stop()
        self.start()

    def remove(self) -> None:
        try:
            self.stop("immediate")
        except RuntimeError:
            pass
        shutil.rmtree(self.folder, ignore_errors=True)
