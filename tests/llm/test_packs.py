"""Demo packs end to end: answers bought from the scripted server on database A (a summary's verdict,
ARM rewrites of its sentences with their explanation points), exported as one pack, imported into
database B, and replayed there with the server stopped and no key set: no request, the same answers.
An import never overwrites a different stored answer, records where its answers came from, and a bad
file is one line that names where it is wrong, with nothing written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest

from faithlens import store
from faithlens.access import Actor, Person
from faithlens.errors import InputError
from faithlens.exports import labels
from faithlens.llm import ask, packs
from tests import raw
from tests.llm.conftest import ME, OPENAI_KEY, asking, one, rows, target
from tests.llm.test_cli_llm import environment, faithlens
from tests.llmserver import LLMServer, Reply

ANA = Actor(Person("ana", "Ana", "ana@lab.org", "oidc", "sub-ana"), "runner")
"""A runner: allowed to import packs (`import_answers`), recorded as who imported."""

SUMMARIES = sorted(raw.storysumm_records())
SUMMARY, OTHER = SUMMARIES[0], SUMMARIES[1]
SENTENCES = [s.strip() for s in raw.storysumm_records()[SUMMARY]["summary"]]
POINTS = [("It names the gift.", "It keeps the order."), ("It drops the storm.",)]


def _rewrite(sentence: str, why: str) -> str:
    return f"{why}\n<answer>{sentence.removesuffix('.')} plainly.</answer>"


def _items(points: tuple[str, ...]) -> str:
    return "".join(f"<item>{p}</item>" for p in points)


def _asks(server: LLMServer) -> list[tuple[str, ask.Ask]]:
    """The demo's asks: the summary's verdict, then ARM rewrites of its first two sentences."""
    return [
        (SUMMARY, asking(server, "storysumm-binary")),
        (f"{SUMMARY}#s0", asking(server, "arm-rewrite", variant="both")),
        (f"{SUMMARY}#s1", asking(server, "arm-rewrite", variant="both")),
    ]


def _shown(answer: ask.Answer) -> tuple:
    """What the presenter's audience sees of an answer."""
    return (answer.status, answer.label, answer.raw_label, answer.rewrite, answer.explanation, answer.points)


def _buy(conn: duckdb.DuckDBPyConnection, server: LLMServer) -> list[tuple]:
    server.queue(
        Reply("No", input_tokens=900, output_tokens=1),
        _rewrite(SENTENCES[0], "The story never names it."),
        _items(POINTS[0]),
        _rewrite(SENTENCES[1], "The storm is not in the story."),
        _items(POINTS[1]),
        Reply("Yes", input_tokens=800, output_tokens=1),
    )
    shown = [_shown(ask.ask(conn, target(conn, "storysumm", unit), what, ME)) for unit, what in _asks(server)]
    ask.ask(conn, target(conn, "storysumm", OTHER), asking(server, "storysumm-binary"), ME)
    assert len(server.requests) == 6
    return shown


@pytest.fixture
def db_b(built_db: Path, tmp_path: Path) -> Path:
    """The conference laptop: the same bundled data, no stored answers."""
    return Path(shutil.copy(built_db, tmp_path / "laptop.duckdb"))


def test_a_pack_replays_on_another_database_with_the_provider_stopped(
    llm_env: LLMServer, conn: duckdb.DuckDBPyConnection, db_b: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown_a = _buy(conn, llm_env)
    pack = tmp_path / "demo.faithlens-pack.json"
    exported = packs.export_to(conn, "storysumm", [SUMMARY], [], pack)
    assert (exported.answers, exported.targets) == (5, 3), "the verdict, two rewrites and their points; not OTHER"
    url, asks = llm_env.openai_base_url, _asks(llm_env)
    llm_env.stop()
    asked = len(llm_env.requests)

    env = environment(None, FAITHLENS_OPENAI_BASE_URL=url)
    done = faithlens(["demo-pack", "import", str(pack), "--db", str(db_b)], env)
    assert done.returncode == 0, done.stderr
    assert f"{pack.name}: 5 answers about storysumm: 5 added, 0 already stored here, 0 differ" in done.stdout
    assert f"gpt-4o (openai at {url})" in done.stdout

    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name)
    laptop = store.connect(db_b)
    try:
        replayed = [ask.ask(laptop, target(laptop, "storysumm", unit), what, ME) for unit, what in asks]
        assert [a.cached for a in replayed] == [True, True, True]
        assert [_shown(a) for a in replayed] == shown_a
        assert replayed[1].points == POINTS[0] and replayed[2].points == POINTS[1]
        label = rows(laptop, "SELECT value FROM current_label WHERE source = 'llm/storysumm-binary/gpt-4o'")
        assert label == [{"value": "unfaithful"}], "the replay gives the unit its label event, as any cache hit"
        assert one(laptop, "SELECT count(*) FROM llm_pack_call") == 5
        assert one(laptop, "SELECT count(*) FROM llm_call WHERE person IS NOT NULL") == 0, "paid for elsewhere"
        out = tmp_path / "laptop.jsonl"
        assert labels.export(laptop, "storysumm", "llm/storysumm-binary/gpt-4o", "jsonl", out) == 1
        (exported_row,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        assert (exported_row["from_pack"], exported_row["raw_output"]) == (pack.name, "No")
        imports = rows(laptop, "SELECT file_name, answers, added, already, differing FROM llm_pack_import")
        assert imports == [{"file_name": pack.name, "answers": 5, "added": 5, "already": 0, "differing": 0}]
    finally:
        laptop.close()
    cli = faithlens(
        ["llm", "rewrite", "--dataset", "storysumm", "--unit", f"{SUMMARY}#s0", "--provider", "openai"]
        + ["--model", "gpt-4o", "--json", "--db", str(db_b)],
        env,
    )
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout)["cached"] is True and tuple(json.loads(cli.stdout)["points"]) == POINTS[0]
    assert len(llm_env.requests) == asked, "no request reached the provider on the laptop"

    again = faithlens(["demo-pack", "import", str(pack), "--db", str(db_b)], env)
    assert again.returncode == 0, again.stderr
    assert "5 answers about storysumm: 0 added, 5 already stored here, 0 differ" in again.stdout


