"""Expected figures computed straight from the raw files in data/, independently of faithlens.

Deliberately naive parsing (json, csv, zipfile) so the tests check the loaders, not themselves.
"""

from __future__ import annotations

import csv
import functools
import json
import zipfile
from collections import Counter
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data"
BINARY = {0: "unfaithful", 1: "faithful"}
FABLES_LABELS = {"Yes": "faithful", "No": "unfaithful", "PartialSupport": "partial", "Inapplicable": "unverifiable"}


def storysumm_records() -> dict:
    text = (DATA / "storysumm" / "storysumm.json").read_text(encoding="utf-8")
    return json.loads(text.replace('", "\n', '",\n'))


def storysumm_predictions() -> dict[str, dict]:
    root = DATA / "storysumm" / "predicted_labels"
    return {
        p.relative_to(root).with_suffix("").as_posix(): json.loads(p.read_text()) for p in sorted(root.rglob("*.json"))
    }


def storysumm_summary_in(prompt: str) -> str | None:
    """The StorySumm summary whose every sentence appears in `prompt` (the longest such), else None:
    which summary a scripted LLM server is being asked about."""
    found = [
        (sum(map(len, sentences)), summary_id)
        for summary_id, sentences in _storysumm_sentences().items()
        if all(sentence in prompt for sentence in sentences)
    ]
    return max(found)[1] if found else None


@functools.cache
def _storysumm_sentences() -> dict[str, tuple[str, ...]]:
    return {i: tuple(s.strip() for s in record["summary"]) for i, record in storysumm_records().items()}


def _gold_only(labelled: int) -> dict:
    """The `sources` entry of a dataset whose only label source is its humans' (no scores)."""
    return {"gold": {"kind": "gold", "labelled": labelled, "scored": 0}}


def storysumm_prediction_counts(records: dict, predictions: dict) -> tuple[dict[str, Counter], int]:
    """One evaluator file: label values per level (where its segmentation agrees) and its number of scores."""
    levels: dict[str, Counter] = {}
    scored = 0
    for summary_id, p in predictions.items():
        aligned = len(p.get("sentence_labels", [])) == len(records[summary_id]["summary"])
        if "label" in p:
            levels.setdefault("summary", Counter())[BINARY[p["label"]]] += 1
        if "sentence_labels" in p and aligned:
            levels.setdefault("sentence", Counter()).update(BINARY[v] for v in p["sentence_labels"])
        if "claim_labels" in p and len(p["claim_labels"]) == len(records[summary_id]["claims"]):
            levels.setdefault("claim", Counter()).update(BINARY[v] for v in p["claim_labels"])
        probs = p.get("probs")
        if isinstance(probs, (int, float)):
            scored += 1
        elif isinstance(probs, list) and aligned:
            scored += len(probs)
    return levels, scored


def storysumm_expected() -> dict:
    records = storysumm_records()
    sentence_gold: Counter = Counter()
    for record in records.values():
        if len(record["errors"]) == len(record["summary"]):
            sentence_gold.update(BINARY[e] for e in record["errors"])
    labels: dict[str, dict[str, Counter]] = {
        "gold": {"summary": Counter(BINARY[r["label"]] for r in records.values()), "sentence": sentence_gold}
    }
    sources = _gold_only(len(records) + sentence_gold.total())
    for source, predictions in storysumm_predictions().items():
        levels, scored = storysumm_prediction_counts(records, predictions)
        if levels:
            labels[source] = levels
        labelled = sum(counter.total() for counter in levels.values())
        sources[source] = {"kind": "evaluator", "labelled": labelled, "scored": scored}
    return {
        "documents": len({r["story-id"] for r in records.values()}),
        "summaries": len(records),
        "sentences": sum(len(r["summary"]) for r in records.values()),
        "claims": sum(len(r["claims"]) for r in records.values()),
        "labels": {s: {lvl: dict(c) for lvl, c in levels.items()} for s, levels in labels.items()},
        "sources": sources,
    }


def fables_books() -> dict:
    with zipfile.ZipFile(DATA / "fables" / "FABLES.json.zip") as archive:
        return json.loads(archive.read("FABLES.json"))["FABLES"]


