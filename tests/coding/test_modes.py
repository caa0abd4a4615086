"""The seed papers' annotation protocols as session modes: StorySumm's line-by-line and hybrid coding,
ARM's faithfulness judgement of an original or rewritten claim and its preference question with the
explanation points; each checked on what a coder sees, what a save requires and writes, and what the
session report computes from the codes (worked by hand here)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

from faithlens.coding import events, library, modes, report, sessions
from faithlens.coding.events import CodingError, Submission
from faithlens.coding.sessions import SessionSpec
from faithlens.errors import FaithLensError
from faithlens.llm.runs.spec import Selection
from faithlens.views import arm_tables
from tests import coders, raw
from tests.coders import ADMIN
from tests.coding.support import (
    connected,
    current_label,
    current_value,
    plant_inconsistencies,
    plant_points,
    plant_rewrite,
    row_counts,
    storysumm_claim_count,
    storysumm_ids,
    storysumm_sentence_count,
    tags_of,
)

BOOK = "storysumm-faithfulness"
SUGGESTER = "llm/storysumm-inconsistencies/test-model"
REWRITER = "llm/arm-rewrite-both/test-model"


def _session(conn, name: str, **fields) -> sessions.Session:
    spec = {"name": name, "dataset": "storysumm", "level": "summary", "codebook": BOOK, "selection": Selection("val")}
    spec["blind"] = False  # labels are written as each code is saved (a blind session writes them at close)
    return sessions.create(conn, ADMIN, SessionSpec(**{**spec, **fields}))


def _refused(conn, session, coder: str, sub: Submission) -> str:
    actor = coders.joined(conn, session, coder)
    before = row_counts(conn)
    with pytest.raises(CodingError) as caught:
        events.save(conn, actor, session, sub)
    assert row_counts(conn) == before
    return str(caught.value)


# --- line by line (StorySumm's annotators) ---------------------------------------------------------


def _sentences(unit: str, codes: dict[int, tuple[str, str | None]] | None = None) -> dict:
    """Line-by-line detail: every sentence of the summary faithful, except `codes` (position -> code, note)."""
    codes = codes or {}
    return {
        "sentences": {
            f"{unit}#s{i}": dict(zip(("code", "note"), codes.get(i, ("faithful", None)), strict=True))
            for i in range(storysumm_sentence_count(unit))
        }
    }


def test_line_by_line_shows_every_sentence_of_the_summary(db_copy: Path):
    unit = storysumm_ids("val")[3]
    expected = [s.strip() for s in raw.storysumm_records()[unit]["summary"]]
    with connected(db_copy) as conn:
        made = _session(conn, "lbl", mode="line-by-line")
        shown = modes.context(conn.cursor(), made, unit)
    assert [text for _, text in shown.sentences] == expected
    assert len(shown.sentences) == storysumm_sentence_count(unit)


def test_line_by_line_writes_sentence_labels_and_the_summary_follows(db_copy: Path):
    unit = storysumm_ids("val")[0]
    n = storysumm_sentence_count(unit)
    source = "coding/lbl/ann"
    with connected(db_copy) as conn:
        made = _session(conn, "lbl", mode="line-by-line")
        coders.code(conn, made, "ann", Submission(unit, detail=_sentences(unit, {n - 1: ("na", None)})))
        first = [current_value(conn, "storysumm", source, "sentence", f"{unit}#s{i}") for i in range(n)]
        summary_first = current_label(conn, "storysumm", source, "summary", unit)
        marked = _sentences(unit, {1: ("unfaithful", "he never drinks the soda"), n - 1: ("na", None)})
        coders.code(conn, made, "ann", Submission(unit, note="one line is wrong", detail=marked))
        second = current_label(conn, "storysumm", source, "sentence", f"{unit}#s1")
        summary_second = current_label(conn, "storysumm", source, "summary", unit)
        others = [current_value(conn, "storysumm", source, "sentence", f"{unit}#s{i}") for i in range(n) if i != 1]
        code = events.current(conn, made, "ann")[unit]
    assert first == ["faithful"] * (n - 1) + ["n/a"]
    assert summary_first == ("faithful", "faithful", None, "ann")  # commentary does not make it unfaithful
    assert second == ("unfaithful", "unfaithful", "he never drinks the soda", "ann")
    assert summary_second == ("unfaithful", "unfaithful", "one line is wrong", "ann")
    assert others == ["faithful"] * (n - 2) + ["n/a"]
    assert code.codes == ("unfaithful",)
    assert code.detail["sentences"][f"{unit}#s1"] == {"code": "unfaithful", "note": "he never drinks the soda"}


def test_line_by_line_refuses_a_summary_not_coded_line_by_line(db_copy: Path):
    unit, other = storysumm_ids("val")[:2]
    n = storysumm_sentence_count(unit)
    with connected(db_copy) as conn:
        made = _session(conn, "lbl", mode="line-by-line")
        full = _sentences(unit)["sentences"]
        missing = {uid: part for uid, part in full.items() if uid != f"{unit}#s{n - 1}"}
        extra = {**full, f"{other}#s0": {"code": "faithful"}}
        assert f"S{n} not coded" in _refused(conn, made, "ann", Submission(unit, detail={"sentences": missing}))
        assert "not coded" in _refused(conn, made, "ann", Submission(unit, detail={"sentences": extra}))
        assert "not coded" in _refused(conn, made, "ann", Submission(unit))
        no_why = _sentences(unit, {1: ("unfaithful", "  ")})
        said = _refused(conn, made, "ann", Submission(unit, detail=no_why))
        assert said.startswith("S2 needs an explanation (No (inconsistent))"), "named as the form names it"
        assert "#s" not in said
        unknown = _sentences(unit, {0: ("maybe", None)})
        assert "unknown code" in _refused(conn, made, "ann", Submission(unit, detail=unknown))


def test_line_by_line_reports_agreement_on_the_sentences_too(db_copy: Path):
    units = storysumm_ids("val")[:2]
    with connected(db_copy) as conn:
        made = _session(conn, "lbl", mode="line-by-line")
        for unit in units:
            coders.code(conn, made, "ann", Submission(unit, detail=_sentences(unit)))
            coders.code(conn, made, "bob", Submission(unit, detail=_sentences(unit, {0: ("unfaithful", "no")})))
        found = report.session_agreement(conn, made)
    sentences = sum(storysumm_sentence_count(unit) for unit in units)
    assert found.sentences.units == sentences
    # Each summary's first sentence is the only one the coders disagree on.
    assert found.sentences.pct_all_agree == pytest.approx(100 * (sentences - 2) / sentences)
    assert found.overall.units == 2 and found.overall.pct_all_agree == 0
    # Per code on the sentences, as sklearn gives it on "chose the code or not" over every sentence.
    ann = [0] * sentences
    bob = [int(i in (0, storysumm_sentence_count(units[0]))) for i in range(sentences)]
    per_code = dict(found.sentence_per_code)
    assert sorted(per_code) == ["faithful", "na", "unfaithful"]
    assert per_code["unfaithful"].pairs[0].kappa == pytest.approx(cohen_kappa_score(ann, bob))
    assert per_code["unfaithful"].pct_all_agree == pytest.approx(100 * (sentences - 2) / sentences)
    # A summary is never "N/A, just commentary": its per-code table has no such row.
    assert [key for key, _ in found.per_code] == ["faithful", "unfaithful"]
    assert "per_code" in found.as_dict()["sentences"]


def test_line_by_line_undo_returns_to_the_previous_sentence_codes(db_copy: Path):
    unit = storysumm_ids("val")[0]
    source = "coding/lbl/ann"
    with connected(db_copy) as conn:
        made = _session(conn, "lbl", mode="line-by-line")
        coders.code(conn, made, "ann", Submission(unit, detail=_sentences(unit)))
        coders.code(conn, made, "ann", Submission(unit, detail=_sentences(unit, {0: ("unfaithful", "no soda")})))
        back = coders.undo(conn, made, "ann", unit)
        assert back.codes == ("faithful",)
        assert back.detail == {
            "sentences": {uid: {**part, "note": None} for uid, part in _sentences(unit)["sentences"].items()}
        }
        assert current_value(conn, "storysumm", source, "summary", unit) == "faithful"
        assert current_value(conn, "storysumm", source, "sentence", f"{unit}#s0") == "faithful"


def test_line_by_line_undo_to_uncoded_clears_the_sentence_labels(db_copy: Path):
    unit = storysumm_ids("val")[0]
    source = "coding/lbl/ann"
    with connected(db_copy) as conn:
        made = _session(conn, "lbl", mode="line-by-line")
        coders.code(conn, made, "ann", Submission(unit, detail=_sentences(unit)))
        assert coders.undo(conn, made, "ann", unit) is None
        assert current_value(conn, "storysumm", source, "summary", unit) is None
        left = [
            current_value(conn, "storysumm", source, "sentence", f"{unit}#s{i}")
            for i in range(storysumm_sentence_count(unit))
        ]
        assert left == [None] * storysumm_sentence_count(unit)


# --- hybrid (StorySumm section 3) ------------------------------------------------------------------


def _plant_suggestions(conn) -> dict[str, list[str]]:
    """Suggestions for three val summaries (one answered twice: the newest counts), none usable for
    three more (empty, unparsed, another source), and one for a test summary outside the selection."""
    val, test = storysumm_ids("val"), storysumm_ids("test")
    plant_inconsistencies(conn, SUGGESTER, val[1], ["an old suggestion"])
    planted = {
        val[1]: ["The soda is never named.", "He is not naked."],
        val[4]: ["The room is grey, not white."],
        val[7]: ["There is no beam of light.", "He wakes at home.", "The aliens speak."],
    }
    for unit, items in planted.items():
        plant_inconsistencies(conn, SUGGESTER, unit, items)
    plant_inconsistencies(conn, SUGGESTER, val[2], [])
    plant_inconsistencies(conn, SUGGESTER, val[3], [], status="parse_failure")
    plant_inconsistencies(conn, "llm/other/model", val[5], ["elsewhere"])
    plant_inconsistencies(conn, SUGGESTER, test[0], ["outside the split"])
    return planted


def test_hybrid_keeps_only_units_with_suggestions_from_the_source(db_copy: Path):
    with connected(db_copy) as conn:
        planted = _plant_suggestions(conn)
        made = _session(conn, "hyb", mode="hybrid", suggestions=SUGGESTER)
        shown = {unit: modes.context(conn.cursor(), made, unit).suggestions for unit in made.units}
    assert list(made.units) == sorted(planted)
    assert shown == {unit: tuple(items) for unit, items in planted.items()}
    val = len(storysumm_ids("val"))
    assert made.selection == (
        f"{len(planted)} summaries with inconsistencies suggested by {SUGGESTER}, of {val} summaries where split is val"
    )
    assert made.suggestions == SUGGESTER


def test_hybrid_joins_both_prompts_suggestions_in_prompt_order(db_copy: Path):
    """StorySumm B.2: Prompt 1's and Prompt 2's inconsistencies are concatenated, each prompt's newest answer."""
    summary = storysumm_ids("val")[0]
    with connected(db_copy) as conn:
        plant_inconsistencies(conn, SUGGESTER, summary, ["Prompt 2's only item."], prompt="prompt2")
        plant_inconsistencies(conn, SUGGESTER, summary, ["an old Prompt 1 answer"], prompt="prompt1")
        plant_inconsistencies(conn, SUGGESTER, summary, ["Prompt 1, first.", "Prompt 1, second."], prompt="prompt1")
        made = _session(conn, "hyb2", mode="hybrid", suggestions=SUGGESTER)
        shown = modes.context(conn.cursor(), made, summary).suggestions
    assert shown == ("Prompt 1, first.", "Prompt 1, second.", "Prompt 2's only item.")


