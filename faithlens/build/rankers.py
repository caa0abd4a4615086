"""Rankers: ways to order a document's passages by how well each supports a summary sentence or claim.

Every ranker is a `Ranker`: a name, a version string that says exactly what it computes (library
version, scorer, parameters, text processing), which is what an alignment will be stored with, and
`top(queries, passages, k)`: for each query, the indices of its `k` best passages, best first. Ties
left by a ranker's own tie-breaker go to the passage that comes first. `registry()` maps each name to
its ranker; a new ranker (a semantic or hybrid one) is one more entry there.

Off-the-shelf settings only: the libraries' own scorers and defaults, nothing fitted to any dataset.

- `token_set_ratio`: the order `faithlens.build.alignment` gives its passages today. rapidfuzz's
  `fuzz.token_set_ratio` over `utils.default_process` text (lowercased, non-alphanumerics to spaces),
  ties broken by `token_sort_ratio`, then by position.
- `token_sort_ratio`, `WRatio`: rapidfuzz's other scorers on the same processed text.
- `bm25`: bm25s' BM25 with its default parameters, over `stemming.bm25_tokens` (lowercase, English
  stopwords dropped, Snowball stems), the tokens of FABLES' BM25 evidence setting. Each call indexes
  the passages it is given.

rapidfuzz, NumPy, bm25s and the stemmer are imported on first use: every page imports this module
(through the alignment's TOP_K), few rank.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

Top = Callable[[Sequence[str], Sequence[str], int], "np.ndarray"]


@dataclass(frozen=True)
class Ranker:
    """`top(queries, passages, k)` -> int array of shape (len(queries), min(k, len(passages))):
    row i holds the indices of query i's best passages, best first."""

    name: str
    version: str
    top: Top


def _processed(texts: Sequence[str]) -> list[str]:
    from rapidfuzz import utils

    return [utils.default_process(text) for text in texts]


def _fuzz_scores(scorer_name: str, queries: Sequence[str], passages: Sequence[str]) -> np.ndarray:
    """rapidfuzz `scorer_name` of every (query, passage) pair of processed text, one `cdist` call."""
    import numpy as np
    from rapidfuzz import fuzz, process

    scorer = getattr(fuzz, scorer_name)
    return process.cdist(queries, passages, scorer=scorer, dtype=np.float32, workers=1)


def _best(scores: np.ndarray, k: int) -> np.ndarray:
    """Column indices of each row's `k` highest scores, best first, ties to the lower index."""
    import numpy as np

    return np.argsort(-scores, axis=1, kind="stable")[:, :k]


def _fuzz_ranker(scorer_name: str) -> Top:
    def top(queries: Sequence[str], passages: Sequence[str], k: int) -> np.ndarray:
        return _best(_fuzz_scores(scorer_name, _processed(queries), _processed(passages)), k)

    return top


def token_set_ranking(queries: Sequence[str], passages: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
    """(each query's top `k` passage indices, the token_set_ratio matrix): token_set_ratio, ties by
    token_sort_ratio then position. The alignment stores the scores beside the order.

    The tie-breaker is computed only for the passages scoring at least a row's k-th best score, the
    only ones that can make its top k (a passage whose words are all in the query scores 100)."""
    import numpy as np

    processed_queries, processed_passages = _processed(queries), _processed(passages)
    by_set = _fuzz_scores("token_set_ratio", processed_queries, processed_passages)
    keep = min(k, len(passages))
    rows = []
    for query, scores in zip(processed_queries, by_set, strict=True):
        floor = np.sort(scores)[-keep] if keep else np.inf
        candidates = np.flatnonzero(scores >= floor)
        by_sort = _fuzz_scores("token_sort_ratio", [query], [processed_passages[i] for i in candidates])[0]
        order = np.lexsort((candidates, -by_sort, -scores[candidates]))
        rows.append(candidates[order][:keep])
    return np.array(rows, dtype=np.intp).reshape(len(queries), keep), by_set


def _token_set_top(queries: Sequence[str], passages: Sequence[str], k: int) -> np.ndarray:
    return token_set_ranking(queries, passages, k)[0]


def _bm25_top(queries: Sequence[str], passages: Sequence[str], k: int) -> np.ndarray:
    """BM25 scores of the passages for each query; a query without a term scores every passage 0."""
    import bm25s
    import numpy as np

    from faithlens.build.stemming import bm25_tokens

    scores = np.zeros((len(queries), len(passages)), dtype=np.float32)
    if passages:
        retriever = bm25s.BM25()
        retriever.index(bm25_tokens(list(passages)), show_progress=False)
        for row, tokens in enumerate(bm25_tokens(list(queries))):
            if tokens:
                scores[row] = retriever.get_scores(tokens)
    return _best(scores, k)


def _bm25_version() -> str:
    """bm25s' version and the parameters a default `bm25s.BM25()` scores with."""
    import bm25s

    defaults = bm25s.BM25()
    return (
        f"bm25s-{bm25s.__version__}/{defaults.method} k1={defaults.k1} b={defaults.b}; "
        "tokens: bm25s.tokenize lowercase, stopwords=en, Snowball english stems; ties: position"
    )


@cache
def registry() -> dict[str, Ranker]:
    """Every available ranker by name, in the order they are compared (today's alignment first)."""
    import rapidfuzz

    fuzz_version = f"rapidfuzz-{rapidfuzz.__version__}/fuzz"
    processing = "on utils.default_process text"
    rankers = (
        Ranker(
            "token_set_ratio",
            f"{fuzz_version}.token_set_ratio {processing}; ties: token_sort_ratio, then position",
            _token_set_top,
        ),
        Ranker(
            "token_sort_ratio",
            f"{fuzz_version}.token_sort_ratio {processing}; ties: position",
            _fuzz_ranker("token_sort_ratio"),
        ),
        Ranker("WRatio", f"{fuzz_version}.WRatio {processing}; ties: position", _fuzz_ranker("WRatio")),
        Ranker("bm25", _bm25_version(), _bm25_top),
    )
    return {ranker.name: ranker for ranker in rankers}
