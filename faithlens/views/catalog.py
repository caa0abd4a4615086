"""What is loaded: datasets with their counts and label distributions (CLI `stats`, sidebar, Overview)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

import duckdb

from faithlens.store import LATEST_LABEL, claim_sets, fetch_all
from faithlens.store.claim_sets import ClaimSet, claim_set_sql


@dataclass(frozen=True)
class DatasetInfo:
    """One loaded dataset and how much of it there is."""

    name: str
    format: str
    origin: str
    description: str | None
    license: str | None
    citation: str | None
    documents: int
    documents_with_text: int
    summaries: int
    sentences: int
    claims: int
    """The dataset's own claims; claims a model extracted are counted apart (`claim_sets`)."""
    label_sources: int = 0
    extracted_claims: int = 0
    claim_sets: tuple[ClaimSet, ...] = ()
    """The sets of claims models extracted (`faithlens.store.claim_sets`), named and counted apart."""

    def extracted_words(self) -> list[str]:
        """'4 claims extracted by SOURCE', one per extracted set."""
        return [claim_set.short() for claim_set in self.claim_sets]


def default_dataset(datasets: list[DatasetInfo]) -> str | None:
    """The dataset a first visit opens: the richest, i.e. the one with the most label sources to
    compare (then the most units), not the first by name."""
    if not datasets:
        return None
    return max(datasets, key=lambda d: (d.label_sources, d.sentences + d.claims)).name


def list_datasets(cur: duckdb.DuckDBPyConnection, name: str | None = None) -> list[DatasetInfo]:
    """Every dataset (or only `name`), bundled ones first, with document/summary/unit counts (one
    grouped count per table, joined: a third of the time of a correlated count per dataset), the
    dataset's own claims apart from the sets models extracted (read, named, only where there are some)."""
    found = fetch_all(
        cur,
        DatasetInfo,
        """
        WITH documents AS (
            SELECT dataset, count(*) AS documents, count(text) AS with_text FROM document GROUP BY dataset
        ), summaries AS (
            SELECT dataset, count(*) AS summaries FROM summary GROUP BY dataset
        ), units AS (
            SELECT dataset, count(*) FILTER (kind = 'sentence') AS sentences,
                   count(*) FILTER (kind = 'claim' AND {extracted} IS NULL) AS claims,
                   count(*) FILTER (kind = 'claim' AND {extracted} IS NOT NULL) AS extracted_claims
            FROM unit GROUP BY dataset
        ), sources AS (
            SELECT dataset, count(*) AS label_sources FROM label_source GROUP BY dataset
        )
        SELECT d.name, d.format, d.origin, d.description, d.license, d.citation,
               coalesce(documents, 0) AS documents, coalesce(with_text, 0) AS documents_with_text,
               coalesce(summaries, 0) AS summaries, coalesce(sentences, 0) AS sentences,
               coalesce(claims, 0) AS claims, coalesce(label_sources, 0) AS label_sources,
               coalesce(extracted_claims, 0) AS extracted_claims
        FROM dataset d
        LEFT JOIN documents ON documents.dataset = d.name
        LEFT JOIN summaries ON summaries.dataset = d.name
        LEFT JOIN units ON units.dataset = d.name
        LEFT JOIN sources ON sources.dataset = d.name
        WHERE ? IS NULL OR d.name = ?
        ORDER BY d.origin = 'import', d.name
        """.format(extracted=claim_set_sql()),
        [name, name],
    )
    if not any(info.extracted_claims for info in found):
        return found
    sets = claim_sets.by_dataset(cur, name, extracted_only=True)
    return [replace(info, claim_sets=tuple(sets.get(info.name, []))) for info in found]


def label_counts(cur: duckdb.DuckDBPyConnection, dataset: str | None = None) -> list[tuple[str, str, str, str, int]]:
    """(dataset, source, level, value, n) over current labels that carry a value."""
    sql = """
        SELECT dataset, source, level, value::VARCHAR, count(*)
        FROM current_label
        WHERE value IS NOT NULL AND (? IS NULL OR dataset = ?)
        GROUP BY ALL ORDER BY ALL
    """
    return cur.execute(sql, [dataset, dataset]).fetchall()