def test_hybrid_with_no_suggestions_at_all_is_refused(db_copy: Path):
    with connected(db_copy) as conn:
        before = row_counts(conn)
        with pytest.raises(FaithLensError):
            _session(conn, "hyb", mode="hybrid", suggestions=SUGGESTER)
        assert row_counts(conn) == before


def test_hybrid_needs_agree_or_disagree_and_why_for_each_suggestion(db_copy: Path):
    with connected(db_copy) as conn:
        planted = _plant_suggestions(conn)
        made = _session(conn, "hyb", mode="hybrid", suggestions=SUGGESTER)
        unit = sorted(planted)[0]
        items = planted[unit]
        answers = [{"agree": True, "why": "the story never names it"}, {"agree": False, "why": "he is"}]
        for wrong in (
            answers[:1],  # one of two answered
            [answers[0], {"agree": False, "why": "  "}],  # no why
            [answers[0], {"agree": "no", "why": "he is"}],  # neither agree nor disagree
            [answers[0], {"why": "he is"}],
            [*answers, {"agree": True, "why": "extra"}],
        ):
            _refused(conn, made, "ann", Submission(unit, ("unfaithful",), "two lines", {"suggestions": wrong}))
        _refused(conn, made, "ann", Submission(unit, ("unfaithful",), None, {"suggestions": answers}))
        coders.code(conn, made, "ann", Submission(unit, ("unfaithful",), "the soda", {"suggestions": answers}))
        code = events.current(conn, made, "ann")[unit]
        label = current_label(conn, "storysumm", "coding/hyb/ann", "summary", unit)
    assert code.detail == {
        "suggestions": [
            {"text": items[0], "agree": True, "why": "the story never names it"},
            {"text": items[1], "agree": False, "why": "he is"},
        ]
    }
    assert label == ("unfaithful", "unfaithful", "the soda", "ann")


