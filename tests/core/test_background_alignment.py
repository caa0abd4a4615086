"""A long document aligned by the semantic ranker in the background (issue 29 item 3): its passages are
embedded chunk by chunk with progress; a process killed half-way loses nothing it committed, and the
job started again (as a restarted server does) embeds only the rest and stores the alignment."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from faithlens import access, store
from faithlens.build import alignment, background, ingest
from faithlens.build.rankers import registry
from tests.raw import storysumm_records

ROOT = Path(__file__).resolve().parents[2]
KEY = ("mine", "anthology", "semantic")
UNFINISHED = "SELECT dataset, document_id, ranker FROM alignment_job WHERE finished_at IS NULL"
EMBEDDED = re.compile(r"^anthology: (\d+) of (\d+) passages embedded$")


def _anthology() -> str:
    """StorySumm's stories one after another, until there are more passages than a page waits for."""
    stories, text = sorted({record["story"] for record in storysumm_records().values()}), ""
    for story in stories:
        text = f"{text}\n\n{story}" if text else story
        if len(alignment.passages(text)) > background.BACKGROUND_PASSAGES + background.CHUNK:
            return text
    raise AssertionError("StorySumm's stories are too short together")


@pytest.fixture
def long_db(db_copy: Path, tmp_path: Path) -> tuple[Path, str, list[str]]:
    text = _anthology()
    spans = alignment.passages(text)
    copied = [text[start:end] for start, end in (spans[10], spans[len(spans) // 2], spans[-10])]
    line = {
        "document_id": "anthology",
        "summary_id": "s1",
        "document": text,
        "sentences": [{"text": s} for s in copied],
    }
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    ingest.import_file(db_copy, path, "canonical")
    return db_copy, text, copied


def test_a_story_is_aligned_while_the_page_waits_and_a_long_document_in_the_background() -> None:
    longest = max((record["story"] for record in storysumm_records().values()), key=len)
    assert not background.needs_background(longest, "semantic")
    assert background.needs_background(_anthology(), "semantic")
    assert background.needs_background(_anthology(), "hybrid")
    assert not background.needs_background(_anthology(), "bm25"), "BM25 needs no model and no background"


def _kill_after_first_chunk(db: Path) -> None:
    """Run `align` in a process of its own and kill it once it has committed a chunk."""
    process = subprocess.Popen(
        [sys.executable, "-m", "faithlens", "align", "--dataset", "mine", "--ranker", "semantic", "--db", str(db)],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        for line in process.stderr:
            found = EMBEDDED.match(line.strip())
            if found and int(found[1]) > 0:
                break
        else:
            raise AssertionError("align ended before it embedded a chunk")
    finally:
        process.kill()
        process.wait(30)


def test_a_killed_job_goes_on_where_it_stopped_and_stores_the_alignment(long_db) -> None:
    db, text, copied = long_db
    _kill_after_first_chunk(db)
    conn = store.connect(db)
    try:
        with conn.cursor() as cur:
            halfway = background.progress(cur, KEY)
            kept = dict(cur.execute("SELECT start_char, vector FROM passage_embedding").fetchall())
            assert cur.execute(UNFINISHED).fetchall() == [KEY]
        assert halfway is not None and not halfway.finished and halfway.error is None
        assert 0 < halfway.embedded < halfway.total == len(alignment.passages(text))
        assert len(kept) == halfway.embedded
        jobs = background.Jobs()
        jobs.start(conn, access.cli_actor(), KEY)
        jobs.join(KEY, 600)
        with conn.cursor() as cur:
            done = background.progress(cur, KEY)
            stored = dict(cur.execute("SELECT start_char, vector FROM passage_embedding").fetchall())
            recorded = cur.execute("SELECT version FROM alignment_ranker WHERE ranker = 'semantic'").fetchall()
            best = cur.execute(
                "SELECT u.position, a.start_char, a.end_char FROM alignment a JOIN unit u USING (dataset, unit_id) "
                "WHERE a.dataset = 'mine' AND a.ranker = 'semantic' AND a.rank = 1 ORDER BY u.position"
            ).fetchall()
            assert cur.execute(UNFINISHED).fetchall() == []
    finally:
        store.close(conn)
    assert done == background.Progress(halfway.total, halfway.total, True, None)
    assert all(stored[start] == vector for start, vector in kept.items()), "what was committed is kept as it was"
    assert recorded == [(registry()["semantic"].version,)]
    assert [text[start:end] for _, start, end in best] == copied, "each copied passage is its sentence's best"


def test_a_stopped_job_is_not_finished_and_a_viewer_on_a_demo_server_may_not_start_one(long_db) -> None:
    db, _, _ = long_db
    conn = store.connect(db)
    try:
        with pytest.raises(access.PermissionDenied):
            background.request(conn, access.demo_actor(), KEY)
        background.request(conn, access.cli_actor(), KEY)
        stop = threading.Event()
        stop.set()
        assert background.run(conn, access.cli_actor(), KEY, stop) is None
        with conn.cursor() as cur:
            stopped = background.progress(cur, KEY)
    finally:
        store.close(conn)
    assert stopped is not None and (stopped.embedded, stopped.finished, stopped.error) == (0, False, None)
