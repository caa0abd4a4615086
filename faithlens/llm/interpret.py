"""What a parsed answer means as a label event of its LLM source.

- verify methods: the parsed verdict (Yes/No, True/False, ...) in the shared vocabulary; ARM Table 2's
  zero- and few-shot baselines flag a subjective claim as unfaithful (raw `subjective`), as ARM's
  r != s flags a rewritten one. A self-consistency draw is no label: the majority of its vote is,
  written by `ask.answer` once every draw is stored (`faithlens.llm.votes`);
- ARM rewrite: the paper's binary label r != s. A rewritten claim counts as flagged (`unfaithful`,
  raw value `rewritten`), an unchanged one as `faithful` (raw `unchanged`): ARM's Table 3 scores this
  label against faithfulness labels, so Compare can put it beside gold the same way;
- ARM ambiguity type (ours): no verdict, only tags of the family `ambiguity_type`;
- FABLES claim extraction: no verdict; the claims become a new claim set (units) of the summary;
- StorySumm's suggested inconsistencies: no label event; the items stay with the answer.
"""

from __future__ import annotations

from faithlens.llm import methods, records
from faithlens.llm.signals import rewritten
from faithlens.llm.targets import Target
from faithlens.vocab import AMBIGUITY_FAMILY

REWRITTEN, UNCHANGED = "rewritten", "unchanged"


def arm_label(changed: bool) -> tuple[str, str]:
    """ARM's binary label r != s as (shared-vocabulary value, raw value)."""
    return ("unfaithful", REWRITTEN) if changed else ("faithful", UNCHANGED)


def interpret(call: records.Call, target: Target) -> records.LabelEvent | None:
    """The label event for a stored answer, or None when it is not a label (failed, or not a verdict)."""
    if call.status != "ok" or call.method not in methods.METHODS:
        return None
    parsed = call.parsed
    method = methods.METHODS[call.method]
    action = method.action
    if method.draws > 1:
        return None
    if action == "verify":
        return records.LabelEvent(parsed["label"], parsed["raw_label"], parsed.get("explanation"))
    if action == "rewrite":
        value, raw = arm_label(rewritten(target.text, parsed["rewrite"]))
        return records.LabelEvent(value, raw, parsed.get("explanation"), parsed["rewrite"])
    if call.method == "fables-extract-claims" and call.level == "summary":
        return records.LabelEvent(None, None, claims=tuple(parsed["items"]))
    if action == "classify":
        return records.LabelEvent(
            None, None, parsed.get("explanation"), tags={AMBIGUITY_FAMILY: tuple(parsed["items"])}
        )
    return None
