"""A codebook: the codes coders choose from, each with its definition and an example, read from a
YAML or JSON file (the built-in ones in `faithlens/coding/codebooks/`, or a lab's own) and checked.

File keys: `name`, `title`, `description`, `reference` (where the codes come from), `choice`
(single | multi), `family` (the tag family of codes without a verdict, else null), `explanation`
(none | optional | required, the default of every code) and `codes`, each with `key`, `name`,
`verdict` (a value of the shared vocabulary, or null for a tag code), `definition`, `example` and an
optional `explanation` of its own. A codebook's codes are all verdicts (a coder's codes become label
events) or all tags (a coder's codes become tags of `family`, e.g. `ambiguity_type`).

A multi-choice codebook has a none code, `none` (the key; "none" unless the file says otherwise): the
answer "none of the codes applies" (TofuEval's faithful sentences have no error type). It is a code like
any other for progress and agreement, and excludes every other code on a unit. When the file lists no
code with that key, one is added last ("None applies"). A stored codebook without `none` (saved before
it existed) is read as it was, so its version stays the one its sessions recorded.

`version` hashes the content, so a code records exactly the definitions it was made with and an
edit makes a new version.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from faithlens.datasets.readers import decode_utf8, parse_json, read_bytes, refuse_unknown
from faithlens.errors import InputError
from faithlens.vocab import VERDICTS

CHOICES = ("single", "multi")
EXPLANATIONS = ("none", "optional", "required")
NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
CODEBOOK_KEYS = ("name", "title", "description", "reference", "choice", "family", "explanation", "none", "codes")
CODE_KEYS = ("key", "name", "verdict", "definition", "example", "explanation")
RESERVED_KEYS = frozenset({"", "skip"})
NONE_KEY = "none"
NONE_NAME = "None applies"
NONE_DEFINITION = "None of the other codes applies to this unit."


@dataclass(frozen=True)
class Code:
    key: str
    name: str
    definition: str
    verdict: str | None = None
    example: str | None = None
    explanation: str = "optional"
    """none | optional | required: whether a coder who picks this code must explain it."""


@dataclass(frozen=True)
class Codebook:
    name: str
    title: str
    codes: tuple[Code, ...]
    description: str = ""
    reference: str = ""
    choice: str = "single"
    family: str | None = None
    none: str | None = None
    """The key of the none code (multi-choice only): chosen alone, it says no other code applies."""

    @property
    def version(self) -> str:
        return hashlib.sha256(self.to_json().encode()).hexdigest()[:12]

    @property
    def label(self) -> str:
        """`name@version`, as label sources and exports name it."""
        return f"{self.name}@{self.version}"

    @property
    def verdicts(self) -> bool:
        """Whether codes are label values (else tags of `family`)."""
        return self.family is None

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(code.key for code in self.codes)

    def code(self, key: str) -> Code:
        for code in self.codes:
            if code.key == key:
                return code
        raise KeyError(key)

    def as_dict(self) -> dict[str, Any]:
        body = dataclasses.asdict(self)
        body["codes"] = [dataclasses.asdict(code) for code in self.codes]
        if self.none is None:
            # Left out, not null: a codebook without a none code hashes as it did before the field existed.
            del body["none"]
        return body

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), sort_keys=True, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Codebook:
        return parse(json.loads(text), "stored codebook", stored=True)


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a key given twice in one mapping (it would keep the last silently),
    and reading booleans as YAML 1.2 does: only true/false, so a code keyed `yes` or `no` stays text."""

    yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise InputError(
                    self.name,
                    f"line {key_node.start_mark.line + 1}",
                    f"key {key!r} given twice in one mapping (first at line {seen[key]}); expected each key once",
                )
            seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def read_file(path: Path) -> Codebook:
    """A codebook from a `.yaml`/`.yml` or `.json` file; any fault is one InputError line."""
    name = str(path)
    text = decode_utf8(name, read_bytes(path))
    if path.suffix.lower() == ".json":
        return parse(parse_json(name, text, "a codebook object"), name)
    if path.suffix.lower() not in (".yaml", ".yml"):
        raise InputError(name, "", "expected a codebook file ending in .yaml, .yml or .json")
    loader = _UniqueKeyLoader(text)
    loader.name = name
    try:
        body = loader.get_single_data()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}" if mark else ""
        raise InputError(name, where, f"invalid YAML ({getattr(exc, 'problem', exc)}); expected a codebook") from None
    finally:
        loader.dispose()
    return parse(body, name)


def _text(name: str, where: str, body: dict, key: str, required: bool = True) -> str | None:
    value = body.get(key)
    if not required and (value is None or value == ""):
        return None
    if not isinstance(value, str | int) or isinstance(value, bool) or not str(value).strip():
        raise InputError(name, where, f"field {key!r} must be non-empty text")
    return str(value).strip()


