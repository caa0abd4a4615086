"""The People page's controls. Each submits one core write (`faithlens.access.people` / `.links`, which
refuse anyone but an admin) and reruns the page, which then says what was done; a refusal or bad
input shows the one error box and changes nothing."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from urllib.parse import urlsplit

import duckdb
import streamlit as st

from components import shell
from components.markdown import md_escape
from faithlens import access
from faithlens.access import Actor, links, people, roster

DONE = "people.done"
NEW_LINK = "people.new_link"


def _apply(write: Callable[[], object], done: str) -> None:
    """Run one core write; on success remember `done` to say it and rerun, else the error box."""
    with shell.guard():
        write()
    st.session_state[DONE] = done
    st.rerun()


def show_results() -> None:
    """What the last control did; a new link's URL, shown this once (only its hash is stored)."""
    done = st.session_state.pop(DONE, None)
    made = st.session_state.pop(NEW_LINK, None)
    if done:
        st.success(md_escape(done), icon=":material/check:")
    if made:
        person, url, expires = made
        st.warning(
            f"**Sign-in link for {md_escape(person)}**, valid until {expires:%Y-%m-%d %H:%M}. Copy it now and send "
            "it to them only: it is shown this once, and whoever opens it signs in as them.",
            icon=":material/key:",
        )
        st.code(url, language=None)


def _base_url() -> str:
    """This server's address as the browser reached it (for a link to paste elsewhere)."""
    parts = urlsplit(st.context.url or "")
    return f"{parts.scheme}://{parts.netloc}" if parts.netloc else ""


def add_person(conn: duckdb.DuckDBPyConnection, actor: Actor) -> None:
    with st.form("people.add", clear_on_submit=True):
        st.markdown("**Add a person** (who will sign in with a link)")
        left, middle, right, last = st.columns(4)
        person_id = left.text_input("Person (what their codes record)", placeholder="alice")
        name = middle.text_input("Name shown", placeholder="Alice Doe")
        email = right.text_input("Email (optional)")
        role = last.selectbox("Role", access.ROLES, index=1)
        if st.form_submit_button("Add person"):

            def add() -> None:
                person = people.add_person(conn, actor, person_id, name, email.strip() or None)
                people.set_role(conn, actor, person.id, role)

            _apply(add, f"Added {person_id.strip()} as {role}; make them a sign-in link below.")


def _person_picker(members: list[roster.Member]) -> str | None:
    ids = [m.person.id for m in members]
    return st.selectbox("Person", ids, index=None, placeholder="Pick a person", key="people.person")


def change_role(conn: duckdb.DuckDBPyConnection, actor: Actor, member: roster.Member) -> None:
    with st.form("people.role"):
        role = st.selectbox("Role", access.ROLES, index=access.ROLES.index(member.role))
        st.caption(md_escape(f"{role}: {access.ROLE_HELP[role]}"))
        if st.form_submit_button("Change role"):
            _apply(lambda: people.set_role(conn, actor, member.person.id, role), f"{member.person.id} is now {role}.")


def set_budget(conn: duckdb.DuckDBPyConnection, actor: Actor, member: roster.Member) -> None:
    budget = member.spending.budget
    with st.form("people.budget"):
        left, right = st.columns(2)
        day = left.number_input("Dollars a day (empty: no limit)", min_value=0.0, value=budget.day_usd, step=1.0)
        month = right.number_input("Dollars a month (empty: no limit)", min_value=0.0, value=budget.month_usd, step=5.0)
        if st.form_submit_button("Set budget"):
            _apply(
                lambda: people.set_budget(conn, actor, member.person.id, day, month),
                f"Set {member.person.id}'s budget.",
            )


def make_link(conn: duckdb.DuckDBPyConnection, actor: Actor, member: roster.Member) -> None:
    with st.form("people.link"):
        days = st.number_input("Valid for (days)", min_value=1, max_value=365, value=links.DEFAULT_VALID.days)
        if st.form_submit_button("Create sign-in link"):

            def create() -> None:
                _, token = links.create(conn, actor, member.person.id, timedelta(days=int(days)))
                url = links.sign_in_url(_base_url(), token)
                st.session_state[NEW_LINK] = (member.person.id, url, datetime.now() + timedelta(days=int(days)))

            _apply(create, f"Made a sign-in link for {member.person.id}.")


def revoke(conn: duckdb.DuckDBPyConnection, actor: Actor, member: roster.Member) -> None:
    working = [link.link_id for link in member.links if not link.revoked]
    left, right = st.columns(2)
    with left.form("people.revoke_link"):
        chosen = st.selectbox(
            "Sign-in link", working, index=None, placeholder="no link to revoke" if not working else "Pick a link"
        )
        if st.form_submit_button("Revoke link", disabled=not working) and chosen:
            _apply(lambda: links.revoke(conn, actor, chosen), f"Revoked link {chosen}: it signs nobody in now.")
    with right.form("people.revoke_all"):
        st.caption("Ends every sign-in link and signed-in browser of this person now; their codes stay.")
        if st.form_submit_button("Revoke all sessions and links"):
            _apply(
                lambda: people.revoke_person(conn, actor, member.person.id),
                f"Signed {member.person.id} out everywhere.",
            )


def person_controls(conn: duckdb.DuckDBPyConnection, actor: Actor, members: list[roster.Member]) -> None:
    """Role, budget, links and revocation of one person, picked first."""
    person_id = _person_picker(members)
    member = next((m for m in members if m.person.id == person_id), None)
    if member is None:
        return
    st.markdown(f"**{md_escape(member.person.name)}** ({md_escape(member.role)})")
    change_role(conn, actor, member)
    set_budget(conn, actor, member)
    make_link(conn, actor, member)
    revoke(conn, actor, member)
