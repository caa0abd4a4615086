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
from typing import TYPE_CHECKING

import duckdb
import streamlit as st
from streamlit.runtime.scriptrunner_utils.exceptions import ScriptControlException
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from components import signin, urlstate
from components.markdown import md_escape, md_with_code
from faithlens import access, config, querystate, store
from faithlens.access import Actor
from faithlens.errors import FaithLensError
from faithlens.views import catalog
from faithlens.views.catalog import DatasetInfo

if TYPE_CHECKING:
    from faithlens.coding.blindfold import Blindfold

log = logging.getLogger("faithlens.app")

APP_ROOT = Path(__file__).resolve().parent.parent
PICKER_KEY = "dataset_picker"


@st.cache_resource(show_spinner=False, on_release=store.close)
def root_connection(db_path: str) -> duckdb.DuckDBPyConnection:
    """The process-wide DuckDB connection; units of work take cursors from it.

    Only a successful open is cached: after an error the next run (a reload) tries again.
    The app never creates the file; `python -m faithlens ingest` builds it. With a team store, the
    connection is a replica that also pulls other servers' writes in the background.
    """
    conn = store.connect(db_path, create=False)
    store.listen(conn)
    return conn


@st.cache_data(show_spinner=False, max_entries=8)
def _datasets(db_path: str, version: str) -> list[DatasetInfo]:
    """Loaded datasets with their counts, recomputed only when the data version changes."""
    with root_connection(db_path).cursor() as cur:
        return catalog.list_datasets(cur)


@st.cache_data(show_spinner=False, max_entries=64)
def _blindfold(db_path: str, version: str, actor: Actor) -> Blindfold:
    """The actor's blindfold, recomputed only when the data version changes (a join or a close)."""
    from faithlens.coding.blindfold import blindfold  # the coding core only for pages showing unit labels

    with root_connection(db_path).cursor() as cur:
        return blindfold(cur, actor)


def blindfold(ctx: PageContext) -> Blindfold:
    """What the acting person may not see while they code blind (`faithlens.coding.blindfold`)."""
    return _blindfold(ctx.db_path, ctx.version, ctx.actor)


@dataclass(frozen=True)
class PageContext:
    """What a page needs: the chosen dataset, every loaded dataset, and database access."""

    db_path: str
    dataset: str | None
    datasets: tuple[DatasetInfo, ...]
    root: duckdb.DuckDBPyConnection
    version: str
    """The data version when this run started: with db_path and dataset, the key for cached reads."""
    team: str | None = None
    """The sidebar's line on the team store, if there is one."""
    dataset_note: str | None = None
    """Why the URL's dataset was not used, if it was not."""
    actor: Actor | None = None
    """Who is acting in this run (`faithlens.access.resolve`); every write and paid call takes it."""


def show_error(exc: BaseException) -> None:
    """The one error box: what went wrong, then what to do next. No raw traceback."""
    if isinstance(exc, FaithLensError):
        body = md_with_code(exc.message)
        if exc.hint:
            body += "\n\n**What to do:** " + md_with_code(exc.hint)
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


@contextmanager
def link_state(page: urlstate.Page, dataset: str) -> Iterator[tuple[object, list[str]]]:
    """The page's URL state and the notes on link values it could not use, to which the page adds its
    own; the notes are shown at the top of what the block draws when it ends, even by `st.stop()`."""
    wanted, notes = urlstate.read(page, dataset)
    warnings = st.container()
    try:
        yield wanted, notes
    finally:
        for note in notes:
            warnings.warning(md_escape(note), icon=":material/link_off:")


def _choose_dataset(datasets: list[DatasetInfo]) -> tuple[str | None, str | None]:
    """The dataset the URL names (else the richest), unless the user has picked another since; and
    the note on a URL dataset that is not loaded. Draws nothing: the picker shows the choice later."""
    names = [d.name for d in datasets]
    default = catalog.default_dataset(datasets)
    urlstate.set_default_dataset(default)
    if default is None:
        return None, None
    wanted = urlstate.url_dataset()
    note = None
    if wanted not in names:
        note = querystate.ignored(urlstate.DATASET, wanted, f"no such dataset is loaded; showing {default}")
    start = wanted if wanted in names else default
    return st.session_state[urlstate.bind(PICKER_KEY, start, names)], note


def _runs_from_app_py() -> bool:
    """False when a page file is the entrypoint itself (`AppTest.from_file("pages/x.py")`):
    Streamlit then knows no other page, and links to them cannot resolve."""
    run = get_script_run_ctx()
    return run is None or Path(run.main_script_path).resolve() == APP_ROOT / urlstate.OVERVIEW.script


def links_resolve() -> bool:
    """Whether `st.page_link` to another page works in this run (not in a page file run on its own)."""
    return _runs_from_app_py()


def _page_links(chosen: str | None, actor: Actor | None) -> None:
    """Links to every page `actor` may use; all of them when nobody is known (the database could not be
    opened, so every page shows that error box)."""
    if not _runs_from_app_py():
        return
    for page in urlstate.PAGES:
        if page.needs and actor is not None and not access.allowed(actor, page.needs):
            continue
        st.page_link(**urlstate.link(page, page.state(dataset=chosen)), label=page.title, icon=page.icon)