def test_an_import_keeps_a_different_stored_answer_and_says_so(
    llm_env: LLMServer, conn: duckdb.DuckDBPyConnection, db_b: Path
) -> None:
    _buy(conn, llm_env)
    data = packs.export(conn, "storysumm", [SUMMARY]).data
    laptop = store.connect(db_b)
    try:
        llm_env.queue("Yes")
        mine = ask.ask(laptop, target(laptop, "storysumm", SUMMARY), asking(llm_env, "storysumm-binary"), ME)
        assert mine.label == "faithful"
        done = packs.import_pack(laptop, "office.json", data, ANA)
        assert (done.answers, done.added, done.already, done.differing) == (5, 4, 0, (SUMMARY,))
        assert "1 differ from the answer stored here (kept as stored, not overwritten)" in done.lines()[0]
        kept = ask.ask(laptop, target(laptop, "storysumm", SUMMARY), asking(llm_env, "storysumm-binary"), ME)
        assert kept.cached and kept.label == "faithful" and kept.raw_output == "Yes"
        assert rows(laptop, "SELECT imported_by, differing FROM llm_pack_import") == [
            {"imported_by": "ana", "differing": 1}
        ]
    finally:
        laptop.close()


def _bad(data: bytes, edit) -> bytes:
    pack = json.loads(data)
    edit(pack)
    return json.dumps(pack).encode()


def _turn_edited(pack: dict) -> None:
    pack["answers"][1]["request"]["turns"][0] += " (edited)"


def _no_sample(pack: dict) -> None:
    del pack["answers"][2]["sample"]


def _unknown_unit(pack: dict) -> None:
    pack["answers"][0]["target_id"] = "nope"


def _bad_time(pack: dict) -> None:
    pack["answers"][0]["asked_at"] = "yesterday"


def _other_text(pack: dict) -> None:
    pack["targets"][SUMMARY] = "Another summary."


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda data: data[: len(data) // 2], "office.json: not a JSON file"),
        (lambda data: b'{"answers": []}', 'office.json: no "format": "faithlens-demo-pack"'),
        (lambda data: _bad(data, _turn_edited), "office.json: answer 2: its request_key does not match"),
        (lambda data: _bad(data, _no_sample), "office.json: answer 3: field 'sample' is None; expected int"),
        (lambda data: _bad(data, _unknown_unit), "office.json: answer 1: unit 'nope' is not among the pack's targets"),
        (lambda data: _bad(data, _bad_time), "office.json: answer 1: asked_at 'yesterday'; expected a date and time"),
        (lambda data: _bad(data, _other_text), f"office.json: unit {SUMMARY}: its text here differs from the pack's"),
    ],
)
def test_a_bad_pack_is_one_line_and_writes_nothing(
    llm_env: LLMServer, conn: duckdb.DuckDBPyConnection, db_b: Path, edit, expected: str
) -> None:
    llm_env.queue(Reply("No"), _rewrite(SENTENCES[0], "Not in the story."), _items(POINTS[0]))
    for unit, what in _asks(llm_env)[:2]:
        ask.ask(conn, target(conn, "storysumm", unit), what, ME)
    data = packs.export(conn, "storysumm", [SUMMARY]).data
    laptop = store.connect(db_b)
    try:
        with pytest.raises(InputError) as raised:
            packs.import_pack(laptop, "office.json", edit(data), ME)
        assert str(raised.value).startswith(expected), str(raised.value)
        assert "\n" not in str(raised.value)
        assert one(laptop, "SELECT count(*) FROM llm_call") == 0
        assert one(laptop, "SELECT count(*) FROM llm_pack_import") == 0
    finally:
        laptop.close()


def test_export_names_what_it_cannot_pack(conn: duckdb.DuckDBPyConnection, tmp_path: Path, db_copy: Path) -> None:
    conn.close()
    env = environment(None, OPENAI_API_KEY=OPENAI_KEY)
    out = tmp_path / "p.json"
    base = ["demo-pack", "export", "--dataset", "storysumm", "--out", str(out), "--db", str(db_copy)]
    nothing = faithlens([*base, "--summary", SUMMARY], env)
    assert nothing.returncode == 2 and nothing.stderr.startswith(f"error: no stored answer about {SUMMARY}")
    unknown = faithlens([*base, "--summary", "zzz"], env)
    assert unknown.returncode == 2 and "storysumm has no summary or unit 'zzz'" in unknown.stderr
    assert len(unknown.stderr.strip().splitlines()) == 1 and not out.exists()
