"""FaithLens core: the canonical model of faithfulness benchmarks, loaders, metrics.

This package never imports streamlit; the app's pages and components call into it.
"""
