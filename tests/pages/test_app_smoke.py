"""Every page runs without an exception or error box for every bundled dataset (AppTest, no
browser), and the settings the app reads are documented in .streamlit/secrets.toml.example."""

from __future__ import annotations

import pytest

from faithlens import config, store
from faithlens.datasets import VENDORED
from tests import raw
from tests.browser.helpers import ROOT, app_pages
from tests.holder import holding


@pytest.mark.parametrize("dataset", [b.name for b in VENDORED])
@pytest.mark.parametrize("script", app_pages())
def test_page_runs_cleanly(app_test, script: str, dataset: str) -> None:
    """Entered from app.py as the server does, so the shared sidebar's page links resolve."""
    at = app_test("app.py", dataset=dataset)
    at.switch_page(script)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert at.radio(key="dataset_picker").value == dataset
    assert at.query_params["dataset"] == dataset
    links = [link.proto.page for link in at.sidebar.get("page_link")]
    assert len(links) == len(app_pages()), links


@pytest.mark.parametrize("script", app_pages()[1:])
def test_page_file_run_on_its_own_still_runs(app_test, script: str) -> None:
    """`AppTest.from_file("pages/x.py")` knows no other page: the shell leaves its links out."""
    at = app_test(script, dataset="storysumm")
    at.run()
    assert not at.exception, [e.value for e in at.exception]


def test_every_setting_is_documented_in_the_secrets_example() -> None:
    example = (ROOT / ".streamlit" / "secrets.toml.example").read_text(encoding="utf-8")
    for setting in config.SETTINGS.values():
        assert setting.env in example, f"{setting.env} is read by the app but missing from secrets.toml.example"


def test_a_locked_database_shows_the_error_box_with_what_to_do(app_test, db_copy, monkeypatch) -> None:
    monkeypatch.setenv(config.SETTINGS["db"].env, str(db_copy))
    with holding(db_copy) as holder:
        at = app_test("app.py", dataset="storysumm")
        at.run()
    assert not at.exception
    (box,) = at.error
    assert f"process {holder.pid}" in box.value and "What to do" in box.value


@pytest.mark.parametrize("script", app_pages())
def test_an_empty_database_says_how_to_build_it(app_test, tmp_path, monkeypatch, script: str) -> None:
    empty = tmp_path / "empty.duckdb"
    store.connect(empty).close()
    monkeypatch.setenv(config.SETTINGS["db"].env, str(empty))
    at = app_test("app.py")
    at.switch_page(script)
    at.run()
    assert not at.exception
    assert any("faithlens ingest" in w.value for w in at.warning)


def test_a_first_visit_opens_the_dataset_with_the_most_label_sources_and_keeps_the_url(app_test) -> None:
    # FABLES and TofuEval release one (human) label source each; StorySumm adds its evaluators' outputs.
    assert raw.storysumm_predictions(), "StorySumm's evaluator outputs make it the richest"
    at = app_test("app.py")
    at.run()
    assert not at.exception
    assert at.radio(key="dataset_picker").value == "storysumm"
    assert dict(at.query_params) == {}, "a first visit to / adds nothing to the URL (no history entry)"
