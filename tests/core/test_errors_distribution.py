"""The Errors page's distribution and co-occurrence on the bundled TofuEval and StorySumm, against
counts made here from the raw files (the four TofuEval CSVs and their topic categories, StorySumm's
JSON), not through the ingest."""

from __future__ import annotations

import json
from collections import Counter
from itertools import product
from pathlib import Path

import duckdb
import pytest

from faithlens.errors import FaithLensError
from faithlens.views import errors
from tests import raw

TOFUEVAL = raw.DATA / "tofueval"


def _tofueval_sentences() -> list[dict[str, str]]:
    """Every distinct sentence row with its corpus, topic type and error types (a set)."""
    out = []
    categories = {
        corpus: json.loads((TOFUEVAL / "topic_category" / f"{corpus}_topic_category.json").read_text(encoding="utf-8"))
        for corpus in ("mediasum", "meetingbank")
    }
    for path in sorted((TOFUEVAL / "factual_consistency").glob("*.csv")):
        for row in raw.tofueval_rows([path]):
            corpus = path.name.split("_", 1)[0]
            types = {part.strip() for part in row["type"].split(",") if part.strip()}
            out.append(
                {
                    "generator": raw.tofueval_generator(row["model_name"]),
                    "generator_group": raw.tofueval_group(row["model_name"]),
                    "corpus": corpus,
                    "topic_type": categories[corpus][row["topic"]],
                    "types": types,
                }
            )
    return out


@pytest.fixture(scope="module")
def cur(built_db: Path):
    conn = duckdb.connect(str(built_db), read_only=True)
    yield conn.cursor()
    conn.close()


@pytest.fixture(scope="module")
def sentences() -> list[dict]:
    return _tofueval_sentences()


@pytest.mark.parametrize("by", ["generator", "generator_group", "topic_type", "corpus"])
def test_tofueval_error_types_per_group_match_the_raw_csvs(cur, sentences, by: str) -> None:
    family = errors.find_family(cur, "tofueval", "error_type")
    shown = errors.distribution(cur, "tofueval", family, by)
    expected = Counter((t, s[by]) for s in sentences for t in s["types"])
    typed = Counter(s[by] for s in sentences if s["types"])
    got = {(row.value, row.group): (row.units, row.pct) for row in shown.rows}
    for (value, group), units in expected.items():
        assert got[(value, group)] == (units, pytest.approx(100 * units / typed[group])), (value, group)
    every = Counter(t for s in sentences for t in s["types"])
    for value, units in every.items():
        assert got[(value, errors.ALL_GROUPS)] == (units, pytest.approx(100 * units / sum(typed.values())))
    assert set(shown.groups) == {*typed, errors.ALL_GROUPS}
    assert shown.totals[errors.ALL_GROUPS] == (sum(typed.values()), len(sentences))


def test_denominator_every_sentence_is_appendix_figure_5(cur, sentences) -> None:
    family = errors.find_family(cur, "tofueval", "error_type")
    shown = errors.distribution(cur, "tofueval", family, "topic_type", of=errors.OF_ALL)
    per_group = Counter(s["topic_type"] for s in sentences)
    expected = Counter((t, s["topic_type"]) for s in sentences for t in s["types"])
    for row in shown.rows:
        if row.group != errors.ALL_GROUPS:
            assert row.pct == pytest.approx(100 * expected[(row.value, row.group)] / per_group[row.group])


def test_values_on_the_same_sentence_match_the_raw_csvs(cur, sentences) -> None:
    family = errors.find_family(cur, "tofueval", "error_type")
    matrix = errors.together(cur, "tofueval", family)
    pairs = Counter((a, b) for s in sentences for a, b in product(s["types"], repeat=2))
    assert set(matrix.index) == {t for s in sentences for t in s["types"]}
    for a, b in product(matrix.index, repeat=2):
        assert matrix.loc[a, b] == pairs[(a, b)], (a, b)
    assert sum(n for (a, b), n in pairs.items() if a != b) > 0, "the bundled data has multi-typed sentences"


def test_storysumm_easy_and_hard_per_generator_and_split(cur) -> None:
    """The split tells StorySumm's two `claude` generators apart (Claude-2 on val, Claude-3 on test)."""
    tagged = [record for record in raw.storysumm_records().values() if record.get("difficulty")]
    family = errors.find_family(cur, "storysumm", "difficulty")
    for by, key in (("split", lambda r: r["split"]), ("generator", lambda r: r["model"])):
        shown = errors.distribution(cur, "storysumm", family, by)
        got: Counter = Counter()
        for row in shown.rows:
            if row.group != errors.ALL_GROUPS:  # a shown name "Claude-2 (raw: claude, val)" holds the raw model
                raw_name = row.group.split("raw: ")[-1].split(",")[0] if "raw: " in row.group else row.group
                got[(row.value, raw_name)] += row.units
        assert +got == Counter((record["difficulty"], key(record)) for record in tagged), by
    assert shown.totals[errors.ALL_GROUPS][0] == len(tagged)


def test_fables_gold_verdicts_per_summarizer(cur) -> None:
    books = raw.fables_books()
    expected = Counter(
        (raw.FABLES_LABELS[claim["label"]], model)
        for models in books.values()
        for model, summary in models.items()
        for claim in summary["claims"].values()
    )
    family = errors.find_family(cur, "fables", "verdict:gold", "claim")
    shown = errors.distribution(cur, "fables", family, "generator", of=errors.OF_ALL)
    got = {(row.value, row.group): row.units for row in shown.rows if row.group != errors.ALL_GROUPS}
    assert {(v, g.upper()): n for (v, g), n in expected.items()} == {(v, g.upper()): n for (v, g), n in got.items()}


def test_an_unknown_family_or_breakdown_is_one_clear_error(cur) -> None:
    with pytest.raises(FaithLensError, match="no tag family or verdicts 'nope'.*error_type"):
        errors.find_family(cur, "tofueval", "nope")
    family = errors.find_family(cur, "tofueval", "error_type")
    with pytest.raises(FaithLensError, match="cannot break down by 'colour'"):
        errors.distribution(cur, "tofueval", family, "colour")
