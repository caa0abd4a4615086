"""Every permission rule: each role x action x the facts a caller supplies, normal and demo mode,
against a table written from issue 28's words (not from faithlens/access/rules.py)."""

from __future__ import annotations

import itertools

import pytest

from faithlens.access import ACTIONS, ROLES, Actor, PermissionDenied, Person, allowed, require

ME = Person("ann", "Ann", "ann@lab.org", "oidc", "sub-ann")
FACT_VALUES = {
    "read": [{}],
    "read_blind_others": [{"blind": b, "closed": c} for b, c in itertools.product((False, True), repeat=2)],
    "code": [{"member": m, "closed": c} for m, c in itertools.product((False, True), repeat=2)],
    "undo_own": [{"owner": o, "closed": c} for o, c in itertools.product(("ann", "bob"), (False, True))],
    "join": [{"closed": c} for c in (False, True)],
    "read_agreement": [{"closed": c} for c in (False, True)],
    "adjudicate": [{"closed": c} for c in (False, True)],
    "ask_model": [{"cached": c} for c in (False, True)],
    "start_run": [{}],
    "import_answers": [{}],
    "manage_people": [{}],
    "manage_codebooks": [{}],
    "manage_sessions": [{}],
    "close_session": [{}],
    "compute_alignment": [{}],
}


def expected(role: str, action: str, facts: dict, demo: bool) -> bool:
    """The issue, bullet by bullet."""
    codes = role in ("coder", "runner", "adjudicator", "admin")  # a runner and an adjudicator code too
    if demo:  # "no writes, no paid calls, no sessions and no runs"; browsing and replaying cached answers
        if action == "read":
            return True
        if action == "read_blind_others":
            return not facts["blind"] or facts["closed"]
        if action == "read_agreement":
            return facts["closed"]
        return action == "ask_model" and facts["cached"]
    if action in ("read", "compute_alignment"):  # viewer: reads everything that is not blinded; an alignment
        return True  # a document lacks is derived from what they read, so anyone but a demo's visitor stores it
    if action == "read_blind_others":  # blind until an admin closes it; adjudicators and admins see all
        return role in ("adjudicator", "admin") or not facts["blind"] or facts["closed"]
    if action == "code":  # codes in sessions they were invited to or joined
        return codes and facts["member"] and not facts["closed"]
    if action == "join":  # a coder joins an open session themself (the Sessions page's "open this session")
        return codes and not facts["closed"]
    if action == "read_agreement":  # adjudicators and admins; coders see them once an admin closes the session
        return role in ("adjudicator", "admin") or facts["closed"]
    if action == "undo_own":  # undo only takes back your own codes
        return codes and facts["owner"] == "ann" and not facts["closed"]
    if action == "adjudicate":
        return role in ("adjudicator", "admin") and not facts["closed"]
    if action == "ask_model":  # cache hits are open to every role that can read; new answers are paid
        return facts["cached"] or role in ("runner", "admin")
    if action in ("start_run", "import_answers"):  # a demo pack's answers become model labels: runners and admins
        return role in ("runner", "admin")
    return role == "admin"  # people, roles, budgets, codebooks, sessions, closing a session


CASES = [
    (role, action, facts, demo)
    for role in ROLES
    for action in ACTIONS
    for facts in FACT_VALUES[action]
    for demo in (False, True)
]


def test_the_table_covers_every_role_and_action():
    assert {(case[0], case[1]) for case in CASES} == set(itertools.product(ROLES, ACTIONS))
    assert set(FACT_VALUES) == set(ACTIONS)


@pytest.mark.parametrize(("role", "action", "facts", "demo"), CASES)
def test_rule(role: str, action: str, facts: dict, demo: bool):
    actor = Actor(ME, role, "demo" if demo else "normal")
    want = expected(role, action, facts, demo)
    assert allowed(actor, action, **facts) is want
    if want:
        require(actor, action, **facts)
        return
    with pytest.raises(PermissionDenied) as refused:
        require(actor, action, **facts)
    text = str(refused.value)
    assert "\n" not in text and text.startswith(f"Ann ({role}) may not "), text
    assert refused.value.hint, "a refusal says what to do"


def test_a_fact_left_out_is_a_programming_error_not_a_pass():
    actor = Actor(ME, "admin")
    with pytest.raises(TypeError, match="missing \\['member'\\]"):
        require(actor, "code", closed=False)
    with pytest.raises(TypeError, match="unexpected \\['blind'\\]"):
        require(actor, "adjudicate", closed=False, blind=True)
    with pytest.raises(ValueError, match="unknown action"):
        require(actor, "delete_everything")


def test_refusals_say_why_in_words_a_coder_understands():
    coder = Actor(ME, "coder")
    with pytest.raises(PermissionDenied, match="the code is someone else's"):
        require(coder, "undo_own", owner="bob", closed=False)
    with pytest.raises(PermissionDenied, match="blind until an admin closes it"):
        require(coder, "read_blind_others", blind=True, closed=False)
    with pytest.raises(PermissionDenied, match="only adjudicators and admins adjudicate"):
        require(coder, "adjudicate", closed=False)
    with pytest.raises(PermissionDenied, match="nothing is written or paid for on a demo server"):
        require(Actor(ME, "admin", "demo"), "code", member=True, closed=False)
