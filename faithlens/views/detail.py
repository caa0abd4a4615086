"""One summary in full for the Explore page: its document, units labelled by a chosen source, every
tag with its source, claims grouped by claim set (the dataset's own, then each set a model extracted),
every label source's verdict and TofuEval key points (its alignments: `faithlens.views.alignments`).

The queries restrict to the summary's units before applying the `current_label` rule (latest
event per source, level and target), so the detail stays fast on a large database.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import duckdb

from faithlens.analysis.generator_names import generator_sql
from faithlens.errors import NotFoundError
from faithlens.filters import FLIPPING
from faithlens.querystate import ignored
from faithlens.store import LATEST_LABEL, fetch_all, fetch_one
from faithlens.store.claim_sets import EXTRACTION_ID, claim_set_sql, extracted_by, made_by, prompt_sql
from faithlens.views import unit_tags, unit_verdicts
from faithlens.views.states import DetailState
from faithlens.views.tag_html import Tag
from faithlens.views.unit_verdicts import UnitVerdict
from faithlens.vocab import GOLD


@dataclass(frozen=True)
class DocumentView:
    """The source a summary was written from; `text` is None when not distributed (see `text_note`)."""

    document_id: str
    title: str | None
    text: str | None
    text_note: str | None
    text_origin: str | None
    source: str | None
    split: str | None
    attributes: dict


@dataclass(frozen=True)
class SummaryView:
    summary_id: str
    document_id: str
    model: str | None
    split: str | None
    topic: str | None
    topic_type: str | None
    text: str
    general_comment: str | None
    tags: tuple[Tag, ...] = ()
    """Summary-level tags, each with its source (StorySumm's difficulty from gold, a coder's codes)."""


@dataclass(frozen=True)
class UnitView:
    """A sentence or claim with the chosen source's current label and the unit's tags (every source's).
    A claim a model extracted names its claim set (the extracting source), prompt and model."""

    unit_id: str
    kind: str
    position: int
    text: str
    label: str | None
    raw_value: str | None
    score: float | None
    explanation: str | None
    evidence: tuple[str, ...]
    reasons: tuple[str, ...]
    claim_set: str | None = None
    prompt: str | None = None
    model: str | None = None
    tags: tuple[Tag, ...] = ()


@dataclass(frozen=True)
class ClaimGroup:
    """The claims of one claim set in this summary: the dataset's own (`claim_set` None), or the claims one
    extraction call made (`draw` numbers the calls when one set extracted this summary more than once)."""

    claim_set: str | None
    prompt: str | None
    model: str | None
    draw: int | None
    claims: tuple[UnitView, ...]

    def title(self) -> str:
        return "Claims" if self.claim_set is None else f"Claims extracted by {self.claim_set}"

    def origin(self) -> str:
        """'the dataset’s own' or 'model gpt-4o, prompt fables-extract-claims@e05190aed9b5, draw 2'."""
        if self.claim_set is None:
            return "the dataset’s own"
        words = made_by((self.model,) if self.model else (), (self.prompt,) if self.prompt else ())
        return ", ".join(part for part in (words, f"draw {self.draw}" if self.draw else "") if part)

    def labels_of(self, source: str) -> str:
        """Whose labels the list shows: 'gold labels', 'gold labels 3 of 4', 'gold gives them no label'."""
        labelled = sum(1 for c in self.claims if c.label is not None or c.score is not None)
        if labelled == len(self.claims):
            return f"{source} labels"
        return f"{source} labels {labelled} of {len(self.claims)}" if labelled else f"{source} gives them no label"


def claim_groups(claims: Sequence[UnitView]) -> tuple[ClaimGroup, ...]:
    """The claims grouped by set, the dataset's own first, then each extraction in the order it was made
    (claims keep their numbers: a claim's position is one per summary across sets)."""
    groups: dict[tuple[str | None, str | None], list[UnitView]] = {}
    for claim in sorted(claims, key=lambda c: c.position):
        made = re.search(EXTRACTION_ID, claim.unit_id) if claim.claim_set else None
        extraction = f"{made[1]}.{made[2]}" if made else None
        groups.setdefault((claim.claim_set, extraction), []).append(claim)
    sets = [claim_set for claim_set, _ in groups]
    found = []
    for (claim_set, _), members in sorted(
        groups.items(), key=lambda item: (item[0][0] is not None, item[1][0].position)
    ):
        first = members[0]
        made = re.search(EXTRACTION_ID, first.unit_id)
        draw = int(made[2]) + 1 if made and claim_set and sets.count(claim_set) > 1 else None
        found.append(ClaimGroup(claim_set, first.prompt, first.model, draw, tuple(members)))
    return tuple(found)


@dataclass(frozen=True)
class SetCount:
    """One source's labels of one extracted claim set in this summary: how many unfaithful, how many labelled."""

    claim_set: str
    unfaithful: int
    labelled: int


@dataclass(frozen=True)
class SourceVerdict:
    """What one label source says about this summary: its summary label and its unit labels counted."""

    source: str
    kind: str
    description: str | None
    label: str | None
    raw_value: str | None
    score: float | None
    explanation: str | None
    unfaithful_sentences: int | None
    labelled_sentences: int
    unfaithful_claims: int | None
    """Of the dataset's own claims; claims a model extracted are counted per set in `extracted`."""
    labelled_claims: int
    extracted: tuple[SetCount, ...] = ()


@dataclass(frozen=True)
class Detail:
    """Everything the detail view shows for one summary, read in a handful of queries."""

    document: DocumentView
    summary: SummaryView
    summary_label: SourceVerdict | None
    sentences: tuple[UnitView, ...]
    claims: tuple[UnitView, ...]
    verdicts: tuple[SourceVerdict, ...]
    key_points: tuple[str, ...]
    unit_verdicts: dict[str, tuple[UnitVerdict, ...]] = field(default_factory=dict)
    """unit id -> every source's verdict on it (`faithlens.views.unit_verdicts`)."""
    flipping: frozenset[str] = frozenset()
    """Ids of this summary (and of its units) whose verdict from the chosen source flips across the
    repeats of its runs (`filters.FLIPPING`)."""

    @property
    def claim_groups(self) -> tuple[ClaimGroup, ...]:
        return claim_groups(self.claims)


def _json(value: str | None) -> dict:
    return json.loads(value) if value else {}


def _summary(cur: duckdb.DuckDBPyConnection, dataset: str, summary_id: str) -> SummaryView:
    found = fetch_one(
        cur,
        SummaryView,
        """
        SELECT s.summary_id, s.document_id, {generator} AS model, s.split, s.topic, s.topic_type, s.text,
               s.general_comment
        FROM summary s WHERE s.dataset = ? AND s.summary_id = ?
        """.format(generator=generator_sql("s")),
        [dataset, summary_id],
    )
    if found is None:
        raise NotFoundError(
            f"no summary {summary_id!r} in dataset {dataset!r}", "pick a summary from the list, or check the link"
        )
    return found


def _document(cur: duckdb.DuckDBPyConnection, dataset: str, summary: SummaryView) -> DocumentView:
    found = fetch_one(
        cur,
        DocumentView,
        """
        SELECT document_id, title, text, text_note, text_origin, source, split, attributes
        FROM document WHERE dataset = ? AND document_id = ?
        """,
        [dataset, summary.document_id],
    )
    if found is None:
        return DocumentView(summary.document_id, None, None, None, None, None, None, {})
    return replace(found, attributes=_json(found.attributes))


def load_detail(cur: duckdb.DuckDBPyConnection, dataset: str, summary_id: str, source: str = GOLD) -> Detail:
    """One summary with its document, units labelled by `source`, every source's verdict and key points. Raises NotFoundError when the summary is not in the dataset."""
    summary = _summary(cur, dataset, summary_id)
    units = _units(cur, dataset, summary_id, source)
    tags = unit_tags.load(cur, dataset, [summary_id, *(u.unit_id for u in units)])
    models = extracted_by(cur, [(dataset, u.claim_set, summary_id, u.unit_id) for u in units if u.claim_set])
    summary = replace(summary, tags=tags.get(summary_id, ()))
    units = [replace(u, tags=tags.get(u.unit_id, ()), model=models.get(u.unit_id)) for u in units]
    verdicts = _verdicts(cur, dataset, summary_id, units)
    key_points = tuple(
        row[0]
        for row in cur.execute(
            "SELECT text FROM key_point WHERE dataset = ? AND document_id = ? AND topic = ? ORDER BY position",
            [dataset, summary.document_id, summary.topic],
        ).fetchall()
    )
    return Detail(
        document=_document(cur, dataset, summary),
        summary=summary,
        summary_label=next((v for v in verdicts if v.source == source), None),
        sentences=tuple(u for u in units if u.kind == "sentence"),
        claims=tuple(u for u in units if u.kind == "claim"),
        verdicts=verdicts,
        key_points=key_points,
        unit_verdicts=unit_verdicts.load(cur, dataset, [u.unit_id for u in units]),
        flipping=_flipping(cur, dataset, source, [summary_id, *(u.unit_id for u in units)]),
    )


def _flipping(cur: duckdb.DuckDBPyConnection, dataset: str, source: str, ids: list[str]) -> frozenset[str]:
    rows = cur.execute(
        f"SELECT target_id FROM ({FLIPPING}) WHERE target_id IN (SELECT unnest(?::VARCHAR[]))", [dataset, source, ids]
    ).fetchall()
    return frozenset(row[0] for row in rows)


# The detail reads labels of one summary's units. Going through the `current_label` view would
# rank every label of the dataset before joining (about 1 s at 100x); these queries restrict to
# the summary's unit ids first and then apply the view's rule (`LATEST_LABEL`).


def _units(cur: duckdb.DuckDBPyConnection, dataset: str, summary_id: str, source: str) -> list[UnitView]:
    return fetch_all(
        cur,
        UnitView,
        f"""
        WITH units AS MATERIALIZED (
            SELECT unit_id, kind, position, text, {claim_set_sql()} AS claim_set, {prompt_sql()} AS prompt
            FROM unit WHERE dataset = ? AND summary_id = ?
        ), labels AS (
            SELECT level, target_id, value::VARCHAR AS value, raw_value, score, explanation, evidence, reasons
            FROM label WHERE dataset = ? AND source = ? AND target_id IN (SELECT unit_id FROM units) {LATEST_LABEL}
        )
        SELECT u.unit_id, u.kind, u.position, u.text, l.value AS label, l.raw_value, l.score, l.explanation,
               coalesce(l.evidence, []) AS evidence, coalesce(l.reasons, []) AS reasons, u.claim_set, u.prompt
        FROM units u
        LEFT JOIN labels l ON l.level = u.kind AND l.target_id = u.unit_id
        ORDER BY u.kind DESC, u.position
        """,
        [dataset, summary_id, dataset, source],
    )


def _verdicts(
    cur: duckdb.DuckDBPyConnection, dataset: str, summary_id: str, units: Sequence[UnitView]
) -> tuple[SourceVerdict, ...]:
    """Every source's summary label and unit labels counted: sentences, the dataset's claims, and each
    extracted claim set of the summary apart."""
    extracted = {u.unit_id: u.claim_set for u in units if u.claim_set is not None}
    rows = fetch_all(
        cur,
        SourceVerdict,
        f"""
        WITH latest AS MATERIALIZED (
            SELECT source, level, target_id, value FROM label
            WHERE dataset = ? AND level <> 'summary' AND target_id IN (SELECT unnest(?::VARCHAR[])) {LATEST_LABEL}
        ), extracted AS (
            SELECT unnest(?::VARCHAR[]) AS unit_id, unnest(?::VARCHAR[]) AS claim_set
        ), unit_labels AS (
            SELECT l.source, l.level, l.value, e.claim_set
            FROM latest l LEFT JOIN extracted e ON e.unit_id = l.target_id
        ), set_counts AS (
            SELECT source, claim_set, count(*) FILTER (value = 'unfaithful') AS unfaithful, count(value) AS labelled
            FROM unit_labels WHERE level = 'claim' AND claim_set IS NOT NULL GROUP BY ALL HAVING count(value) > 0
        ), set_lists AS (
            SELECT source, list({{'claim_set': claim_set, 'unfaithful': unfaithful, 'labelled': labelled}}
                                ORDER BY claim_set) AS extracted
            FROM set_counts GROUP BY source
        ), unit_counts AS (
            SELECT source,
                   count(*) FILTER (level = 'sentence' AND value = 'unfaithful') AS bad_sentences,
                   count(value) FILTER (level = 'sentence') AS sentences,
                   count(*) FILTER (level = 'claim' AND claim_set IS NULL AND value = 'unfaithful') AS bad_claims,
                   count(value) FILTER (level = 'claim' AND claim_set IS NULL) AS claims,
                   count(value) FILTER (level = 'claim' AND claim_set IS NOT NULL) AS extracted_claims
            FROM unit_labels GROUP BY source
        ), summary_labels AS (
            SELECT source, value::VARCHAR AS value, raw_value, score, explanation FROM label
            WHERE dataset = ? AND level = 'summary' AND target_id = ? {LATEST_LABEL}
        )
        SELECT ls.source, ls.kind, ls.description, sl.value AS label, sl.raw_value, sl.score, sl.explanation,
               CASE WHEN c.sentences > 0 THEN c.bad_sentences END AS unfaithful_sentences,
               coalesce(c.sentences, 0) AS labelled_sentences,
               CASE WHEN c.claims > 0 THEN c.bad_claims END AS unfaithful_claims,
               coalesce(c.claims, 0) AS labelled_claims,
               coalesce(x.extracted, []) AS extracted
        FROM label_source ls
        LEFT JOIN summary_labels sl ON sl.source = ls.source
        LEFT JOIN unit_counts c ON c.source = ls.source
        LEFT JOIN set_lists x ON x.source = ls.source
        WHERE ls.dataset = ? AND (sl.source IS NOT NULL OR c.sentences > 0 OR c.claims > 0 OR c.extracted_claims > 0)
        ORDER BY ls.source <> 'gold', ls.kind, ls.source
        """,
        [dataset, [u.unit_id for u in units], list(extracted), list(extracted.values()), dataset, summary_id, dataset],
    )
    return tuple(replace(row, extracted=tuple(SetCount(**count) for count in row.extracted)) for row in rows)


def resolve_selection(detail: Detail, state: DetailState) -> tuple[DetailState, list[str]]:
    """Check a link's `unit`, `sentence` and `claim` against the opened summary; say what was dropped.

    A unit id becomes the number the page shows that unit by (a sentence unit its 1-based `sentence`, a
    claim unit its `claim`: `…#c1` is C2), winning over a number that says otherwise, and leaves `unit`,
    so the URL names a claim as its label does while old links open the claim they always opened. A
    unit of another summary, or a number past the summary's sentences or claims, is dropped with a note.
    """
    summary_id = detail.summary.summary_id
    sentence, claim, notes = state.sentence, state.claim, []
    if state.unit is not None:
        found = next((u for u in (*detail.sentences, *detail.claims) if u.unit_id == state.unit), None)
        if found is None:
            notes.append(ignored("unit", state.unit, f"not a unit of summary {summary_id}, so none is selected"))
        elif found.kind == "sentence":
            sentence = found.position + 1
        else:
            claim = found.position + 1
    if sentence is not None and sentence > len(detail.sentences):
        count = f"{len(detail.sentences)} sentences" if detail.sentences else "no sentences"
        notes.append(ignored("sentence", str(sentence), f"summary {summary_id} has {count}, so none is selected"))
        sentence = None
    if claim is not None and claim_unit(detail, claim) is None:
        count = f"{len(detail.claims)} claims" if detail.claims else "no claims"
        why = f"summary {summary_id} has no claim C{claim} ({count}), so none is selected"
        notes.append(ignored("claim", str(claim), why))
        claim = None
    return replace(state, summary=summary_id, sentence=sentence, claim=claim, unit=None), notes


def claim_unit(detail: Detail, number: int | None) -> UnitView | None:
    """The claim the page calls C`number` (its position is `number` - 1, one numbering across claim sets)."""
    return next((c for c in detail.claims if c.position + 1 == number), None) if number is not None else None
