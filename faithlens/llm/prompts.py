"""The papers' prompts, one versioned TOML file per method and variant in `faithlens/llm/prompts/`.

A file is named `<method>.toml`, or `<method>.<variant>.toml` when the method has variants, and holds:

- `method`, `variant`: what it runs, e.g. "tofueval-dir" and "sentence"; the file name repeats them.
- `paper`, `where`: the paper and the section or table the wording comes from.
- `ours`: true when the wording is ours, not the paper's; `note` says what is ours and what was repaired
  from the paper's text extraction.
- `level`: the levels it applies to (summary, sentence, claim).
- `temperature`, `max_tokens`: the paper's settings where it gives them (the note says which), else ours.
- `answer`: the name of the parser in `faithlens.llm.parsing.PARSERS` that reads the replies.
- `system` (optional) and one `[[turn]]` table per user message: the second turn of a chain-of-thought
  prompt is sent after the model's reply to the first, in the same conversation.
- `combine` (optional): the variants one run of the method sends together. StorySumm's hybrid method
  sends Prompt 1 and Prompt 2 and concatenates the inconsistencies of both replies, so each of its two
  files lists `combine = ["prompt1", "prompt2"]` (`Template.combine`); loading checks the group is whole.

Texts hold slots written `{{name}}`, one of SLOTS. `version` is a hash of the file's bytes, so a cached
reply is tied to the exact wording and settings that produced it.
"""

from __future__ import annotations

import functools
import hashlib
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType
from typing import Any

from faithlens.errors import FaithLensError
from faithlens.vocab import LEVELS

SLOTS = frozenset({"story", "summary", "sentence", "claim", "evidence", "explanation"})
"""The source document, the whole summary, one summary sentence, one claim, FABLES evidence, an ARM explanation."""
SLOT = re.compile(r"\{\{(\w+)\}\}")
FIXES = "fix the prompt file in faithlens/llm/prompts/"
REQUIRED: dict[str, type | tuple[type, ...]] = {
    "method": str,
    "variant": str,
    "paper": str,
    "where": str,
    "ours": bool,
    "note": str,
    "level": list,
    "temperature": (float, int),
    "max_tokens": int,
    "answer": str,
    "turn": list,
}
OPTIONAL: dict[str, type] = {"system": str, "combine": list}


@dataclass(frozen=True)
class Template:
    """One prompt file, read and checked: its provenance, its settings and its texts with slots unfilled."""

    name: str
    method: str
    variant: str
    paper: str
    where: str
    ours: bool
    note: str
    levels: tuple[str, ...]
    temperature: float
    max_tokens: int
    answer: str
    system: str | None
    turns: tuple[str, ...]
    version: str
    combine: tuple[str, ...] = ()

    def slots(self) -> frozenset[str]:
        """The slot names the system prompt and the turns use."""
        return frozenset(name for text in self._texts() for name in SLOT.findall(text))

    def render(self, **values: str) -> tuple[str | None, tuple[str, ...]]:
        """The system prompt and the user turns with every slot filled; values for unused slots are ignored.

        Slots are filled in one pass, and a value is inserted as it is: braces, `$` or backslashes in a
        story stay literal, and a story quoting `{{summary}}` does not get the summary put inside it.
        """
        unknown = sorted(set(values) - SLOTS)
        if unknown:
            raise FaithLensError(
                f"prompt {self.name}: no slot named {', '.join(unknown)}", f"slots are {_listed(SLOTS)}"
            )
        missing = sorted(self.slots() - set(values))
        if missing:
            raise FaithLensError(
                f"prompt {self.name}: no value for slot {', '.join(missing)}", f"it needs {_listed(self.slots())}"
            )

        def fill(text: str) -> str:
            return SLOT.sub(lambda match: values[match.group(1)], text)

        return (fill(self.system) if self.system is not None else None), tuple(fill(turn) for turn in self.turns)

    def _texts(self) -> tuple[str, ...]:
        return ((self.system,) if self.system is not None else ()) + self.turns


def load(name: str) -> Template:
    """The template of one file, by file stem, e.g. "tofueval-dir.sentence"."""
    found = _all()
    if name not in found:
        raise FaithLensError(f"no prompt named {name!r}", f"known prompts: {_listed(found)}")
    return found[name]


def variants(method: str) -> tuple[str, ...]:
    """The variants a user chooses among for `method`, from its prompt files: one per file, except that
    a group of files sent together (`combine`) is one variant, named by the first variant it lists. The
    unnamed variant ("") comes first, then the others by name; () when no file is the method's."""
    found = {
        template.combine[0] if template.combine else template.variant
        for template in _all().values()
        if template.method == method
    }
    return tuple(sorted(found, key=lambda variant: (variant != "", variant)))


