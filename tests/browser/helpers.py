"""Driving the real app: start a `streamlit run app.py` server, launch Debian's Chromium, and wait
for reruns the way Streamlit's own e2e tests do (`wait_for_app`), so tests are not flaky."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from playwright.sync_api import Browser, BrowserContext, Page, Playwright, expect

from faithlens import config
from faithlens.build import ingest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"
IMPORTS = ROOT / "tests" / "fixtures" / "browser_imports"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
]
SERVER_FLAGS = [
    "--server.headless",
    "true",
    "--browser.gatherUsageStats",
    "false",
    "--server.fileWatcherType",
    "none",
    "--global.developmentMode",
    "false",
]
STARTUP_TIMEOUT_S = float(os.environ.get("FAITHLENS_SERVER_TIMEOUT", "60"))
# Between health checks while a server starts: fine enough that a timed start (bench/bench_overview.py)
# is not rounded up to the next tenth of a second.
HEALTH_POLL_S = 0.02
APP = '[data-testid="stApp"]'
MAX_SHOT_PX = 12_000


def build_test_db(path: Path) -> Path:
    """The bundled data plus every tests/fixtures/browser_imports/*.jsonl as a canonical dataset."""
    ingest.ingest(path, DATA)
    for jsonl in sorted(IMPORTS.glob("*.jsonl")):
        ingest.import_file(path, jsonl, "canonical", jsonl.stem)
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Server:
    """A running `streamlit run app.py`: its base URL, process and log file."""

    url: str
    process: subprocess.Popen
    log: Path

    def log_tail(self, lines: int = 40) -> str:
        text = self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.read().decode().strip() == "ok"
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


@contextmanager
def running_server(
    db_path: Path,
    log_path: Path,
    timeout: float = STARTUP_TIMEOUT_S,
    app_dir: Path = ROOT,
    extra_env: dict[str, str] | None = None,
    port: int | None = None,
) -> Iterator[Server]:
    """Start `app_dir/app.py` (FaithLens by default) on a free loopback port against `db_path`;
    stop it on exit.

    The server holds the DuckDB file open read-write, so give each server its own file.
    Its stdout/stderr go to `log_path`; if it does not become healthy, the log's tail is raised.
    `extra_env` adds settings (an LLM base URL and key, say); `port` is a port chosen beforehand (a
    sign-in test names it in the app's secrets), else a free one.
    """
    port = port or free_port()
    url = f"http://127.0.0.1:{port}"
    script = "serve.py" if (extra_env or {}).get(config.SETTINGS["auth"].env) == "links" else "app.py"  # as `make run`
    command = [sys.executable, "-m", "streamlit", "run", script]
    command += ["--server.address", "127.0.0.1", "--server.port", str(port), *SERVER_FLAGS]
    env = {**os.environ, config.SETTINGS["db"].env: str(db_path), "PYTHONUNBUFFERED": "1", **(extra_env or {})}
    with log_path.open("w", encoding="utf-8") as log:
        process = subprocess.Popen(command, cwd=app_dir, env=env, stdout=log, stderr=subprocess.STDOUT)
        server = Server(url, process, log_path)
        try:
            deadline = time.monotonic() + timeout
            while not _healthy(url):
                if process.poll() is not None or time.monotonic() > deadline:
                    why = f"exited with {process.returncode}" if process.poll() is not None else f"not up in {timeout}s"
                    raise RuntimeError(f"streamlit server {why}; log {log_path}:\n{server.log_tail()}")
                time.sleep(HEALTH_POLL_S)
            yield server
        finally:
            stop_process(process)


def stop_process(process: subprocess.Popen) -> None:
    """Ask a server process to stop; kill it if it has not within 10 s."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def copy_db(source: Path, target: Path) -> Path:
    shutil.copy(source, target)
    return target


def launch_chromium(playwright: Playwright) -> Browser:
    """Debian's Chromium (Playwright's own browser download is not available here)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)


def wait_for_app(page: Page, timeout_ms: float = 30_000) -> None:
    """Wait until the current rerun has finished and every element has rendered.

    Sleeping ~210 ms first lets a rerun that a click or navigation triggered actually start;
    otherwise the 'notRunning' state of the previous run would pass the wait at once.
    """
    page.wait_for_timeout(210)
    page.wait_for_selector(f'{APP}[data-test-connection-state="CONNECTED"]', timeout=timeout_ms)
    page.wait_for_selector(f'{APP}[data-test-script-state="notRunning"]', timeout=timeout_ms)
    expect(page.locator('[data-testid="stSkeleton"]')).to_have_count(0, timeout=timeout_ms)


def open_app(page: Page, url: str) -> Page:
    """Navigate to `url` (base URL plus path and query) and wait for the page to finish rendering."""
    page.goto(url)
    wait_for_app(page)
    return page


def screenshot(page: Page, directory: Path, name: str) -> Path:
    """PNG `directory/name.png` of the whole page, for humans to look at.

    Streamlit scrolls inside `stMain`, not the document, so a full-page shot would stop at the
    viewport: the viewport is stretched to the content's height for the shot, then restored.
    """
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.png"
    viewport = page.viewport_size or {"width": 1400, "height": 900}
    height = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]')?.scrollHeight ?? 0")
    page.set_viewport_size({"width": viewport["width"], "height": min(max(height, viewport["height"]), MAX_SHOT_PX)})
    try:
        wait_for_app(page)
        page.screenshot(path=str(path))
    finally:
        page.set_viewport_size(viewport)
    return path


def assert_no_exception(page: Page, error_box_expected: bool = False) -> None:
    """No traceback element; and no error box unless the test expects one."""
    exceptions = page.locator('[data-testid="stException"]')
    expect(exceptions, f"exception shown: {exceptions.all_inner_texts()}").to_have_count(0)
    if not error_box_expected:
        errors = page.locator('[data-testid="stAlertContentError"]')
        expect(errors, f"error box shown: {errors.all_inner_texts()}").to_have_count(0)


def page_url(script: str) -> str:
    """The URL path of a page under folder routing: app.py is `/`, pages/explore.py is `/explore`."""
    return "/" if script == "app.py" else "/" + Path(script).stem


def app_pages() -> list[str]:
    """app.py and every page file that exists now, as paths relative to the repository."""
    pages = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "pages").glob("*.py") if not p.name.startswith("_"))
    return ["app.py", *pages]


LINKS_COOKIE_SECRET = "browser-tests-only-cookie-secret-0123456789"
SIGN_IN_ADMIN = "tests-admin"
"""Who `add_people` acts as (the CLI's admin): the people it adds are made by them."""


def links_env() -> dict[str, str]:
    """The settings of a `links`-mode server, for `running_server(extra_env=...)` (which then serves
    serve.py, the app with its sign-in routes, as `make run` does in that mode)."""
    return {config.SETTINGS["auth"].env: "links", config.SETTINGS["cookie_secret"].env: LINKS_COOKIE_SECRET}


def add_people(db_path: Path, roles: dict[str, str]) -> dict[str, str]:
    """Before a server opens `db_path`: add each person (id -> role) with that role and a sign-in link,
    through the core as the CLI's admin. Returns id -> the link's path (`/signin/link?token=...`) for
    `sign_in_by_link`. A name-only coder of an older session may be named: their codes become this
    person's. (A running server holds the file, so people are added before it starts.)"""
    from faithlens import access, store
    from faithlens.access import links, people

    admin = access.cli_actor(SIGN_IN_ADMIN)
    conn = store.connect(db_path)
    try:
        made = {}
        for person_id, role in roles.items():
            people.add_person(conn, admin, person_id)
            people.set_role(conn, admin, person_id, role)
            made[person_id] = f"/signin/link?token={links.create(conn, admin, person_id)[1]}"
        return made
    finally:
        store.close(conn)


@contextmanager
def links_server(
    db_path: Path, log_path: Path, roles: dict[str, str], extra_env: dict[str, str] | None = None
) -> Iterator[tuple[Server, dict[str, str]]]:
    """A `links`-mode server on `db_path` with `roles` (id -> role) added first: (the server, id -> sign-in
    link path). Sign a browser context in with `sign_in_by_link(context, server.url, links[id])`."""
    made = add_people(db_path, roles)
    with running_server(db_path, log_path, extra_env={**links_env(), **(extra_env or {})}) as server:
        yield server, made


def sign_in_by_link(context: BrowserContext, base_url: str, link: str) -> Page:
    """Open the sign-in `link` (a path from `add_people`) in a new page of `context`: the server sets
    the context's session cookie and shows the Overview. Returns the page, rendered."""
    page = context.new_page()
    page.goto(f"{base_url}{link}")
    page.wait_for_url(f"{base_url}/")
    wait_for_app(page)
    expect(page.get_by_test_id("stSidebar").get_by_text("Signed in as")).to_be_visible()
    return page
