"""Strict readers of model replies, one per answer shape the prompts ask for (a template's `answer`).

Strict: the reply must carry its answer in the form the prompt asks for. Only harmless variation is
tolerated (case, surrounding whitespace, a trailing period, markdown bold or italics, an "Answer:" in
front of a label); a reply with no label, or with two different ones, is not ok and says why in
`failure`. Labels are mapped to the shared vocabulary: a "Yes" to "is it consistent?" and a "True" to
"is the statement true?" are faithful. A "No" to ARM's "is this claim objective to evaluate?" is a
subjective claim, flagged as ARM flags a rewritten one: unfaithful (raw label "subjective").
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from faithlens.errors import FaithLensError
from faithlens.vocab import Verdict

YES_NO = {"yes": Verdict.FAITHFUL.value, "no": Verdict.UNFAITHFUL.value}
TRUE_FALSE = {"true": Verdict.FAITHFUL.value, "false": Verdict.UNFAITHFUL.value}
OBJECTIVE, SUBJECTIVE = "objective", "subjective"
OBJECTIVITY = {"yes": OBJECTIVE, "no": SUBJECTIVE}
"""ARM Table 2's baselines ask "Is this claim objective to evaluate?": Yes is objective, No subjective."""
FLAGGED = {OBJECTIVE: Verdict.FAITHFUL.value, SUBJECTIVE: Verdict.UNFAITHFUL.value}
"""A subjective claim is flagged as ARM flags a rewritten one (r != s is unfaithful), so the baselines
and ARM are scored alike against the same reference."""
AMBIGUITY_TYPES = ("1", "2", "3", "4", "5")
"""ARM's Wording, Detail, Causation, Explicit (section 5.5) and the confusing-story type 5 (Appendix A.6)."""
ANSWER = r"(?:(?:final\s+)?answer\s*[:\-]\s*)?"
LEAD = r"^\W*" + ANSWER + r"\W*({words})\b"
LINE = r"^\W*" + ANSWER + r"\W*({words})\W*$"
FINAL = r"\b({words})\W*\Z"
REFUSAL = re.compile(
    r"^\W*(?:i'?m sorry|i am sorry|sorry|i can'?t|i cannot|i won'?t|i will not|i'?m unable|i am unable)\b"
)
PREVIEW = 80


@dataclass(frozen=True)
class Parsed:
    """What one reply (or one conversation) said, or why it could not be read."""

    ok: bool
    label: str | None = None
    """A shared-vocabulary value ("faithful", "unfaithful", ...), for the prompts that ask for a verdict."""
    raw_label: str | None = None
    """The reply's own word for it, e.g. "Yes", "TRUE", "none"."""
    explanation: str | None = None
    rewrite: str | None = None
    items: tuple[str, ...] = ()
    """Claims, inconsistencies, explanation points or ambiguity types, in the reply's order."""
    failure: str | None = None
    """When not ok: one line saying what was expected and what came."""
    refused: bool = False
    """An empty reply or an explicit refusal."""


EMPTY = Parsed(ok=False, refused=True, failure="empty answer")


def parse(answer: str, replies: Sequence[str]) -> Parsed:
    """Read the replies to a template, one per turn, with the parser its `answer` names."""
    if answer not in PARSERS:
        raise FaithLensError(f"no answer parser named {answer!r}", f"known parsers: {', '.join(sorted(PARSERS))}")
    return PARSERS[answer](replies)


def _turns(count: int) -> Callable[[Callable[..., Parsed]], Callable[[Sequence[str]], Parsed]]:
    """Make a reader of `count` reply texts into a parser of the reply list, checking the count and emptiness."""

    def wrap(read: Callable[..., Parsed]) -> Callable[[Sequence[str]], Parsed]:
        @functools.wraps(read)
        def parser(replies: Sequence[str]) -> Parsed:
            if not replies or any(not _plain(reply) for reply in replies):
                return EMPTY
            if len(replies) != count:
                expected = f"{count} replies, one per turn" if count > 1 else "1 reply"
                return Parsed(ok=False, failure=f"expected {expected}; got {len(replies)}")
            return read(*replies)

        return parser

    return wrap


@_turns(1)
def yes_no(reply: str) -> Parsed:
    """A Yes or No that starts the reply, ends it, or stands on a line of its own ("**No**", "Answer: Yes")."""
    return _binary(reply, YES_NO, "a Yes or No answer")


@_turns(1)
def yes_no_tagged(reply: str) -> Parsed:
    """Yes or No between <answer></answer> tags (repeated tags must agree); the text around is the explanation."""
    return _tagged_binary(reply)