def templates() -> dict[str, Template]:
    """Every template, by name."""
    return dict(_all())


def for_method(method: str, variant: str = "") -> Template:
    """The template of a method and variant, e.g. ("arm-rewrite", "both")."""
    found = _all()
    name = _name(method, variant)
    if name in found:
        return found[name]
    variants = sorted(template.variant for template in found.values() if template.method == method)
    if variants:
        raise FaithLensError(f"prompt {method} has no variant {variant!r}", f"its variants: {_listed(variants)}")
    methods = sorted({template.method for template in found.values()})
    raise FaithLensError(f"no prompt for method {method!r}", f"known methods: {_listed(methods)}")


@functools.cache
def _all() -> MappingProxyType[str, Template]:
    folder = resources.files("faithlens.llm").joinpath("prompts")
    found: dict[str, Template] = {}
    for entry in sorted(folder.iterdir(), key=lambda entry: entry.name):
        if entry.name.endswith(".toml"):
            template = _parse(entry.name.removesuffix(".toml"), entry.read_bytes())
            found[template.name] = template
    for template in found.values():
        _check_combine(template, found)
    return MappingProxyType(found)


def _parse(stem: str, data: bytes) -> Template:
    where = f"prompt file {stem}.toml"
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise FaithLensError(f"{where}: not valid TOML ({error})", FIXES) from error
    _check_keys(raw, where)
    if stem != _name(raw["method"], raw["variant"]):
        raise FaithLensError(f"{where}: its name must be {_name(raw['method'], raw['variant'])}.toml", FIXES)
    levels = tuple(raw["level"])
    if not levels or any(level not in LEVELS for level in levels):
        raise FaithLensError(f"{where}: level must list some of {_listed(LEVELS)}, not {levels}", FIXES)
    turns = tuple(_turn(turn, where) for turn in raw["turn"])
    if not turns:
        raise FaithLensError(f"{where}: needs at least one [[turn]]", FIXES)
    system = raw["system"].strip() if "system" in raw else None
    template = Template(
        name=stem,
        method=raw["method"],
        variant=raw["variant"],
        paper=raw["paper"],
        where=raw["where"],
        ours=raw["ours"],
        note=" ".join(raw["note"].split()),
        levels=levels,
        temperature=float(raw["temperature"]),
        max_tokens=raw["max_tokens"],
        answer=raw["answer"],
        system=system,
        turns=turns,
        version=hashlib.sha256(data).hexdigest()[:12],
        combine=tuple(raw.get("combine", ())),
    )
    unknown = template.slots() - SLOTS
    if unknown:
        raise FaithLensError(f"{where}: unknown slots {_listed(unknown)}; the slots are {_listed(SLOTS)}", FIXES)
    return template


def _check_keys(raw: dict[str, Any], where: str) -> None:
    missing = sorted(set(REQUIRED) - set(raw))
    unknown = sorted(set(raw) - set(REQUIRED) - set(OPTIONAL))
    if missing or unknown:
        raise FaithLensError(f"{where}: missing keys {missing}, unknown keys {unknown}", FIXES)
    for key, kind in {**REQUIRED, **OPTIONAL}.items():
        wrong_bool = isinstance(raw.get(key), bool) and kind is not bool
        if key in raw and (wrong_bool or not isinstance(raw[key], kind)):
            raise FaithLensError(f"{where}: {key} has the wrong type ({type(raw[key]).__name__})", FIXES)
    if raw["max_tokens"] <= 0:
        raise FaithLensError(f"{where}: max_tokens must be positive", FIXES)


def _turn(turn: object, where: str) -> str:
    if not isinstance(turn, dict) or set(turn) != {"user"} or not isinstance(turn["user"], str):
        raise FaithLensError(f"{where}: each [[turn]] holds exactly one text, user = '''...'''", FIXES)
    return turn["user"].strip()


def _check_combine(template: Template, found: dict[str, Template]) -> None:
    if not template.combine:
        return
    group = [found.get(_name(template.method, variant)) for variant in template.combine]
    if template.variant not in template.combine or any(
        member is None or member.combine != template.combine for member in group
    ):
        raise FaithLensError(
            f"prompt file {template.name}.toml: combine must list its own variant and variants of "
            f"{template.method} that list the same combine",
            FIXES,
        )


def _name(method: str, variant: str) -> str:
    return f"{method}.{variant}" if variant else method


def _listed(names: Iterable[str]) -> str:
    return ", ".join(sorted(names))