def test_hybrid_takes_no_n_a_for_a_whole_summary(db_copy: Path):
    """StorySumm's overall question is Yes or No; "N/A, just commentary" answers a line (Appendix D)."""
    with connected(db_copy) as conn:
        planted = _plant_suggestions(conn)
        made = _session(conn, "hyb", mode="hybrid", suggestions=SUGGESTER)
        unit = sorted(planted)[1]  # one suggestion
        answers = {"suggestions": [{"agree": False, "why": "the room is white"}]}
        said = _refused(conn, made, "ann", Submission(unit, ("na",), None, answers))
        assert "N/A, just commentary is an answer for a line, not for a whole summary" in said
        coders.code(conn, made, "ann", Submission(unit, ("faithful",), None, answers))
        coders.code(conn, made, "bob", Submission(unit, ("unfaithful",), "grey", answers))
        before = row_counts(conn)
        with pytest.raises(CodingError):
            report.adjudicate(conn, coders.person("dana", "adjudicator"), made, unit, ("na",), None)
        assert row_counts(conn) == before
        found = report.session_agreement(conn, made)
    assert [key for key, _ in found.per_code] == ["faithful", "unfaithful"]


@pytest.mark.parametrize(
    ("codes", "agree", "warned"),
    [
        (("faithful",), [True, False, True], [1, 3]),
        (("faithful",), [False, False, False], []),
        (("unfaithful",), [True, True, True], []),
        (("na",), [True, False, False], []),
    ],
)
def test_hybrid_flags_an_agreed_inconsistency_under_a_consistent_label(db_copy: Path, codes, agree, warned):
    with connected(db_copy) as conn:
        planted = _plant_suggestions(conn)
        made = _session(conn, "hyb", mode="hybrid", suggestions=SUGGESTER)
        book = library.get(conn.cursor(), made.codebook, made.codebook_version)
        unit = sorted(planted)[2]  # three suggestions
        answers = [{"agree": value, "why": "because"} for value in agree]
        assert modes.agreed_yet_consistent(book, codes, answers) == warned
        if codes != ("na",):  # a warning, not a refusal: the code is saved
            coders.code(conn, made, "ann", Submission(unit, codes, "why", {"suggestions": answers}))
            assert events.current(conn, made, "ann")[unit].codes == codes


