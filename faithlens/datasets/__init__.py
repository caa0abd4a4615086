"""The registry of dataset formats: one `Adapter` per format, built-in benchmarks and user formats
alike. Adding a format takes one loader module and one entry in ADAPTERS."""

from __future__ import annotations

from pathlib import Path

from faithlens.analysis import generators
from faithlens.datasets import (
    canonical,
    canonical_csv,
    fables,
    storysumm,
    storysumm_predictions,
    tofueval,
    tofueval_docs,
)
from faithlens.datasets.adapter import Adapter, ImportRequest, PaperTables, Vendored
from faithlens.datasets.bundle import Bundle
from faithlens.errors import InputError, NotFoundError


def _storysumm_with_predictions(folder: Path, dataset: str) -> Bundle:
    """storysumm.json plus each file of predicted_labels/ as its own label source."""
    bundle = storysumm.load(folder / "storysumm.json", dataset)
    layouts = storysumm_predictions.layouts_of(bundle)
    root = folder / "predicted_labels"
    for path in sorted(root.rglob("*.json")):
        source = storysumm_predictions.source_name(path, root)
        bundle.extend(storysumm_predictions.load(path, dataset, source, layouts, origin="bundled"))
    return bundle


def _import_predictions(request: ImportRequest) -> Bundle:
    source = request.source or storysumm_predictions.source_name(request.path)
    layouts = storysumm_predictions.layouts_in_db(request.cur, request.dataset)
    return storysumm_predictions.load(request.path, request.dataset, source, layouts, origin="import")


def _import_docs(request: ImportRequest) -> Bundle:
    rows = request.cur.execute("SELECT document_id FROM document WHERE dataset = ?", [request.dataset]).fetchall()
    if not rows:
        raise NotFoundError(
            f"dataset {request.dataset!r} has no documents", "load TofuEval first, or pass --name DATASET"
        )
    return tofueval_docs.load(request.path, request.dataset, {row[0] for row in rows})


def _import_canonical(request: ImportRequest) -> Bundle:
    """The canonical format as CSV when the file name ends in .csv, else as JSON Lines."""
    reader = canonical_csv.load if request.path.suffix.lower() == ".csv" else canonical.load
    return reader(request.path, request.dataset)


def _stem(path: Path) -> str:
    return path.name.split(".")[0]


ADAPTERS: tuple[Adapter, ...] = (
    Adapter(
        storysumm.FORMAT,
        "a StorySumm-style JSON object keyed by summary id",
        lambda r: storysumm.load(r.path, r.dataset),
        _stem,
        vendored=Vendored(
            "storysumm",
            "storysumm",
            storysumm.DESCRIPTION,
            storysumm.LICENSE,
            storysumm.CITATION,
            _storysumm_with_predictions,
        ),
        paper_tables=generators.storysumm_generators,
    ),
    Adapter(
        storysumm_predictions.FORMAT,
        "one evaluator's predictions keyed by StorySumm summary id",
        _import_predictions,
        lambda p: "storysumm",
        attaches=True,
        options=("source",),
    ),
    Adapter(
        fables.FORMAT,
        "the FABLES release zip, or the FABLES.json inside it",
        lambda r: fables.load(r.path, r.dataset),
        _stem,
        vendored=Vendored(
            "fables",
            "fables",
            fables.DESCRIPTION,
            fables.LICENSE,
            fables.CITATION,
            lambda folder, name: fables.load(folder / "FABLES.json.zip", name),
        ),
        paper_tables=generators.fables_generators,
    ),
    Adapter(
        tofueval.FORMAT,
        "the TofuEval folder, or one factual-consistency CSV (--corpus/--split when its name does not say them)",
        lambda r: tofueval.load(r.path, r.dataset, r.corpus, r.split),
        lambda p: _stem(p) if p.is_file() else p.name,
        options=("corpus", "split"),
        vendored=Vendored(
            "tofueval", "tofueval", tofueval.DESCRIPTION, tofueval.LICENSE, tofueval.CITATION, tofueval.load
        ),
        paper_tables=generators.tofueval_generators,
    ),
    Adapter(
        tofueval_docs.FORMAT,
        "a doc_id,source CSV of TofuEval transcripts",
        _import_docs,
        lambda p: "tofueval",
        attaches=True,
    ),
    Adapter(
        canonical.FORMAT,
        "FaithLens canonical JSON Lines, or canonical CSV when the name ends in .csv (see README)",
        _import_canonical,
        _stem,
    ),
    Adapter(
        canonical_csv.FORMAT,
        "FaithLens canonical CSV under any file name (see README)",
        lambda r: canonical_csv.load(r.path, r.dataset),
        _stem,
    ),
)
FORMATS: dict[str, Adapter] = {adapter.name: adapter for adapter in ADAPTERS}
VENDORED: tuple[Vendored, ...] = tuple(a.vendored for a in ADAPTERS if a.vendored is not None)
"""The benchmarks under data/, in ingest order; `format_of` names their format."""


def import_format(name: str) -> Adapter:
    if name not in FORMATS:
        raise InputError(name, "", f"unknown format; expected one of {', '.join(FORMATS)}")
    return FORMATS[name]


def format_of(vendored: Vendored) -> str:
    """The format a vendored benchmark is read in."""
    return next(a.name for a in ADAPTERS if a.vendored is vendored)


def paper_tables(format_name: str) -> PaperTables:
    """The per-generator tables for datasets of `format_name` (the generic table for other formats)."""
    adapter = FORMATS.get(format_name)
    return adapter.paper_tables if adapter and adapter.paper_tables else generators.generic_generators
