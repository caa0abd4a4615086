"""A real OpenID Connect provider for sign-in tests: the PyPI package `oidc-provider-mock` (pinned in
requirements-dev.txt), run as its own process on 127.0.0.1 and a free port, stopped on exit.

It accepts any client id and secret, and its authorize page signs in whoever the browser names: a
button per predefined user (`button[value=<sub>]`), or a typed `sub`. Reach it as `localhost` (the
URLs below), in the app's secrets and the browser alike: cookies are kept per host name, so mixing
`localhost` with `127.0.0.1` would lose the app's sign-in cookie on the way back from the provider.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.browser.helpers import free_port, stop_process

STARTUP_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Provider:
    """A running provider: where it is, and where its log goes."""

    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://localhost:{self.port}"

    @property
    def metadata_url(self) -> str:
        """What `[auth] server_metadata_url` names."""
        return f"{self.url}/.well-known/openid-configuration"

    def log_tail(self, lines: int = 30) -> str:
        text = self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


@contextmanager
def provider(users: list[dict[str, object]], log: Path) -> Iterator[Provider]:
    """Start the provider with `users` (claims, each with its `sub`) and stop it on exit."""
    port = free_port()
    command = [sys.executable, "-m", "oidc_provider_mock", "--host", "127.0.0.1", "--port", str(port)]
    for claims in users:
        command += ["--user-claims", json.dumps(claims)]
    env = {**os.environ, "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"}
    with log.open("w", encoding="utf-8") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=env)
        running = Provider(port, log)
        try:
            deadline = time.monotonic() + STARTUP_TIMEOUT_S
            while not _answers(running.metadata_url):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the OIDC provider did not start; log {log}:\n{running.log_tail()}")
                time.sleep(0.1)
            yield running
        finally:
            stop_process(process)
