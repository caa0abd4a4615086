"""SQL pieces shared by every reader: the `current_label` rule, named parameters, and query rows
turned into dataclasses by column name (so a column added to a query cannot shift the others)."""

from __future__ import annotations

import re
from dataclasses import MISSING, fields
from functools import cache
from typing import Any, TypeVar

import duckdb

T = TypeVar("T")

LATEST_LABEL = "QUALIFY row_number() OVER (PARTITION BY dataset, source, level, target_id ORDER BY event_id DESC) = 1"
"""The `current_label` rule: the latest event per (dataset, source, level, target). The view of that
name is built from it; readers that first narrow `label` to a few targets append it themselves,
because through the view DuckDB would rank every label of the dataset before narrowing."""


def natural_key(expression: str) -> str:
    """SQL sort key of a text `expression` that orders runs of digits by value ("Story 2" before
    "Story 10"): each run is left-padded with zeros to 20 digits."""
    pad = r"lambda part: CASE WHEN regexp_full_match(part, '\d+') THEN lpad(part, 20, '0') ELSE part END"
    return rf"array_to_string(list_transform(regexp_extract_all({expression}, '\d+|\D+'), {pad}), '')"


def execute_named(cur: duckdb.DuckDBPyConnection, sql: str, params: dict[str, object]) -> duckdb.DuckDBPyConnection:
    """Execute with exactly the `$name` parameters `sql` uses (DuckDB refuses extra ones)."""
    used = set(re.findall(r"\$(\w+)", sql))
    return cur.execute(sql, {key: value for key, value in params.items() if key in used})


@cache
def _field_names(cls: type) -> tuple[frozenset[str], frozenset[str]]:
    """(every init field, the fields without a default) of dataclass `cls`."""
    init = [f for f in fields(cls) if f.init]
    required = {f.name for f in init if f.default is MISSING and f.default_factory is MISSING}
    return frozenset(f.name for f in init), frozenset(required)


def _columns(cls: type, result: duckdb.DuckDBPyConnection) -> list[str]:
    names = [column[0] for column in result.description]
    known, required = _field_names(cls)
    unknown = [name for name in names if name not in known]
    missing = sorted(required - set(names))
    if unknown or missing:
        raise ValueError(f"query columns do not fit {cls.__name__}: unknown {unknown}, missing {missing}")
    return names


def _value(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def fetch_all(cur: duckdb.DuckDBPyConnection, cls: type[T], sql: str, params: object = None) -> list[T]:
    """Every row of `sql` as a `cls` (a dataclass), matched by column name; lists become tuples.
    `params` is a list for `?` placeholders or a dict for `$name` ones (extra names are dropped)."""
    if isinstance(params, dict):
        result = execute_named(cur, sql, params)
    else:
        result = cur.execute(sql, params) if params is not None else cur.execute(sql)
    names = _columns(cls, result)
    return [cls(**{name: _value(value) for name, value in zip(names, row, strict=True)}) for row in result.fetchall()]


def fetch_one(cur: duckdb.DuckDBPyConnection, cls: type[T], sql: str, params: object = None) -> T | None:
    """The first row of `sql` as a `cls`, or None when there is none."""
    rows = fetch_all(cur, cls, sql, params)
    return rows[0] if rows else None
