"""FABLES (Kim et al., 2024): book summaries decomposed into claims with 4-way human labels.

Raw format: one JSON file `{"canary": ..., "FABLES": {book: {model: summary}}}`, as released (a
zip holding it) or unzipped (`FABLES.json`); a `.zip` name says which. Book texts are copyrighted and not released, so documents carry no text. `booklist.md`, when
present beside the zip, adds author, genre and length to each book.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from faithlens.datasets.bundle import Bundle, check_unique
from faithlens.datasets.readers import decode_utf8, parse_json, read_json, read_zip_member, require
from faithlens.errors import InputError
from faithlens.vocab import GOLD

FORMAT = "fables"
EXPECTED = 'a JSON object {"FABLES": {book title: {model: {summary, general_comment, claims}}}}'
LICENSE = "MIT (data/fables/LICENSE)"
CITATION = (
    "Yekyung Kim, Yapei Chang, Marzena Karpinska, Aparna Garimella, Varun Manjunatha, Kyle Lo, Tanya Goyal, "
    "Mohit Iyyer. FABLES: Evaluating faithfulness and content selection in book-length summarization. COLM 2024."
)
DESCRIPTION = "130 LLM summaries of 26 recent novels, 3,158 claims with 4-way labels, evidence and reasons."
LABELS = {"Yes": "faithful", "No": "unfaithful", "PartialSupport": "partial", "Inapplicable": "unverifiable"}
NO_TEXT = (
    "Book texts are copyrighted and not released with FABLES; claims, evidence quotes and reasons are shown instead."
)


def read_booklist(path: Path) -> dict[str, dict[str, str]]:
    """Rows of the Markdown table in booklist.md, keyed by `title_key`."""
    if not path.is_file():
        return {}
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("|")]
    if len(lines) < 3:
        return {}
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    books = {}
    for line in lines[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        row = {key: value for key, value in zip(header, cells, strict=False) if value}
        if row.get("Title"):
            books[title_key(row["Title"])] = row
    return books


def title_key(title: str) -> str:
    """Book titles are spelled differently in the JSON and booklist.md ('yellowface', 'This_Impossible_Brightness')."""
    return re.sub(r"[\W_]+", " ", title).strip().casefold()


def _strings(name: str, where: str, claim: dict, field: str) -> list[str]:
    value = require(name, where, claim, field, list, "a list of strings")
    if not all(isinstance(item, str) for item in value):
        raise InputError(name, where, f"field {field!r} holds a non-string; expected a list of strings")
    return [item for item in value if item.strip() and item.strip().lower() != "n/a"]


def _read(path: Path) -> tuple[str, Any]:
    """(name for error lines, parsed JSON) of the release zip or of the plain FABLES.json."""
    if path.suffix.lower() != ".zip":
        return str(path), read_json(path, EXPECTED)
    member, data = read_zip_member(path, ".json")
    return member, parse_json(member, decode_utf8(member, data), EXPECTED)


def load(path: Path, dataset: str = FORMAT) -> Bundle:
    """Load the release zip holding FABLES.json, or FABLES.json itself."""
    name, top = _read(path)
    books = require(name, "top level", top, "FABLES", dict, "an object keyed by book title")
    booklist = read_booklist(path.parent / "booklist.md")
    bundle = Bundle(dataset)
    for title, summaries in books.items():
        if not isinstance(summaries, dict):
            raise InputError(
                name, f"book {title!r}", f"found {type(summaries).__name__}; expected an object keyed by model"
            )
        attributes = {
            k.lower().replace(" ", "_"): v for k, v in booklist.get(title_key(title), {}).items() if k != "Title"
        }
        bundle.add(
            "document", document_id=title, title=title, text=None, text_note=NO_TEXT, attributes=attributes or None
        )
        for model, record in summaries.items():
            _summary(bundle, name, title, model, record)
    check_unique(name, "summary", [row["summary_id"] for row in bundle.rows["summary"]])
    bundle.label_source(
        GOLD,
        "gold",
        "bundled",
        name,
        "Human annotators who had read the book: 4-way claim labels with evidence and reasons.",
    )
    return bundle


def _summary(bundle: Bundle, name: str, title: str, model: str, record: Any) -> None:
    summary_id = f"{title} / {model}"
    where = f"summary {summary_id!r}"
    text = require(name, where, record, "summary", str, "the summary text")
    comment = require(name, where, record, "general_comment", str, "the annotator's general comment")
    claims = require(name, where, record, "claims", dict, 'an object {"0": claim, "1": claim, ...}')
    bundle.add(
        "summary", summary_id=summary_id, document_id=title, model=model, text=text, general_comment=comment or None
    )
    keys = list(claims)
    if not all(re.fullmatch(r"\d+", key) for key in keys):
        raise InputError(name, where, f"claim keys {keys[:3]}...; expected claim numbers '0', '1', ...")
    for key in sorted(keys, key=int):
        _claim(bundle, name, f"{where} claim {key}", summary_id, int(key), claims[key])


def _claim(bundle: Bundle, name: str, where: str, summary_id: str, position: int, claim: Any) -> None:
    text = require(name, where, claim, "claim", str, "the claim text")
    raw = require(name, where, claim, "label", str, "Yes, No, PartialSupport or Inapplicable")
    if raw not in LABELS:
        raise InputError(name, where, f"unknown label value {raw!r}; expected Yes, No, PartialSupport or Inapplicable")
    target = bundle.unit(summary_id, "claim", position, text)
    bundle.label(
        "claim",
        target,
        LABELS[raw],
        raw_value=raw,
        evidence=_strings(name, where, claim, "evidence"),
        reasons=_strings(name, where, claim, "reason"),
    )
