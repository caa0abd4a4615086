"""Issue 29 item 5: reading a stored alignment, and the semantic ranker's alignment of a 5,000-word story.

- Explore reads an open summary's stored alignment (`views.alignments.load_alignment`, the default
  ranker): budget 20 ms, beside the bare DuckDB query of the same rows.
- Semantic alignment at import of a 5,000-word story and its summaries' sentences (StorySumm's stories
  one after another, cut at 5,000 words; the sentences of three StorySumm summaries), with the model
  loaded as a server has it after its first use and no embedding cached: budget 2 s on these 2 cores,
  beside the bare sentence-transformers `encode` of the same passages and sentences. Loading the model
  (once per process) is reported apart.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from bench.measure import Measure, median_ms
from faithlens import store
from faithlens.build import alignment, ingest, semantic
from faithlens.build.rankers import DEFAULT
from faithlens.views import alignments
from tests.raw import DATA, storysumm_records

STORYSUMM = "1e21553b47944b67bc2cdf67860d8e15"
WORDS = 5_000


def _stored_read(db: Path) -> tuple[float, float]:
    conn = store.connect(db, read_only=True)
    try:
        document, units = conn.execute(
            "SELECT s.document_id, list(u.unit_id) FROM summary s JOIN unit u USING (dataset, summary_id) "
            "WHERE s.dataset = 'storysumm' AND s.summary_id = ? GROUP BY s.document_id",
            [STORYSUMM],
        ).fetchone()
        with conn.cursor() as cur:
            ours = median_ms(lambda: alignments.load_alignment(cur, "storysumm", document, units, DEFAULT), repeat=21)
            bare = median_ms(
                lambda: cur.execute(
                    "SELECT * FROM alignment WHERE dataset = 'storysumm' AND ranker = ? AND unit_id IN "
                    "(SELECT unnest(?::VARCHAR[]))",
                    [DEFAULT, units],
                ).fetchall(),
                repeat=21,
            )
    finally:
        conn.close()
    return ours, bare


def _story_and_sentences() -> tuple[str, list[str]]:
    records = storysumm_records()
    words: list[str] = []
    for story in sorted({record["story"] for record in records.values()}):
        words += story.split()
        if len(words) >= WORDS:
            break
    sentences = [sentence for record in list(records.values())[:3] for sentence in record["summary"]]
    return " ".join(words[:WORDS]), sentences


def _semantic_import() -> tuple[float, float, float]:
    text, sentences = _story_and_sentences()
    started = time.perf_counter()
    model = semantic.model()
    load_s = time.perf_counter() - started
    document = ("bench", text, [f"s#{i}" for i in range(len(sentences))], sentences)
    passages = [text[start:end] for start, end in alignment.passages(text)]
    ours, bare = [], []
    for _ in range(3):
        semantic.forget()
        started = time.perf_counter()
        alignment.aligned("bench", [document], "semantic")
        ours.append(time.perf_counter() - started)
        started = time.perf_counter()
        model.encode(passages + sentences, batch_size=semantic.BATCH_SIZE, normalize_embeddings=True)
        bare.append(time.perf_counter() - started)
    return statistics.median(ours), statistics.median(bare), load_s


def run() -> list[Measure]:
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "bench.duckdb"
        ingest.ingest(db, DATA)
        ours, bare = _stored_read(db)
    aligned_s, encode_s, load_s = _semantic_import()
    return [
        Measure("alignment: stored alignment of an open summary (load_alignment, bm25)", ours, "ms", 20.0),
        Measure("alignment: baseline, the bare DuckDB query of the same rows", bare, "ms", 20.0),
        Measure(
            f"alignment: semantic, a {WORDS:,}-word story and 3 summaries' sentences (model loaded)",
            aligned_s,
            "s",
            2.0,
        ),
        Measure("alignment: baseline, bare sentence-transformers encode of the same texts", encode_s, "s", 2.0),
        Measure("alignment: loading the embedding model, once per process (no budget in the issue)", load_s, "s", 15.0),
    ]
