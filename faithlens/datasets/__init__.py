"""Registry of dataset formats: the bundled benchmarks and what `import` accepts.

Adding a format takes one adapter module and one entry here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb

from faithlens.datasets import canonical, fables, storysumm, storysumm_predictions, tofueval, tofueval_docs
from faithlens.datasets.bundle import Bundle
from faithlens.errors import InputError, NotFoundError


@dataclass(frozen=True)
class BundledDataset:
    """A benchmark vendored under data/, rebuilt by `ingest`."""

    name: str
    format: str
    folder: str
    description: str
    license: str
    citation: str
    load: Callable[[Path, str], Bundle]


@dataclass(frozen=True)
class ImportRequest:
    """One `import` call: the file, the dataset it creates or attaches to, and a label source name."""

    path: Path
    dataset: str
    source: str | None
    cur: duckdb.DuckDBPyConnection


@dataclass(frozen=True)
class ImportFormat:
    """A format `import` accepts; `attaches` formats add to an existing dataset instead of creating one."""

    name: str
    help: str
    attaches: bool
    default_dataset: Callable[[Path], str]
    load: Callable[[ImportRequest], Bundle]


def _storysumm_with_predictions(folder: Path, dataset: str) -> Bundle:
    bundle = storysumm.load(folder / "storysumm.json", dataset)
    layouts = storysumm_predictions_layouts(bundle)
    root = folder / "predicted_labels"
    for path in sorted(root.rglob("*.json")):
        source = storysumm_predictions.source_name(path, root)
        extra = storysumm_predictions.load(path, dataset, source, layouts, origin="bundled")
        for table, rows in extra.rows.items():
            bundle.rows[table].extend(rows)
    return bundle


def storysumm_predictions_layouts(bundle: Bundle) -> dict[str, storysumm_predictions.SummaryLayout]:
    counts: dict[str, list[int]] = {row["summary_id"]: [0, 0] for row in bundle.rows["summary"]}
    for row in bundle.rows["unit"]:
        counts[row["summary_id"]][row["kind"] == "claim"] += 1
    return {key: storysumm_predictions.SummaryLayout(*value) for key, value in counts.items()}


BUNDLED: tuple[BundledDataset, ...] = (
    BundledDataset(
        "storysumm",
        storysumm.FORMAT,
        "storysumm",
        storysumm.DESCRIPTION,
        storysumm.LICENSE,
        storysumm.CITATION,
        _storysumm_with_predictions,
    ),
    BundledDataset(
        "fables",
        fables.FORMAT,
        "fables",
        fables.DESCRIPTION,
        fables.LICENSE,
        fables.CITATION,
        lambda folder, name: fables.load(folder / "FABLES.json.zip", name),
    ),
    BundledDataset(
        "tofueval",
        tofueval.FORMAT,
        "tofueval",
        tofueval.DESCRIPTION,
        tofueval.LICENSE,
        tofueval.CITATION,
        tofueval.load,
    ),
)


def _layouts_from_db(request: ImportRequest) -> dict[str, storysumm_predictions.SummaryLayout]:
    rows = request.cur.execute(
        """
        SELECT s.summary_id, count(u.unit_id) FILTER (u.kind = 'sentence'), count(u.unit_id) FILTER (u.kind = 'claim')
        FROM summary s LEFT JOIN unit u ON u.dataset = s.dataset AND u.summary_id = s.summary_id
        WHERE s.dataset = ? GROUP BY s.summary_id
        """,
        [request.dataset],
    ).fetchall()
    if not rows:
        raise NotFoundError(
            f"dataset {request.dataset!r} has no summaries", "import the dataset first, or pass --name DATASET"
        )
    return {
        summary_id: storysumm_predictions.SummaryLayout(n_sentences, n_claims)
        for summary_id, n_sentences, n_claims in rows
    }


def _import_predictions(request: ImportRequest) -> Bundle:
    source = request.source or storysumm_predictions.source_name(request.path)
    return storysumm_predictions.load(request.path, request.dataset, source, _layouts_from_db(request), origin="import")


def _import_docs(request: ImportRequest) -> Bundle:
    known = {
        row[0]
        for row in request.cur.execute(
            "SELECT document_id FROM document WHERE dataset = ?", [request.dataset]
        ).fetchall()
    }
    if not known:
        raise NotFoundError(
            f"dataset {request.dataset!r} has no documents", "load TofuEval first, or pass --name DATASET"
        )
    return tofueval_docs.load(request.path, request.dataset, known)


def _stem(path: Path) -> str:
    return path.name.split(".")[0]


FORMATS: dict[str, ImportFormat] = {
    f.name: f
    for f in (
        ImportFormat(
            "storysumm",
            "a StorySumm-style JSON object keyed by summary id",
            False,
            _stem,
            lambda r: storysumm.load(r.path, r.dataset),
        ),
        ImportFormat(
            "storysumm-predictions",
            "one evaluator's predictions keyed by StorySumm summary id",
            True,
            lambda p: "storysumm",
            _import_predictions,
        ),
        ImportFormat(
            "fables", "a FABLES zip holding FABLES.json", False, _stem, lambda r: fables.load(r.path, r.dataset)
        ),
        ImportFormat(
            "tofueval",
            "the TofuEval folder or one *_factual_eval_*.csv",
            False,
            lambda p: _stem(p) if p.is_file() else p.name,
            lambda r: tofueval.load(r.path, r.dataset),
        ),
        ImportFormat(
            "tofueval-docs", "a doc_id,source CSV of TofuEval transcripts", True, lambda p: "tofueval", _import_docs
        ),
        ImportFormat(
            "canonical",
            "FaithLens canonical JSON Lines (see README)",
            False,
            _stem,
            lambda r: canonical.load(r.path, r.dataset),
        ),
    )
}


def bundled(name: str) -> BundledDataset | None:
    return next((b for b in BUNDLED if b.name == name), None)


def import_format(name: str) -> ImportFormat:
    if name not in FORMATS:
        raise InputError(name, "", f"unknown format; expected one of {', '.join(FORMATS)}")
    return FORMATS[name]
