"""The methods a user can run on demand: which levels each judges, its variants and evidence
settings, which prompt files it sends, and what its parsed answer means as a label.

The prompt wording lives in `prompts/*.toml` (the papers' own where they give it); this module only
says how a method is wired to a target.
"""

from __future__ import annotations

from dataclasses import dataclass

from faithlens.errors import FaithLensError
from faithlens.llm import prompts
from faithlens.llm.targets import Target

EVIDENCE_SETTINGS = ("none", "human", "bm25", "semantic", "hybrid", "document")
EVIDENCE_TITLES = {
    "none": "none (the claim alone)",
    "human": "the annotators' evidence quotes",
    "bm25": "BM25 top-k passages of the source",
    "semantic": "semantic top-k passages of the source (all-MiniLM-L6-v2; not in the paper)",
    "hybrid": "BM25 + semantic top-k passages of the source (rank fusion; not in the paper)",
    "document": "the entire source document",
}
RANKED_EVIDENCE = ("bm25", "semantic", "hybrid")
"""Settings that retrieve the top k of the document's 256-word passages, each by the alignment ranker
of the same name (FABLES' own setting is BM25, which keeps its own index: `evidence.bm25_evidence`)."""


ARM_LEVELS = ("sentence", "claim")
SUBJECTIVITY_NOTE = (
    "ARM Table 2 detects subjective claims: the model answers whether the claim is objective; a subjective "
    "claim is stored as unfaithful (raw 'subjective'), an objective one as faithful (raw 'objective'), the "
    "way an ARM rewrite's r ≠ s is stored, so Compare scores both alike."
)
SELF_CONSISTENCY_NOTE = (
    "Three zero-shot CoT answers to 'is the claim consistent?' at temperature 0.7 (ARM section 4.4); the label "
    "is their majority (No: unfaithful). ARM's Table 2 scores it against subjectivity labels, a No counting "
    "as a claim flagged."
)


ACTIONS = ("verify", "rewrite", "classify", "extract")
"""What a method does with a target; every page that asks offers every action that applies."""
POINTS_PROMPT = "arm-explanation-points"
"""ARM A.3: the prompt that splits a rewrite's explanation into points, sent after the rewrite."""


@dataclass(frozen=True)
class Method:
    """One on-demand method. `action` is what the page calls it: verify, rewrite, classify or extract."""

    name: str
    action: str
    title: str
    levels: tuple[str, ...]
    variant_by_level: bool = False
    """TofuEval's prompts come in a sentence and a summary version: the target's level picks one."""
    evidence: bool = False
    draws: int = 1
    """Self-consistency: the prompt is sent this many times, each draw a request of its own, and the label
    is the majority of their verdicts (`faithlens.llm.votes`)."""
    note: str = ""
    """What the label means when it is not a plain faithfulness verdict (shown beside the answer)."""

    @property
    def variants(self) -> tuple[str, ...]:
        """The variants a user picks among, read from the method's prompt files (`prompts.variants`), the
        one place they are defined: StorySumm's two inconsistency prompts, sent together, are one variant;
        TofuEval's level picks its prompt, so its one variant is unnamed."""
        return ("",) if self.variant_by_level else prompts.variants(self.name)

    def default_variant(self, provider: str) -> str:
        """StorySumm's prompts add a line for Claude: use that variant with Anthropic models, as the paper did."""
        if provider == "anthropic" and "claude" in self.variants:
            return "claude"
        return self.variants[0]

    def resolve_variant(self, chosen: str | None, provider: str) -> str:
        """The variant a request uses: `chosen`, or the provider's default when None; one the method
        lacks is an error naming its variants (never a silent fallback)."""
        if chosen is None:
            return self.default_variant(provider)
        if chosen not in self.variants:
            raise FaithLensError(
                f"{self.name} has no variant {chosen!r}",
                f"use one of {', '.join(v or '(none)' for v in self.variants)}",
            )
        return chosen

    def template_names(self, variant: str, level: str) -> list[str]:
        """The prompt files this method sends for `variant` at `level`, in order."""
        if self.variant_by_level:
            variant = level
        else:
            variant = self.resolve_variant(variant, "")
        template = prompts.for_method(self.name, variant)
        # A template that names a group (StorySumm's two inconsistency prompts) is sent with the rest of it.
        return [prompts.for_method(self.name, part).name for part in template.combine] or [template.name]

    def follow_ups(self) -> tuple[str, ...]:
        """Prompt files sent after the method's own, on its answer: an ARM rewrite's explanation points
        (only when r != s and the model explained its rewrite)."""
        return (POINTS_PROMPT,) if self.action == "rewrite" else ()


METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method("storysumm-binary", "verify", "StorySumm Binary", ("summary",)),
        Method("storysumm-cot", "verify", "StorySumm CoT (two turns)", ("summary",)),
        Method("storysumm-inconsistencies", "extract", "StorySumm hybrid: suggested inconsistencies", ("summary",)),
        Method("fables-verify", "verify", "FABLES claim verification", ("claim", "sentence"), evidence=True),
        Method("fables-extract-claims", "extract", "FABLES claim extraction", ("summary",)),
        Method("tofueval-dir", "verify", "TofuEval DIR", ("sentence", "summary"), variant_by_level=True),
        Method("tofueval-exp", "verify", "TofuEval EXP", ("sentence", "summary"), variant_by_level=True),
        Method("arm-rewrite", "rewrite", "ARM rewrite", ARM_LEVELS),
        Method("arm-ambiguity-type", "classify", "ARM ambiguity type (ours)", ("sentence", "claim")),
        Method("arm-zero-shot", "verify", "ARM Table 2 baseline: zero-shot", ARM_LEVELS, note=SUBJECTIVITY_NOTE),
        Method("arm-few-shot", "verify", "ARM Table 2 baseline: few-shot", ARM_LEVELS, note=SUBJECTIVITY_NOTE),
        Method(
            "arm-self-consistency",
            "verify",
            "ARM Table 2 baseline: self-consistency (3 CoT draws, majority)",
            ARM_LEVELS,
            draws=3,
            note=SELF_CONSISTENCY_NOTE,
        ),
    )
}


def method(name: str) -> Method:
    if name not in METHODS:
        raise FaithLensError(f"unknown method {name!r}", f"use one of {', '.join(METHODS)}")
    return METHODS[name]


def methods_for(level: str) -> list[Method]:
    """The methods that can judge a target at `level`, in menu order."""
    return [m for m in METHODS.values() if level in m.levels]


def method_reason(method: Method, target: Target) -> str | None:
    """Why `method` cannot judge this target (its prompts need the source text the dataset lacks), or None."""
    if target.document:
        return None
    variant = method.variants[0]
    if any("story" in prompts.load(name).slots() for name in method.template_names(variant, target.level)):
        return target.document_note or "its prompt needs the source text, which this dataset does not include"
    return None


def evidence_reason(setting: str, target: Target) -> str | None:
    """Why `setting` cannot be used for this target (the page disables it with this), or None."""
    if setting not in EVIDENCE_SETTINGS:
        return f"unknown evidence setting {setting!r}; use one of {', '.join(EVIDENCE_SETTINGS)}"
    if setting in (*RANKED_EVIDENCE, "document") and not target.document:
        return target.document_note or "the dataset does not include the source text"
    if setting == "human" and not target.human_evidence:
        return "no annotator evidence quotes for this unit (FABLES claims carry them)"
    return None


def evidence_parameters(setting: str, k: int) -> dict[str, object]:
    """What an answer records of its evidence setting: the setting, k for a retrieval, and for the
    semantic and hybrid retrievals the exact version of their ranker (the paper's BM25 is fixed here)."""
    from faithlens.build.rankers import registry

    recorded: dict[str, object] = {"evidence": setting}
    if setting in RANKED_EVIDENCE:
        recorded["k"] = k
    if setting in RANKED_EVIDENCE and setting != "bm25":
        recorded["ranker"] = registry()[setting].version
    return recorded


def source_name(name: str, variant: str, evidence: str | None, model: str) -> str:
    """The label source an answer feeds: `llm/<method>[-<variant>][-<evidence>]/<model>`."""
    method = METHODS[name]
    parts = [name, variant if len(method.variants) > 1 else "", evidence if method.evidence else ""]
    return f"llm/{'-'.join(p for p in parts if p)}/{model}"
