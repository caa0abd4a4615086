"""Released outputs of the evaluators benchmarked in the StorySumm paper, one label source a file.

Each file is a JSON object keyed by StorySumm summary id. What a record holds decides the level:
`label` (0/1) is a summary label; `sentence_labels` and `claim_labels` are sentence and claim
labels; `probs` is a score (a number, or one number per sentence) or, in `cot.json`, the model's
written reasoning, kept as the explanation. A record with only a score (AlignScore, UniEval) gets
a summary label with no value: the Compare page turns scores into labels with a threshold.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from faithlens.datasets.bundle import Bundle, unit_id
from faithlens.datasets.readers import read_json
from faithlens.datasets.storysumm import BINARY
from faithlens.errors import InputError, NotFoundError

FORMAT = "storysumm-predictions"
EXPECTED = "a JSON object keyed by StorySumm summary id, each with label, probs, sentence_labels or claim_labels"
KNOWN_FIELDS = ("label", "probs", "sentence_labels", "claim_labels")

DESCRIPTIONS = {
    "justquestion": "Binary prompt: the LLM answers whether the summary is consistent (StorySumm 'Binary').",
    "cot": "Chain-of-thought prompt: reasoning first, then a binary label (StorySumm 'CoT').",
    "fables-gpt-4-turbo-preview": "FABLES method: GPT-4 labels each extracted claim; faithful if all claims are.",
    "minicheck-flan-t5-large": "MiniCheck (Flan-T5-Large) per sentence; faithful if all sentences are.",
    "alignscore-roberta-large": "AlignScore (RoBERTa-Large) summary score in [0, 1].",
    "unieval": "UniEval consistency score in [0, 1].",
}


@dataclass(frozen=True)
class SummaryLayout:
    """How many sentences and claims a summary has, to check evaluator outputs against."""

    sentences: int
    claims: int


def layouts_of(bundle: Bundle) -> dict[str, SummaryLayout]:
    """Sentence and claim counts per summary of a StorySumm bundle being loaded."""
    counts: dict[str, dict[str, int]] = {
        row["summary_id"]: {"sentence": 0, "claim": 0} for row in bundle.rows["summary"]
    }
    for row in bundle.rows["unit"]:
        counts[row["summary_id"]][row["kind"]] += 1
    return {key: SummaryLayout(value["sentence"], value["claim"]) for key, value in counts.items()}


def layouts_in_db(cur: duckdb.DuckDBPyConnection, dataset: str) -> dict[str, SummaryLayout]:
    """Sentence and claim counts per summary of a loaded dataset, to attach predictions to."""
    rows = cur.execute(
        """
        SELECT s.summary_id, count(u.unit_id) FILTER (u.kind = 'sentence'), count(u.unit_id) FILTER (u.kind = 'claim')
        FROM summary s LEFT JOIN unit u ON u.dataset = s.dataset AND u.summary_id = s.summary_id
        WHERE s.dataset = ? GROUP BY s.summary_id
        """,
        [dataset],
    ).fetchall()
    if not rows:
        raise NotFoundError(f"dataset {dataset!r} has no summaries", "import the dataset first, or pass --name DATASET")
    return {summary_id: SummaryLayout(sentences, claims) for summary_id, sentences, claims in rows}


def source_name(path: Path, root: Path | None = None) -> str:
    """`claude-3-opus-20240229/cot` for predicted_labels/claude-3-opus-20240229/cot.json."""
    if root is not None and path.is_relative_to(root):
        return path.relative_to(root).with_suffix("").as_posix()
    if path.stem in ("cot", "justquestion"):
        return f"{path.parent.name}/{path.stem}"
    return path.stem


def describe(source: str) -> str:
    return DESCRIPTIONS.get(source.rsplit("/", 1)[-1], "Evaluator predictions.")


def load(path: Path, dataset: str, source: str, layouts: dict[str, SummaryLayout], origin: str) -> Bundle:
    """Labels of one evaluator file, attached to the summaries and units of `dataset`."""
    name = str(path)
    records = read_json(path, EXPECTED)
    if not isinstance(records, dict):
        raise InputError(name, "top level", f"found a JSON {type(records).__name__}; expected {EXPECTED}")
    bundle = Bundle(dataset)
    bundle.label_source(source, "evaluator", origin, name, describe(source))
    for summary_id, record in records.items():
        where = f"record {summary_id!r}"
        if summary_id not in layouts:
            raise InputError(
                name, where, f"no summary with this id in dataset {dataset!r}; expected StorySumm summary ids"
            )
        if not isinstance(record, dict) or not any(field in record for field in KNOWN_FIELDS):
            raise InputError(name, where, f"expected an object with at least one of {', '.join(KNOWN_FIELDS)}")
        _record(bundle, name, where, source, summary_id, record, layouts[summary_id])
    return bundle


def _label(name: str, where: str, value: Any, what: str) -> str:
    if isinstance(value, bool) or not isinstance(value, int) or value not in BINARY:
        raise InputError(name, where, f"unknown label value {value!r} in {what}; expected 0 or 1")
    return BINARY[value]


def _number(name: str, where: str, value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(name, where, f"{what} is {type(value).__name__}; expected a number")
    return float(value)


def _record(
    bundle: Bundle,
    name: str,
    where: str,
    source: str,
    summary_id: str,
    record: dict,
    layout: SummaryLayout,
) -> None:
    probs = record.get("probs")
    summary_value = _label(name, where, record["label"], "label") if "label" in record else None
    explanation = probs if isinstance(probs, str) else None
    score = None
    if probs is not None and not isinstance(probs, (str, list)):
        score = _number(name, where, probs, "probs")
    if "label" in record or score is not None:
        bundle.label(
            "summary",
            summary_id,
            summary_value,
            source=source,
            raw_value=None if "label" not in record else str(record["label"]),
            score=score,
            explanation=explanation,
        )
    for field, kind, expected in (
        ("sentence_labels", "sentence", layout.sentences),
        ("claim_labels", "claim", layout.claims),
    ):
        if field in record:
            _unit_labels(bundle, name, where, source, summary_id, (field, kind, expected), record)


def _unit_labels(
    bundle: Bundle,
    name: str,
    where: str,
    source: str,
    summary_id: str,
    what: tuple[str, str, int],
    record: dict,
) -> None:
    """One record's sentence or claim labels (`what` is field, level, expected count); a list of
    another length is skipped with a log line (the evaluator segmented the summary differently)."""
    field, kind, expected = what
    labels, probs = record[field], record.get("probs")
    if not isinstance(labels, list):
        raise InputError(name, where, f"{field} is {type(labels).__name__}; expected a list of 0/1")
    values = [_label(name, where, value, field) for value in labels]
    scores: list[float | None] = [None] * len(values)
    if kind == "sentence" and isinstance(probs, list):
        if len(probs) != len(values):
            raise InputError(
                name,
                where,
                f"{len(values)} sentence_labels but {len(probs)} probs; expected one score per sentence label",
            )
        scores = [_number(name, where, value, "probs") for value in probs]
    if len(values) != expected:
        bundle.log(
            name,
            where,
            "skip",
            (
                f"{source}: {len(values)} {field} for {expected} {kind}s (the evaluator segmented the summary "
                f"differently); {kind} labels not attached, summary label kept"
            ),
        )
        return
    for position, (value, score_value) in enumerate(zip(values, scores, strict=True)):
        bundle.label(
            kind,
            unit_id(summary_id, kind, position),
            value,
            source=source,
            raw_value=str(labels[position]),
            score=score_value,
        )
