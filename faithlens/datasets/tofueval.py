"""TofuEval (Tang et al., 2024): topic-focused dialogue summaries with sentence labels.

Raw format: `factual_consistency/{source}_factual_eval_{split}.csv` (one row per summary
sentence), `topic_category/{source}_topic_category.json` (topic -> main/marginal) and
`completeness/{source}_completeness_final.csv` (key points). A summary is (doc_id, topic,
model_name); its sentences are ordered by sent_idx. The file name says the corpus and split; a copy under another name needs
them given (`corpus`, `split`). Summary labels are derived as the paper
does: a summary is unfaithful if any of its sentences is. Transcripts are not distributed;
`tofueval_docs` attaches them from a user's `doc_id,source` CSV.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

from faithlens.datasets.bundle import Bundle
from faithlens.datasets.readers import read_csv, read_json
from faithlens.errors import InputError
from faithlens.vocab import GOLD

FORMAT = "tofueval"
LICENSE = "MIT-0 (data/tofueval/LICENSE); source dialogues under their own terms (data/tofueval/THIRD-PARTY-LICENSES)"
CITATION = (
    "Liyan Tang, Igor Shalyminov, Amy Wing-mei Wong, Jon Burnsky, Jake W. Vincent, Yu'an Yang, Siffi Singh, "
    "Song Feng, Hwanjun Song, Hang Su, Lijia Sun, Yi Zhang, Saab Mansour, Kathleen McKeown. TofuEval: Evaluating "
    "Hallucinations of LLMs on Topic-Focused Dialogue Summarization. NAACL 2024."
)
DESCRIPTION = "Topic-focused summaries of 100 MediaSum and MeetingBank dialogues by 6 anonymised LLMs, with sentence labels and error types."
COLUMNS = ("doc_id", "annotation_id", "topic", "model_name", "sent_idx", "summ_sent", "sent_label", "exp", "type")
LABELS = {"yes": "faithful", "no": "unfaithful"}
ERROR_TYPES = (
    "Extrinsic Information",
    "Mis-Referencing",
    "Stating Opinion as Fact",
    "Reasoning Error",
    "Tense/Modality Error",
    "Contradiction",
    "Nuanced Meaning Shift",
)
NO_TEXT = (
    "TofuEval does not distribute the dialogue transcripts (licensing). If you have them, import a CSV of "
    "doc_id,source with `python -m faithlens import FILE --format tofueval-docs`."
)
CORPORA = ("mediasum", "meetingbank")
SPLITS = ("dev", "test")
_FILE = re.compile(r"(?P<corpus>[a-z]+)_factual_eval_(?P<split>[a-z]+)\.csv$")


def load(path: Path, dataset: str = FORMAT, corpus: str | None = None, split: str | None = None) -> Bundle:
    """Load the TofuEval folder, or one factual-consistency CSV with its sibling folders; `corpus`
    and `split` say what a CSV holds when its name does not."""
    if path.is_dir():
        if corpus or split:
            raise InputError(str(path), "", "is a folder; expected one CSV file when a corpus or split is given")
        named = sorted((path / "factual_consistency").glob("*_factual_eval_*.csv"))
        files = [(file, corpus_and_split(file)) for file in named]
    else:
        files = [(path, corpus_and_split(path, corpus, split))]
    if not files:
        raise InputError(
            str(path), "", "no factual_consistency/*_factual_eval_*.csv files; expected the TofuEval folder"
        )
    root = path if path.is_dir() else path.parent.parent
    bundle = Bundle(dataset)
    documents: dict[str, tuple[str, str]] = {}
    for file, (source, file_split) in files:
        _load_file(bundle, (file, source, file_split), root, documents)
    for source in sorted({source for source, _ in documents.values()}):
        _load_key_points(bundle, root / "completeness" / f"{source}_completeness_final.csv", documents)
    bundle.label_source(
        GOLD,
        "gold",
        "bundled",
        str(files[0][0].parent),
        "Expert annotators' sentence labels; summary label unfaithful if any sentence is (TofuEval paper).",
    )
    return bundle


def _topic_types(bundle: Bundle, name: str, root: Path, source: str) -> dict[str, str] | None:
    """topic -> main/marginal from topic_category/ beside the CSV's folder; None (logged once) without it."""
    path = root / "topic_category" / f"{source}_topic_category.json"
    if not path.is_file():
        bundle.log(name, "", "note", f"no {path}: topics have no main/marginal type")
        return None
    categories = read_json(path, "a JSON object mapping topic to main or marginal")
    if not isinstance(categories, dict) or not all(value in ("main", "marginal") for value in categories.values()):
        raise InputError(str(path), "top level", "expected a JSON object mapping each topic to main or marginal")
    return categories


