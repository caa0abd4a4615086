"""Counts behind the Errors page: how the values of a tag family (TofuEval's error types, StorySumm's
difficulty, ARM's ambiguity types, a coder's codes) or of one source's verdicts spread over the units
of a level, per generator, topic type, corpus or split; which values share a unit; and, for each
value, the labels other sources give the units carrying it (the recall of TofuEval Figure 4).

A *family* is a tag kind at one level (`error_type` on sentences) or `verdict:SOURCE`, the current
labels of one label source at one level (FABLES' gold verdicts per summarizer). A unit *carries* a
value when a tag of that kind and value is on it (from `tagged_by` when set, else from any source),
or when the source's current label is that value. Pages and the CLI count the dataset's own (gold)
tags unless asked otherwise (`Family.default_tagged_by`), so mixing in a coder's or a model's tags
is an explicit choice. Nothing here computes a metric; SQL uses named
parameters only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import duckdb

from faithlens.analysis.generator_names import generator_sql, group_sql
from faithlens.analysis.mapping import FAITHFUL, UNFAITHFUL, Mapping
from faithlens.errors import NotFoundError
from faithlens.store import LATEST_LABEL, execute_named, natural_key
from faithlens.vocab import GOLD

if TYPE_CHECKING:
    # Imported where a frame is built: the CLI's `errors --help` reads DIMENSIONS and loads no pandas.
    import pandas as pd

VERDICT_PREFIX = "verdict:"
ANY_SOURCE = "any"
"""The tag-source choice that counts every source's tags (the URL's and the CLI's `tagged_by=any`)."""
DIMENSIONS: dict[str, str] = {
    "generator": generator_sql("s"),
    "generator_group": group_sql("s"),
    "topic_type": "s.topic_type",
    "corpus": "d.source",
    "split": "s.split",
}
"""What a distribution can be broken down by, as SQL over summary `s` and its document `d`;
`generator_group` pools the generators a release shuffles per topic (TofuEval's slots A–E)."""


@dataclass(frozen=True)
class Family:
    """A family of values at one level, and what the dataset has of it."""

    name: str
    level: str
    units: int
    values: tuple[str, ...]
    sources: tuple[str, ...]
    """Who put the tags there (the label source itself for a verdict family)."""

    @property
    def verdicts_of(self) -> str | None:
        """The label source of a verdict family, else None."""
        return self.name.removeprefix(VERDICT_PREFIX) if self.name.startswith(VERDICT_PREFIX) else None

    @property
    def key(self) -> str:
        """`error_type@sentence`: one choice on the page."""
        return f"{self.name}@{self.level}"

    @property
    def default_tagged_by(self) -> str | None:
        """Whose tags count unless another choice is made: the dataset's own (gold) when gold
        provides the family, so a lab's pilot coding or a model's tags never move a published
        figure unasked; else every source's (None)."""
        return GOLD if self.verdicts_of is None and GOLD in self.sources else None

    def tagged_by(self, wanted: str | None) -> str | None:
        """The tag source to count for a choice: None (the default), ANY_SOURCE (every source:
        returns None) or one of `sources`; another name is a NotFoundError."""
        if wanted is None:
            return self.default_tagged_by
        if wanted == ANY_SOURCE:
            return None
        if self.verdicts_of is None and wanted in self.sources:
            return wanted
        where = f"the verdicts of {self.verdicts_of} are not tags" if self.verdicts_of else "no tag of it comes from it"
        choices = ", ".join((*self.sources, ANY_SOURCE)) if self.verdicts_of is None else ANY_SOURCE
        raise NotFoundError(f"{wanted!r} cannot be the tag source of {self.name}: {where}", f"choose {choices}")

    def file_suffix(self, tagged_by: str | None) -> str:
        """'_tagged-by-gold', '_tagged-by-any': whose tags a CSV counts, for its file name ('' for verdicts)."""
        if self.verdicts_of is not None:
            return ""
        return "_tagged-by-" + re.sub(r"[^A-Za-z0-9_-]+", "-", tagged_by or ANY_SOURCE)

    def sources_counted(self, tagged_by: str | None) -> str:
        """Whose tags a figure counts, in words: 'gold', 'any source (coding/x/ann, gold)'."""
        if self.verdicts_of is not None:
            return f"the verdicts of {self.verdicts_of}"
        return tagged_by if tagged_by is not None else f"any source ({', '.join(self.sources)})"


