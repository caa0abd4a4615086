"""The server of `FAITHLENS_AUTH=links` (`make run` picks it): app.py with the sign-in link routes
(components/signin_routes.py), which set and clear the sign-in cookie a Streamlit script cannot.
Run as `streamlit run serve.py`; every other mode runs app.py itself."""

import streamlit as st

from components import signin_routes

app = st.App("app.py", routes=signin_routes.ROUTES)
