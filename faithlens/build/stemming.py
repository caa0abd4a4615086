"""English Snowball stems and the BM25 tokenizer built on them, shared by FABLES' BM25 evidence
(`faithlens.llm.evidence`), ARM's word edit distance (`faithlens.llm.signals`) and the alignment
rankers (`faithlens.build.rankers`). They live in the build layer so that all three can import them.
"""

from __future__ import annotations

import threading
from functools import lru_cache

import snowballstemmer

STEM_CACHE = 1 << 16
_local = threading.local()


@lru_cache(maxsize=STEM_CACHE)
def stem(token: str) -> str:
    """The English Snowball stem of a lowercase token, cached: stemming in pure Python costs tens of
    microseconds a word, and claims and books repeat the same words. One stemmer per thread, as a
    stemmer object keeps state between calls."""
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = snowballstemmer.stemmer("english")
    return stemmer.stemWord(token)


def stems(tokens: list[str]) -> list[str]:
    """`stem` of each token (the list-in, list-out form bm25s takes as a stemmer)."""
    return [stem(token) for token in tokens]


def bm25_tokens(texts: list[str]) -> list[list[str]]:
    """bm25s' tokenizer (lowercase, words of 2+ characters, English stopwords dropped) with the
    same cached Snowball stems as ARM's edit distance. bm25s is imported here, on first use: it costs
    about 0.2 s, which pages that never retrieve should not pay."""
    import bm25s

    return bm25s.tokenize(texts, stopwords="en", stemmer=stems, return_ids=False, show_progress=False)
