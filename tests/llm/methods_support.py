"""What the tests expect of the on-demand methods, read from the README and the prompt files alone (never
from `faithlens.llm.methods`), and a scripted server that answers every prompt file in its own shape.

- `readme_methods()`: the README's method table ("Asking language models"): each method with its levels.
- `prompt_files()`: every prompt TOML file as written (method, variant, combine group, parser, texts).
- `variants(method)`: the variants a user picks among: one per file, a `combine` group counted once;
  TofuEval's files are named by level (the level picks the prompt), so they give one unnamed variant.
- `expected_files(method, level, variant)`: the prompt files a request with these settings sends.
- `Scripted`: a responder for `tests.llmserver` that recognises which prompt file a request renders (by
  its fixed text) and answers in the shape the file's `answer` parser reads; `files(requests)` names the
  files of recorded requests. A rewrite is always a real change with its own explanation, so ARM's
  explanation points are asked every time (one per explanation, never from another's cache).
"""

from __future__ import annotations

import functools
import re
import threading
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from tests.llmserver import Reply, Request
from tests.llmserver.script import text_of

ROOT = Path(__file__).resolve().parents[2]
PROMPTS = ROOT / "faithlens" / "llm" / "prompts"
LEVELS = ("summary", "sentence", "claim")
POINTS_FILE = "arm-explanation-points"
"""ARM A.3: sent after a rewrite that changed the sentence (README: "then A.3 splits the explanation into points")."""
SLOT = re.compile(r"\{\{\w+\}\}")


@dataclass(frozen=True)
class PromptFile:
    name: str
    method: str
    variant: str
    combine: tuple[str, ...]
    answer: str
    system: str | None
    turns: tuple[str, ...]

    def pieces(self, turns: int) -> list[str]:
        """The fixed text of the system prompt and the first `turns` turns, between slots."""
        texts = [self.system or "", *self.turns[:turns]]
        return [piece.strip() for text in texts for piece in SLOT.split(text) if piece.strip()]


@functools.cache
def prompt_files() -> dict[str, PromptFile]:
    found = {}
    for path in sorted(PROMPTS.glob("*.toml")):
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
        found[path.stem] = PromptFile(
            path.stem,
            raw["method"],
            raw["variant"],
            tuple(raw.get("combine", ())),
            raw["answer"],
            raw["system"].strip() if "system" in raw else None,
            tuple(turn["user"].strip() for turn in raw["turn"]),
        )
    return found


@functools.cache
def readme_methods() -> dict[str, tuple[str, ...]]:
    """Method -> levels, from the README's table under "## Asking language models"."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Asking language models", 1)[1]
    table = section[section.index("| method | level |") :].split("\n\n", 1)[0]
    found: dict[str, tuple[str, ...]] = {}
    for row in table.splitlines()[2:]:
        cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
        levels = tuple(level for level in LEVELS if level in cells[1])
        for name in re.findall(r"`([a-z0-9-]+)`", cells[0]):
            found[name] = levels
    return found


def by_level(method: str) -> bool:
    """TofuEval's prompt files are named by level: the level picks one, so the user picks no variant."""
    own = [f for f in prompt_files().values() if f.method == method]
    return bool(own) and all(f.variant in LEVELS for f in own)


def variants(method: str) -> tuple[str, ...]:
    if by_level(method):
        return ("",)
    own = [f for f in prompt_files().values() if f.method == method]
    return tuple(sorted({f.combine[0] if f.combine else f.variant for f in own}))


def expected_files(method: str, level: str, variant: str) -> list[str]:
    """The prompt files sent, one name per file (a self-consistency vote sends its file three times)."""
    if by_level(method):
        return [f"{method}.{level}"]
    own = prompt_files()[f"{method}.{variant}" if variant else method]
    names = [f"{method}.{part}" for part in own.combine] or [own.name]
    return names + ([POINTS_FILE] if own.answer == "rewrite" else [])


REPLIES: dict[str, tuple[str, ...]] = {
    "yes_no": ("Yes",),
    "yes_no_tagged": ("The summary fits the story.\n<answer>Yes</answer>",),
    "objective_tagged": ("It can be checked against the story.\n<answer>Yes</answer>",),
    "cot_yes_no": ("The story tells the same events.", "Yes"),
    "cot_yes_no_tagged": ("The story tells the same events.", "<answer>Yes</answer>"),
    "yes_no_first": ("Yes. The story says so.",),
    "true_false": ("True",),
    "dash_claims": ("- The mother forgets things.\n- Her daughter brings a gift.",),
    "inconsistencies": (
        "Inconsistency: the gift.\nReason for inconsistency: the story names it late.\n"
        "Reason for consistency: the story names it.",
    ),
    "items": ("<item>It names the gift.</item>\n<item>It keeps the order of events.</item>",),
    "rewrite": ("The sentence says more than the story ({n}).\n<answer>A plainer sentence, number {n}.</answer>",),
    "ambiguity_type": ("<type>1</type> The wording is loose.",),
}
"""One well-formed reply per parser and turn; a parser missing here is a new answer shape to script."""


class Scripted:
    """The responder: the recognised file's reply, numbered so no two rewrites share an explanation."""

    def __init__(self) -> None:
        self.unknown: Counter[str] = Counter()
        self._count = 0
        self._lock = threading.Lock()

    def __call__(self, request: Request) -> Reply:
        name = recognise(request)
        if name is None or prompt_files()[name].answer not in REPLIES:
            self.unknown[name or request.last_user_text()[:60]] += 1
            return Reply("")
        turns = REPLIES[prompt_files()[name].answer]
        asked = len(_asked(request))
        with self._lock:
            self._count += 1
            number = self._count
        return Reply(turns[min(asked, len(turns)) - 1].format(n=number))


def _asked(request: Request) -> list[str]:
    return [text_of(m.get("content")) for m in request.messages if m.get("role") == "user"]


def recognise(request: Request) -> str | None:
    """The prompt file whose fixed text the request's system prompt and turns so far hold, in order (the most
    specific one: StorySumm's Claude variants add a sentence to the others' last turn)."""
    asked = _asked(request)
    sent = "\n".join([request.system or "", *asked])
    best, length = None, 0
    for prompt in prompt_files().values():
        pieces, at = prompt.pieces(len(asked)), 0
        for piece in pieces:
            at = sent.find(piece, at)
            if at < 0:
                break
            at += len(piece)
        total = sum(map(len, pieces))
        if at >= 0 and total > length:
            best, length = prompt.name, total
    return best


def files(requests: list[Request]) -> Counter[str]:
    """The prompt files of chat requests, one count per conversation (a CoT's first turn is the start of
    its second turn's request, which names the file) or draw."""
    chats = [r for r in requests if r.path.endswith(("/chat/completions", "/messages"))]
    named = [(recognise(r), len(_asked(r))) for r in chats]
    return Counter(name or "?" for name, turns in named if name is None or turns >= len(prompt_files()[name].turns))
