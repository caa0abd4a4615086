"""The People page's Streamlit helpers; they import only each other and the shared components."""