@_turns(1)
def objective_tagged(reply: str) -> Parsed:
    """Yes or No between <answer></answer> tags to "is this claim objective?" (ARM's zero- and few-shot
    baselines): raw label objective or subjective, label faithful or (flagged) unfaithful."""
    parsed = _tagged_binary(reply)
    if not parsed.ok:
        return parsed
    meaning = OBJECTIVITY[parsed.raw_label.lower()]
    return Parsed(ok=True, label=FLAGGED[meaning], raw_label=meaning, explanation=parsed.explanation)


@_turns(2)
def cot_yes_no(reasoning: str, reply: str) -> Parsed:
    """Two turns: the first reply is the reasoning (the explanation), the second carries the Yes or No."""
    parsed = _binary(reply, YES_NO, "a Yes or No answer in the second reply")
    return _with_explanation(parsed, reasoning)


@_turns(2)
def cot_yes_no_tagged(reasoning: str, reply: str) -> Parsed:
    """Two turns: the reasoning, then a reply with exactly one <answer>Yes</answer> or <answer>No</answer>."""
    return _with_explanation(_tagged_binary(reply), reasoning)


@_turns(1)
def yes_no_first(reply: str) -> Parsed:
    """A reply that starts with Yes or No, as TofuEval's EXP prompt asks; what follows is the explanation."""
    text = _plain(reply)
    match = re.match(LEAD.format(words="yes|no"), text, re.IGNORECASE)
    if not match:
        return _unreadable("the answer to start with Yes. or No.", reply)
    rest = text[match.end() :].lstrip(" \t\n.,:;!-")
    return _verdict(match.group(1), YES_NO, explanation=rest or None)


@_turns(1)
def true_false(reply: str) -> Parsed:
    """A True or False, placed as for `yes_no`, as FABLES' evaluation template asks."""
    return _binary(reply, TRUE_FALSE, "a True or False answer")


@_turns(1)
def dash_claims(reply: str) -> Parsed:
    """The claims, one per line starting with "- " (FABLES' separator); lines without it are not claims."""
    claims = tuple(line.strip() for line in re.findall(r"^[ \t]*- +(\S.*)$", reply, re.MULTILINE))
    if not claims:
        return _unreadable("claims on lines starting with '- '", reply)
    return Parsed(ok=True, items=claims)


@_turns(1)
def inconsistencies(reply: str) -> Parsed:
    """Each "Inconsistency:" block with its "Reason for inconsistency/consistency" paragraphs, as one item."""
    text = _plain(reply)
    heads = list(re.finditer(r"^[^\w\n]*(?:\d+[.):]?\s*)?inconsistency\b[^:\n]*:", text, re.IGNORECASE | re.MULTILINE))
    if not heads:
        return _unreadable("blocks starting 'Inconsistency:'", reply)
    ends = [head.start() for head in heads[1:]] + [len(text)]
    return Parsed(ok=True, items=tuple(_block(text[head.start() : end]) for head, end in zip(heads, ends, strict=True)))


@_turns(1)
def items(reply: str) -> Parsed:
    """The points between <item></item> tags (ARM's explanation parsing)."""
    points = tuple(_tag_contents("item", reply))
    if not points:
        return _unreadable("points between <item></item> tags", reply)
    return Parsed(ok=True, items=points)


@_turns(1)
def rewrite(reply: str) -> Parsed:
    """ARM's rewrite: the one text between <answer></answer> tags; the text around it is the explanation E."""
    found = _distinct(_tag_contents("answer", reply))
    if len(found) != 1:
        return _unreadable("one rewrite between <answer></answer> tags", reply, several=len(found) > 1)
    return Parsed(ok=True, rewrite=found[0], explanation=_outside("answer", reply))


@_turns(1)
def ambiguity_type(reply: str) -> Parsed:
    """One <type></type> tag holding 1-5 (items = ("2",)) or none (items = ()); the rest is the explanation."""
    values = _distinct(re.sub(r"^type\s*", "", _word(value)) for value in _tag_contents("type", reply))
    if len(values) != 1 or values[0] not in (*AMBIGUITY_TYPES, "none"):
        return _unreadable("one <type></type> tag holding 1-5 or none", reply, several=len(values) > 1)
    chosen = values[0]
    kinds = () if chosen == "none" else (chosen,)
    return Parsed(ok=True, raw_label=chosen, items=kinds, explanation=_outside("type", reply))


