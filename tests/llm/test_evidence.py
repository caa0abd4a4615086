"""FABLES' BM25 evidence: passages of up to 256 words with offsets into the document, the obvious
passage ranked first, k capped, empty queries finding nothing, and one index per document."""

from __future__ import annotations

import threading

import pytest

from faithlens.llm import evidence
from faithlens.llm.evidence import Bm25Index, Passage, bm25_evidence, chunk, index_for

FILLER = "The village market opened at dawn and the traders argued about prices until noon. "
LIGHTHOUSE = "The lighthouse keeper polished the brass lamp while the storm battered the rocky cliffs. "
GARDEN = "Her grandmother planted red tulips in the walled garden behind the old stone chapel. "


def story() -> str:
    """Twelve sentences of 14 words, so one passage each at max_tokens=14: the lighthouse is
    passage 4, the garden passage 9, the rest market filler."""
    parts = [FILLER] * 12
    parts[4], parts[9] = LIGHTHOUSE, GARDEN
    return "".join(parts).strip()


def test_chunk_sizes_and_offsets() -> None:
    text = "\n".join(" ".join(f"w{line}x{i}," for i in range(10)) for line in range(100))  # 1000 words
    passages = chunk(text)
    assert [len(p.text.split()) for p in passages] == [256, 256, 256, 232]
    for passage in passages:
        assert text[passage.start_char : passage.end_char] == passage.text
        assert passage.score == 0.0
    assert " ".join(" ".join(p.text.split()) for p in passages) == " ".join(text.split())
    assert passages[0].start_char == 0 and passages[-1].end_char == len(text)


def test_chunk_edge_cases() -> None:
    assert chunk("") == [] == chunk(" \n\t ")
    assert chunk("  one two three  ", max_tokens=2) == [Passage(2, 9, "one two", 0.0), Passage(10, 15, "three", 0.0)]
    with pytest.raises(ValueError, match="at least 1"):
        chunk("a", max_tokens=0)


def test_the_obvious_passage_ranks_first() -> None:
    index = Bm25Index.build(story(), max_tokens=14)
    assert len(index.passages) == 12
    best = index.top("The keeper polished the lamp in a storm", k=3)
    assert best[0].text.startswith("The lighthouse keeper polished")
    assert best[0] == Passage(
        index.passages[4].start_char, index.passages[4].end_char, LIGHTHOUSE.strip(), best[0].score
    )
    assert [p.score for p in best] == sorted((p.score for p in best), reverse=True)
    assert index.top("tulips planted by a grandmother", k=1)[0].text.startswith("Her grandmother planted red tulips")


def test_k_is_capped_and_unrelated_passages_are_left_out() -> None:
    index = Bm25Index.build(story(), max_tokens=14)
    market = index.top("village market traders", k=50)
    assert len(market) == 10  # every filler passage, never the lighthouse or garden one
    assert all("lighthouse" not in p.text and "tulips" not in p.text for p in market)
    assert len(index.top("lamp", k=50)) == 1


@pytest.mark.parametrize("query", ["", "   ", "the and of it", "zebra quantum"])
def test_queries_without_known_terms_find_nothing(query: str) -> None:
    assert Bm25Index.build(story(), max_tokens=14).top(query) == []


def test_empty_document_and_bad_k() -> None:
    assert Bm25Index.build("").top("lamp") == []
    with pytest.raises(ValueError, match="negative"):
        Bm25Index.build(story()).top("lamp", k=-1)


def test_bm25_evidence_concatenates_best_first() -> None:
    text = (LIGHTHOUSE * 3 + FILLER * 30 + "The lamp went dark. " + FILLER * 30).strip()
    joined, passages = bm25_evidence(text, "the lamp went dark", k=5)
    # Four passages; the second holds "lamp went dark", the first "lamp" three times, the rest neither.
    assert len(chunk(text)) == 4
    assert [p.start_char for p in passages] == [chunk(text)[1].start_char, 0]
    assert passages[0].score > passages[1].score > 0
    assert joined == passages[0].text + "\n\n" + passages[1].text
    assert bm25_evidence(text, "") == ("", [])


def test_index_is_built_once_per_text_and_shared_across_threads() -> None:
    text = story() + " A unique sentence for this test."
    first = index_for(text)
    assert index_for(text) is first
    assert index_for("".join(text)) is first  # an equal string, not the same object
    seen: list[Bm25Index] = []
    threads = [threading.Thread(target=lambda: seen.append(index_for(text))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(index is first for index in seen)
    assert index_for(text + " changed") is not first


def test_cache_keeps_only_the_most_recent_documents() -> None:
    oldest = index_for("oldest document in the cache test")
    for n in range(evidence.CACHED_INDEXES):
        index_for(f"filler document number {n}")
    assert index_for("oldest document in the cache test") is not oldest
