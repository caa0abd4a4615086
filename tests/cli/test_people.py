"""`python -m faithlens people ...` in real subprocesses on a real database file: the first admin of a
`links` server made from the command line signs in with the link it prints; roles, budgets and links
set here are what the core reads; spending is listed per person; the acting person is `--as` or
FAITHLENS_USER; bad input is one line, exit 2, and writes nothing."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import duckdb
import pytest

from faithlens import store
from faithlens.access import directory, links, tokens
from faithlens.llm import records
from tests.access.conftest import row_counts
from tests.coding.support import llm_call

ROOT = Path(__file__).resolve().parents[2]
BASE_URL = "https://faithlens.lab.example"


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Path]:
    """A new database file with the schema and no data (people need no datasets)."""
    path = tmp_path / "people.duckdb"
    store.close(store.connect(path))
    yield path


def faithlens(db: Path, *args: str, user: str = "lead") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FAITHLENS_USER": user, "TMPDIR": str(db.parent)}
    env.pop("FAITHLENS_EVENTS_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "faithlens", "people", *args, "--db", str(db)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )


def ok(db: Path, *args: str, user: str = "lead") -> str:
    done = faithlens(db, *args, user=user)
    assert done.returncode == 0, done.stderr
    return done.stdout


def listed(db: Path) -> dict[str, dict]:
    return {row["person"]: row for row in json.loads(ok(db, "list", "--json"))}


def counts(db: Path) -> dict[str, int]:
    conn = duckdb.connect(str(db), read_only=True)
    try:
        return row_counts(conn)
    finally:
        conn.close()


def test_the_first_admin_of_a_links_server_is_made_from_the_command_line(db: Path):
    out = ok(db, "add", "ann", "--role", "admin", "--email", "ann@lab.org", "--name", "Ann Archer")
    assert out.startswith("added ann (Ann Archer) as admin")
    printed = ok(db, "link", "ann", "--days", "3", "--base-url", BASE_URL + "/")
    (url,) = [line for line in printed.splitlines() if line.startswith("http")]
    assert url.startswith(BASE_URL + links.SIGN_IN_PATH + "?"), "the full link, on the server's address"
    token = parse_qs(urlsplit(url).query)["token"][0]
    conn = store.connect(db)
    try:
        stored = [row[0] for row in conn.execute("SELECT token_sha256 FROM sign_in_link").fetchall()]
        assert stored == [tokens.digest(token)], "only the token's hash is kept"
        person, _session = links.redeem(conn, token, "10.0.0.1")
        with conn.cursor() as cur:
            found = directory.read(cur)
        (link,) = found.links.values()
    finally:
        store.close(conn)
    assert (person.id, person.name, person.email) == ("ann", "Ann Archer", "ann@lab.org")
    assert found.role("ann") == "admin"
    assert re.fullmatch(r"[0-9a-f]{16}", link.link_id), "an id `--link ID` takes as it is (never '-...')"
    until = re.search(rf"sign-in link {link.link_id} for ann, valid until (\S+ \S+)", printed).group(1)
    assert abs(datetime.strptime(until, "%Y-%m-%d %H:%M") - link.expires_at) < timedelta(minutes=2)
    assert abs(link.expires_at - link.created_at - timedelta(days=3)) < timedelta(seconds=5)
    assert token not in db.read_bytes().decode("latin-1"), "the token itself is written nowhere"


def test_roles_budgets_and_spending_are_listed_as_the_core_holds_them(db: Path):
    ok(db, "add", "ann", "--role", "admin")
    ok(db, "add", "bob")
    ok(db, "role", "BOB", "runner")  # ids compare without case, as the People page's
    ok(db, "budget", "bob", "--day", "1", "--month", "$5")
    ok(db, "add", "cat", "--role", "coder")
    ok(db, "budget", "cat", "--day", "0.5")
    conn = store.connect(db)
    try:
        for cost in (0.25, 0.35, None):
            records.save(conn, llm_call(dataset=None, person="bob", cost_usd=cost), None, "test answer")
    finally:
        store.close(conn)
    rows = listed(db)
    assert list(rows) == ["ann", "bob", "cat"], "in the order they came"
    assert {p: r["role"] for p, r in rows.items()} == {"ann": "admin", "bob": "runner", "cat": "coder"}
    assert rows["bob"]["budget"] == {"day_usd": 1.0, "month_usd": 5.0}
    assert rows["cat"]["budget"] == {"day_usd": 0.5, "month_usd": None}, "a limit left out is no limit"
    assert rows["ann"]["budget"] == {"day_usd": None, "month_usd": None}, "an admin has no limit until one is set"
    assert rows["bob"]["spent_today_usd"] == pytest.approx(0.60)
    assert rows["bob"]["left_usd"] == pytest.approx(0.40)
    assert rows["bob"]["unknown_cost_calls"] == 1
    text = ok(db, "list")
    (bob_line,) = [line for line in text.splitlines() if line.startswith("bob ")]
    assert "$1.00/day, $5.00/month" in bob_line and "$0.60 (+1 unpriced)" in bob_line
    ok(db, "budget", "bob", "--none")
    assert listed(db)["bob"]["budget"] == {"day_usd": None, "month_usd": None}


def test_revoking_one_link_or_everything_of_a_person(db: Path):
    ok(db, "add", "ann", "--role", "admin")
    first = ok(db, "link", "ann", "--base-url", BASE_URL)
    second = ok(db, "link", "ann", "--base-url", BASE_URL)
    ids = [re.search(r"sign-in link (\S+) for ann", out).group(1) for out in (first, second)]
    ok(db, "revoke", "ann", "--link", ids[0])
    assert [link["status"] for link in listed(db)["ann"]["links"]] == ["revoked", "active"]
    token = parse_qs(urlsplit(first.splitlines()[-1]).query)["token"][0]
    conn = store.connect(db)
    try:
        with pytest.raises(links.SignInRefused, match="revoked"):
            links.redeem(conn, token, "10.0.0.2")
    finally:
        store.close(conn)
    ok(db, "revoke", "ann")
    assert [link["status"] for link in listed(db)["ann"]["links"]] == ["revoked", "revoked"]


def test_the_cli_acts_as_faithlens_user_or_as_the_person_named(db: Path):
    ok(db, "add", "ann", user="lead")
    ok(db, "role", "ann", "coder", "--as", "pat")
    conn = duckdb.connect(str(db), read_only=True)
    try:
        made = conn.execute("SELECT kind, made_by FROM access_event ORDER BY event_id").fetchall()
    finally:
        conn.close()
    assert made == [("person", "lead"), ("role", "pat")]


BAD = [
    (("role", "ann", "boss"), "unknown role 'boss'"),
    (("add", "dan", "--role", "boss"), "unknown role 'boss'"),
    (("add", "ann"), "a person named 'ann' exists"),
    (("add", "x/y"), "person name 'x/y' is not usable"),
    (("role", "zed", "coder"), "no person named 'zed'"),
    (("budget", "ann", "--day", "-1"), "--day '-1' is not a sum of dollars"),
    (("budget", "ann", "--month", "lots"), "--month 'lots' is not a sum of dollars"),
    (("budget", "ann", "--day", "nan"), "--day 'nan' is not a sum of dollars"),
    (("budget", "ann"), "give --day and/or --month, or --none"),
    (("budget", "ann", "--none", "--day", "2"), "give --day and/or --month, or --none"),
    (("link", "zed"), "no person named 'zed'"),
    (("link", "ann", "--days", "0"), "--days '0'"),
    (("link", "ann", "--base-url", "faithlens.lab"), "--base-url 'faithlens.lab' is not a server address"),
    (("revoke", "bob", "--link", "LINKOFANN"), "no sign-in link 'LINKOFANN' of bob"),
    (("role", "ann", "coder", "--as", "a@b"), "person name 'a@b' is not usable"),
]


@pytest.fixture(scope="module")
def ann_and_bob(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A database with ann (admin, one sign-in link) and bob (viewer), and the id of ann's link."""
    path = tmp_path_factory.mktemp("people") / "people.duckdb"
    store.close(store.connect(path))
    ok(path, "add", "ann", "--role", "admin")
    ok(path, "add", "bob")
    return path, re.search(r"sign-in link (\S+) for ann", ok(path, "link", "ann")).group(1)


