"""The Code page's inputs for one unit, per mode, and the submission they make.

- codes, arm-faithfulness, and hybrid's overall label: one button per code (digits 1-9, then 0, as
  keyboard shortcuts), the chosen one(s) highlighted, each code's definition its tooltip; the codebook's
  definitions, each code's example in a popover beside it; a note (the explanation), which the codes that
  require one say. A multi-choice codebook's none code ("No error") excludes the others.
- line-by-line: every sentence of the summary with its code (radio) and its explanation.
- hybrid: each suggested inconsistency with agree / disagree and why, then the summary's label (consistent
  or inconsistent: N/A is for a line, not a whole summary), and a warning, not a refusal, when the coder
  agrees with an inconsistency yet labels the summary consistent (StorySumm B.2).
- arm-preference: A, B or neither (digits), and when the rewrite is chosen each point of its
  explanation as IMPORTANT, NEUTRAL or WRONG.

Every input is keyed per (session, coder, unit) and seeded from the coder's current code on that unit,
so moving away and back shows what was saved, and an error keeps what the coder typed."""

from __future__ import annotations

import streamlit as st

from components.coding import points as coding_points
from components.markdown import md_escape
from faithlens import access
from faithlens.coding import events, modes
from faithlens.coding.codebook import Codebook
from faithlens.coding.sessions import Session
from faithlens.views import coding

AGREE = (True, False)
SHORTCUTS = ("1", "2", "3", "4", "5", "6", "7", "8", "9", "0")


def _codes_key(base: str) -> str:
    return base + ".codes"


def seed(base: str, current: events.Current | None, force: bool = False) -> None:
    """Put the coder's current code on the unit into its inputs (`force`: even over what they hold)."""
    detail = (current.detail if current else None) or {}
    values: dict[str, object] = {
        _codes_key(base): tuple(current.codes) if current else (),
        base + ".note": (current.note if current else None) or "",
    }
    sentences = detail.get("sentences") or {}
    values |= {f"{base}.s.{uid}": part.get("code") for uid, part in sentences.items()}
    values |= {f"{base}.s.{uid}.note": part.get("note") or "" for uid, part in sentences.items()}
    for number, answer in enumerate(detail.get("suggestions") or []):
        values |= {f"{base}.g.{number}": answer.get("agree"), f"{base}.g.{number}.why": answer.get("why") or ""}
    for number, mark in enumerate(detail.get("points") or []):
        values[f"{base}.p.{number}"] = mark
    for name, value in values.items():
        if force or name not in st.session_state:
            st.session_state[name] = value


def clear(base: str) -> None:
    """Forget the unit's inputs, so the next visit seeds them from what is stored."""
    for name in [name for name in st.session_state if str(name).startswith(base + ".")]:
        del st.session_state[name]


def _pick(codes_key: str, key: str, multi: bool, none: str | None) -> None:
    """A code button's callback: single choice takes the code; multi choice toggles it, the none code
    clearing the others and any other code clearing the none code."""
    held = tuple(st.session_state.get(codes_key, ()))
    if not multi:
        st.session_state[codes_key] = (key,)
    elif key in held:
        st.session_state[codes_key] = tuple(k for k in held if k != key)
    else:
        st.session_state[codes_key] = (key,) if key == none else (*(k for k in held if k != none), key)


