"""Who may do what: people, roles, the acting person (`Actor`) and the one check every write and paid
call passes through, `require(actor, action, **facts)`.

A rule depends on the actor's role and mode and on facts only the caller knows (is the actor a member
of this session, is it closed, is it blind, whose code is being undone, is the answer cached). Each
action names the facts it needs; calling `require` without one is a programming error (TypeError), so
no caller can skip a fact by forgetting it. A refusal is a `PermissionDenied` with one line saying
what was refused and what to do.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from faithlens.errors import FaithLensError

ROLES = ("viewer", "coder", "runner", "adjudicator", "admin")
"""Every role, least first. One role per person; the table in ROLE_HELP says what each adds."""
ROLE_HELP = {
    "viewer": "reads everything that is not blinded",
    "coder": "codes in the sessions they joined, and undoes their own codes",
    "runner": "a coder who also asks models and starts runs, within a personal budget",
    "adjudicator": "a coder who also adjudicates and sees every coder's codes",
    "admin": "everything: people, roles, budgets, codebooks, sessions, closing a session",
}
CODING_ROLES = frozenset({"coder", "runner", "adjudicator", "admin"})
PAYING_ROLES = frozenset({"runner", "admin"})
SEEING_ROLES = frozenset({"adjudicator", "admin"})
"""Roles that see every coder's codes (and gold and LLM labels) in a blind session that is still open."""

SIGN_INS = ("local", "oidc", "link", "cli", "demo", "legacy")
"""How a person signs in: `legacy` is a name-only coder of an older session, who cannot sign in."""


@dataclass(frozen=True)
class Person:
    """Someone FaithLens knows. `id` is what events record (a coder's name in codes); `subject` is the
    OpenID Connect `sub` for `oidc` people."""

    id: str
    name: str
    email: str | None = None
    sign_in: str = "local"
    subject: str | None = None


@dataclass(frozen=True)
class Actor:
    """The person acting now, in the role they hold and the server's mode (normal or demo)."""

    person: Person
    role: str
    mode: str = "normal"

    @property
    def id(self) -> str:
        return self.person.id


class PermissionDenied(FaithLensError):
    """An action the acting person may not take; nothing was written."""

    def __init__(self, actor: Actor, action: str, why: str, hint: str) -> None:
        super().__init__(f"{actor.person.name} ({actor.role}) may not {ACTION_WORDS[action]}: {why}", hint)
        self.actor = actor
        self.action = action


ACTION_WORDS = {
    "read": "read this",
    "read_blind_others": "see other coders' codes, gold or model labels here",
    "code": "code in this session",
    "join": "join this session",
    "read_agreement": "see this session's agreement or adjudication",
    "undo_own": "undo this code",
    "adjudicate": "adjudicate this session",
    "ask_model": "ask a model",
    "start_run": "start a run",
    "import_answers": "import stored answers from a demo pack",
    "manage_people": "change people, roles, budgets or sign-in links",
    "manage_codebooks": "change codebooks",
    "manage_sessions": "create or change coding sessions",
    "close_session": "close this session",
    "compute_alignment": "compute and store an alignment",
}
ASK_ADMIN = "ask an admin for a role that allows it, on the People page"
DEMO_HINT = "this is a public demo: it reads and replays stored answers only"


Rule = Callable[[Actor, dict[str, object]], tuple[str, str] | None]
"""A rule returns None to allow, or (why, hint) to refuse."""


def _role_in(roles: frozenset[str], why: str) -> Rule:
    def rule(actor: Actor, facts: dict[str, object]) -> tuple[str, str] | None:
        return None if actor.role in roles else (why, ASK_ADMIN)

    return rule


def _read(actor: Actor, facts: dict[str, object]) -> tuple[str, str] | None:
    return None


def _read_blind_others(actor: Actor, facts: dict[str, object]) -> tuple[str, str] | None:
    if not facts["blind"] or facts["closed"] or (actor.role in SEEING_ROLES and actor.mode != "demo"):
        return None
    return "the session is blind until an admin closes it", "code on your own; adjudicators and admins see the rest"


def _open_session(facts: dict[str, object]) -> tuple[str, str] | None:
    if facts["closed"]:
        return "the session is closed", "its codes are final"
    return None


def _code(actor: Actor, facts: dict[str, object]) -> tuple[str, str] | None:
    if actor.role not in CODING_ROLES:
        return f"a {actor.role} does not code", ASK_ADMIN
    if not facts["member"]:
        return "you have not joined this session", "open the session from the Sessions page to join it"
    return _open_session(facts)


