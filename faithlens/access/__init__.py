"""Identity and permissions: one core layer that every write and every paid call passes through.

- `rules`: people, roles, the acting person (`Actor`) and `require(actor, action, **facts)`, the one
  check, raising `PermissionDenied`;
- `directory`: everyone known and what holds for them now (roles, budgets, links, browser sessions),
  read from the stored events once per data version;
- `actors`: who is acting (local user, CLI, demo visitor, a signed-in browser);
- `people` and `links`: the writes (sign-ins, roles, budgets, sign-in links, revocations), stored as
  events that replicate through a team store like codes;
- `spending`: what a person spent on paid calls, and `check_budget` before a call;
- `tokens`: random tokens, their stored hashes, the sealed cookie value.

Settings (FAITHLENS_AUTH, FAITHLENS_USER, FAITHLENS_MODE, FAITHLENS_COOKIE_SECRET) are in
`faithlens.config`, with `config.check_listen` refusing `local` mode beyond loopback.
"""

from faithlens.access.actors import (
    LINK_COOKIE,
    LINK_SESSION_MAX_AGE_S,
    SignedOut,
    cli_actor,
    demo_actor,
    local_actor,
    open_link,
    resolve,
    sign_out,
)
from faithlens.access.directory import Budget, Directory, current
from faithlens.access.links import SignInRefused
from faithlens.access.rules import (
    ACTIONS,
    ROLE_HELP,
    ROLES,
    Actor,
    PermissionDenied,
    Person,
    allowed,
    require,
)
from faithlens.access.spending import BudgetExceeded, Spending, check_budget, spending

__all__ = [
    "ACTIONS",
    "LINK_COOKIE",
    "LINK_SESSION_MAX_AGE_S",
    "ROLES",
    "ROLE_HELP",
    "Actor",
    "Budget",
    "BudgetExceeded",
    "Directory",
    "PermissionDenied",
    "Person",
    "SignInRefused",
    "SignedOut",
    "Spending",
    "allowed",
    "check_budget",
    "cli_actor",
    "current",
    "demo_actor",
    "local_actor",
    "open_link",
    "require",
    "resolve",
    "sign_out",
    "spending",
]
