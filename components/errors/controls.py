"""The Errors page's controls, bound to the URL: the family and how its distribution is broken down,
then the recall's reference, units, split and sources. A link value the dataset lacks is dropped with
a note, and what is used is what the widgets show."""

from __future__ import annotations

from dataclasses import dataclass, replace

import streamlit as st

from components import shell, urlstate
from components.errors import data as errors_data
from components.markdown import md_escape
from faithlens import querystate
from faithlens.analysis.tag_stats import ANY_SOURCE, Family
from faithlens.analysis.thresholds import ALL
from faithlens.unit_filter import level_noun
from faithlens.views.errors import ANY_TYPE, NO_REFERENCE, OF_ALL, OF_TAGGED, SINGLE, Recall
from faithlens.views.states import ErrorsState, RunsState
from faithlens.vocab import GOLD

NONE_BY = "none"
BY_WORDS = {
    "generator": "generator",
    "generator_group": "generator, shuffled slots pooled",
    "topic_type": "topic type (main / marginal)",
    "corpus": "corpus",
    "split": "split",
}


@dataclass(frozen=True)
class Chosen:
    family: Family
    by: str | None
    of: str
    tagged_by: str | None
    url: ErrorsState
    """What the URL says: choices at their default (the first family, the default breakdown) stay out."""
    wanted: ErrorsState
    """The link's state for the controls below; the user has just chosen another family when `reseed`,
    and what depended on the old one (its reference, sources and tag source) starts afresh."""
    reseed: bool


@dataclass(frozen=True)
class Asked:
    result: Recall | None
    splits: tuple[str, ...]
    url: ErrorsState


def _key(dataset: str, name: str) -> str:
    return urlstate.key(urlstate.ERRORS, dataset, name)


def family_label(family: Family) -> str:
    """'error_type · 966 sentences' or 'verdicts of gold · 3,158 claims'."""
    name = f"verdicts of {family.verdicts_of}" if family.verdicts_of else family.name
    return f"{name} · {family.units:,} {level_noun(family.level, family.units)}"


def _checked(value: str | None, allowed: tuple[str, ...], default: str, name: str, notes: list[str]) -> str:
    if value is None:
        return default
    if value in allowed:
        return value
    notes.append(querystate.ignored(name, value, "not available here, so the default is shown"))
    return default


def distribution_choices(
    ctx: shell.PageContext, wanted: ErrorsState, families: tuple[Family, ...], notes: list[str]
) -> Chosen:
    """Family, breakdown, denominator and tag source."""
    by_key = {f.key: f for f in families}
    keys = tuple(by_key)
    dims = (*errors_data.dimensions(ctx.db_path, ctx.version, ctx.dataset), NONE_BY)
    first, second, third, fourth = st.columns([3, 2, 2, 2], vertical_alignment="bottom")
    family_key = first.selectbox(
        "Values of",
        keys,
        key=urlstate.bind(_key(ctx.dataset, "family"), _checked(wanted.family, keys, keys[0], "family", notes), keys),
        format_func=lambda k: family_label(by_key[k]),
        help="A tag family (error types, difficulty, ambiguity types, a codebook's codes) or one label source's "
        "verdicts, at one level.",
    )
    family = by_key[family_key]
    reseed = family_key != (wanted.family if wanted.family in keys else keys[0])
    if reseed:
        wanted = replace(wanted, tagged_by=None, reference=None, sources=())
    default_by = dims[0]
    by = second.selectbox(
        "Broken down by",
        dims,
        key=urlstate.bind(_key(ctx.dataset, "by"), _checked(wanted.by, dims, default_by, "by", notes), dims),
        format_func=lambda d: "(all units together)" if d == NONE_BY else BY_WORDS[d],
    )
    of = third.radio(
        "% of",
        (OF_TAGGED, OF_ALL),
        key=urlstate.bind(_key(ctx.dataset, "of"), wanted.of, (OF_TAGGED, OF_ALL)),
        format_func=lambda o: "units carrying any value" if o == OF_TAGGED else f"every {family.level}",
        help="TofuEval Figure 2 counts over the inconsistent sentences (those with an error type); its Appendix "
        "Figure 5 over every sentence.",
    )
    tagged_by, url_tagged_by = _tag_source(ctx, fourth, family, wanted.tagged_by, reseed, notes)
    url = ErrorsState(
        ctx.dataset, None if family_key == keys[0] else family_key, None if by == default_by else by, of, url_tagged_by
    )
    return Chosen(family, None if by == NONE_BY else by, of, tagged_by, url, wanted, reseed)