Rows = dict[int, tuple[int, dict[str, str]]]
"""One summary's sentence rows: sent_idx -> (file line, CSV row)."""


def _group_rows(bundle: Bundle, name: str, rows: list[tuple[int, dict[str, str]]]) -> dict[tuple[str, str, str], Rows]:
    """Rows grouped by summary (doc_id, topic, model_name), checked; an exact repeat is dropped and logged."""
    summaries: dict[tuple[str, str, str], Rows] = defaultdict(dict)
    for line, row in rows:
        key = (row["doc_id"], row["topic"], row["model_name"])
        if not row["sent_idx"].isdigit():
            raise InputError(name, f"line {line}", f"sent_idx {row['sent_idx']!r}; expected a positive integer")
        if row["sent_label"] not in LABELS:
            raise InputError(
                name, f"line {line}", f"unknown label value {row['sent_label']!r} in sent_label; expected yes or no"
            )
        index = int(row["sent_idx"])
        earlier = summaries[key].get(index)
        if earlier is not None:
            if earlier[1] != row:
                raise InputError(
                    name,
                    f"line {line}",
                    f"duplicate sentence {index} of {key[0]} / {key[2]} / {key[1]} (first at line {earlier[0]}) with different content; expected one row per sentence",
                )
            bundle.log(name, f"line {line}", "repair", f"exact repeat of line {earlier[0]} dropped")
            continue
        summaries[key][index] = (line, row)
    return summaries


def corpus_and_split(file: Path, corpus: str | None = None, split: str | None = None) -> tuple[str, str]:
    """What `file` holds, from its name (`<corpus>_factual_eval_<split>.csv`) or from the options."""
    name = str(file)
    for what, value, allowed in (("corpus", corpus, CORPORA), ("split", split, SPLITS)):
        if value is not None and value not in allowed:
            raise InputError(name, "", f"unknown {what} {value!r}; expected one of {', '.join(allowed)}")
    match = _FILE.search(file.name)
    if match is None:
        if corpus is None or split is None:
            raise InputError(
                name,
                "",
                "the file name does not say the corpus and split; expected a name like mediasum_factual_eval_dev.csv"
                " or the options --corpus mediasum|meetingbank --split dev|test",
            )
        return corpus, split
    for what, value in (("corpus", corpus), ("split", split)):
        if value is not None and value != match[what]:
            raise InputError(
                name, "", f"the file name says {what} {match[what]!r} but {value!r} was given; expected them to agree"
            )
    return match["corpus"], match["split"]