def test_hybrid_undo_restores_the_previous_answers(db_copy: Path):
    with connected(db_copy) as conn:
        planted = _plant_suggestions(conn)
        made = _session(conn, "hyb", mode="hybrid", suggestions=SUGGESTER)
        unit = sorted(planted)[1]  # one suggestion
        first = {"suggestions": [{"agree": True, "why": "grey"}]}
        coders.code(conn, made, "ann", Submission(unit, ("unfaithful",), "the room", first))
        second = {"suggestions": [{"agree": False, "why": "x"}]}
        coders.code(conn, made, "ann", Submission(unit, ("faithful",), None, second))
        back = coders.undo(conn, made, "ann", unit)
        assert back.codes == ("unfaithful",)
        assert back.detail == {"suggestions": [{"text": planted[unit][0], "agree": True, "why": "grey"}]}


# --- ARM faithfulness (ARM section 4.2) ------------------------------------------------------------


def _claims(summary: str) -> list[str]:
    return [f"{summary}#c{i}" for i in range(storysumm_claim_count(summary))]


def _plant_rewrites(conn) -> list[str]:
    """Rewrites of the claims of two val summaries; one claim unchanged, one rewritten then found
    unchanged on a newer answer, one rewritten by another source, one outside the split."""
    val, test = storysumm_ids("val"), storysumm_ids("test")
    claims = _claims(val[0]) + _claims(val[1])
    rewritten = claims[:-3]
    for unit in rewritten:
        plant_rewrite(conn, REWRITER, unit, f"Rewritten: {unit}")
    plant_rewrite(conn, REWRITER, claims[-3], "the same", changed=False)
    plant_rewrite(conn, REWRITER, claims[-2], "an earlier rewrite")
    plant_rewrite(conn, REWRITER, claims[-2], "the same", changed=False)
    plant_rewrite(conn, "llm/arm-rewrite-both/other", claims[-1], "by another model")
    plant_rewrite(conn, REWRITER, _claims(test[0])[0], "outside the split")
    return rewritten


