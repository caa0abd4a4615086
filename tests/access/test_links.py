"""Sign-in links on a real DuckDB file: only the token's sha256 is stored; a link signs its person in
until it expires or is revoked; failed attempts are rate-limited per client; every refusal writes
nothing; the sealed cookie cannot be forged, altered or kept past its age."""

from __future__ import annotations

import hashlib
import time
from datetime import timedelta

import pytest

from faithlens import store
from faithlens.access import actors, links, people, tokens
from faithlens.access.links import FailureLimit, SignInRefused
from faithlens.errors import FaithLensError
from tests.access.conftest import row_counts

SECRET = "c" * 40


@pytest.fixture
def admin(conn) -> actors.Actor:
    claims = {"is_logged_in": True, "sub": "sub-pi", "email": "pi@lab.org", "iat": 1}
    actor = actors.resolve_oidc(conn, store.data_version(conn), claims)
    people.add_person(conn, actor, "eve", "Eve E", "eve@lab.org")
    return actor


def dump(conn) -> str:
    """Every stored value of the access tables, as text."""
    rows = [conn.execute(f"SELECT * FROM {t}").fetchall() for t in ("person", "sign_in_link", "access_event")]
    return repr(rows)


def test_only_the_tokens_hash_is_stored_and_the_link_signs_its_person_in(conn, admin):
    link_id, token = links.create(conn, admin, "eve")
    assert len(token) >= 43, "256 random bits"
    stored = dump(conn)
    assert token not in stored
    assert hashlib.sha256(token.encode()).hexdigest() in stored
    person, session_key = links.redeem(conn, token, "192.0.2.1")
    assert person.id == "eve"
    assert session_key not in dump(conn), "nor is the browser session's key"
    actor = actors._from_session(conn, store.data_version(conn), session_key)
    assert (actor.id, actor.role) == ("eve", "viewer")
    assert link_id


def test_an_expired_link_is_refused_and_writes_nothing(conn, admin):
    _, token = links.create(conn, admin, "eve", valid_for=timedelta(seconds=1))
    time.sleep(1.1)
    before = row_counts(conn)
    with pytest.raises(SignInRefused, match="expired on"):
        links.redeem(conn, token, "192.0.2.2", FailureLimit())
    assert row_counts(conn) == before


def test_a_revoked_link_is_refused_and_writes_nothing_but_others_still_work(conn, admin):
    first, token = links.create(conn, admin, "eve")
    _, other = links.create(conn, admin, "eve")
    links.revoke(conn, admin, first)
    before = row_counts(conn)
    with pytest.raises(SignInRefused, match="revoked"):
        links.redeem(conn, token, "192.0.2.3", FailureLimit())
    assert row_counts(conn) == before
    assert links.redeem(conn, other, "192.0.2.3")[0].id == "eve"


def test_an_unknown_token_is_refused_and_writes_nothing(conn, admin):
    before = row_counts(conn)
    with pytest.raises(SignInRefused, match="not known"):
        links.redeem(conn, tokens.new_token(), "192.0.2.4", FailureLimit())
    assert row_counts(conn) == before


def test_failed_attempts_are_limited_per_client_even_for_a_valid_token_then_let_go(conn, admin):
    _, token = links.create(conn, admin, "eve")
    limit = FailureLimit(max_failures=3, window_s=600)
    for _ in range(3):
        with pytest.raises(SignInRefused, match="not known"):
            links.redeem(conn, "guess-" + tokens.new_token(), "198.51.100.7", limit)
    before = row_counts(conn)
    with pytest.raises(SignInRefused, match="too many failed sign-in attempts"):
        links.redeem(conn, token, "198.51.100.7", limit)
    assert row_counts(conn) == before
    assert links.redeem(conn, token, "198.51.100.8", limit)[0].id == "eve", "another client is not held back"


def test_the_failure_window_slides():
    limit = FailureLimit(max_failures=2, window_s=60)
    limit.fail("c", now=0)
    limit.fail("c", now=30)
    assert limit.wait_s("c", now=31) == pytest.approx(29)
    assert limit.wait_s("c", now=60.5) == 0, "the first failure left the window"


def test_a_link_for_someone_unknown_or_with_no_lifetime_is_refused(conn, admin):
    with pytest.raises(FaithLensError, match="no person named 'zed'"):
        links.create(conn, admin, "zed")
    with pytest.raises(FaithLensError, match="expires at once"):
        links.create(conn, admin, "eve", valid_for=timedelta(0))


def test_the_sealed_cookie_cannot_be_altered_forged_or_kept_too_long():
    sealed = tokens.seal("key-1", SECRET, now=1000)
    assert tokens.unseal(sealed, SECRET, max_age_s=60, now=1030) == "key-1"
    assert tokens.unseal(sealed, SECRET, max_age_s=60, now=1061) is None, "too old"
    value, when, mac = sealed.split(".")
    assert tokens.unseal(f"key-2.{when}.{mac}", SECRET, 60, now=1030) is None, "altered value"
    assert tokens.unseal(f"{value}.{int(when) + 50}.{mac}", SECRET, 60, now=1060) is None, "altered time"
    assert tokens.unseal(tokens.seal("key-1", "d" * 40, now=1000), SECRET, 60, now=1030) is None, "other secret"
    assert tokens.unseal("garbage", SECRET, 60) is None
    with pytest.raises(FaithLensError, match="FAITHLENS_COOKIE_SECRET"):
        tokens.seal("key-1", "short")