_FAMILIES = f"""
SELECT kind AS name, level, count(DISTINCT target_id) AS units, list(DISTINCT value ORDER BY value) AS vals,
       list(DISTINCT source ORDER BY source) AS sources
FROM tag WHERE dataset = $dataset GROUP BY kind, level
UNION ALL
SELECT '{VERDICT_PREFIX}' || source, level, count(*), list(DISTINCT value ORDER BY value), [source]
FROM (SELECT source, level, target_id, value::VARCHAR AS value FROM current_label
      WHERE dataset = $dataset AND value IS NOT NULL)
GROUP BY source, level
"""


def families(cur: duckdb.DuckDBPyConnection, dataset: str) -> list[Family]:
    """Every tag family and every source's verdicts in `dataset`: tag families first (most units
    first), then verdicts (gold first)."""
    rows = execute_named(cur, _FAMILIES, {"dataset": dataset}).fetchall()
    found = [Family(name, level, units, tuple(values), tuple(sources)) for name, level, units, values, sources in rows]
    return sorted(
        found,
        key=lambda f: (f.verdicts_of is not None, f.verdicts_of != "gold", -f.units if not f.verdicts_of else 0, f.key),
    )


def _carried(family: Family) -> str:
    """SQL of the distinct (target_id, value) the family puts on units of its level."""
    if family.verdicts_of is not None:
        return (
            "SELECT target_id, value FROM (SELECT target_id, value::VARCHAR AS value FROM label "
            f"WHERE dataset = $dataset AND source = $family_source AND level = $level {LATEST_LABEL}) "
            "WHERE value IS NOT NULL"
        )
    return (
        "SELECT DISTINCT target_id, value FROM tag WHERE dataset = $dataset AND level = $level AND kind = $family "
        "AND ($tagged_by IS NULL OR source = $tagged_by)"
    )


def _frame(level: str, dimension: str | None) -> str:
    """SQL of every unit of `level` (target_id) with its group under `dimension` (NULL when none)."""
    group = DIMENSIONS[dimension] if dimension else "NULL"
    documents = "LEFT JOIN document d ON d.dataset = s.dataset AND d.document_id = s.document_id"
    if level == "summary":
        return f"SELECT s.summary_id AS target_id, {group} AS grp, s.split FROM summary s {documents} WHERE s.dataset = $dataset"
    return (
        f"SELECT u.unit_id AS target_id, {group} AS grp, s.split FROM unit u JOIN summary s "
        f"ON s.dataset = u.dataset AND s.summary_id = u.summary_id {documents} "
        "WHERE u.dataset = $dataset AND u.kind = $level"
    )


def _params(dataset: str, family: Family, tagged_by: str | None) -> dict[str, object]:
    return {
        "dataset": dataset,
        "level": family.level,
        "family": family.name,
        "family_source": family.verdicts_of,
        "tagged_by": tagged_by,
    }


@dataclass(frozen=True)
class Spread:
    """A family's values over the groups of a dimension: `cells` has one row per (value, group) with
    the units carrying it; `groups` one row per group, in natural order, with `tagged` (units
    carrying any value of the family) and `units` (every unit of the level). A NULL group is '' (no
    value recorded)."""

    cells: pd.DataFrame
    groups: pd.DataFrame


_SPREAD = """
WITH carried AS MATERIALIZED ({carried}), frame AS MATERIALIZED ({frame})
SELECT * FROM (
SELECT c.value, coalesce(f.grp, '') AS grp, count(*) AS units, NULL AS total
FROM carried c JOIN frame f USING (target_id) GROUP BY ALL
UNION ALL
SELECT NULL, coalesce(f.grp, ''), count(*) FILTER (target_id IN (SELECT target_id FROM carried)), count(*)
FROM frame f GROUP BY ALL
) ORDER BY value NULLS FIRST, {group_order}
"""