def _arm_session(conn, name: str = "armf", **fields) -> sessions.Session:
    spec = {"level": "claim", "codebook": "arm-status", "mode": "arm-faithfulness", "suggestions": REWRITER, "seed": 7}
    return _session(conn, name, **{**spec, **fields})


def _by_variant(session) -> tuple[list[str], list[str]]:
    originals = [u for u in session.units if modes.shown_variant(session.seed, u) == modes.ORIGINAL]
    rewrites = [u for u in session.units if modes.shown_variant(session.seed, u) == modes.REWRITE]
    assert len(originals) >= 3 and len(rewrites) >= 3, "the seed should show both variants"
    return originals, rewrites


def test_arm_faithfulness_holds_only_the_units_the_source_rewrote(db_copy: Path):
    with connected(db_copy) as conn:
        rewritten = _plant_rewrites(conn)
        made = _arm_session(conn)
        shown = modes.context(conn.cursor(), made, made.units[0])
    assert list(made.units) == rewritten
    claims = sum(storysumm_claim_count(summary) for summary in storysumm_ids("val"))
    assert made.selection.startswith(f"{len(rewritten)} claims that {REWRITER} rewrote, of {claims:,} claims")
    assert made.selection.endswith(f" of {len(storysumm_ids('val'))} summaries where split is val")
    assert shown.rewrite == f"Rewritten: {made.units[0]}"
    assert shown.original == raw.storysumm_records()[storysumm_ids("val")[0]]["claims"][0].strip()


def test_arm_faithfulness_shows_each_unit_the_same_way_to_every_coder_and_files_it_by_variant(db_copy: Path):
    with connected(db_copy) as conn:
        _plant_rewrites(conn)
        made = _arm_session(conn)
        originals, rewrites = _by_variant(made)
        for coder in ("ann", "bob"):
            for unit in made.units:
                coders.code(conn, made, coder, Submission(unit, ("supported",)))
        now = events.current(conn, made)
        unit_o, unit_r = originals[0], rewrites[0]
        labels = {
            (coder, unit, suffix): current_value(conn, "storysumm", f"coding/armf/{coder}{suffix}", "claim", unit)
            for coder in ("ann", "bob")
            for unit in (unit_o, unit_r)
            for suffix in ("", "/rewrite")
        }
        context_r = modes.context(conn.cursor(), made, unit_r)
    for unit in made.units:
        assert now[("ann", unit)].detail["shown"] == now[("bob", unit)].detail["shown"]
        assert now[("ann", unit)].detail["shown"] == modes.shown_variant(made.seed, unit)
    assert now[("ann", unit_r)].detail["text"] == f"Rewritten: {unit_r}" == context_r.rewrite
    assert context_r.shown == modes.REWRITE and context_r.order == (modes.REWRITE, modes.ORIGINAL)
    for coder in ("ann", "bob"):
        assert labels[(coder, unit_o, "")] == "faithful" and labels[(coder, unit_o, "/rewrite")] is None
        assert labels[(coder, unit_r, "/rewrite")] == "faithful" and labels[(coder, unit_r, "")] is None


