"""Typed view state <-> URL query parameters, for every page alike.

A page's state is a frozen dataclass; each field is one query parameter of the same name (a field
that is itself such a dataclass contributes its own fields). A field's annotation says how its
URL string is read:

- `str | None`: as given, without surrounding blanks; a blank value means unset;
- `int` or `int | None`: decimal digits within the field's `bounds`;
- `bool`: `1` or `0`;
- `tuple[str, ...]`: repeated keys (`?error_types=a&error_types=b`), blanks and repeats dropped;
- a type with a `parse(text)` classmethod and a `__str__` that `parse` reads back (the label
  `Mapping`, `Thresholds`): that string form.

A field may also name its `choices`. Fields at their default stay out of the URL, so links stay
short. A value that cannot be read is not used: the field keeps its default and `decode` returns a
note that says which value was ignored and why, for the page to show.
"""

from __future__ import annotations

import types
from collections.abc import Collection, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from functools import cache
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

from faithlens.errors import FaithLensError

State = TypeVar("State")
Params = Mapping[str, str | Sequence[str]]
"""Query parameters as Streamlit and links hold them: one string, or the values of a repeated key."""


def param(default: Any = None, *, choices: Collection[str] | None = None, bounds: tuple[int, int] | None = None) -> Any:
    """A state field with the values its URL parameter may take."""
    return field(default=default, metadata={"choices": choices, "bounds": bounds})


@dataclass(frozen=True)
class _Field:
    name: str
    kind: str  # 'str', 'int', 'bool', 'list', 'parsed' or 'nested'
    type: Any
    default: Any
    choices: Collection[str] | None
    bounds: tuple[int, int] | None


def _kind(hint: Any) -> tuple[str, Any]:
    options = [arg for arg in get_args(hint) if arg is not type(None)] if _is_optional(hint) else [hint]
    (base,) = options
    if base is str:
        return "str", str
    if base is bool:
        return "bool", bool
    if base is int:
        return "int", int
    if get_origin(base) is tuple:
        return "list", str
    if hasattr(base, "parse"):
        return "parsed", base
    if is_dataclass(base):
        return "nested", base
    raise TypeError(f"no URL form for a field of type {hint!r}")


def _is_optional(hint: Any) -> bool:
    return get_origin(hint) in (Union, types.UnionType) and type(None) in get_args(hint)


@cache
def _fields(cls: type) -> tuple[_Field, ...]:
    hints = get_type_hints(cls)
    out = []
    for item in fields(cls):
        kind, base = _kind(hints[item.name])
        default = item.default if item.default is not MISSING else item.default_factory()  # type: ignore[misc]
        meta = item.metadata
        out.append(_Field(item.name, kind, base, default, meta.get("choices"), meta.get("bounds")))
    return tuple(out)


def encode(state: Any) -> dict[str, str | list[str]]:
    """The non-default fields of `state` as query parameters (tuples become repeated keys)."""
    params: dict[str, str | list[str]] = {}
    for item in _fields(type(state)):
        value = getattr(state, item.name)
        if item.kind == "nested":
            params.update(encode(value))
        elif value != item.default and value is not None:
            if item.kind == "list":
                params[item.name] = list(value)
            elif item.kind == "bool":
                params[item.name] = "1" if value else "0"
            else:
                params[item.name] = str(value)
    return params


def _last(values: str | Sequence[str] | None) -> str | None:
    if isinstance(values, str) or values is None:
        return values
    return values[-1] if values else None


def _read(item: _Field, raw: str | Sequence[str] | None) -> Any:
    """The field's value from its URL value; ValueError (with the reason) when it cannot be used."""
    if item.kind == "list":
        values = [raw] if isinstance(raw, str) else list(raw or ())
        chosen = tuple(dict.fromkeys(v.strip() for v in values if v and v.strip()))
        return chosen if chosen else item.default
    text = _last(raw)
    if text is None or not text.strip():
        return item.default
    text = text.strip()
    if item.kind == "bool":
        if text not in ("0", "1"):
            raise ValueError("expected 1 or 0")
        return text == "1"
    if item.kind == "int":
        return _integer(item, text)
    if item.kind == "parsed":
        try:
            return item.type.parse(text)
        except FaithLensError as exc:
            raise ValueError(exc.message) from None
    if item.choices is not None and text not in item.choices:
        raise ValueError(f"expected one of {', '.join(item.choices)}")
    return text


def _integer(item: _Field, text: str) -> int:
    low, high = item.bounds or (0, 2**31)
    if not text.isdigit() or not low <= int(text) <= high:
        raise ValueError(f"expected a whole number from {low} to {high}")
    return int(text)


def decode(cls: type[State], params: Params) -> tuple[State, list[str]]:
    """The state `params` describe, and one note per value that was ignored (unknown keys are
    other pages' or other tools' and are left alone)."""
    values: dict[str, Any] = {}
    notes: list[str] = []
    for item in _fields(cls):
        if item.kind == "nested":
            values[item.name], inner = decode(item.type, params)
            notes += inner
            continue
        try:
            values[item.name] = _read(item, params.get(item.name))
        except ValueError as why:
            values[item.name] = item.default
            notes.append(ignored(item.name, _last(params.get(item.name)), str(why)))
    return cls(**values), notes


def ignored(name: str, value: object, why: str) -> str:
    """The one wording of "this link value was not used", for the codec and for the pages' own
    checks against the data (a value the codec reads but the dataset lacks)."""
    return f"{name}={value!r} in the link was ignored: {why}"