def spread(
    cur: duckdb.DuckDBPyConnection, dataset: str, family: Family, dimension: str | None, tagged_by: str | None = None
) -> Spread:
    """The family's values over the groups of `dimension` (one group '' when None)."""
    sql = _SPREAD.format(
        carried=_carried(family), frame=_frame(family.level, dimension), group_order=natural_key("grp")
    )
    import pandas as pd

    rows = execute_named(cur, sql, _params(dataset, family, tagged_by)).fetchall()
    cells = pd.DataFrame([r[:3] for r in rows if r[0] is not None], columns=["value", "group", "units"])
    groups = pd.DataFrame([r[1:] for r in rows if r[0] is None], columns=["group", "tagged", "units"])
    return Spread(cells, groups)


_TOGETHER = """
WITH carried AS MATERIALIZED ({carried})
SELECT a.value AS first, b.value AS second, count(*) AS units FROM carried a JOIN carried b USING (target_id)
GROUP BY ALL ORDER BY ALL
"""


def together(
    cur: duckdb.DuckDBPyConnection, dataset: str, family: Family, tagged_by: str | None = None
) -> pd.DataFrame:
    """Units carrying both values of each pair (the diagonal: units carrying the value)."""
    import pandas as pd

    sql = _TOGETHER.format(carried=_carried(family))
    rows = execute_named(cur, sql, _params(dataset, family, tagged_by)).fetchall()
    return pd.DataFrame(rows, columns=["first", "second", "units"])


_MAPPED = """CASE WHEN list_contains($unfaithful::VARCHAR[], value::VARCHAR) THEN 'unfaithful'
                 WHEN list_contains($faithful::VARCHAR[], value::VARCHAR) THEN 'faithful' END"""

_JUDGED = """
WITH carried AS MATERIALIZED ({carried}),
typed AS (SELECT target_id, count(*) AS types FROM carried GROUP BY target_id),
positives AS MATERIALIZED (
    SELECT target_id FROM (
        SELECT target_id, value FROM label WHERE dataset = $dataset AND source = $reference AND level = $level
          AND target_id IN (SELECT target_id FROM carried) {latest})
    WHERE list_contains($unfaithful::VARCHAR[], value::VARCHAR)
),
judged AS (
    SELECT source, target_id, {mapped} AS verdict, score FROM label
    WHERE dataset = $dataset AND level = $level AND list_contains($sources::VARCHAR[], source)
      AND target_id IN (SELECT target_id FROM carried) {latest}
),
frame AS ({frame})
SELECT c.value, j.source, coalesce(f.split, '') AS split, j.verdict, j.score, t.types, count(*) AS n
FROM carried c JOIN typed t USING (target_id) JOIN judged j USING (target_id) JOIN frame f USING (target_id)
WHERE ($reference IS NULL OR c.target_id IN (SELECT target_id FROM positives))
  AND (j.verdict IS NOT NULL OR j.score IS NOT NULL)
GROUP BY ALL
"""
JUDGED_COLUMNS = ["value", "source", "split", "verdict", "score", "types", "n"]


def judged(
    cur: duckdb.DuckDBPyConnection,
    dataset: str,
    family: Family,
    sources: list[str],
    reference: str | None,
    mapping: Mapping,
    tagged_by: str | None = None,
) -> pd.DataFrame:
    """For each value and compared source: the units carrying the value (that `reference` labels
    unfaithful after the mapping, when given) counted by the source's verdict after the mapping (or
    its score), the unit's split and how many values of the family the unit carries."""
    sql = _JUDGED.format(
        carried=_carried(family), latest=LATEST_LABEL, mapped=_MAPPED, frame=_frame(family.level, None)
    )
    params = {
        **_params(dataset, family, tagged_by),
        "reference": reference,
        "sources": sources,
        "faithful": mapping.values_to(FAITHFUL),
        "unfaithful": mapping.values_to(UNFAITHFUL),
    }
    import pandas as pd

    return pd.DataFrame(execute_named(cur, sql, params).fetchall(), columns=JUDGED_COLUMNS)