def test_arm_faithfulness_refuses_a_tag_codebook(db_copy: Path):
    with connected(db_copy) as conn:
        _plant_rewrites(conn)
        before = row_counts(conn)
        with pytest.raises(FaithLensError):
            _arm_session(conn, codebook="arm-ambiguity")
        assert row_counts(conn) == before


def test_arm_faithfulness_report_matches_table_4_worked_by_hand(db_copy: Path):
    S, UN, AMB = "supported", "unsupported", "ambiguous"
    with connected(db_copy) as conn:
        _plant_rewrites(conn)
        made = _arm_session(conn)
        originals, rewrites = _by_variant(made)
        o1, o2, o3 = originals[:3]
        r1, r2, r3 = rewrites[:3]
        plan = {
            o1: {"ann": S, "bob": S, "cat": S},  # all agree; faithful 3/3
            o2: {"ann": S, "bob": UN, "cat": S},  # disagree; faithful 2/3
            o3: {"ann": AMB},  # one coder: no agreement; faithful 0/1
            r1: {"ann": UN, "bob": UN, "cat": UN},  # all agree; faithful 0/3
            r2: {"ann": S, "bob": AMB},  # disagree; faithful 1/2 is not more than half
            r3: {"ann": S, "bob": S},  # all agree; faithful 2/2
        }
        for unit, codes in plan.items():
            for coder, code in codes.items():
                coders.code(conn, made, coder, Submission(unit, (code,), "why" if code == UN else None))
        arm = report.session_agreement(conn, made).arm
    assert arm == {
        "original_units": 3,
        "original_pct_all_agree": pytest.approx(100 * 1 / 2),  # o1 of o1, o2
        "original_pct_faithful": pytest.approx(100 * 2 / 3),  # o1, o2
        "rewrite_units": 3,
        "rewrite_pct_all_agree": pytest.approx(100 * 2 / 3),  # r1, r3
        "rewrite_pct_faithful": pytest.approx(100 * 1 / 3),  # r3
    }


def test_arm_faithfulness_undo_returns_to_the_previous_code_in_the_shown_variants_source(db_copy: Path):
    with connected(db_copy) as conn:
        _plant_rewrites(conn)
        made = _arm_session(conn)
        _, rewrites = _by_variant(made)
        unit = rewrites[0]
        coders.code(conn, made, "ann", Submission(unit, ("supported",)))
        coders.code(conn, made, "ann", Submission(unit, ("ambiguous",)))
        assert coders.undo(conn, made, "ann", unit).codes == ("supported",)
        assert current_value(conn, "storysumm", "coding/armf/ann/rewrite", "claim", unit) == "faithful"
        assert current_label(conn, "storysumm", "coding/armf/ann", "claim", unit) is None


def test_arm_faithfulness_undo_to_uncoded_clears_the_rewrite_source(db_copy: Path):
    with connected(db_copy) as conn:
        _plant_rewrites(conn)
        made = _arm_session(conn)
        _, rewrites = _by_variant(made)
        unit = rewrites[0]
        coders.code(conn, made, "ann", Submission(unit, ("supported",)))
        assert coders.undo(conn, made, "ann", unit) is None
        assert current_value(conn, "storysumm", "coding/armf/ann/rewrite", "claim", unit) is None
        assert current_label(conn, "storysumm", "coding/armf/ann", "claim", unit) is None


# --- ARM preference and explanation points ---------------------------------------------------------

IMP, NEU, WRG = "IMPORTANT", "NEUTRAL", "WRONG"  # ARM section 4.2's marks


def _preference_session(conn) -> tuple[sessions.Session, dict[str, list[str]]]:
    rewritten = _plant_rewrites(conn)
    points = {
        rewritten[0]: ["It names the room.", "It drops the soda.", "It keeps the beam.", "It adds a date."],
        rewritten[1]: ["It says grey.", "It adds aliens."],
        rewritten[2]: ["It shortens.", "It moves the time.", "It adds a name."],
    }
    for unit, items in points.items():
        plant_points(conn, REWRITER, unit, items)
    made = _session(
        conn, "pref", level="claim", codebook="arm-preference", mode="arm-preference", suggestions=REWRITER, seed=3
    )
    return made, points


