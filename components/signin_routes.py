"""The HTTP routes of `links` mode, which a Streamlit script cannot serve (it cannot set a cookie):

- `GET /signin/link?token=...` opens a sign-in link (`access.open_link`: the core records the
  sign-in, or refuses a link that is unknown, revoked or expired, and holds back an address after too
  many failures), sets the sealed session cookie (HttpOnly, SameSite=Lax) and sends the browser to `/`;
- `POST /signout` ends this browser's session in every tab (`access.sign_out`) and clears the
  cookie; `GET /signout` asks first, so a link from elsewhere cannot sign anyone out.

Wired into the server by serve.py (`st.App`). Pages are plain HTML with every value escaped; the
token never reaches a log or the address bar past the redirect.
"""

from __future__ import annotations

import html
import logging
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from components.signin import SIGN_OUT_PATH
from faithlens import access, config
from faithlens.access.links import SIGN_IN_PATH
from faithlens.errors import FaithLensError

log = logging.getLogger("faithlens.signin")
NO_STORE = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}


def _root():
    from components import shell  # here: the shell's caches belong to the running Streamlit runtime

    return shell.root_connection(str(config.db_path()))


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    text = (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)} · FaithLens</title></head>"
        f"<body style='font-family:sans-serif;max-width:40em;margin:4em auto'><h1>{html.escape(title)}</h1>"
        f"{body}</body></html>"
    )
    return HTMLResponse(text, status_code=status, headers=NO_STORE)


def _refused(exc: FaithLensError, status: int) -> HTMLResponse:
    hint = f"<p><b>What to do:</b> {html.escape(exc.hint)}</p>" if exc.hint else ""
    return _page("Sign-in refused", f"<p role='alert'>{html.escape(exc.message)}</p>{hint}", status)


def _links_only() -> HTMLResponse | None:
    if config.auth_mode() == "links":
        return None
    return _page("Not here", "<p>This server does not use sign-in links (FAITHLENS_AUTH is not links).</p>", 404)


def _token(request: Request) -> str:
    return (parse_qs(request.url.query).get("token") or [""])[-1]


def sign_in(request: Request) -> Response:
    """Open a sign-in link: set the session cookie and go to the app, or say why not (nothing written)."""
    elsewhere = _links_only()
    if elsewhere is not None:
        return elsewhere
    client = request.client.host if request.client else "unknown"
    try:
        person, sealed = access.open_link(_root(), _token(request), client)
    except access.SignInRefused as exc:
        return _refused(exc, 403)
    except FaithLensError as exc:  # the cookie secret is not set, the database cannot be opened
        return _refused(exc, 503)
    log.info("signed in by link: %s", person.id)
    response = RedirectResponse("/", status_code=303, headers=NO_STORE)
    response.set_cookie(
        access.LINK_COOKIE,
        sealed,
        max_age=int(access.LINK_SESSION_MAX_AGE_S),
        path="/",
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
    )
    return response


def sign_out(request: Request) -> Response:
    """POST: end this browser's session and clear its cookie; GET: a page with the button that does."""
    elsewhere = _links_only()
    if elsewhere is not None:
        return elsewhere
    if request.method == "GET":
        form = f"<form method='post' action='{SIGN_OUT_PATH}'><button type='submit'>Sign out</button></form>"
        return _page("Sign out", f"<p>Sign out of FaithLens in every tab of this browser?</p>{form}")
    try:
        access.sign_out(_root(), sealed=request.cookies.get(access.LINK_COOKIE))
    except FaithLensError as exc:
        return _refused(exc, 503)
    response = RedirectResponse("/", status_code=303, headers=NO_STORE)
    response.delete_cookie(access.LINK_COOKIE, path="/", httponly=True, samesite="lax")
    return response


ROUTES = [Route(SIGN_IN_PATH, sign_in, methods=["GET"]), Route(SIGN_OUT_PATH, sign_out, methods=["GET", "POST"])]