def code_buttons(
    book: Codebook, base: str, labels: dict[str, str] | None = None, offered: tuple[str, ...] | None = None
) -> None:
    """One button per code (the `offered` keys in their order, else all), a digit as its shortcut and the
    code's definition as its tooltip (shown on hover and on keyboard focus); the chosen code(s) shown as
    primary. The buttons flow in a wrapping row, each as wide as its label, so a label never breaks
    inside a word (fixed columns cut "Contradiction" at 1400 px). `labels` names the buttons instead of
    the codes (ARM preference's A and B, offered A first whichever version A is), and then no definition
    says which is which. A button's key keeps the code's place in the codebook, except under `labels`:
    there it is the button's place, since the key reaches the page (a CSS class) and would say which
    version a button stands for."""
    codes_key = _codes_key(base)
    chosen = st.session_state.get(codes_key, ())
    places = {code.key: number for number, code in enumerate(book.codes)}
    keys = [key for key in offered if key in places] if offered is not None else list(places)
    shown = [(places[key], book.codes[places[key]]) for key in keys]
    with st.container(horizontal=True, gap="small"):
        for place, (number, code) in enumerate(shown):
            st.button(
                (labels or {}).get(code.key, code.name),
                key=f"{base}.code.{place if labels else number}",
                type="primary" if code.key in chosen else "secondary",
                shortcut=SHORTCUTS[place] if place < len(SHORTCUTS) else None,
                help=None if labels else md_escape(code.definition),
                on_click=_pick,
                args=(codes_key, code.key, book.choice == "multi", book.none),
                width="content",
            )
    if book.choice == "multi":
        none = f", or {book.code(book.none).name} alone when none does" if book.none else ""
        st.caption(md_escape(f"Pick every code that applies (press a code again to drop it){none}."))


def definitions(book: Codebook, offered: tuple[str, ...] | None = None) -> None:
    """The codebook (the `offered` codes, else all): each code's definition, and its example one click
    away (a popover beside it)."""
    codes = [code for code in book.codes if offered is None or code.key in offered]
    for n, code in enumerate(codes):
        digit = SHORTCUTS[n] if n < len(SHORTCUTS) else "·"
        words, example = st.columns([3, 1], vertical_alignment="center") if code.example else (st.container(), None)
        words.markdown(f"{digit} · **{md_escape(code.name)}**: {md_escape(code.definition)}")
        if example is not None:
            with example.popover("Example", help=md_escape(f"An example of {code.name}"), width="stretch"):
                st.markdown(md_escape(code.example))


def note(book: Codebook, base: str, label: str = "Note (your explanation)") -> None:
    required = [code.name for code in book.codes if code.explanation == "required"]
    help_text = "Say why you chose the code. " + (
        f"Required when you choose: {', '.join(required)}." if required else "Optional."
    )
    st.text_area(label, key=base + ".note", height=90, help=help_text)
    if required:
        st.caption(md_escape(f"An explanation is required for: {', '.join(required)}."))


def _line_by_line(book: Codebook, base: str, context: modes.Context) -> None:
    names = {code.key: code.name for code in book.codes}
    for number, (uid, text) in enumerate(context.sentences, start=1):
        with st.container(border=True):
            st.markdown(f"**S{number}** " + md_escape(text))
            st.radio(
                f"Code of S{number}",
                list(book.keys),
                key=f"{base}.s.{uid}",
                index=None,
                format_func=names.get,
                horizontal=True,
                label_visibility="collapsed",
            )
            st.text_input(f"Why (S{number})", key=f"{base}.s.{uid}.note", placeholder="explanation")
    st.caption("The summary's own code follows from its lines: inconsistent when any line is.")
    note(book, base, "Note on the whole summary (optional)")


def _hybrid(book: Codebook, base: str, context: modes.Context) -> None:
    st.markdown("**Suggested inconsistencies**: agree or disagree with each, and say why.")
    for number, text in enumerate(context.suggestions):
        with st.container(border=True):
            st.text(f"{number + 1}. {text}")
            st.radio(
                f"Suggestion {number + 1}",
                AGREE,
                key=f"{base}.g.{number}",
                index=None,
                format_func=lambda agree: "Agree" if agree else "Disagree",
                horizontal=True,
                label_visibility="collapsed",
            )
            st.text_input(f"Why ({number + 1})", key=f"{base}.g.{number}.why", placeholder="why")
    st.markdown("**Your label for the whole summary**: consistent or inconsistent with the story")
    offered = modes.offered_codes("hybrid", book)
    code_buttons(book, base, offered=offered)
    definitions(book, offered)
    note(book, base)
    warning = caution_words(book, tuple(st.session_state.get(_codes_key(base), ())), _answers(base, context))
    if warning:
        st.warning(md_escape(warning), icon=":material/warning:")


