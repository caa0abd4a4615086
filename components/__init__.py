"""Streamlit-aware helpers: the only code besides app.py and pages/ that imports streamlit."""
