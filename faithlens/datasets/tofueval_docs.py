"""Attach TofuEval dialogue transcripts from a user's `doc_id,source` CSV."""

from __future__ import annotations

from pathlib import Path

from faithlens.datasets.bundle import Bundle
from faithlens.datasets.readers import read_csv
from faithlens.errors import InputError

FORMAT = "tofueval-docs"


def load(path: Path, dataset: str, known_documents: set[str]) -> Bundle:
    """Rows `doc_id,source`; every doc_id must be a document of `dataset`."""
    name = str(path)
    bundle = Bundle(dataset)
    seen: dict[str, int] = {}
    for line, row in read_csv(path, ("doc_id", "source")):
        doc_id = row["doc_id"]
        if doc_id in seen:
            raise InputError(
                name,
                f"line {line}",
                f"duplicate doc_id {doc_id!r} (first at line {seen[doc_id]}); expected one transcript per document",
            )
        seen[doc_id] = line
        if doc_id not in known_documents:
            raise InputError(
                name,
                f"line {line}",
                f"doc_id {doc_id!r} is not a document of dataset {dataset!r}; expected TofuEval doc ids such as NPR-5615",
            )
        if not row["source"].strip():
            raise InputError(name, f"line {line}", "empty source; expected the transcript text")
        bundle.add("document_text", document_id=doc_id, text=row["source"], text_origin=name)
    bundle.log(name, "", "note", f"attached {len(seen)} transcript(s)")
    return bundle