@pytest.mark.parametrize(("args", "says"), BAD, ids=[" ".join(args) for args, _ in BAD])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(
    ann_and_bob: tuple[Path, str], tmp_path: Path, args: tuple[str, ...], says: str
):
    db = tmp_path / "copy.duckdb"
    shutil.copyfile(ann_and_bob[0], db)
    link_of_ann = ann_and_bob[1]
    args = tuple(link_of_ann if arg == "LINKOFANN" else arg for arg in args)
    before = counts(db)
    done = faithlens(db, *args)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: "), done.stderr
    assert says.replace("LINKOFANN", link_of_ann) in done.stderr
    assert counts(db) == before


def test_the_last_admin_keeps_the_role_but_a_store_without_an_admin_takes_any(db: Path):
    ok(db, "add", "bob")
    ok(db, "role", "bob", "coder")
    assert listed(db)["bob"]["role"] == "coder", "no admin yet: there is no last admin to keep"
    ok(db, "role", "bob", "admin")
    before = counts(db)
    done = faithlens(db, "role", "bob", "viewer")
    assert done.returncode == 2 and "bob is the last admin" in done.stderr
    assert counts(db) == before


def test_the_printed_link_opens_the_route_the_links_server_serves() -> None:
    from components import signin_routes

    served = {route.path for route in signin_routes.ROUTES}
    assert links.SIGN_IN_PATH in served, f"`people link` prints {links.SIGN_IN_PATH}; serve.py serves {served}"