def _binary(reply: str, words: dict[str, str], expected: str) -> Parsed:
    """The label found where a final answer goes: at the start, at the end, or alone on a line.

    Anywhere else ("the story says yes to ...") it is not an answer; two different answers are ambiguous.
    The whole reply is the explanation unless it is the bare label.
    """
    text = _plain(reply)
    pattern = "|".join(words)
    matches = [
        *re.finditer(LINE.format(words=pattern), text, re.IGNORECASE | re.MULTILINE),
        re.match(LEAD.format(words=pattern), text, re.IGNORECASE),
        re.search(FINAL.format(words=pattern), text, re.IGNORECASE),
    ]
    found = [match.group(1) for match in matches if match]
    if len(_distinct(label.lower() for label in found)) != 1:
        return _unreadable(expected, reply, several=bool(found))
    bare = re.fullmatch(LINE.format(words=pattern), text, re.IGNORECASE)
    return _verdict(found[0], words, explanation=None if bare else text)


def _tagged_binary(reply: str) -> Parsed:
    contents = _tag_contents("answer", reply)
    values = _distinct(_word(value) for value in contents)
    if len(values) != 1 or values[0] not in YES_NO:
        return _unreadable("<answer>Yes</answer> or <answer>No</answer>", reply, several=len(values) > 1)
    return _verdict(_word(contents[0], lower=False), YES_NO, explanation=_outside("answer", reply))


def _verdict(raw: str, words: dict[str, str], explanation: str | None = None) -> Parsed:
    return Parsed(ok=True, label=words[raw.lower()], raw_label=raw, explanation=explanation)


def _with_explanation(parsed: Parsed, reasoning: str) -> Parsed:
    if not parsed.ok:
        return parsed
    return Parsed(ok=True, label=parsed.label, raw_label=parsed.raw_label, explanation=reasoning.strip())


def _unreadable(expected: str, reply: str, several: bool = False) -> Parsed:
    """A failure line; an explicit refusal ("I'm sorry, I can't ...") is marked refused."""
    if several:
        return Parsed(ok=False, failure=f"ambiguous: expected {expected} and got several: {_preview(reply)}")
    refused = bool(REFUSAL.match(_plain(reply).lower().replace("\u2019", "'")))
    return Parsed(ok=False, refused=refused, failure=f"expected {expected}; got {_preview(reply)}")


def _block(chunk: str) -> str:
    """An inconsistency's own paragraph and the "Reason ..." paragraphs after it, not trailing commentary."""
    paragraphs = re.split(r"\n\s*\n", chunk.strip())
    kept = [paragraphs[0]]
    for paragraph in paragraphs[1:]:
        if not re.match(r"^[^\w\n]*reason\b", paragraph, re.IGNORECASE):
            break
        kept.append(paragraph)
    return re.sub(r"^[^\w]+", "", "\n".join(kept)).strip()


def _tag_contents(tag: str, reply: str) -> list[str]:
    """The stripped texts between <tag></tag> pairs; empty pairs (the model quoting the instruction) are dropped."""
    found = re.findall(rf"<{tag}>(.*?)</{tag}>", reply, re.IGNORECASE | re.DOTALL)
    return [text.strip() for text in found if text.strip()]


def _outside(tag: str, reply: str) -> str | None:
    """The reply without its filled <tag></tag> pairs, or None when nothing else is left."""
    pairs = re.compile(rf"<{tag}>(.*?)</{tag}>", re.IGNORECASE | re.DOTALL)
    rest = pairs.sub(lambda pair: " " if pair.group(1).strip() else pair.group(0), reply)
    rest = "\n".join(line.rstrip() for line in rest.strip().splitlines())
    return rest or None


def _distinct(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _word(text: str, lower: bool = True) -> str:
    """A one-word answer without markdown, quotes or a trailing period: "**Yes.**" -> "yes"."""
    word = _plain(text).strip(" \t\n\"'.!")
    return word.lower() if lower else word


def _plain(text: str) -> str:
    """The reply without markdown emphasis markers and surrounding whitespace."""
    return re.sub(r"\*+|__", "", text).strip()


def _preview(reply: str) -> str:
    line = " ".join(reply.split())
    return repr(line if len(line) <= PREVIEW else line[: PREVIEW - 3] + "...")


PARSERS: dict[str, Callable[[Sequence[str]], Parsed]] = {
    "yes_no": yes_no,
    "yes_no_tagged": yes_no_tagged,
    "objective_tagged": objective_tagged,
    "cot_yes_no": cot_yes_no,
    "cot_yes_no_tagged": cot_yes_no_tagged,
    "yes_no_first": yes_no_first,
    "true_false": true_false,
    "dash_claims": dash_claims,
    "inconsistencies": inconsistencies,
    "items": items,
    "rewrite": rewrite,
    "ambiguity_type": ambiguity_type,
}
"""Answer-shape name (a template's `answer`) -> parser of the replies, one per turn."""
