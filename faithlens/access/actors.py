"""Who is acting: the one user of `local` mode, the CLI's user, a demo visitor, or the person a signed
browser session belongs to (`oidc`, `links`).

Identity comes only from what the browser cannot forge: Streamlit's signed sign-in cookie (`st.user`,
passed here as its claims) or FaithLens's own sealed cookie (`tokens.seal`). Nothing else the browser
sends (a query parameter, a widget value, another header) is an argument here. A page run resolves
its actor from the cached directory (`directory.current`), a few dictionary reads; only the first run
after a provider sign-in writes (the sign-in event).
"""

from __future__ import annotations

from collections.abc import Mapping

import duckdb

from faithlens import config, store
from faithlens.access import directory, links, people, tokens
from faithlens.access.rules import Actor, Person
from faithlens.errors import FaithLensError, WritesPausedError

VISITOR = Person("visitor", "Visitor", None, "demo")
LINK_SESSION_MAX_AGE_S = 30 * 24 * 3600.0
"""How long a browser stays signed in after opening a sign-in link (unless signed out or revoked)."""


class SignedOut(FaithLensError):
    """This browser's session was ended (signed out in another tab, or revoked by an admin): the app
    clears its sign-in cookie and shows the sign-in page."""

    def __init__(self) -> None:
        super().__init__("you were signed out", "sign in again to go on")


def demo_actor() -> Actor:
    """Anyone visiting a public demo: reads, and replays stored answers."""
    return Actor(VISITOR, "viewer", "demo")


def _user(as_name: str | None) -> str:
    """`--as NAME` or FAITHLENS_USER, which must be usable as they are; else the OS user name, made usable."""
    if as_name or config.get("user").strip():
        return people.check_id(config.user_name(as_name))
    return people.usable_id(config.user_name())


def cli_actor(as_name: str | None = None) -> Actor:
    """The CLI acts as FAITHLENS_USER (or `--as NAME`) with admin rights: whoever has the database file
    already has everything in it."""
    name = _user(as_name)
    return Actor(Person(name, name, None, "cli"), "admin")


def local_actor() -> Actor:
    """`local` mode's one user (FAITHLENS_USER, else the OS user), an admin, as before sign-in existed."""
    name = _user(None)
    return Actor(Person(name, name, None, "local"), "admin", config.server_mode())


def oidc_session_key(claims: Mapping[str, object]) -> str:
    """A key for one provider sign-in of one browser: the subject with the ID token's issue time, the
    same in every tab of that browser, new at the next sign-in."""
    return f"oidc|{claims.get('iss', '')}|{claims['sub']}|{claims.get('iat', '')}"


def _from_session(conn: duckdb.DuckDBPyConnection, version: str, session_key: str) -> Actor | None:
    found = directory.current(conn, version)
    person, ended = found.session(conn, tokens.digest(session_key))
    if ended:
        raise SignedOut()
    return None if person is None else Actor(person, found.role(person.id))


def resolve_oidc(conn: duckdb.DuckDBPyConnection, version: str, claims: Mapping[str, object]) -> Actor | None:
    """The person `st.user` names (its claims), or None when nobody is signed in. Their first run after
    signing in records the sign-in (and makes them a person if new); a session ended meanwhile raises
    SignedOut. While a team store does not answer, someone known is let in unrecorded (the next run
    records them), someone new gets WritesPausedError."""
    if not claims.get("is_logged_in") or not claims.get("sub"):
        return None
    session_key = oidc_session_key(claims)
    actor = _from_session(conn, version, session_key)
    if actor is not None:
        return actor
    name, email = claims.get("name"), claims.get("email")
    identity = people.Identity(str(claims["sub"]), str(email) if email else None, str(name) if name else None)
    try:
        person = people.sign_in_oidc(conn, identity, session_key)
    except WritesPausedError:
        # The team store is down: someone known reads on (their sign-in is recorded at a later run);
        # someone new must wait, since making a person is a write.
        known = directory.person_with_subject(conn, identity.subject)
        if known is None:
            raise
        return Actor(known, directory.current(conn, version).role(known.id))
    return Actor(person, directory.current(conn, store.data_version(conn)).role(person.id))


def resolve_link(conn: duckdb.DuckDBPyConnection, version: str, sealed: str | None) -> Actor | None:
    """The person of a sealed link-session cookie, or None (no cookie, forged, too old, unknown)."""
    if not sealed:
        return None
    session_key = tokens.unseal(sealed, config.get("cookie_secret"), LINK_SESSION_MAX_AGE_S)
    return _from_session(conn, version, session_key) if session_key else None


def resolve(
    conn: duckdb.DuckDBPyConnection,
    version: str,
    claims: Mapping[str, object] | None = None,
    sealed: str | None = None,
) -> Actor | None:
    """The actor of a page run under the server's settings: demo visitor, local user, or the signed-in
    person (None: nobody is signed in yet, show the sign-in page)."""
    if config.server_mode() == "demo":
        return demo_actor()
    auth = config.auth_mode()
    if auth == "local":
        return local_actor()
    if auth == "oidc":
        return resolve_oidc(conn, version, claims or {})
    return resolve_link(conn, version, sealed)


LINK_COOKIE = "faithlens_session"
"""The cookie that holds a sealed link-session key (`links` mode), set by the app's sign-in route."""


def open_link(conn: duckdb.DuckDBPyConnection, token: str, client: str) -> tuple[Person, str]:
    """Sign in with a sign-in link's token from `client` (the browser's address): the person and the
    sealed cookie value for this browser. Refused (links.SignInRefused, nothing written) for a token
    that signs nobody in, or a client that failed too often lately."""
    secret = config.get("cookie_secret")
    tokens.check_secret(secret)  # a missing or short secret is refused before the link is spent
    person, session_key = links.redeem(conn, token, client)
    return person, tokens.seal(session_key, secret)


def _session_key(claims: Mapping[str, object] | None, sealed: str | None) -> str | None:
    if claims is not None:
        return oidc_session_key(claims) if claims.get("is_logged_in") and claims.get("sub") else None
    if not sealed:
        return None
    return tokens.unseal(sealed, config.get("cookie_secret"), LINK_SESSION_MAX_AGE_S)


def sign_out(
    conn: duckdb.DuckDBPyConnection, claims: Mapping[str, object] | None = None, sealed: str | None = None
) -> Person | None:
    """End the browser session that `claims` (oidc) or the sealed cookie value (links) stands for, at
    once in every tab: each raises SignedOut at its next run. Returns who was signed out; None when
    the session was unknown or had already ended (nothing written)."""
    session_key = _session_key(claims, sealed)
    if session_key is None:
        return None
    found = directory.current(conn, store.data_version(conn))
    person, ended = found.session(conn, tokens.digest(session_key))
    if person is None or ended:
        return None
    people.sign_out(conn, Actor(person, found.role(person.id)), session_key)
    return person
