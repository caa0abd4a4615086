"""The Errors page counts the dataset's own tags by default: after a coder's pilot coding (two
Model-Extra sentences tagged Extrinsic Information through the coding events, on a copy of the
database), TofuEval's Model-Extra × Extrinsic Information still shows gold's 68, its link opens
Explore on those 68 sentences, and only choosing "any source" makes it 70, in the URL, the link and
the words under the heatmap. Expected counts come from the raw CSVs."""

from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from faithlens import config
from tests import raw
from tests.apptest import clean
from tests.pages.test_errors_page import PAGE, ROOT, explore_count, heatmaps
from tests.pilot_codes import CODER, EXTRINSIC, code_extrinsic, error_types, unit_ids, untyped_model_extra


@pytest.fixture
def pilot_page(app_test, apptest_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Factory: the Errors page (entered from app.py) on a copy of the database holding the pilot codes;
    after `app_test`, so that Explore opened from its links reads the same copy."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    db = tmp_path / "pilot.duckdb"
    shutil.copy(apptest_db, db)
    rows = raw.tofueval_rows()
    ids = unit_ids(rows)
    code_extrinsic(db, "tofueval", [ids[i] for i in untyped_model_extra(rows, 2)])
    monkeypatch.setenv(config.SETTINGS["db"].env, str(db))
    st.cache_data.clear()
    st.cache_resource.clear()

    def make(**params: str):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
        for name, value in params.items():
            at.query_params[name] = value
        at.switch_page(PAGE)
        at.run()
        clean(at)
        return at

    yield make
    st.cache_data.clear()
    st.cache_resource.clear()


def _gold() -> int:
    return sum(EXTRINSIC in error_types(r) for r in raw.tofueval_rows() if r["model_name"] == "Model-Extra")


def test_the_default_counts_gold_and_its_link_opens_the_same_units(pilot_page, app_test) -> None:
    at = pilot_page(dataset="tofueval", by="generator")
    picker = at.selectbox(key="errors.tofueval.tagged_by")
    assert picker.value == "gold" and picker.options == ["gold (the dataset's own)", CODER, "any source (all of them)"]
    assert "tagged_by" not in at.query_params, "the default stays out of the URL"
    cell = heatmaps(at)[0].cell(EXTRINSIC, "Model-Extra")
    assert cell.count == _gold() == 68
    assert parse_qs(urlsplit(cell.href).query)["tagged_by"] == ["gold"]
    assert explore_count(cell.href, app_test)[0] == 68


def test_any_source_is_an_explicit_choice_in_the_url_the_link_and_the_csv(pilot_page, app_test) -> None:
    at = pilot_page(dataset="tofueval", by="generator")
    at.selectbox(key="errors.tofueval.tagged_by").set_value("any").run()
    clean(at)
    assert at.query_params["tagged_by"] == "any"
    cell = heatmaps(at)[0].cell(EXTRINSIC, "Model-Extra")
    assert cell.count == _gold() + 2 == 70
    assert "tagged_by" not in parse_qs(urlsplit(cell.href).query), "any source: the link filters no source"
    assert explore_count(cell.href, app_test)[0] == 70
    assert any("tagged by any source (coding/pilot/ann, gold)" in block.value for block in at.html)
    again = pilot_page(dataset="tofueval", by="generator", tagged_by="any")
    assert heatmaps(again)[0].cell(EXTRINSIC, "Model-Extra").count == 70, "the link reopens the choice"


def test_the_coders_tags_alone(pilot_page) -> None:
    at = pilot_page(dataset="tofueval", by="generator", tagged_by=CODER)
    shown = heatmaps(at)[0]
    assert shown.cell(EXTRINSIC, "Model-Extra").count == 2
    assert list(shown.rows) == [EXTRINSIC]