def _loaded(datasets: tuple[DatasetInfo, ...], db_path: str, team: str | None) -> None:
    """What is loaded, the database file and the team store, as one element (every page draws it)."""
    parts = []
    if datasets:
        lines = [
            line
            for d in datasets
            for line in (
                f"{d.name}: {d.summaries:,} summaries, {d.sentences:,} sentences, {d.claims:,} claims",
                *(f"+ {words}" for words in d.extracted_words()),
            )
        ]
        parts.append("**Loaded**  \n" + "  \n".join(md_escape(line) for line in lines))
    parts.append(f"**Database**  \n{md_escape(db_path)}")
    if team:
        parts.append(f"**Team store**  \n{md_escape(team)}")
    st.caption("\n\n".join(parts))


def _served_elsewhere(holder: store.Holder) -> FaithLensError:
    """The lock error in words a web user can act on (the CLI's hint names commands to rerun)."""
    if not holder.likely_app:  # /proc named another program, so the pid is known
        return FaithLensError(
            f"Process {holder.pid} on this machine (`{holder.command}`) has this database open for writing, "
            "so this server cannot open it.",
            f"Reload this page when it has finished, or stop process {holder.pid} and reload.",
        )
    who, stop = (f"process {holder.pid}", f"stop process {holder.pid}") if holder.pid else ("a process", "stop it")
    return FaithLensError(
        f"Another FaithLens server ({who} on this machine) already serves this database; "
        "one database file can be served by one server at a time.",
        f"Use that server's address (the one printed when it started), or {stop} and reload this page; "
        "to run two servers, give each its own FAITHLENS_DB.",
    )


def _open(db_path: str) -> tuple[duckdb.DuckDBPyConnection, str, list[DatasetInfo], str | None]:
    """The root connection (caught up with the team store, if any), the data version, the loaded
    datasets, and a line on the team store."""
    try:
        root = root_connection(db_path)
    except store.DatabaseInUseError as exc:
        raise _served_elsewhere(exc.holder) from None
    team = store.catch_up(root)
    with root.cursor() as cur:
        version = store.data_version(cur)
    if team is not None and not team[0].up:
        _paused_banner(team[0], team[2])
    return root, version, _datasets(db_path, version), _team_line(team)


def _team_line(team: tuple[store.Health, int, str] | None) -> str | None:
    """The sidebar's line on the team store."""
    if team is None:
        return None
    health, pulled, where = team
    return f"{where}: {pulled:,} events applied" + ("" if health.up else ", writes paused")


def _paused_banner(health: store.Health, where: str) -> None:
    st.warning(
        f"**Writes are paused:** the team store {md_escape(where)} has not answered since "
        f"{health.down_since:%H:%M:%S} ({md_escape(health.reason)}). Pages show this server's copy as of "
        "then; a save waits a few seconds for the store and otherwise asks you to save again. Nothing "
        "saved before is lost.",
        icon=":material/cloud_off:",
    )


def _sidebar(
    db_path: str,
    datasets: tuple[DatasetInfo, ...],
    chosen: str | None,
    note: str | None = None,
    team: str | None = None,
    actor: Actor | None = None,
    root: duckdb.DuckDBPyConnection | None = None,
) -> None:
    """The brand, who is signed in, page links (those `actor` may use), dataset picker (showing
    `chosen`, see `_choose_dataset`) and database path. Without datasets (the database could not be
    opened) the links keep the URL's dataset."""
    st.sidebar.markdown("**FaithLens**")
    with st.sidebar.container():
        signin.sidebar_identity(actor, root)
        _page_links(chosen or urlstate.url_dataset(), actor)
    st.sidebar.divider()
    if note:
        st.sidebar.warning(md_escape(note), icon=":material/link_off:")
    if datasets:
        # Radio buttons: every loaded dataset in view, one click to switch; and a cold start's first chart
        # is not held up by the select box's code, which the browser would fetch and run beside Plotly's.
        st.sidebar.radio("Dataset", [d.name for d in datasets], key=PICKER_KEY)
    with st.sidebar:
        _loaded(datasets, db_path, team)


def draw_sidebar(ctx: PageContext) -> None:
    """The shared sidebar, for a page that asked `page_setup` to leave it until its first chart is out."""
    _sidebar(ctx.db_path, ctx.datasets, ctx.dataset, ctx.dataset_note, ctx.team, ctx.actor, ctx.root)


def page_setup(page: urlstate.Page, sidebar_later: bool = False) -> PageContext:
    """Configure the page and draw the shared sidebar; returns the page's context.
    When the database cannot be opened, the sidebar is still drawn beside the error box.

    With `sidebar_later` the page draws it (`draw_sidebar`) after its first chart: the browser
    fetches the chart library only when a chart arrives, and the sidebar's widgets would have their
    own code fetched first (the Overview's cold start, bench/bench_overview.py)."""
    st.set_page_config(page_title=f"{page.title} · FaithLens", page_icon=page.icon, layout="wide")
    urlstate.start(page)
    db_path = str(config.db_path())
    with guard():
        try:
            root, version, datasets, team = _open(db_path)
        except Exception:
            _sidebar(db_path, (), None)
            raise
    chosen, note = _choose_dataset(datasets)
    with guard():
        actor = signin.actor_of_run(root, version)
    ctx = PageContext(db_path, chosen, tuple(datasets), root, version, team=team, dataset_note=note, actor=actor)
    if not sidebar_later:
        draw_sidebar(ctx)
    if page.blindfolded and ctx.dataset is not None:
        with guard():
            blindfold(ctx).require_dataset(ctx.dataset)
    if not datasets:
        st.warning("The database holds no dataset yet. Run `make run` or `python -m faithlens ingest` to build it.")
    return ctx
