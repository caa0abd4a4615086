"""`python -m faithlens people list|add|role|budget|link|revoke`: who may use a shared server, from the
command line, through the same core as the People page (`faithlens.access.people`, `.links`, `.roster`).
Its imports are as light as `faithlens.cli.options` (DuckDB and the access layer, no pandas or SDK).

The CLI acts as FAITHLENS_USER (or `--as NAME`) with admin rights: whoever can open the database file
already has everything in it. That is how the first admin of a `links` server gets in: `people add ann
--role admin`, then `people link ann` prints the one sign-in link. `list` only reads (it works while the
app runs, from a snapshot); the others write, so they need the app stopped, like `import`.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from datetime import datetime, timedelta
from urllib.parse import urlsplit

import duckdb

from faithlens import config, store
from faithlens.access import links, people, roster
from faithlens.access.directory import Budget, Link
from faithlens.access.roster import Member
from faithlens.access.rules import ROLE_HELP, ROLES, Actor
from faithlens.cli.options import actor, add_actor, add_db, reading, table
from faithlens.errors import FaithLensError

DEFAULT_BASE_URL = "http://localhost:8501"
DEFAULT_LINK_DAYS = 14
LIST_COLUMNS = (
    "person",
    "name",
    "email",
    "role",
    "sign_in",
    "budget",
    "spent_today",
    "spent_month",
    "last_seen",
    "links",
)


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    """The options of `people list|add|role|budget|link|revoke` (`faithlens.cli.COMMANDS`)."""
    {
        "list": _list_options,
        "add": _add_options,
        "role": _role_options,
        "budget": _budget_options,
        "link": _link_options,
        "revoke": _revoke_options,
    }[name](parser)
    add_db(parser)
    if name != "list":
        add_actor(parser)


def _list_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON rows (budgets, spending, every link)")
    parser.set_defaults(run=_list)


def _add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("person", metavar="NAME", help="the id their codes and answers will record, e.g. ann")
    parser.add_argument("--name", dest="display", metavar="TEXT", default="", help="name shown (default: NAME)")
    parser.add_argument("--email", help="their email, shown beside their name")
    parser.add_argument("--role", help=f"their role, one of {', '.join(ROLES)} (default: viewer)")
    parser.set_defaults(run=_add)


def _role_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("person", metavar="NAME")
    parser.add_argument("role", metavar="ROLE", help="; ".join(f"{role}: {ROLE_HELP[role]}" for role in ROLES))
    parser.set_defaults(run=_role)


def _budget_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("person", metavar="NAME")
    parser.add_argument("--day", metavar="USD", help="dollars a day (a limit left out is no limit)")
    parser.add_argument("--month", metavar="USD", help="dollars a calendar month")
    parser.add_argument("--none", action="store_true", help="no limit at all (an admin's default)")
    parser.set_defaults(run=_budget)


def _link_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("person", metavar="NAME")
    parser.add_argument(
        "--days", default=str(DEFAULT_LINK_DAYS), help=f"days the link works (default {DEFAULT_LINK_DAYS})"
    )
    parser.add_argument(
        "--base-url",
        default=DEFAULT_BASE_URL,
        help=f"the server's address as people open it (default {DEFAULT_BASE_URL})",
    )
    parser.set_defaults(run=_link)


def _revoke_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("person", metavar="NAME")
    parser.add_argument(
        "--link", metavar="ID", help="only this link (default: every link and signed-in browser of the person)"
    )
    parser.set_defaults(run=_revoke)


# ------------------------------------------------------------------------------------------------ list


def _list(args: argparse.Namespace) -> int:
    with reading(args.db) as conn, conn.cursor() as cur:
        try:
            members = roster.roster(cur)
        except duckdb.CatalogException:
            raise FaithLensError(
                "this database predates people and roles",
                "run a `people` command that writes (e.g. `people add`), or open the app once, to add their tables",
            ) from None
    now = datetime.now()
    if args.json:
        print(json.dumps([_record(member, now) for member in members], indent=2, ensure_ascii=False))
        return 0
    print(table([_line(member, now) for member in members], LIST_COLUMNS))
    return 0


def _status(link: Link, now: datetime) -> str:
    return "revoked" if link.revoked else "expired" if link.expires_at <= now else "active"


def _record(member: Member, now: datetime) -> dict[str, object]:
    """One person as `list --json` prints them."""
    spent, budget = member.spending, member.spending.budget
    return {
        "person": member.person.id,
        "name": member.person.name,
        "email": member.person.email,
        "role": member.role,
        "sign_in": member.person.sign_in,
        "budget": {"day_usd": budget.day_usd, "month_usd": budget.month_usd},
        "spent_today_usd": round(spent.today_usd, 6),
        "spent_month_usd": round(spent.month_usd, 6),
        "left_usd": None if spent.left_usd() is None else round(spent.left_usd(), 6),
        "unknown_cost_calls": spent.unknown_cost_calls,
        "last_seen": member.last_seen.isoformat(sep=" ", timespec="seconds") if member.last_seen else None,
        "links": [
            {
                "link_id": link.link_id,
                "created_at": link.created_at.isoformat(sep=" ", timespec="seconds"),
                "expires_at": link.expires_at.isoformat(sep=" ", timespec="seconds"),
                "status": _status(link, now),
            }
            for link in member.links
        ],
    }


def _describe_budget(budget: Budget) -> str:
    parts = [
        f"${limit:.2f}/{period}"
        for limit, period in ((budget.day_usd, "day"), (budget.month_usd, "month"))
        if limit is not None
    ]
    return ", ".join(parts) or "no limit"


def _line(member: Member, now: datetime) -> dict[str, object]:
    """One person as the `list` table shows them."""
    spent = member.spending
    links = [(_status(link, now), link) for link in member.links]
    active = [f"{link.link_id} until {link.expires_at:%Y-%m-%d}" for status, link in links if status == "active"]
    ended = len(links) - len(active)
    shown = active + ([f"{ended} revoked or expired"] if ended else [])
    unknown = f" (+{spent.unknown_cost_calls} unpriced)" if spent.unknown_cost_calls else ""
    return {
        "person": member.person.id,
        "name": member.person.name if member.person.name != member.person.id else "",
        "email": member.person.email,
        "role": member.role,
        "sign_in": "none (older sessions)" if member.person.sign_in == "legacy" else member.person.sign_in,
        "budget": _describe_budget(spent.budget),
        "spent_today": f"${spent.today_usd:.2f}",
        "spent_month": f"${spent.month_usd:.2f}{unknown}",
        "last_seen": f"{member.last_seen:%Y-%m-%d %H:%M}" if member.last_seen else "never",
        "links": "; ".join(shown) or "none",
    }


# ---------------------------------------------------------------------------------------------- writes


def _writing(args: argparse.Namespace, work: Callable[[duckdb.DuckDBPyConnection, Actor], str]) -> int:
    """Run `work(conn, actor)` on the database opened read-write (the acting person checked first) and
    print the line it returns."""
    acting = actor(args)
    conn = store.connect(config.db_path(args.db), create=False)
    try:
        store.catch_up(conn)
        print(work(conn, acting))
    finally:
        store.close(conn)
    return 0


def _add(args: argparse.Namespace) -> int:
    def work(conn: duckdb.DuckDBPyConnection, acting: Actor) -> str:
        added = people.add_person(conn, acting, args.person, args.display, args.email, role=args.role)
        shown = f" ({added.name})" if added.name != added.id else ""
        return (
            f"added {added.id}{shown} as {args.role or 'viewer'}; "
            f"make them a sign-in link with `python -m faithlens people link {added.id}`"
        )

    return _writing(args, work)


def _role(args: argparse.Namespace) -> int:
    def work(conn: duckdb.DuckDBPyConnection, acting: Actor) -> str:
        people.set_role(conn, acting, args.person, args.role)
        return f"{args.person} is now {args.role}: {ROLE_HELP[args.role]}"

    return _writing(args, work)


def _dollars(option: str, text: str | None) -> float | None:
    """A budget option's dollars (None when left out); one line for anything but a sum of 0 or more."""
    if text is None:
        return None
    try:
        value = float(text.strip().removeprefix("$"))
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise FaithLensError(f"--{option} {text!r} is not a sum of dollars", "give 0 or more, e.g. --day 5 --month 50")
    return value