def test_arm_preference_asks_for_marks_only_when_the_rewrite_is_preferred(db_copy: Path):
    with connected(db_copy) as conn:
        made, points = _preference_session(conn)
        unit = next(iter(points))
        shown = modes.context(conn.cursor(), made, unit)
        assert shown.points == tuple(points[unit])
        for marks in (None, [IMP, NEU, WRG], [IMP, NEU, WRG, WRG, WRG], [IMP, NEU, WRG, "GOOD"]):
            assert "explanation points" in _refused(
                conn, made, "ann", Submission(unit, ("rewrite",), None, {"points": marks})
            )
        coders.code(conn, made, "ann", Submission(unit, ("rewrite",), None, {"points": [IMP, NEU, WRG, WRG]}))
        coders.code(conn, made, "bob", Submission(unit, ("original",), None, {"points": [IMP, IMP, IMP, IMP]}))
        coders.code(conn, made, "cat", Submission(unit, ("neutral",)))
        unmarked = made.units[-1]  # rewritten, without explanation points
        coders.code(conn, made, "ann", Submission(unmarked, ("rewrite",)))
        now = events.current(conn, made)
        tags = tags_of(conn, "storysumm", "claim", unit, "coding/pref/ann")
    assert now[("ann", unit)].detail == {"order": list(shown.order), "points": [IMP, NEU, WRG, WRG]}
    assert now[("bob", unit)].detail == {"order": list(shown.order), "points": None}
    assert now[("cat", unit)].detail["points"] is None
    assert now[("ann", unmarked)].detail["points"] is None
    assert sorted(shown.order) == [modes.ORIGINAL, modes.REWRITE]
    assert shown.order[0] == modes.shown_variant(made.seed, unit)
    assert now[("ann", unit)].detail["order"] == now[("bob", unit)].detail["order"]
    assert tags == {("arm_preference", "rewrite")}


def test_arm_preference_refuses_another_codebook(db_copy: Path):
    with connected(db_copy) as conn:
        _plant_rewrites(conn)
        with pytest.raises(FaithLensError):
            _session(conn, "pref", level="claim", codebook="arm-ambiguity", mode="arm-preference", suggestions=REWRITER)


def test_explanation_point_metrics_follow_arm_section_4_3_worked_by_hand(db_copy: Path):
    with connected(db_copy) as conn:
        made, points = _preference_session(conn)
        u1, u2, u3 = points
        saved = [
            ("ann", u1, "rewrite", [IMP, IMP, NEU, WRG]),  # E1
            ("bob", u1, "rewrite", [NEU, NEU, NEU, NEU]),  # E2
            ("ann", u2, "rewrite", [IMP, WRG]),  # E3
            ("bob", u2, "original", None),
            ("ann", u3, "neutral", None),
            ("bob", u3, "rewrite", [WRG, WRG, NEU]),  # E4
            ("ann", made.units[-1], "neutral", None),  # every coder chose Neither
            ("bob", made.units[-1], "neutral", None),
        ]
        for coder, unit, code, marks in saved:
            coders.code(conn, made, coder, Submission(unit, (code,), None, {"points": marks}))
        arm = report.session_agreement(conn, made).arm
    # R = {E1, E2, E3, E4}. % important = mean over E of the share of IMPORTANT points:
    # (2/4 + 0/4 + 1/2 + 0/3) / 4 = 1/4. % none important = 1 - (1 + 0 + 1 + 0) / 4 = 1/2.
    # % wrong = (1/4 + 0/4 + 1/2 + 2/3) / 4 = 17/48. % none wrong = 1 - (1 + 0 + 1 + 1) / 4 = 1/4.
    assert arm["explanations"] == 4
    assert arm["pct_important"] == pytest.approx(100 * 1 / 4)
    assert arm["pct_none_important"] == pytest.approx(100 * 1 / 2)
    assert arm["pct_wrong"] == pytest.approx(100 * 17 / 48)
    assert arm["pct_none_wrong"] == pytest.approx(100 * 1 / 4)
    # Four units judged. Preferred by the coders' majority: u1 rewrite (2 of 2); u2 and u3 are ties and the
    # last unit's majority chose Neither, so no version won them. Unanimous: u1 and the last unit, of 4.
    assert arm["preference_units"] == 4
    assert (arm["preferred_units"], arm["no_preference_units"]) == (1, 3)
    assert arm["pct_rewrite_preferred"] == pytest.approx(100 * 1 / 4)
    assert arm["pct_original_preferred"] == 0
    assert arm["preference_pct_all_agree"] == pytest.approx(100 * 2 / 4)


