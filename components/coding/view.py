"""The Code page's view of one unit: the source document with the passages that match the unit highlighted
beside the summary with the unit marked (or, in the ARM modes, replaced by the variant shown, or by a
placeholder beside versions A and B), and in a non-blind session the dataset's own label and the other
coders' codes in an expander.

A blind session shows no label of any kind here: no colouring by labels, no tags, no legend. The ARM
modes never say which version is the dataset's: the passages are those of the wording shown (of both
versions alike in the preference question), no gold label shows, and other coders' preferences read A or B.
Every dataset, LLM and coder string is escaped before it is wrapped (`faithlens.views.coding_unit`) and
emitted with `st.html`; Markdown text goes through `md_escape`."""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components.markdown import md_escape, md_with_code
from faithlens.coding import events, modes
from faithlens.coding.codebook import Codebook
from faithlens.coding.sessions import ADJUDICATED, Session
from faithlens.views import coding, coding_unit

PLACEHOLDER = "[ A or B, below ]"


def html(markup: str) -> None:
    """Emit escaped markup with the highlight and coding stylesheets."""
    st.html(f"<style>{coding_unit.BASE_STYLE}{coding_unit.CODING_STYLE}</style>{markup}")


def variant_text(context: modes.Context, variant: str | None) -> str | None:
    return context.original if variant == modes.ORIGINAL else context.rewrite


def _summary(session: Session, view: coding_unit.UnitInContext, context: modes.Context) -> None:
    noun = {"summary": "Summary", "sentence": "The sentence in its summary", "claim": "The claim in its summary"}
    st.markdown(f"**{noun[session.level]}**")
    if session.mode == "arm-faithfulness":
        html(coding_unit.summary_markup(view, in_place=variant_text(context, context.shown) or view.text))
    elif session.mode == "arm-preference":
        html(coding_unit.summary_markup(view, in_place=PLACEHOLDER))
        st.markdown("**Which version is better in the summary?**")
        versions = [coding_unit.version_markup(tag, variant_text(context, shown) or "") for tag, shown in _ab(context)]
        html("".join(versions))
    else:
        html(coding_unit.summary_markup(view, numbered=session.mode == "line-by-line"))


def _ab(context: modes.Context) -> list[tuple[str, str]]:
    """Versions A and B in the session's random order for this unit (never named)."""
    return list(zip("AB", context.order, strict=False))


PASSAGES_SAY = {
    "arm-faithfulness": "The passages of the source that best match the {noun} as shown here, best first:",
    "arm-preference": "The passages of the source that best match either version, A or B, highlighted alike:",
}


def _source(session: Session, view: coding_unit.UnitInContext) -> None:
    st.markdown("**Source**" + (f" · {md_escape(view.document_title)}" if view.document_title else ""))
    if not view.document_text:
        note = view.document_note or "This dataset gives no source text for this document."
        st.info(md_with_code(note), icon=":material/description:")
        return
    if view.passages:
        said = "The passages of the source that best match the {noun} (stored alignment), best first:"
        st.caption(PASSAGES_SAY.get(session.mode, said).format(noun=session.level))
        html(coding_unit.passages_markup(view))
    elif session.level != "summary":
        st.caption("No stored alignment of this unit by the chosen ranker: Explore computes it.")
    html(coding_unit.document_markup(view))


def show(session: Session, view: coding_unit.UnitInContext, context: modes.Context) -> DeltaGenerator:
    """Source beside summary; returns the column the coding controls go into (under the summary)."""
    if view.document_text or view.document_note:
        left, right = st.columns(2, gap="large")
        with left:
            _source(session, view)
    else:
        right = st.container()
    with right:
        _summary(session, view, context)
    return right


def reference(
    session: Session,
    book: Codebook,
    coder: str,
    gold: list[tuple[str, str, str | None]],
    others: dict[tuple[str, str], events.Current],
    unit: str,
    context: modes.Context,
) -> None:
    """Non-blind sessions only: the dataset's label (none in the ARM modes, which say why) and the other
    coders' current codes on this unit, in the words the coder sees (A or B in ARM preference)."""
    if session.blind:
        return
    withheld = coding_unit.gold_withheld(session)
    theirs = sorted((who, code) for (who, on), code in others.items() if on == unit and who != coder)
    with st.expander(f"Reference: {'' if withheld else 'the gold label and '}other coders' codes (not blind)"):
        if withheld:
            st.caption(md_escape(withheld))
        elif gold:
            lines = [f"- gold ({md_escape(what)}): **{md_escape(value)}**" for what, value, _ in gold]
            st.markdown("\n".join(lines))
            for what, _, why in gold:
                if why:
                    st.text(f"gold ({what}) explains: {why}")
        else:
            st.caption("The dataset gives no gold label for this unit.")
        for who, code in theirs:
            name = "adjudicated" if who == ADJUDICATED else who
            words = coding.coder_words(session, book, code.codes, context)
            st.markdown(f"- {md_escape(name)}: **{md_escape(words)}**")
            if code.note:
                st.text(f"{name}'s note: {code.note}")
        if not theirs:
            st.caption("No other coder has coded this unit yet.")