def _tag_source(
    ctx: shell.PageContext, place, family: Family, wanted: str | None, reseed: bool, notes: list[str]
) -> tuple[str | None, str | None]:
    """Whose tags count (None: every source's) and what the URL says of it (None: the default, the
    dataset's gold where gold gives the family). Drawn when the family has tags from two or more sources."""
    default = family.default_tagged_by or ANY_SOURCE
    options = tuple(dict.fromkeys((*((GOLD,) if GOLD in family.sources else ()), *family.sources, ANY_SOURCE)))
    if family.verdicts_of is not None or len(family.sources) < 2:
        if wanted is not None and wanted not in (*family.sources, ANY_SOURCE):
            notes.append(querystate.ignored("tagged_by", wanted, "no such tag source for this family"))
        return family.default_tagged_by, None
    initial = _checked(wanted, options, default, "tagged_by", notes)
    chosen = place.selectbox(
        "Tagged by",
        options,
        key=urlstate.bind(_key(ctx.dataset, "tagged_by"), initial, options, reseed),
        format_func=lambda s: _source_words(s, family),
        help="Whose tags are counted. By default the dataset's own (gold) where it gives this family, as the "
        "papers count them: a coder's or a model's tags join only when chosen here.",
    )
    return (None if chosen == ANY_SOURCE else chosen), (None if chosen == default else chosen)


def _source_words(source: str, family: Family) -> str:
    if source == ANY_SOURCE:
        return "any source (all of them)"
    return f"{source} (the dataset's own)" if source == GOLD == family.default_tagged_by else source


def recall_choices(ctx: shell.PageContext, chosen: Chosen, notes: list[str]) -> Asked:
    """Reference, units, split and sources of the recall; the recall itself when a source can be counted."""
    family, wanted = chosen.family, chosen.wanted
    compared, references, default_reference = errors_data.recall_options(ctx.db_path, ctx.version, ctx.dataset, family)
    splits = errors_data.splits(ctx.db_path, ctx.version, ctx.dataset)
    url = chosen.url
    if not [c for c in compared if c.name != default_reference]:
        st.info(
            md_escape(
                f"No other label source gives {family.level} labels in {ctx.dataset} yet. Run a method on the Runs "
                "page, or code a session, and its recall per value shows here."
            ),
            icon=":material/info:",
        )
        st.page_link(
            **urlstate.link(urlstate.RUNS, RunsState(ctx.dataset)), label="Runs", icon=":material/play_circle:"
        )
        given = {"reference": wanted.reference, "split": wanted.split, "sources": ", ".join(wanted.sources) or None}
        notes += [querystate.ignored(k, v, "no source here to count recall for") for k, v in given.items() if v]
        return Asked(None, splits, url)
    reference, typed, split = _settings(ctx, chosen, references, default_reference, splits, notes)
    sources = _sources(ctx, chosen, tuple(c for c in compared if c.name != reference), notes)
    if not sources:
        st.info("Choose at least one source to count recall for.", icon=":material/info:")
        return Asked(None, splits, replace(url, sources=()))
    result = errors_data.recall(
        ctx.db_path, ctx.version, ctx.dataset, family, sources, reference, split, typed, chosen.tagged_by
    )
    all_chosen = set(sources) == {c.name for c in compared if c.name != reference}
    url = replace(
        chosen.url,
        reference=None if reference == default_reference else (reference or NO_REFERENCE),
        typed=typed,
        split=None if split == ALL else split,
        sources=() if all_chosen else sources,
    )
    return Asked(result, splits, url)


def _settings(
    ctx: shell.PageContext,
    chosen: Chosen,
    references: tuple[str, ...],
    default_reference: str | None,
    splits: tuple[str, ...],
    notes: list[str],
) -> tuple[str | None, str, str]:
    """The recall's reference (None: every unit carrying the value), units and split."""
    wanted = chosen.wanted
    refs = (NO_REFERENCE, *references)
    first, second, third = st.columns([2, 2, 1], vertical_alignment="bottom")
    reference = first.selectbox(
        "Units that count: unfaithful according to",
        refs,
        key=urlstate.bind(
            _key(ctx.dataset, "reference"),
            _checked(wanted.reference, refs, default_reference or NO_REFERENCE, "reference", notes),
            refs,
            chosen.reseed,
        ),
        format_func=lambda r: "(every unit carrying the value)" if r == NO_REFERENCE else r,
    )
    typed = second.radio(
        "Units carrying",
        (SINGLE, ANY_TYPE),
        key=urlstate.bind(_key(ctx.dataset, "typed"), wanted.typed, (SINGLE, ANY_TYPE)),
        format_func=lambda t: "only this value (TofuEval Fig. 4)" if t == SINGLE else "this value, maybe others",
        horizontal=True,
    )
    split_options = (ALL, *splits)
    split = third.selectbox(
        "Split",
        split_options,
        key=urlstate.bind(
            _key(ctx.dataset, "split"), _checked(wanted.split, split_options, ALL, "split", notes), split_options
        ),
    )
    return (None if reference == NO_REFERENCE else reference), typed, split


def _sources(ctx: shell.PageContext, chosen: Chosen, compared, notes: list[str]) -> tuple[str, ...]:
    wanted = chosen.wanted
    names = tuple(c.name for c in compared)
    unknown = [s for s in wanted.sources if s not in names]
    notes += [querystate.ignored("sources", s, "it gives no labels or scores at this level") for s in unknown]
    initial = [s for s in wanted.sources if s in names] or list(names)
    picked = st.multiselect(
        "Sources",
        names,
        key=urlstate.bind(_key(ctx.dataset, "sources"), initial, names, chosen.reseed),
        help="Every source with labels or scores at the family's level; a score source is labelled at the threshold "
        "Compare tunes on val/dev.",
    )
    return tuple(picked)
