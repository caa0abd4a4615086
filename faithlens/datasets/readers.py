"""Strict readers for raw files: every failure becomes one InputError line with a position.

These are the only JSON, JSON Lines and CSV readers of the package: every import (datasets,
evaluator outputs, and later codebooks and codes) goes through them, so each gets the same
refusals: bad bytes, bad syntax, a key repeated in one JSON object, a column repeated in a header.
"""

from __future__ import annotations

import csv
import difflib
import io
import json
import json.decoder
import json.scanner
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from faithlens.errors import InputError


def read_bytes(path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(str(path), "", "file not found") from None
    except IsADirectoryError:
        raise InputError(str(path), "", "expected a file, found a folder") from None
    if not data.strip():
        raise InputError(str(path), "", "file is empty")
    return data


def decode_utf8(name: str, data: bytes) -> str:
    """Decode strictly; a bad byte is reported by line and column."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(
            name, f"line {line} column {column}", f"invalid UTF-8 byte 0x{data[exc.start]:02x}; expected UTF-8 text"
        ) from None


class _RepeatedKey(Exception):
    """A JSON object holds `key` twice; `first` and `repeat` are the text offsets of the two keys."""

    def __init__(self, key: str = "", first: int = 0, repeat: int = 0) -> None:
        super().__init__(key)
        self.key, self.first, self.repeat = key, first, repeat


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    if len({key for key, _ in pairs}) != len(pairs):
        raise _RepeatedKey
    return dict(pairs)


def _locate_repeated_key(text: str) -> _RepeatedKey:
    """Parse `text` again, knowing it repeats a key, to find where.

    The pure-Python scanner lets each object see where its values end, so each key is found as the
    first quote after the previous value (or after the opening brace). The fast C parser cannot, so
    this slower pass runs only on a file that is being refused.
    """
    decoder = json.JSONDecoder()

    def parse_object(s_and_end, strict, scan_once, object_hook, object_pairs_hook, memo):
        value_ends: list[int] = []

        def scan_value(string: str, index: int) -> tuple[Any, int]:
            value, end = scan_once(string, index)
            value_ends.append(end)
            return value, end

        string, opened = s_and_end
        pairs, end = json.decoder.JSONObject(s_and_end, strict, scan_value, None, list, memo)
        first: dict[str, int] = {}
        for (key, _), after in zip(pairs, [opened, *value_ends], strict=False):
            start = string.index('"', after)
            if key in first:
                raise _RepeatedKey(key, first[key], start)
            first[key] = start
        return dict(pairs), end

    decoder.parse_object = parse_object
    decoder.scan_once = json.scanner.py_make_scanner(decoder)
    try:
        decoder.decode(text)
    except _RepeatedKey as found:
        return found
    raise AssertionError("the fast parser found a repeated key that the locating pass did not")


def _line_column(text: str, offset: int, first_line: int) -> str:
    line = text.count("\n", 0, offset)
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"line {first_line + line} column {column}"


def parse_json(name: str, text: str, expected: str, first_line: int = 1) -> Any:
    """Parse strict JSON; `expected` names what the format wants, for the error line. A key given
    twice in one object is refused (json would keep the last one silently). `first_line` is the
    file line `text` starts on (JSON Lines)."""
    try:
        return json.loads(text, object_pairs_hook=_unique_pairs)
    except json.JSONDecodeError as exc:
        raise InputError(
            name,
            f"line {first_line + exc.lineno - 1} column {exc.colno}",
            f"invalid JSON ({exc.msg}); expected {expected}",
        ) from None
    except _RepeatedKey:
        found = _locate_repeated_key(text)
    raise InputError(
        name,
        _line_column(text, found.repeat, first_line),
        f"key {found.key!r} given twice in one object (first at {_line_column(text, found.first, first_line)});"
        " expected each key once",
    )


def read_json(path: Path, expected: str) -> Any:
    name = str(path)
    return parse_json(name, decode_utf8(name, read_bytes(path)), expected)


def read_jsonl(path: Path, expected: str) -> list[tuple[int, dict[str, Any]]]:
    """The JSON object on each non-blank line, with its 1-based line number."""
    name = str(path)
    records = []
    for number, line in enumerate(decode_utf8(name, read_bytes(path)).split("\n"), start=1):
        if not line.strip():
            continue
        record = parse_json(name, line, f"one JSON object per line: {expected}", first_line=number)
        if not isinstance(record, dict):
            raise InputError(name, f"line {number}", f"found a JSON {type(record).__name__}; expected {expected}")
        records.append((number, record))
    if not records:
        raise InputError(name, "", f"no JSON lines; expected one per line: {expected}")
    return records


def refuse_unknown(name: str, position: str, found: Iterable[str], known: tuple[str, ...], what: str) -> None:
    """Refuse the first of `found` (field or column names) that is not `known`, suggesting the closest."""
    for item in found:
        if item not in known:
            close = difflib.get_close_matches(item, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else f"; expected one of {', '.join(known)}"
            raise InputError(name, position, f"unknown {what} {item!r}{hint}")


def read_csv(
    path: Path, required: tuple[str, ...], optional: tuple[str, ...] | None = None
) -> list[tuple[int, dict[str, str]]]:
    """Rows with their 1-based file line numbers; checks the header names the `required` columns,
    each column once, and, when `optional` is given, no column outside `required` + `optional`."""
    name = str(path)
    text = decode_utf8(name, read_bytes(path))
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    try:
        header = reader.fieldnames or []
        repeated = sorted({column for column in header if header.count(column) > 1})
        if repeated:
            raise InputError(name, "line 1", f"column {repeated[0]!r} appears twice in the header; expected it once")
        if optional is not None:
            refuse_unknown(name, "line 1", header, required + optional, "column")
        missing = [column for column in required if column not in header]
        if missing:
            raise InputError(
                name, "line 1", f"missing column(s) {', '.join(missing)}; expected a header with {', '.join(required)}"
            )
        rows = []
        for row in reader:
            if None in row or any(value is None for value in row.values()):
                raise InputError(name, f"line {reader.line_num}", f"expected {len(header)} fields as in the header")
            rows.append((reader.line_num, row))
    except csv.Error as exc:
        if "unexpected end of data" in str(exc):
            raise InputError(
                name, f"line {reader.line_num + 1}", "a quoted field is never closed; expected a closing quote"
            ) from None
        raise InputError(name, f"line {reader.line_num}", f"malformed CSV ({exc})") from None
    if not rows:
        raise InputError(name, "", "no data rows after the header")
    return rows


def read_zip_member(path: Path, suffix: str) -> tuple[str, bytes]:
    """The single member ending in `suffix` (ignoring macOS resource folders)."""
    name = str(path)
    read_bytes(path)
    try:
        with zipfile.ZipFile(path) as archive:
            members = [m for m in archive.namelist() if m.endswith(suffix) and not m.startswith("__MACOSX/")]
            if len(members) != 1:
                raise InputError(name, "", f"expected exactly one {suffix} file in the zip, found {len(members)}")
            return f"{name}!{members[0]}", archive.read(members[0])
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError) as exc:
        raise InputError(name, "", f"corrupt zip archive ({exc}); expected a zip holding {suffix}") from None


def require(name: str, position: str, record: Any, field: str, kinds: type | tuple[type, ...], what: str) -> Any:
    """Field `field` of a JSON object, checked for type, else an InputError naming the record."""
    if not isinstance(record, dict):
        raise InputError(name, position, f"expected a JSON object, found {type(record).__name__}")
    if field not in record:
        raise InputError(name, position, f"missing field {field!r}; expected {what}")
    value = record[field]
    if isinstance(value, bool) and bool not in (kinds if isinstance(kinds, tuple) else (kinds,)):
        raise InputError(name, position, f"field {field!r} is a boolean; expected {what}")
    if not isinstance(value, kinds):
        raise InputError(name, position, f"field {field!r} is {type(value).__name__}; expected {what}")
    return value