def _choice(name: str, where: str, value: Any, allowed: tuple[str, ...], key: str) -> str:
    if value not in allowed:
        raise InputError(name, where, f"field {key!r} is {value!r}; expected one of {', '.join(allowed)}")
    return value


def _code(name: str, index: int, body: Any, default_explanation: str) -> Code:
    where = f"codes[{index}]"
    if not isinstance(body, dict):
        raise InputError(name, where, "expected a mapping with key, name, definition")
    refuse_unknown(name, where, body, CODE_KEYS, "code field")
    key = _text(name, where, body, "key")
    if key.lower() in RESERVED_KEYS or "," in key or "|" in key:
        raise InputError(name, where, f"code key {key!r} is reserved or holds ',' or '|'; pick another key")
    verdict = body.get("verdict")
    if verdict is not None:
        _choice(name, where, verdict, VERDICTS, "verdict")
    explanation = _choice(name, where, body.get("explanation", default_explanation), EXPLANATIONS, "explanation")
    return Code(
        key=key,
        name=_text(name, where, body, "name"),
        definition=_text(name, where, body, "definition"),
        verdict=verdict,
        example=_text(name, where, body, "example", required=False),
        explanation=explanation,
    )


def _none_code(name: str, body: dict, choice: str, codes: tuple[Code, ...], explanation: str, stored: bool):
    """The none code's key and the codes with it (added last when no code has that key)."""
    given = body.get("none")
    if choice == "single":
        if given is not None:
            raise InputError(name, "none", "a single-choice codebook has no none code; leave `none` out")
        return None, codes
    if given is None and stored:
        return None, codes
    key = NONE_KEY if given is None else _text(name, "", body, "none")
    if key.lower() in RESERVED_KEYS or "," in key or "|" in key:
        raise InputError(name, "none", f"none code key {key!r} is reserved or holds ',' or '|'; pick another key")
    if key in (code.key for code in codes):
        return key, codes
    # "Nothing applies" asks for no reason even where the codes require one (TofuEval's annotators explained
    # inconsistent sentences only).
    added = Code(key, NONE_NAME, NONE_DEFINITION, explanation="optional" if explanation == "required" else explanation)
    return key, (*codes, added)


def parse(body: Any, name: str, stored: bool = False) -> Codebook:
    """Check a codebook's fields (from YAML, JSON, the editor or the database) and build it. `stored`: read
    from the database, where a multi-choice codebook without `none` predates the none code and keeps none."""
    if not isinstance(body, dict):
        raise InputError(name, "", "expected a codebook mapping (name, title, choice, codes, ...)")
    refuse_unknown(name, "", body, CODEBOOK_KEYS, "codebook field")
    cb_name = _text(name, "", body, "name")
    if not NAME.fullmatch(cb_name):
        raise InputError(name, "name", f"{cb_name!r}: expected lowercase letters, digits, '-' or '_'")
    codes_body = body.get("codes")
    if not isinstance(codes_body, list) or len(codes_body) < 2:
        raise InputError(name, "codes", "expected a list of at least two codes")
    explanation = _choice(name, "", body.get("explanation", "optional"), EXPLANATIONS, "explanation")
    codes = tuple(_code(name, i, code, explanation) for i, code in enumerate(codes_body))
    keys = [code.key for code in codes]
    repeated = sorted({key for key in keys if keys.count(key) > 1})
    if repeated:
        raise InputError(name, "codes", f"code key {repeated[0]!r} appears twice; expected each key once")
    family = _text(name, "", body, "family", required=False)
    choice = _choice(name, "", body.get("choice", "single"), CHOICES, "choice")
    with_verdict = [code.key for code in codes if code.verdict]
    if family is None and len(with_verdict) != len(codes):
        missing = next(code.key for code in codes if not code.verdict)
        raise InputError(name, "codes", f"code {missing!r} has no verdict; give every code one, or set `family`")
    if family is not None and with_verdict:
        raise InputError(name, "codes", f"code {with_verdict[0]!r} has a verdict in a tag codebook (family set)")
    if family is None and choice == "multi":
        raise InputError(name, "choice", "a verdict codebook is single-choice; set `family` for multi-choice tags")
    none, codes = _none_code(name, body, choice, codes, explanation, stored)
    return Codebook(
        name=cb_name,
        title=_text(name, "", body, "title"),
        codes=codes,
        description=_text(name, "", body, "description", required=False) or "",
        reference=_text(name, "", body, "reference", required=False) or "",
        choice=choice,
        family=family,
        none=none,
    )
