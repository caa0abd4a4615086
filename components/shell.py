"""The frame every page lives in: page config, shared sidebar, database access, error box.

Every page (app.py included) calls `page_setup()` first. Routing is Streamlit's folder routing
(`pages/` beside `app.py`, no `st.navigation`), so a cold deep link such as
`/explore?dataset=storysumm&summary=...` runs its page directly and still gets this frame.
The default sidebar navigation is hidden (`.streamlit/config.toml`) and replaced by our own
links, built by `urlstate.link`, which carry `?dataset=` across pages (Streamlit drops query
params on page switches).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb
import streamlit as st
from streamlit.runtime.scriptrunner_utils.exceptions import ScriptControlException
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from components import urlstate
from components.markdown import md_escape
from faithlens import config, store
from faithlens.errors import FaithLensError
from faithlens.views import catalog
from faithlens.views.catalog import DatasetInfo

log = logging.getLogger("faithlens.app")

APP_ROOT = Path(__file__).resolve().parent.parent
PICKER_KEY = "dataset_picker"


@st.cache_resource(show_spinner=False, on_release=lambda conn: conn.close())
def root_connection(db_path: str) -> duckdb.DuckDBPyConnection:
    """The process-wide DuckDB connection; units of work take cursors from it."""
    return store.connect(db_path)


@st.cache_data(show_spinner=False, max_entries=8)
def _datasets(db_path: str, version: str) -> list[DatasetInfo]:
    """Loaded datasets with their counts, recomputed only when the data version changes."""
    with root_connection(db_path).cursor() as cur:
        return catalog.list_datasets(cur)


@dataclass(frozen=True)
class PageContext:
    """What a page needs: the chosen dataset, every loaded dataset, and database access."""

    db_path: str
    dataset: str | None
    datasets: tuple[DatasetInfo, ...]
    root: duckdb.DuckDBPyConnection
    version: str
    """The data version when this run started: with db_path and dataset, the key for cached reads."""


def show_error(exc: BaseException) -> None:
    """The one error box: what went wrong, then what to do next. No raw traceback."""
    if isinstance(exc, FaithLensError):
        body = md_escape(exc.message)
        if exc.hint:
            body += "\n\n**What to do:** " + md_escape(exc.hint)
    else:
        log.exception("unexpected error", exc_info=exc)
        body = md_escape(f"Unexpected error: {type(exc).__name__}: {exc}")
        body += "\n\n**What to do:** the full traceback is in the server log; please report it."
    st.error(body, icon=":material/error:")


@contextmanager
def guard() -> Iterator[None]:
    """Run page code; on any error show the error box and stop this run."""
    try:
        yield
    except ScriptControlException:
        raise
    except Exception as exc:  # noqa: BLE001 - every error ends in the one error box
        show_error(exc)
        st.stop()


def _choose_dataset(names: list[str]) -> str | None:
    """The dataset the URL names (else the first), unless the user has picked another since."""
    if not names:
        return None
    wanted = urlstate.url_dataset()
    if wanted and wanted not in names:
        st.sidebar.warning(f"No dataset named {md_escape(wanted)}; showing {md_escape(names[0])}.")
    start = wanted if wanted in names else names[0]
    return st.sidebar.selectbox("Dataset", names, key=urlstate.bind(PICKER_KEY, start, names))


def _runs_from_app_py() -> bool:
    """False when a page file is the entrypoint itself (`AppTest.from_file("pages/x.py")`):
    Streamlit then knows no other page, and links to them cannot resolve."""
    run = get_script_run_ctx()
    return run is None or Path(run.main_script_path).resolve() == APP_ROOT / urlstate.OVERVIEW.script


def _page_links(chosen: str | None) -> None:
    if not _runs_from_app_py():
        return
    for page in urlstate.PAGES:
        st.page_link(**urlstate.link(page, page.state(dataset=chosen)), label=page.title, icon=page.icon)


def _loaded(datasets: list[DatasetInfo], db_path: str) -> None:
    st.caption("Loaded")
    for d in datasets:
        st.text(f"{d.name}: {d.summaries:,} summaries, {d.sentences:,} sentences, {d.claims:,} claims")
    st.caption("Database")
    st.text(db_path)


def page_setup(page: urlstate.Page) -> PageContext:
    """Configure the page and draw the shared sidebar; returns the page's context."""
    st.set_page_config(page_title=f"{page.title} · FaithLens", page_icon=page.icon, layout="wide")
    urlstate.start()
    db_path = str(config.db_path())
    with guard():
        root = root_connection(db_path)
        with root.cursor() as cur:
            version = store.data_version(cur)
        datasets = _datasets(db_path, version)
    st.sidebar.markdown("**FaithLens**")
    nav = st.sidebar.container()
    st.sidebar.divider()
    chosen = _choose_dataset([d.name for d in datasets])
    with nav:
        _page_links(chosen)
    with st.sidebar:
        _loaded(datasets, db_path)
    if not datasets:
        st.warning("The database holds no dataset yet. Run `make run` or `python -m faithlens ingest` to build it.")
    return PageContext(db_path=db_path, dataset=chosen, datasets=tuple(datasets), root=root, version=version)
