"""Claim sets and tags on Explore, the Overview, the sidebar and `stats`, on a database seeded by
`tests.extracted_claims` (a model's extraction through the real path, coders' and a model's tags).

Expected numbers and texts come from the raw files (`tests.raw`), the scripted answers, the prompt file
and the codebook file, never from the code under test."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb
import pytest

from faithlens import config, store
from faithlens.llm import ask, targets
from faithlens.llm.runs.spec import Selection, select_units
from faithlens.store import claim_sets
from faithlens.views import detail as explore_detail
from tests.apptest import clean
from tests.extracted_claims import (
    AMBIGUITY_BY,
    CLAIM_CODER,
    CODER,
    DANIEL,
    EXTRACTED,
    EXTRACTED_BY,
    MODEL,
    NAMES,
    TOFU,
    TOFU_REASONING,
    VERIFIED_BY,
    extracted_ids,
    reply,
    seed,
)
from tests.llm.conftest import ME, prompt_file
from tests.llmserver import LLMServer
from tests.raw import storysumm_expected, storysumm_records

ROOT = Path(__file__).resolve().parents[2]
PAGE = "pages/explore.py"


@pytest.fixture(scope="module")
def seeded(built_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("claim_sets") / "seeded.duckdb"
    shutil.copy(built_db, db)
    return seed(db)


@pytest.fixture
def open_at(seeded: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., object]]:
    """Factory: the page `script` with `params`, on the seeded database, run once and checked clean."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv(config.SETTINGS["db"].env, str(seeded))
    st.cache_data.clear()
    st.cache_resource.clear()

    def make(script: str = PAGE, **params: str):
        at = AppTest.from_file(str(ROOT / script), default_timeout=60)
        for name, value in params.items():
            at.query_params[name] = value
        at.run()
        clean(at)
        return at

    yield make
    st.cache_data.clear()
    st.cache_resource.clear()


def markup(at) -> str:
    return "\n".join(block.value for block in at.html)