def _budget(args: argparse.Namespace) -> int:
    if args.none == (args.day is not None or args.month is not None):
        raise FaithLensError(
            "give --day and/or --month, or --none", "e.g. --day 5 --month 50; --none lifts every limit"
        )
    day, month = _dollars("day", args.day), _dollars("month", args.month)

    def work(conn: duckdb.DuckDBPyConnection, acting: Actor) -> str:
        people.set_budget(conn, acting, args.person, day, month)
        return f"{args.person} may spend {_describe_budget(Budget(day, month))} on paid calls"

    return _writing(args, work)


def _link(args: argparse.Namespace) -> int:
    base, days = _base_url(args.base_url), _days(args.days)

    def work(conn: duckdb.DuckDBPyConnection, acting: Actor) -> str:
        link_id, token = links.create(conn, acting, args.person, timedelta(days=days))
        until = datetime.now() + timedelta(days=days)
        return (
            f"sign-in link {link_id} for {args.person}, valid until {until:%Y-%m-%d %H:%M} "
            f"(shown this once: send it to {args.person} only; opening it signs them in on that browser):\n"
            f"{links.sign_in_url(base, token)}"
        )

    return _writing(args, work)


def _days(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise FaithLensError(f"--days {text!r}: a link must work for a whole number of days", "give --days 1 or more")
    return int(text)


def _base_url(text: str) -> str:
    parts = urlsplit(text.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise FaithLensError(
            f"--base-url {text!r} is not a server address", "give it as people open it, e.g. https://faithlens.lab.org"
        )
    return text.strip().rstrip("/")


def _revoke(args: argparse.Namespace) -> int:
    def work(conn: duckdb.DuckDBPyConnection, acting: Actor) -> str:
        if args.link is None:
            people.revoke_person(conn, acting, args.person)
            return f"revoked every sign-in link and signed-in browser of {args.person} (their codes stay)"
        links.revoke(conn, acting, args.link, args.person)
        return f"revoked sign-in link {args.link} of {args.person} (browsers it signed in stay signed in)"

    return _writing(args, work)
