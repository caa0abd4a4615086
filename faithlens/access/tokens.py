"""Random tokens, their stored hashes, and the signed value a browser keeps for its session.

A sign-in link's token and a browser session's key are 32 random bytes (`secrets.token_urlsafe`, 256
bits). Only their sha256 is stored. A plain hash suffices, with no salt or slow key stretching: those
defend low-entropy secrets (passwords) against guessing, and nobody can enumerate 2**256 tokens, so
someone who reads the database (or the team store) learns hashes that open nothing. Comparing hashes
as dictionary keys leaks no timing that matters either: the hash of a guess reveals nothing about
which stored token it is near.

`seal` and `unseal` sign a session key with HMAC-SHA256 under the cookie secret (FAITHLENS_COOKIE_SECRET),
for the cookie the app sets after a sign-in link is opened: the browser can hold the value but not
forge or alter one, and a sealed value stops working when its age passes `max_age_s`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time

from faithlens.errors import FaithLensError

TOKEN_BYTES = 32
MIN_SECRET_CHARS = 32


def new_token() -> str:
    """256 random bits as URL-safe text (43 characters)."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def digest(token: str) -> str:
    """The sha256 (hex) kept in place of `token`."""
    return hashlib.sha256(token.encode()).hexdigest()


def check_secret(secret: str) -> bytes:
    if len(secret) < MIN_SECRET_CHARS:
        raise FaithLensError(
            "the cookie secret is missing or shorter than 32 characters",
            'set FAITHLENS_COOKIE_SECRET to a long random value, e.g. python -c "import secrets; '
            'print(secrets.token_urlsafe(32))"',
        )
    return secret.encode()


def _mac(key: bytes, message: str) -> str:
    raw = hmac.new(key, message.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def seal(value: str, secret: str, now: float | None = None) -> str:
    """`value` with the time it was sealed and their HMAC: `value.time.mac`."""
    key = check_secret(secret)
    stamped = f"{value}.{int(time.time() if now is None else now)}"
    return f"{stamped}.{_mac(key, stamped)}"


def unseal(sealed: str, secret: str, max_age_s: float, now: float | None = None) -> str | None:
    """The value `seal` was given, or None when the text was altered, forged or is older than `max_age_s`."""
    key = check_secret(secret)
    stamped, _, mac = sealed.rpartition(".")
    value, _, when = stamped.rpartition(".")
    if not value or not when.isdigit() or not hmac.compare_digest(mac, _mac(key, stamped)):
        return None
    age = (time.time() if now is None else now) - int(when)
    return value if 0 <= age <= max_age_s else None