def text(fragment: str) -> str:
    """Markup as a reader sees it: tags dropped, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def headings(at) -> list[str]:
    return [text(h) for h in re.findall(r'<p class="fl-heading">(.*?)</p>', markup(at), re.S)]


def claim_lists(at) -> list[list[str]]:
    """Each claim list as the text of its items."""
    lists = re.findall(r'<ol class="fl-list fl-claims"[^>]*>(.*?)</ol>', markup(at), re.S)
    return [[text(item) for item in re.findall(r"<li[^>]*>(.*?)</li>", found, re.S)] for found in lists]


def sentence_items(at) -> list[str]:
    (found,) = re.findall(r'<ol class="fl-list fl-sentences">(.*?)</ol>', markup(at), re.S)
    return [text(item) for item in re.findall(r"<li[^>]*>(.*?)</li>", found, re.S)]


def unescaped(markdown: str) -> str:
    return re.sub(r"\\(.)", r"\1", markdown)


def test_extracted_claims_are_their_own_set_after_the_datasets_numbered_on(open_at) -> None:
    own = storysumm_records()[DANIEL]["claims"]
    version = prompt_file("fables-extract-claims").version
    at = open_at(dataset="storysumm", summary=DANIEL)
    claim_headings = [h for h in headings(at) if h.startswith("Claims")]
    assert claim_headings == [
        "Claims (the dataset’s own; gold gives them no label)",
        f"Claims extracted by {EXTRACTED_BY} (model {MODEL}, prompt fables-extract-claims@{version}; "
        "gold gives them no label)",
    ], "StorySumm's claims carry no gold label, and a model's claims are not the dataset's"
    dataset_list, extracted_list = claim_lists(at)
    assert dataset_list == [f"no labelC{n} {claim}" for n, claim in enumerate(own, 1)]
    numbers = range(len(own) + 1, len(own) + len(EXTRACTED) + 1)
    assert [item.split("Tags:")[0] for item in extracted_list] == [
        f"no labelC{n} {claim}" for n, claim in zip(numbers, EXTRACTED, strict=True)
    ], "numbered on after the dataset's claims, so no number names two claims"
    assert "&lt;b&gt;meets&lt;/b&gt;" in markup(at) and "<b>meets</b>" not in markup(at)


def test_a_heading_names_the_source_whose_labels_it_shows(open_at) -> None:
    own = storysumm_records()[DANIEL]["claims"]
    at = open_at(dataset="storysumm", summary=DANIEL, source="fables-gpt-4-turbo-preview")
    claim_headings = [h for h in headings(at) if h.startswith("Claims")]
    assert claim_headings[0] == "Claims (the dataset’s own; fables-gpt-4-turbo-preview labels)"
    assert claim_headings[1].endswith("; fables-gpt-4-turbo-preview gives them no label)")
    row = re.search(r"<tr><td>fables-gpt-4-turbo-preview</td>(.*?)</tr>", markup(at), re.S)
    assert row is not None and re.search(rf"<td>\d+ of {len(own)}</td>", row.group(1)), "counted over its own claims"
    assert EXTRACTED_BY not in row.group(1), "it labels none of the extracted claims"


def test_a_models_verdicts_on_extracted_claims_are_counted_with_their_set(open_at) -> None:
    at = open_at(dataset="storysumm", summary=DANIEL, source=VERIFIED_BY)
    claim_headings = [h for h in headings(at) if h.startswith("Claims")]
    assert claim_headings[0] == f"Claims (the dataset’s own; {VERIFIED_BY} gives them no label)"
    assert claim_headings[1].endswith(f"; {VERIFIED_BY} labels 2 of {len(EXTRACTED)})")
    own = len(storysumm_records()[DANIEL]["claims"])
    badges = [re.match(r"(no label|faithful|unfaithful)C(\d+)", item).groups() for item in claim_lists(at)[1]]
    assert badges == [
        ("faithful", str(own + 1)),
        ("unfaithful", str(own + 2)),
        ("no label", str(own + 3)),
        ("no label", str(own + 4)),
    ], "the scripted verdicts: True, then False on the claim about a key"
    row = re.search(rf"<tr><td>{re.escape(VERIFIED_BY)}</td>(.*?)</tr>", markup(at), re.S)
    assert row is not None and f"<td>1 of 2 ({EXTRACTED_BY})</td>" in row.group(1)
    listed = at.dataframe[0].value.set_index("summary")
    assert listed.loc[DANIEL, "unfaithful extracted claims"] == 1
    assert "unfaithful claims" not in listed.columns, "the source labels none of the dataset's claims"


def test_an_extracted_claim_opens_by_its_link_named_with_its_set(open_at, seeded: Path) -> None:
    own = storysumm_records()[DANIEL]["claims"]
    with duckdb.connect(str(seeded), read_only=True) as conn:
        first = extracted_ids(conn, DANIEL)[0]
    at = open_at(dataset="storysumm", summary=DANIEL, unit=first)
    number = len(own) + 1
    assert any(
        unescaped(m.value) == f"**Chosen claim C{number}** (extracted by {EXTRACTED_BY}; no gold label)"
        for m in at.markdown
    )
    picker = at.selectbox(key=f"explore.storysumm.claim.{DANIEL}")
    assert picker.value == number
    assert picker.format_func(number).startswith(f"C{number} · extracted by {EXTRACTED_BY} · no label · ")
    assert at.query_params["claim"] == str(number) and "unit" not in at.query_params


def test_tofueval_shows_only_the_extracted_set_and_never_says_gold_labels(open_at) -> None:
    at = open_at(dataset="tofueval", summary=TOFU)
    claim_headings = [h for h in headings(at) if h.startswith("Claims")]
    assert len(claim_headings) == 1 and claim_headings[0].startswith(f"Claims extracted by {EXTRACTED_BY} ")
    assert claim_headings[0].endswith("gold gives them no label)")
    assert claim_lists(at) == [[f"no labelC{n} {claim}" for n, claim in enumerate(EXTRACTED, 1)]]


def test_counts_keep_the_datasets_claims_and_name_the_extracted_set(open_at, seeded: Path) -> None:
    claims = storysumm_expected()["claims"]
    overview = open_at("app.py", dataset="storysumm")
    metrics = {m.label: m.value for m in overview.metric}
    assert metrics["Claims"] == f"{claims:,}" and metrics["Extracted claims"] == str(len(EXTRACTED))
    assert any(f"{len(EXTRACTED)} claims extracted by {EXTRACTED_BY}" in unescaped(c.value) for c in overview.caption)
    page = "\n".join(block.value for block in overview.html)
    verdicts = re.findall(rf"<tr><td>{re.escape(VERIFIED_BY)}</td><td>llm</td><td>(.*?)</td><td[^>]*>(\d+)</td>", page)
    assert verdicts == [(f"claim (extracted by {EXTRACTED_BY})", "2")], "a model's verdicts on them: a level apart"
    loaded = " ".join(unescaped(c.value) for c in overview.sidebar.caption)
    assert f"storysumm: 96 summaries, {storysumm_expected()['sentences']} sentences, {claims:,} claims" in loaded
    assert f"+ {len(EXTRACTED)} claims extracted by {EXTRACTED_BY}" in loaded
    assert "tofueval: 1,777 summaries" in loaded and "4,946 sentences, 0 claims" in loaded

    result = subprocess.run(
        [sys.executable, "-m", "faithlens", "stats", "--json", "--db", str(seeded)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    stats = json.loads(result.stdout)["datasets"]
    version = prompt_file("fables-extract-claims").version
    expected = {
        "source": EXTRACTED_BY,
        "claims": len(EXTRACTED),
        "summaries": 1,
        "models": [MODEL],
        "prompts": [f"fables-extract-claims@{version}"],
    }
    assert stats["storysumm"]["claims"] == claims and stats["storysumm"]["extracted_claims"] == [expected]
    assert stats["tofueval"]["claims"] == 0 and stats["tofueval"]["extracted_claims"] == [expected]
    assert stats["fables"]["extracted_claims"] == []
    assert stats["storysumm"]["extracted_labels"] == {VERIFIED_BY: {EXTRACTED_BY: {"faithful": 1, "unfaithful": 1}}}, (
        "the model's verdicts on extracted claims, not among the dataset's claim labels"
    )
    assert VERIFIED_BY not in stats["storysumm"]["labels"]


def test_runs_and_sessions_select_one_claim_set_at_a_time(seeded: Path) -> None:
    claims = storysumm_expected()["claims"]
    with duckdb.connect(str(seeded), read_only=True) as conn:
        own, own_words = select_units(conn, "storysumm", "claim", Selection())
        theirs, their_words = select_units(conn, "storysumm", "claim", Selection(claim_set=EXTRACTED_BY))
        assert theirs == extracted_ids(conn, DANIEL)
    assert len(own) == claims and own_words.startswith(f"{claims:,} claims (the dataset's own)")
    assert len(theirs) == len(EXTRACTED) and f"(claims extracted by {EXTRACTED_BY})" in their_words


def test_tags_show_with_their_sources_and_the_filtered_ones_are_marked(open_at) -> None:
    record = storysumm_records()[DANIEL]
    at = open_at(dataset="storysumm", summary=DANIEL, tags="ambiguity_type: 2")
    assert "The tags the filters ask for are on S2 and S5 of this summary." in [unescaped(c.value) for c in at.caption]
    items = sentence_items(at)
    assert items[1].startswith("matches the filter")
    assert f"Tags: ambiguity_type: 2 “{NAMES['2']}” ({CODER})" in items[1]
    assert f"Tags: ambiguity_type: 4 “{NAMES['4']}” ({CODER})" in items[3] and "matches the filter" not in items[3]
    assert f"Tags: ambiguity_type: 2 “{NAMES['2']}” ({AMBIGUITY_BY})" in items[4] and items[4].startswith("matches")
    untagged = [i for i, item in enumerate(items) if "Tags:" not in item]
    assert untagged == [0, 2, *range(5, len(record["summary"]))]
    header = " ".join(unescaped(c.value) for c in at.caption)
    assert f"difficulty: {record['difficulty']} (gold)" in header, "the summary's tag names its source too"
    extracted = claim_lists(at)[1]
    assert extracted[0].endswith(f"Tags: claim_type: event ({CLAIM_CODER})") and "matches" not in extracted[0]

    by_claim = open_at(dataset="storysumm", summary=DANIEL, tags="claim_type: event")
    number = len(record["claims"]) + 1
    assert f"The tags the filters ask for are on C{number} of this summary." in [
        unescaped(c.value) for c in by_claim.caption
    ]
    assert claim_lists(by_claim)[1][0].startswith("matches the filter")


def test_tofueval_error_types_show_on_the_sentences_the_filter_matched(open_at) -> None:
    at = open_at(dataset="tofueval", summary=TOFU, error_types="Reasoning Error")
    names = [f"S{n}" for n in TOFU_REASONING]
    named = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    assert f"The tags the filters ask for are on {named} of this summary." in [unescaped(c.value) for c in at.caption]
    items = sentence_items(at)
    marked = [n for n, item in enumerate(items, 1) if item.startswith("matches the filter")]
    assert marked == TOFU_REASONING
    assert all("Reasoning Error" in items[n - 1] and "(gold)" in items[n - 1] for n in marked)
    assert '<strong class="fl-hit">Reasoning Error</strong>' in markup(at)


def test_a_second_draw_of_the_same_extraction_is_a_group_of_its_own(db_copy: Path) -> None:
    own = len(storysumm_records()[DANIEL]["claims"])
    conn = store.connect(db_copy)
    with LLMServer(reply) as server, pytest.MonkeyPatch.context() as env:
        env.setenv("OPENAI_API_KEY", "sk-test-claim-sets")
        for fresh in (False, True):
            with conn.cursor() as cur:
                target = targets.resolve(cur, "storysumm", DANIEL)
            asked = ask.Ask("fables-extract-claims", "openai", MODEL, base_url=server.openai_base_url, fresh=fresh)
            assert ask.ask(conn, target, asked, ME).status == "ok"
    with conn.cursor() as cur:
        groups = explore_detail.load_detail(cur, "storysumm", DANIEL).claim_groups
        (counted,) = [s for s in claim_sets.claim_sets(cur, "storysumm") if s.source == EXTRACTED_BY]
    conn.close()
    assert [g.claim_set for g in groups] == [None, EXTRACTED_BY, EXTRACTED_BY]
    assert [g.origin().rsplit(", ", 1)[-1] for g in groups[1:]] == ["draw 1", "draw 2"]
    numbers = [[c.position + 1 for c in g.claims] for g in groups]
    assert numbers == [
        list(range(1, own + 1)),
        list(range(own + 1, own + 5)),
        list(range(own + 5, own + 9)),
    ], "each draw goes on numbering after the claims before it"
    assert (counted.claims, counted.summaries) == (2 * len(EXTRACTED), 1)


def test_a_unit_filters_tags_are_marked_and_its_own_line_names_the_units(open_at) -> None:
    at = open_at(dataset="tofueval", summary=TOFU, unit_level="sentence", unit_tags="error_type: Reasoning Error")
    captions = [unescaped(c.value) for c in at.caption]
    named = ", ".join(f"sentence {n}" for n in TOFU_REASONING)
    assert f"The unit filter matches {named} of this summary." in captions
    assert not any(c.startswith("The tags the filters ask for") for c in captions), "said once, by the unit filter"
    items = sentence_items(at)
    assert [n for n, item in enumerate(items, 1) if item.startswith("matches the filter")] == TOFU_REASONING
