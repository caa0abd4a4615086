"""The People page's tables: everyone with their role, budget, spending and last sign-in; and every
sign-in link (never its token, which is shown once when made)."""

from __future__ import annotations

from datetime import datetime

import pandas as pd
import streamlit as st

from faithlens.access import roster

SIGN_IN_WORDS = {
    "oidc": "identity provider",
    "link": "sign-in link",
    "legacy": "none (name-only coder of an older session)",
    "local": "local user",
    "cli": "command line",
}


def _usd(value: float | None) -> str:
    return "no limit" if value is None else f"${value:,.2f}"


def _when(value: datetime | None) -> str:
    return "" if value is None else f"{value:%Y-%m-%d %H:%M}"


def _row(member: roster.Member) -> dict[str, object]:
    spent, person = member.spending, member.person
    unknown = f" (+{spent.unknown_cost_calls} of unknown cost)" if spent.unknown_cost_calls else ""
    return {
        "Person": person.id,
        "Name": person.name,
        "Email": person.email or "",
        "Signs in with": SIGN_IN_WORDS.get(person.sign_in, person.sign_in),
        "Role": member.role,
        "Budget a day": _usd(spent.budget.day_usd),
        "Budget a month": _usd(spent.budget.month_usd),
        "Spent today": f"${spent.today_usd:,.2f}",
        "Spent this month": f"${spent.month_usd:,.2f}{unknown}",
        "Last seen": _when(member.last_seen),
        "Links": sum(1 for link in member.links if not link.revoked and link.expires_at > datetime.now()),
    }


def show_people(members: list[roster.Member]) -> None:
    st.dataframe(pd.DataFrame([_row(m) for m in members]), hide_index=True, key="people.table")
    st.caption(
        "Budgets are dollars of paid model calls a day and a calendar month; someone with no budget set has "
        "nothing to spend, except an admin, who has no limit until one is set. Links: sign-in links that "
        "still work."
    )


def _link_state(link: roster.Link, now: datetime) -> str:
    if link.revoked:
        return "revoked"
    return "expired" if link.expires_at <= now else "works"


def show_links(members: list[roster.Member]) -> None:
    now = datetime.now()
    rows = [
        {
            "Person": member.person.id,
            "Link": link.link_id,
            "Created": _when(link.created_at),
            "Expires": _when(link.expires_at),
            "State": _link_state(link, now),
            "Last used": _when(member.link_uses.get(link.link_id)),
        }
        for member in members
        for link in sorted(member.links, key=lambda link: link.created_at, reverse=True)
    ]
    if not rows:
        st.info(
            "No sign-in links yet: make one below for each person who signs in with a link.", icon=":material/link:"
        )
        return
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="people.links")
