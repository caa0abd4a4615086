"""Rankers: ways to order a document's passages by how well each supports a summary sentence or claim.

Every ranker is a `Ranker`: a name, a version string that says exactly what it computes (library
versions, model, scorer, parameters, text processing), which is what an alignment is stored with,
and `ranking(queries, passages, k)`: for each query, the
indices of its `k` best passages, best first, beside the whole score matrix. Ties left by a ranker's
own tie-breaker go to the passage that comes first. `registry()` maps each name to its ranker.

Off-the-shelf settings only: the libraries' own scorers and defaults, a published model as shipped,
and reciprocal rank fusion's usual constant; nothing is fitted to any dataset.

- `token_set_ratio` ("lexical"): rapidfuzz's `fuzz.token_set_ratio` over `utils.default_process`
  text (lowercased, non-alphanumerics to spaces), ties broken by `token_sort_ratio`, then position.
- `token_sort_ratio`, `WRatio`: rapidfuzz's other scorers on the same processed text.
- `bm25`: bm25s' BM25 with its default parameters, over `stemming.bm25_tokens` (lowercase, English
  stopwords dropped, Snowball stems), the tokens of FABLES' BM25 evidence setting. Each call indexes
  the passages it is given.
- `semantic`: cosine similarity of all-MiniLM-L6-v2 sentence embeddings (`faithlens.build.semantic`).
- `hybrid`, `hybrid_lexical`: reciprocal rank fusion (Cormack, Clarke and Buettcher, SIGIR 2009) of
  the full rankings of BM25 and semantic, and of lexical, BM25 and semantic: a passage scores the sum
  over rankers of 1 / (60 + its rank), 60 being the paper's constant.

`DEFAULT` is the ranker the alignment is computed with at ingest, chosen by `align-eval` (see there).

rapidfuzz, NumPy, bm25s, the stemmer and the model are imported on first use: every page imports
this module (through the alignment's TOP_K), few rank.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

Ranking = Callable[[Sequence[str], Sequence[str], int], "tuple[np.ndarray, np.ndarray]"]

DEFAULT = "bm25"
"""The ranker alignments are computed with at ingest: on FABLES' evidence (`python -m faithlens
align-eval`) it finds a claim's own quote first for 19.3% of claims and in the top 3 for 33.8%, ahead
of every other ranker here at both (semantic 14.4% / 28.6%, the BM25 + semantic hybrid 17.0% /
33.5%, lexical 10.3% / 21.4%), and it needs no model."""
RRF_K = 60
LABELS = {
    "token_set_ratio": "Lexical (token_set_ratio)",
    "token_sort_ratio": "token_sort_ratio",
    "WRatio": "WRatio",
    "bm25": "BM25",
    "semantic": "Semantic (all-MiniLM-L6-v2)",
    "hybrid": "Hybrid (BM25 + semantic)",
    "hybrid_lexical": "Hybrid (lexical + BM25 + semantic)",
}
"""Each ranker's name on pages, known without building the registry (which imports its libraries)."""
HYBRIDS = {"hybrid": ("bm25", "semantic"), "hybrid_lexical": ("token_set_ratio", "bm25", "semantic")}
"""Each fused ranker and the rankers it fuses."""
EMBEDDING = ("semantic", *(name for name, parts in HYBRIDS.items() if "semantic" in parts))
"""The rankers that need the embedding model (loaded in seconds, slow on a long document)."""
ON_PAGES = ("bm25", "token_set_ratio", "semantic", "hybrid", "hybrid_lexical")
"""The rankers Explore offers, the default first."""
SCALED = "token_set_ratio"
"""The one page ranker whose score has a fixed 0..100 scale a minimum can be set on."""


def page_label(name: str) -> str:
    """The ranker's name as a page's picker shows it, the default said so."""
    return LABELS[name] + (" (default)" if name == DEFAULT else "")


@dataclass(frozen=True)
class Ranker:
    """`ranking(queries, passages, k)` -> (order, scores): `order` is an int array of shape
    (len(queries), min(k, len(passages))) whose row i holds the indices of query i's best passages,
    best first; `scores` is the (len(queries), len(passages)) matrix of the ranker's scores."""

    name: str
    version: str
    ranking: Ranking

    def top(self, queries: Sequence[str], passages: Sequence[str], k: int) -> np.ndarray:
        return self.ranking(queries, passages, k)[0]


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


def _ranked(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    return _best(scores, k), scores


def _fuzz_ranker(scorer_name: str) -> Ranking:
    def ranking(queries: Sequence[str], passages: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        return _ranked(_fuzz_scores(scorer_name, _processed(queries), _processed(passages)), k)

    return ranking


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


def _bm25_ranking(queries: Sequence[str], passages: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
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
    return _ranked(scores, k)


def _semantic_ranking(queries: Sequence[str], passages: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
    """Cosine similarity of normalised embeddings: one matrix product."""
    from faithlens.build import semantic

    return _ranked(semantic.embed(list(queries)) @ semantic.embed(list(passages)).T, k)


def _fused(parts: Sequence[str]) -> Ranking:
    """Reciprocal rank fusion of the full rankings of the rankers named `parts`."""

    def ranking(queries: Sequence[str], passages: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np

        scores = np.zeros((len(queries), len(passages)), dtype=np.float64)
        rows = np.arange(len(queries))[:, None]
        for name in parts:
            order = registry()[name].top(queries, passages, len(passages))
            scores[rows, order] += 1.0 / (RRF_K + 1 + np.arange(order.shape[1]))
        return _ranked(scores, k)

    return ranking


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

    from faithlens.build import semantic

    fuzz_version = f"rapidfuzz-{rapidfuzz.__version__}/fuzz"
    processing = "on utils.default_process text"
    rankers = (
        Ranker(
            "token_set_ratio",
            f"{fuzz_version}.token_set_ratio {processing}; ties: token_sort_ratio, then position",
            token_set_ranking,
        ),
        *(
            Ranker(name, f"{fuzz_version}.{name} {processing}; ties: position", _fuzz_ranker(name))
            for name in ("token_sort_ratio", "WRatio")
        ),
        Ranker("bm25", _bm25_version(), _bm25_ranking),
        Ranker("semantic", f"{semantic.version()}; cosine similarity; ties: position", _semantic_ranking),
    )
    by_name = {ranker.name: ranker for ranker in rankers}
    for name, parts in HYBRIDS.items():
        fused = "; ".join(f"{part} [{by_name[part].version}]" for part in parts)
        version = f"reciprocal rank fusion, k={RRF_K}, of the full rankings of {fused}; ties: position"
        by_name[name] = Ranker(name, version, _fused(parts))
    return by_name
