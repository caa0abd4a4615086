"""Who is acting in a page run, from what the browser cannot forge: Streamlit's signed sign-in cookie
(`st.user`, FAITHLENS_AUTH=oidc) or FaithLens's sealed cookie (FAITHLENS_AUTH=links, set by the
sign-in route of components/signin_routes.py). Nobody signed in: the sign-in page, and the run stops.
Also the sidebar's line on who you are, with Sign out.

A session ended in one tab (signed out, or revoked by an admin) raises `access.SignedOut` at the next
run of every other tab of that browser: they show the sign-in page with a note.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

import duckdb
import streamlit as st

from components.markdown import md_escape
from faithlens import access, config
from faithlens.access import Actor
from faithlens.errors import FaithLensError

SIGN_OUT_ERROR = "signin.sign_out_error"
SIGN_OUT_PATH = "/signout"
"""The sign-out route of links mode (components/signin_routes.py, served by serve.py); the sign-in
route is the core's `links.SIGN_IN_PATH`, which the links it makes point at."""


def _claims(auth: str) -> dict[str, object] | None:
    return dict(st.user.to_dict()) if auth == "oidc" else None


def _sealed(auth: str) -> str | None:
    return st.context.cookies.get(access.LINK_COOKIE) if auth == "links" else None


def actor_of_run(root: duckdb.DuckDBPyConnection, version: str) -> Actor:
    """The acting person of this run; when nobody is signed in, the sign-in page and `st.stop()`."""
    auth = config.auth_mode()
    note = None
    try:
        actor = access.resolve(root, version, claims=_claims(auth), sealed=_sealed(auth))
    except access.SignedOut as exc:
        actor, note = None, exc
    if actor is None:
        sign_in_page(auth, note)
        st.stop()
    return actor


def _providers() -> list[tuple[str, str]]:
    """(name for st.login, what to call it) for each provider of `[auth]` in the secrets: the default
    one (named by its metadata URL's host) and named ones (`[auth.NAME]`)."""
    try:
        auth = st.secrets.get("auth", {})
    except FileNotFoundError:  # no secrets file at all
        auth = {}
    named = [(name, name) for name, value in auth.items() if isinstance(value, Mapping) and value.get("client_id")]
    if auth.get("client_id"):
        host = urlsplit(str(auth.get("server_metadata_url", ""))).hostname or "your identity provider"
        return [("default", host), *named]
    return named


def _oidc_buttons() -> None:
    providers = _providers()
    if not providers:
        raise FaithLensError(
            "FAITHLENS_AUTH=oidc but .streamlit/secrets.toml has no [auth] provider",
            "add [auth] with redirect_uri, cookie_secret, client_id, client_secret and server_metadata_url "
            "(README, Sharing a server)",
        )
    for name, shown in providers:
        st.button(
            f"Sign in with {shown}",
            key=f"signin.{name}",
            type="primary",
            on_click=st.login,
            args=(None if name == "default" else name,),
        )


def sign_in_page(auth: str, note: FaithLensError | None) -> None:
    """The page of a browser nobody is signed in on: the note on an ended session, and how to sign in."""
    st.title("Sign in to FaithLens")
    if note is not None:
        st.info(f"{md_escape(note.message)}; {md_escape(note.hint)}.", icon=":material/logout:")
    if auth == "oidc":
        st.write("This server signs people in through their lab's identity provider.")
        with st.container():
            _oidc_buttons()
        st.caption("The first person to sign in to a new server becomes its admin; everyone after starts as a viewer.")
    else:
        st.write(
            "This server signs people in with personal sign-in links. **Open your sign-in link** in this "
            "browser to sign in; if you have none, or it expired, ask an admin of this server for one "
            "(they make it on the People page)."
        )


def _record_sign_out(root: duckdb.DuckDBPyConnection) -> None:
    """The oidc Sign out button: end this browser session for every tab, then Streamlit's own logout."""
    try:
        access.sign_out(root, claims=_claims("oidc"))
    except FaithLensError as exc:
        st.session_state[SIGN_OUT_ERROR] = exc
        return
    st.logout()


def _links_sign_out() -> None:
    """A plain form to the sign-out route: it ends the session and clears the cookie (a script cannot)."""
    st.html(
        f'<form method="post" action="{SIGN_OUT_PATH}">'
        '<button type="submit" data-testid="faithlensSignOut">Sign out</button></form>'
    )


def sidebar_identity(actor: Actor | None, root: duckdb.DuckDBPyConnection) -> None:
    """Who is signed in (name, email, role) with Sign out; local and demo mode in one short line."""
    if actor is None:
        return
    if actor.mode == "demo":
        st.caption("Public demo: reading and stored answers only.")
        return
    auth = config.auth_mode()
    if auth == "local":
        st.caption(f"local mode: you are {md_escape(actor.person.name)} ({actor.role})")
        return
    lines = [f"Signed in as **{md_escape(actor.person.name)}**"]
    if actor.person.email:
        lines.append(md_escape(actor.person.email))
    lines.append(f"role: {actor.role}")
    st.markdown("  \n".join(lines))
    failed = st.session_state.pop(SIGN_OUT_ERROR, None)
    if failed is not None:
        st.error(f"{md_escape(failed.message)}  \n**What to do:** {md_escape(failed.hint)}")
    if auth == "oidc":
        st.button("Sign out", key="signin.sign_out", on_click=_record_sign_out, args=(root,))
    else:
        _links_sign_out()
