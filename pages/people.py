"""People (served at /people, admins only): everyone FaithLens knows with their role, budget, spending
to date, last sign-in and sign-in links, and the controls to add people, change roles and budgets,
make and revoke sign-in links and sign someone out everywhere. The core refuses anyone else
(`faithlens.access.roster.members`, and every write in `faithlens.access.people` / `.links`)."""

from __future__ import annotations

import streamlit as st

from components import shell, urlstate
from components.people import forms as people_forms
from components.people import table as people_table
from faithlens import access, config
from faithlens.access import roster
from faithlens.views.states import PeopleState

ctx = shell.page_setup(urlstate.PEOPLE)
with shell.guard():
    urlstate.write(PeopleState(ctx.dataset))
    st.title("People")
    members = roster.members(ctx.root, ctx.actor)
    people_forms.show_results()
    st.caption(" · ".join(f"**{role}**: {access.ROLE_HELP[role]}" for role in access.ROLES))
    people_table.show_people(members)
    st.header("Sign-in links", divider="gray")
    if config.auth_mode() != "links":
        st.caption(
            "This server signs people in with FAITHLENS_AUTH=" + config.auth_mode() + "; links work on a links server."
        )
    people_table.show_links(members)
    st.header("Change", divider="gray")
    people_forms.add_person(ctx.root, ctx.actor)
    people_forms.person_controls(ctx.root, ctx.actor, members)
