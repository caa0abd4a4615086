"""FABLES' BM25 evidence and ARM's edit distance: building the index of a 100k-word document
(<= 1000 ms), reusing it (<= 1 ms), one claim's evidence (<= 20 ms) and one claim pair's word
edit distance (<= 1 ms); the last two figures are in microseconds.

The document is book-sized prose with a novel's vocabulary (about 9,000 distinct words): the
sentences of the bundled StorySumm stories and FABLES book summaries, shuffled with a fixed seed
and repeated in new orders until it reaches 100,000 words. The build is timed cold, stem cache
cleared, as for the first claim of a book in a fresh process: stemming each distinct word once is
most of its cost.
"""

from __future__ import annotations

import random
import re
import statistics
import time

from bench.measure import Measure, median_ms
from faithlens import config
from faithlens.datasets import fables, storysumm
from faithlens.llm.evidence import Bm25Index, bm25_evidence, index_for
from faithlens.llm.signals import edit_distance, stem

WORDS = 100_000
CLAIM = "The protagonist gets abducted by aliens after seeing a strange light in the sky."
REWRITE = "The protagonist is pulled into the sky by a beam of light after seeing strange figures."


def book(words: int = WORDS) -> str:
    """About `words` words of StorySumm and FABLES sentences in seeded random order."""
    data = config.data_dir()
    stories = storysumm.load(data / "storysumm" / "storysumm.json").rows["document"]
    summaries = fables.load(data / "fables" / "FABLES.json.zip", "fables").rows["summary"]
    prose = " ".join(row["text"] for row in [*stories, *summaries])
    sentences = re.split(r"(?<=[.!?])\s+", prose)
    rng = random.Random(0)
    out: list[str] = []
    count = 0
    while count < words:
        rng.shuffle(sentences)
        for sentence in sentences:
            out.append(sentence)
            count += len(sentence.split())
            if count >= words:
                break
    return " ".join(out)


def _build_ms(text: str, repeat: int = 5) -> float:
    """Median build time of a fresh index with a cold stem cache."""
    samples = []
    for _ in range(repeat):
        stem.cache_clear()
        started = time.perf_counter()
        Bm25Index.build(text)
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def run() -> list[Measure]:
    text = book()
    build = _build_ms(text)
    index_for(text)
    return [
        Measure(
            f"evidence: BM25 index build, cold, {len(text.split()):,}-word book (median of 5)", build, "ms", 1000.0
        ),
        Measure(
            "evidence: index_for again on the same text (reuse, median of 7)",
            median_ms(lambda: index_for(text)) * 1000,
            "µs",
            1000.0,
        ),
        Measure(
            "evidence: bm25_evidence for one claim, index warm (median of 7)",
            median_ms(lambda: bm25_evidence(text, CLAIM)),
            "ms",
            20.0,
        ),
        Measure(
            "signals: word edit distance of a claim and its rewrite, stems cached (median of 7)",
            median_ms(lambda: edit_distance(CLAIM, REWRITE)) * 1000,
            "µs",
            1000.0,
        ),
    ]