def _join(actor: Actor, facts: dict[str, object]) -> tuple[str, str] | None:
    """Anyone who codes may join an open session themself (an admin may also invite, when making it)."""
    if actor.role not in CODING_ROLES:
        return f"a {actor.role} does not code", ASK_ADMIN
    return _open_session(facts)


def _read_agreement(actor: Actor, facts: dict[str, object]) -> tuple[str, str] | None:
    """Agreement and the adjudication view show every coder's codes: adjudicators and admins see them
    at once, everyone else once an admin closes the session (so no coder sees how the others lean)."""
    if facts["closed"] or (actor.role in SEEING_ROLES and actor.mode != "demo"):
        return None
    return "agreement is shown to adjudicators and admins until an admin closes the session", ASK_ADMIN


def _undo_own(actor: Actor, facts: dict[str, object]) -> tuple[str, str] | None:
    if facts["owner"] != actor.person.id:
        return "the code is someone else's", "undo takes back your own codes only"
    if actor.role not in CODING_ROLES:
        return f"a {actor.role} does not code", ASK_ADMIN
    return _open_session(facts)


def _adjudicate(actor: Actor, facts: dict[str, object]) -> tuple[str, str] | None:
    if actor.role not in SEEING_ROLES:
        return "only adjudicators and admins adjudicate", ASK_ADMIN
    return _open_session(facts)


def _ask_model(actor: Actor, facts: dict[str, object]) -> tuple[str, str] | None:
    if facts["cached"] or actor.role in PAYING_ROLES:
        return None
    return "a new answer is a paid call, open to runners and admins", "pick a stored answer, or " + ASK_ADMIN


RULES: dict[str, tuple[tuple[str, ...], Rule]] = {
    "read": ((), _read),
    "read_blind_others": (("blind", "closed"), _read_blind_others),
    "code": (("member", "closed"), _code),
    "join": (("closed",), _join),
    "read_agreement": (("closed",), _read_agreement),
    "undo_own": (("owner", "closed"), _undo_own),
    "adjudicate": (("closed",), _adjudicate),
    "ask_model": (("cached",), _ask_model),
    "start_run": ((), _role_in(PAYING_ROLES, "runs are paid calls, open to runners and admins")),
    "import_answers": ((), _role_in(PAYING_ROLES, "importing answers adds model labels, open to runners and admins")),
    "manage_people": ((), _role_in(frozenset({"admin"}), "only admins manage people")),
    "manage_codebooks": ((), _role_in(frozenset({"admin"}), "only admins change codebooks")),
    "manage_sessions": ((), _role_in(frozenset({"admin"}), "only admins create or change sessions")),
    "close_session": ((), _role_in(frozenset({"admin"}), "only admins close sessions")),
    "compute_alignment": ((), _read),
}
"""action -> (the facts it needs, its rule)."""
ACTIONS = tuple(RULES)
DEMO_ALLOWED = frozenset({"read", "read_blind_others", "read_agreement", "ask_model"})
"""What demo mode can do at all (asking a model only when the answer is stored: `cached=True`)."""


def refusal(actor: Actor, action: str, **facts: object) -> PermissionDenied | None:
    """The refusal `require` would raise, or None when the action is allowed."""
    if action not in RULES:
        raise ValueError(f"unknown action {action!r}; known: {', '.join(ACTIONS)}")
    needed, rule = RULES[action]
    missing = [name for name in needed if name not in facts]
    extra = [name for name in facts if name not in needed]
    if missing or extra:
        raise TypeError(f"require({action!r}) needs the facts {needed}; missing {missing}, unexpected {extra}")
    if actor.mode == "demo" and (action not in DEMO_ALLOWED or (action == "ask_model" and not facts["cached"])):
        return PermissionDenied(actor, action, "nothing is written or paid for on a demo server", DEMO_HINT)
    refused = rule(actor, facts)
    return None if refused is None else PermissionDenied(actor, action, *refused)


def require(actor: Actor, action: str, **facts: object) -> None:
    """Raise PermissionDenied unless `actor` may take `action` given `facts` (see RULES for which)."""
    denied = refusal(actor, action, **facts)
    if denied is not None:
        raise denied


def allowed(actor: Actor, action: str, **facts: object) -> bool:
    """Whether `require` would pass: for a page deciding what to offer (the check itself stays in the core)."""
    return refusal(actor, action, **facts) is None