def _load_file(bundle: Bundle, what: tuple[Path, str, str], root: Path, documents: dict[str, tuple[str, str]]) -> None:
    """One factual-consistency CSV (`what` is the file, its corpus and split): summaries, sentences, documents."""
    file, source, split = what
    name = str(file)
    topic_types = _topic_types(bundle, name, root, source)
    for (doc_id, topic, model), sentences in _group_rows(bundle, name, read_csv(file, COLUMNS)).items():
        known = documents.setdefault(doc_id, (source, split))
        if known != (source, split):
            raise InputError(
                name, f"doc_id {doc_id!r}", f"already seen in {known[0]} {known[1]}; expected each document in one file"
            )
        summary_id = f"{doc_id} / {model} / {topic}"
        topic_type = None if topic_types is None else topic_types.get(topic)
        if topic_types is not None and topic_type is None:
            bundle.log(name, f"summary {summary_id!r}", "note", f"topic {topic!r} has no main/marginal category")
        _summary(bundle, name, summary_id, (doc_id, topic, model, split), topic_type, sentences)
    for doc_id, (doc_source, doc_split) in documents.items():
        if doc_source == source and doc_split == split:
            bundle.add(
                "document",
                document_id=doc_id,
                title=doc_id,
                text=None,
                text_note=NO_TEXT,
                source=source,
                split=split,
            )


def _summary(
    bundle: Bundle,
    name: str,
    summary_id: str,
    where: tuple[str, str, str, str],
    topic_type: str | None,
    sentences: Rows,
) -> None:
    """One summary, its sentences with labels and error types, and its derived summary label.
    `where` is (doc_id, topic, model, split)."""
    doc_id, topic, model, split = where
    indices = sorted(sentences)
    if indices != list(range(1, len(indices) + 1)):
        bundle.log(
            name,
            f"summary {summary_id!r}",
            "note",
            f"sent_idx {indices} as published: some sentences were not annotated; kept in sent_idx order",
        )
    ordered = [sentences[index] for index in indices]
    bundle.add(
        "summary",
        summary_id=summary_id,
        document_id=doc_id,
        model=model,
        split=split,
        topic=topic,
        topic_type=topic_type,
        text=" ".join(row["summ_sent"] for _, row in ordered),
        attributes={"annotation_id": ordered[0][1]["annotation_id"]},
    )
    values = [_sentence(bundle, name, summary_id, position, line, row) for position, (line, row) in enumerate(ordered)]
    unfaithful = "unfaithful" in values
    bundle.label(
        "summary",
        summary_id,
        "unfaithful" if unfaithful else "faithful",
        raw_value="derived: any sentence no" if unfaithful else "derived: all sentences yes",
    )


def _sentence(bundle: Bundle, name: str, summary_id: str, position: int, line: int, row: dict[str, str]) -> str:
    """One sentence with its label and error types; returns the label."""
    target = bundle.unit(summary_id, "sentence", position, row["summ_sent"], sent_idx=int(row["sent_idx"]))
    value = LABELS[row["sent_label"]]
    bundle.label("sentence", target, value, raw_value=row["sent_label"], explanation=row["exp"] or None)
    for error_type in dict.fromkeys(part.strip() for part in row["type"].split(",") if part.strip()):
        if error_type not in ERROR_TYPES:
            raise InputError(
                name, f"line {line}", f"unknown error type {error_type!r}; expected one of {', '.join(ERROR_TYPES)}"
            )
        bundle.tag("sentence", target, "error_type", error_type)
    return value


def _load_key_points(bundle: Bundle, path: Path, documents: dict[str, tuple[str, str]]) -> None:
    if not path.is_file():
        return
    name = str(path)
    for line, row in read_csv(path, ("doc_id", "topic", "key_points")):
        if row["doc_id"] not in documents:
            continue
        if not row["key_points"].strip():
            bundle.log(name, f"line {line}", "note", f"no key points for {row['doc_id']} / {row['topic']}")
            continue
        try:
            points = ast.literal_eval(row["key_points"])
        except (ValueError, SyntaxError):
            raise InputError(
                name, f"line {line}", "key_points is not a list literal; expected ['1. ...', '2. ...']"
            ) from None
        if not isinstance(points, list) or not all(isinstance(point, str) for point in points):
            raise InputError(name, f"line {line}", "key_points is not a list of strings")
        for position, point in enumerate(points):
            bundle.add("key_point", document_id=row["doc_id"], topic=row["topic"], position=position, text=point)
