"""The tags of one summary and its sentences and claims, every tag source named: TofuEval's error types
and StorySumm's difficulty (gold), a coder's ambiguity types or codebook codes (`coding/<session>/<coder>`),
a model's (`llm/arm-ambiguity-type/<model>`). A code shows its name from the codebook that made it
(ambiguity type `2` is "Detail"), and a tag the Explore filters asked for is marked, so after a Tags
filter the reader sees which sentence or claim matched.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import duckdb

from faithlens.coding import library
from faithlens.coding.codebook import Codebook
from faithlens.errors import NotFoundError
from faithlens.filters import Filters
from faithlens.store import fetch_all
from faithlens.unit_filter import TAG_SEPARATOR
from faithlens.views.tag_html import Tag

ERROR_TYPE = "error_type"
DIFFICULTY = "difficulty"


def load(cur: duckdb.DuckDBPyConnection, dataset: str, targets: Sequence[str]) -> dict[str, tuple[Tag, ...]]:
    """target id (a summary or unit id) -> its tags by family, source, value; each code named by its codebook."""
    rows = fetch_all(
        cur,
        _Row,
        """
        SELECT t.target_id, t.kind, t.value, t.source, ls.codebook
        FROM tag t LEFT JOIN label_source ls ON ls.dataset = t.dataset AND ls.source = t.source
        WHERE t.dataset = ? AND t.target_id IN (SELECT unnest(?::VARCHAR[]))
        ORDER BY t.kind, t.source <> 'gold', t.source, t.value
        """,
        [dataset, list(targets)],
    )
    books = _codebooks(cur, {row.codebook for row in rows if row.codebook})
    found: dict[str, list[Tag]] = {}
    for row in rows:
        name = _code_name(books.get(row.codebook) or _family_book(row.kind), row.value)
        found.setdefault(row.target_id, []).append(Tag(row.kind, row.value, row.source, name))
    return {target: tuple(tags) for target, tags in found.items()}


@dataclass(frozen=True)
class _Row:
    target_id: str
    kind: str
    value: str
    source: str
    codebook: str | None


def _codebooks(cur: duckdb.DuckDBPyConnection, labels: Iterable[str]) -> dict[str, Codebook]:
    """The codebooks sources name (`name@version`); one the database no longer holds is left out."""
    books = {}
    for label in labels:
        name, _, version = label.partition("@")
        try:
            books[label] = library.get(cur, name, version or None)
        except NotFoundError:
            continue
    return books


def _family_book(kind: str) -> Codebook | None:
    """The built-in codebook of a tag family, which names a model's codes of that family too (ARM's types)."""
    return next((book for book in library.builtin().values() if book.family == kind), None)


def _code_name(book: Codebook | None, value: str) -> str | None:
    """The code's name when its codebook gives one that says more than the value itself."""
    if book is None or value not in book.keys:
        return None
    name = book.code(value).name
    return name if name.casefold() != value.casefold() else None


Asked = frozenset[tuple[str, str | None]]
"""(`family: value`, the one source it must come from or None for any) of each tag a filter asks for."""


def asked_for(filters: Filters, unit: bool = True) -> Asked:
    """The tags the filters ask for: error types, difficulty and other tags from any source, and (unless
    not `unit`) the unit filter's tags, from its `tagged_by` source when it names one."""
    items = {f"{ERROR_TYPE}{TAG_SEPARATOR}{value}" for value in filters.error_types} | set(filters.tags)
    if filters.difficulty is not None:
        items.add(f"{DIFFICULTY}{TAG_SEPARATOR}{filters.difficulty}")
    asked = {(item, None) for item in items}
    if unit and filters.unit.active:
        asked |= {(item, filters.unit.tagged_by) for item in filters.unit.unit_tags}
    return frozenset(asked)


def marked(tags: Sequence[Tag], asked: Asked) -> tuple[Tag, ...]:
    """`tags` with those the filters asked for marked as hits."""
    return tuple(replace(tag, hit=(tag.item, None) in asked or (tag.item, tag.source) in asked) for tag in tags)