def extracted_label_counts(
    cur: duckdb.DuckDBPyConnection, dataset: str | None = None
) -> list[tuple[str, str, str, str | None, int, int]]:
    """(dataset, source, claim set, value, n, scored) over current labels of claims a model extracted:
    the part of `label_counts`' claim level that is not the dataset's own claims. The extracted claims
    are few, so their labels are counted on their own rather than by joining every label to its unit."""
    sql = f"""
        WITH extracted AS MATERIALIZED (
            SELECT dataset, unit_id, {claim_set_sql()} AS claim_set FROM unit
            WHERE kind = 'claim' AND (? IS NULL OR dataset = ?) AND attributes IS NOT NULL
              AND {claim_set_sql()} IS NOT NULL
        ), latest AS (
            SELECT dataset, source, target_id, value::VARCHAR AS value, score FROM label
            WHERE level = 'claim' AND (? IS NULL OR dataset = ?) AND target_id IN (SELECT unit_id FROM extracted)
            {LATEST_LABEL}
        )
        SELECT l.dataset, l.source, e.claim_set, l.value, count(*), count(l.score)
        FROM latest l JOIN extracted e ON e.dataset = l.dataset AND e.unit_id = l.target_id
        GROUP BY ALL ORDER BY ALL
    """
    return cur.execute(sql, [dataset, dataset, dataset, dataset]).fetchall()


def source_counts(cur: duckdb.DuckDBPyConnection) -> list[tuple[str, str, str, int, int]]:
    """(dataset, source, kind, labelled, scored) for every label source, score-only ones and empty
    ones included: how many current labels carry a value, and how many a score."""
    sql = """
        SELECT s.dataset, s.source, s.kind, count(l.value), count(l.score)
        FROM label_source s
        LEFT JOIN current_label l ON l.dataset = s.dataset AND l.source = s.source
        GROUP BY ALL ORDER BY ALL
    """
    return cur.execute(sql).fetchall()


def _label_tables(cur: duckdb.DuckDBPyConnection) -> tuple[dict[str, dict], dict[str, dict]]:
    """(labels, extracted labels) per dataset: source -> level -> value -> n over the dataset's own units,
    and source -> claim set -> value -> n over the claims models extracted."""
    counts: Counter[tuple[str, str, str, str]] = Counter()
    for dataset, source, level, value, n in label_counts(cur):
        counts[dataset, source, level, value] += n
    extracted: dict[str, dict] = {}
    for dataset, source, claim_set, value, n, _scored in extracted_label_counts(cur):
        if value is not None:
            counts[dataset, source, "claim", value] -= n
            extracted.setdefault(dataset, {}).setdefault(source, {}).setdefault(claim_set, {})[value] = n
    labels: dict[str, dict] = {}
    for (dataset, source, level, value), n in sorted(counts.items()):
        if n:
            labels.setdefault(dataset, {}).setdefault(source, {}).setdefault(level, {})[value] = n
    return labels, extracted


def stats(cur: duckdb.DuckDBPyConnection) -> dict[str, dict]:
    """The `stats --json` document per dataset: counts (`claims` the dataset's own, `extracted_claims` each
    set a model extracted), label distributions (`labels`: source -> level -> value -> n, the claim level
    over the dataset's own claims; `extracted_labels`: source -> claim set -> value -> n) and every label
    source with its labelled and scored counts (`sources`)."""
    labels, extracted = _label_tables(cur)
    out: dict[str, dict] = {}
    for info in list_datasets(cur):
        out[info.name] = {
            "documents": info.documents,
            "summaries": info.summaries,
            "sentences": info.sentences,
            "claims": info.claims,
            "extracted_claims": [claim_set.as_json() for claim_set in info.claim_sets],
            "labels": labels.get(info.name, {}),
            "extracted_labels": extracted.get(info.name, {}),
            "sources": {},
        }
    for dataset, source, kind, labelled, scored in source_counts(cur):
        out[dataset]["sources"][source] = {"kind": kind, "labelled": labelled, "scored": scored}
    return out