def _answers(base: str, context: modes.Context) -> list[dict]:
    """The hybrid inputs' answers to the suggestions, as the core takes them."""
    state = st.session_state
    return [
        {"agree": state.get(f"{base}.g.{n}"), "why": state.get(f"{base}.g.{n}.why") or ""}
        for n in range(len(context.suggestions))
    ]


def caution_words(book: Codebook, codes: tuple[str, ...], answers: list[dict]) -> str | None:
    """Hybrid: the warning when the coder agrees with a suggested inconsistency yet labels the summary
    consistent (a warning, not a refusal: `modes.agreed_yet_consistent`)."""
    agreed = modes.agreed_yet_consistent(book, codes, answers)
    if not agreed:
        return None
    which = ", ".join(str(number) for number in agreed)
    return (
        f"You agree with suggested inconsistency {which} yet label the summary consistent. In StorySumm's hybrid "
        "protocol (B.2) the summary's label follows from the inconsistencies you agree with: check the label, or "
        "say in the note why it stands."
    )


def caution(session: Session, book: Codebook, sub: events.Submission) -> str | None:
    """The warning a saved submission carries (hybrid only), for the page to show after Save."""
    if session.mode != "hybrid":
        return None
    return caution_words(book, tuple(sub.codes), list((sub.detail or {}).get("suggestions") or []))


def _preference(session: Session, book: Codebook, base: str, context: modes.Context, actor: access.Actor) -> None:
    tags = modes.preference_tags(context.order)
    code_buttons(book, base, coding.preference_words(context.order), (*context.order, modes.NEUTRAL))
    chosen = st.session_state.get(_codes_key(base), ())
    if chosen == (modes.REWRITE,):
        coding_points.block(session, base, context, tags[modes.REWRITE], actor)
    note(book, base)


def inputs(session: Session, book: Codebook, base: str, context: modes.Context, actor: access.Actor) -> None:
    """The mode's inputs for one unit (seed them first)."""
    if session.mode == "line-by-line":
        _line_by_line(book, base, context)
    elif session.mode == "hybrid":
        _hybrid(book, base, context)
    elif session.mode == "arm-preference":
        _preference(session, book, base, context, actor)
    else:
        code_buttons(book, base)
        definitions(book)
        note(book, base)


def submission(session: Session, unit: str, base: str, context: modes.Context) -> events.Submission:
    """What the inputs say, as the core takes it (it checks everything)."""
    state = st.session_state
    text = (state.get(base + ".note") or "").strip() or None
    if session.mode == "line-by-line":
        missing = [
            f"S{n}" for n, (uid, _) in enumerate(context.sentences, start=1) if state.get(f"{base}.s.{uid}") is None
        ]
        if missing:
            raise events.CodingError(f"no code for {', '.join(missing)}", "code every line of the summary, then save")
        parts = {
            uid: {"code": state.get(f"{base}.s.{uid}"), "note": state.get(f"{base}.s.{uid}.note") or ""}
            for uid, _ in context.sentences
        }
        return events.Submission(unit, (), text, {"sentences": parts})
    codes = tuple(state.get(_codes_key(base), ()))
    if session.mode == "hybrid":
        return events.Submission(unit, codes, text, {"suggestions": _answers(base, context)})
    if session.mode == "arm-preference" and codes == (modes.REWRITE,) and context.points:
        marks = [state.get(f"{base}.p.{n}") for n in range(len(context.points))]
        return events.Submission(unit, codes, text, {"points": marks})
    return events.Submission(unit, codes, text)