def fables_expected() -> dict:
    books = fables_books()
    claims = [c for models in books.values() for s in models.values() for c in s["claims"].values()]
    return {
        "documents": len(books),
        "summaries": sum(len(models) for models in books.values()),
        "sentences": 0,
        "claims": len(claims),
        "labels": {"gold": {"claim": dict(Counter(FABLES_LABELS[c["label"]] for c in claims))}},
        "sources": _gold_only(len(claims)),
    }


TOFUEVAL_SLOTS_POOLED = "slots A–E pooled (the paper's five models)"


def tofueval_generator(model_name: str) -> str:
    """A raw `model_name` as FaithLens shows it: the release's README says the order of models is
    shuffled per topic, so `model_A` is a slot, not a model; Model-Extra is one model."""
    if model_name in {f"model_{letter}" for letter in "ABCDE"}:
        return f"slot {model_name[-1]} (shuffled per topic; raw: {model_name})"
    return model_name


def tofueval_group(model_name: str) -> str:
    """A raw `model_name`'s generator group: the five slots pooled (the paper's five models), or itself."""
    return TOFUEVAL_SLOTS_POOLED if tofueval_generator(model_name) != model_name else model_name


def tofueval_csv_rows() -> list[dict[str, str]]:
    """Every row of the four CSVs as published, duplicates kept, with its corpus, split and line number."""
    out = []
    for path in sorted((DATA / "tofueval" / "factual_consistency").glob("*.csv")):
        corpus, _, _, split = path.stem.split("_")
        with path.open(encoding="utf-8", newline="") as handle:
            for line, row in enumerate(csv.DictReader(handle), start=2):
                out.append({**row, "corpus": corpus, "split": split, "line": str(line)})
    return out


def tofueval_topic_types() -> dict[tuple[str, str], str]:
    """(corpus, topic) -> main or marginal, from topic_category/*.json."""
    found = {}
    for corpus in ("mediasum", "meetingbank"):
        path = DATA / "tofueval" / "topic_category" / f"{corpus}_topic_category.json"
        found |= {(corpus, topic): kind for topic, kind in json.loads(path.read_text(encoding="utf-8")).items()}
    return found


def tofueval_rows(paths: list[Path] | None = None) -> list[dict[str, str]]:
    """Every sentence row of the four CSVs (or of `paths`), exact duplicate rows removed."""
    rows, seen = [], set()
    for path in paths or sorted((DATA / "tofueval" / "factual_consistency").glob("*.csv")):
        with path.open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                key = tuple(row.values())
                if key not in seen:
                    seen.add(key)
                    rows.append(row)
    return rows


def tofueval_expected(paths: list[Path] | None = None) -> dict:
    rows = tofueval_rows(paths)
    summaries: dict[tuple, list[str]] = {}
    for row in rows:
        summaries.setdefault((row["doc_id"], row["topic"], row["model_name"]), []).append(row["sent_label"])
    as_verdict = {"yes": "faithful", "no": "unfaithful"}
    return {
        "documents": len({row["doc_id"] for row in rows}),
        "summaries": len(summaries),
        "sentences": len(rows),
        "claims": 0,
        "labels": {
            "gold": {
                "sentence": dict(Counter(as_verdict[row["sent_label"]] for row in rows)),
                "summary": dict(
                    Counter("unfaithful" if "no" in labels else "faithful" for labels in summaries.values())
                ),
            }
        },
        "sources": _gold_only(len(rows) + len(summaries)),
    }


def tofueval_typed_sentences() -> list[dict]:
    """Every distinct sentence row of the four CSVs with its topic type, generator group and set of gold
    error types (the `type` column, comma-separated)."""
    categories = tofueval_topic_types()
    out = []
    for path in sorted((DATA / "tofueval" / "factual_consistency").glob("*.csv")):
        corpus = path.name.split("_", 1)[0]
        for row in tofueval_rows([path]):
            out.append(
                {
                    "topic_type": categories[(corpus, row["topic"])],
                    "generator_group": tofueval_group(row["model_name"]),
                    "types": {part.strip() for part in row["type"].split(",") if part.strip()},
                }
            )
    return out
