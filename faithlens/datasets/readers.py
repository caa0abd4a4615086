"""Strict readers for raw files: every failure becomes one InputError line with a position."""

from __future__ import annotations

import csv
import io
import json
import zipfile
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


def parse_json(name: str, text: str, expected: str) -> Any:
    """Parse strict JSON; `expected` names what the format wants, for the error line."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            name, f"line {exc.lineno} column {exc.colno}", f"invalid JSON ({exc.msg}); expected {expected}"
        ) from None


def read_json(path: Path, expected: str) -> Any:
    name = str(path)
    return parse_json(name, decode_utf8(name, read_bytes(path)), expected)


def read_csv(path: Path, required: tuple[str, ...]) -> list[tuple[int, dict[str, str]]]:
    """Rows with their 1-based file line numbers; checks the header names the `required` columns."""
    name = str(path)
    text = decode_utf8(name, read_bytes(path))
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    try:
        header = reader.fieldnames or []
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