def test_table_5_majority_vote_row_worked_by_hand(db_copy: Path):
    """ARM Table 5's "Maj. vote" row beside its "Individual" row: each point carries the mark more than half
    of the unit's coders gave it; a coder who preferred the original or neither marked no point."""
    with connected(db_copy) as conn:
        made, points = _preference_session(conn)
        u1, u2, u3 = points
        saved = [
            ("ann", u1, "rewrite", [IMP, IMP, NEU, WRG]),
            ("bob", u1, "rewrite", [IMP, NEU, NEU, WRG]),
            ("cat", u1, "original", None),
            ("ann", u2, "rewrite", [IMP, IMP]),
            ("bob", u2, "original", None),
            ("cat", u2, "neutral", None),
            ("ann", u3, "rewrite", [IMP, WRG, NEU]),
            ("bob", u3, "rewrite", [IMP, NEU, NEU]),
            ("cat", u3, "rewrite", [IMP, WRG, IMP]),
            ("ann", made.units[-1], "rewrite", None),  # a rewrite without explanation points: not in R
        ]
        for coder, unit, code, marks in saved:
            coders.code(conn, made, coder, Submission(unit, (code,), None, {"points": marks}))
        arm = report.session_agreement(conn, made).arm
    # Majority of the unit's 3 coders (2 or 3 give the mark):
    #   u1: IMP (ann, bob) | none (IMP 1, NEU 1) | NEU | WRG  -> 1/4 important, 1/4 wrong
    #   u2: none | none (ann alone marked them IMPORTANT)       -> 0 important, 0 wrong
    #   u3: IMP (3) | WRG (ann, cat) | NEU (ann, bob)           -> 1/3 important, 1/3 wrong
    # % important = (1/4 + 0 + 1/3) / 3 = 7/36; % none important = 1 - 2/3; the same for WRONG.
    assert arm["majority_explanations"] == 3
    assert arm["majority_pct_important"] == pytest.approx(100 * 7 / 36)
    assert arm["majority_pct_none_important"] == pytest.approx(100 / 3)
    assert arm["majority_pct_wrong"] == pytest.approx(100 * 7 / 36)
    assert arm["majority_pct_none_wrong"] == pytest.approx(100 / 3)
    # Individual: six marked explanations; IMPORTANT shares 2/4, 1/4, 2/2, 1/3, 1/3, 2/3 (sum 37/12), every
    # one has an IMPORTANT point; WRONG shares 1/4, 1/4, 0, 1/3, 0, 1/3 (sum 7/6), four have a WRONG point.
    assert arm["explanations"] == 6
    assert arm["pct_important"] == pytest.approx(100 * 37 / 72)
    assert arm["pct_none_important"] == pytest.approx(0)
    assert arm["pct_wrong"] == pytest.approx(100 * 7 / 36)
    assert arm["pct_none_wrong"] == pytest.approx(100 / 3)

    rows = arm_tables.table5_rows(arm)
    assert [(r["row"], r["figures"]) for r in rows] == [
        ("Individual (each coder's marks)", "this session"),
        ("Individual (each coder's marks)", "paper (Table 5)"),
        ("Maj. vote", "this session"),
        ("Maj. vote", "paper (Table 5)"),
    ]
    assert rows[2]["% important"] == pytest.approx(100 * 7 / 36) and rows[2]["explanations"] == 3
    # ARM section 5.4, Table 5, as printed.
    assert [rows[1][c] for c in ("% important", "% none important", "% wrong", "% none wrong")] == [
        84.11,
        5.29,
        7.52,
        87.83,
    ]
    assert [rows[3][c] for c in ("% important", "% none important", "% wrong", "% none wrong")] == [
        68.72,
        24.39,
        0.56,
        98.78,
    ]
    assert not any(row["metric"].startswith("majority") for row in arm_tables.figure_rows(arm))
