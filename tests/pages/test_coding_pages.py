"""The Code and Sessions pages in AppTest, each test on a private copy of the bundled database: sessions
are made in the test through the core (`faithlens.coding`), each with a unique name, and what the pages
write is read back with duckdb. Expected counts and gold labels come from the raw StorySumm file (`tests.raw`); agreement
figures from scikit-learn, statsmodels and krippendorff on the codes the test made.

The pages are reached through app.py and `switch_page`, as in the real app, so their links resolve."""

from __future__ import annotations

import csv
import html
import io
import json
import re
import uuid
from urllib.parse import parse_qs

import krippendorff
import numpy as np
import pytest
import yaml
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from components.coding import sessions as coding_sessions
from faithlens.coding import closing, events, sessions
from tests import coders, raw
from tests.apptest import clean
from tests.coders import ADMIN
from tests.coding import support
from tests.pages.conftest import LOCAL_USER

DATASET = "storysumm"
CODE = "pages/code.py"
SESSIONS = "pages/sessions.py"
BOOK = "storysumm-faithfulness"
BINARY = {0: "unfaithful", 1: "faithful"}


def unique(prefix: str) -> str:
    """A session name no other test of this run uses (the AppTest database is shared)."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def create(conn, prefix: str, level: str = "sentence", **fields) -> sessions.Session:
    return sessions.create(
        conn, ADMIN, sessions.SessionSpec(unique(prefix), DATASET, level, fields.pop("codebook", BOOK), **fields)
    )


def base(session: sessions.Session, coder: str, unit: str) -> str:
    """The key prefix of one unit's inputs on the Code page."""
    return f"code.{DATASET}.{session.name}.{coder}.unit.{unit}"


def action(session: sessions.Session, coder: str, name: str) -> str:
    return f"code.{DATASET}.{session.name}.{coder}.{name}"


def shown_unit(at, session: sessions.Session, coder: str) -> str:
    """The unit the Code page shows: the one its code buttons (or line radios) are keyed by."""
    prefix = f"code.{DATASET}.{session.name}.{coder}.unit."
    keys = [w.key for w in (*at.button, *at.radio, *at.text_area) if w.key and w.key.startswith(prefix)]
    units = {key[len(prefix) :].rsplit(".code.", 1)[0].rsplit(".note", 1)[0] for key in keys if ".s." not in key}
    (unit,) = units
    return unit


def page_text(at, main_only: bool = False) -> str:
    """Everything the page sent (or its main area only, without the sidebar's page links): every element's
    and block's message (texts, labels, options, help, markup)."""
    parts = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            parts.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at.main if main_only else at._tree)
    return "\n".join(parts)


def shown_text(elements) -> list[str]:
    """What a reader sees in these elements: their values with the Markdown escapes undone."""
    return [re.sub(r"\\(.)", r"\1", element.value) for element in elements]


def stored_events(conn, session: sessions.Session) -> list[tuple]:
    return conn.execute(
        "SELECT coder, unit_id, action, codes, note, detail FROM coding_event WHERE session_id = ? ORDER BY event_id",
        [session.session_id],
    ).fetchall()


def frame_with(at, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def save_codes(conn, session: sessions.Session, codes: dict[str, list[str]]) -> None:
    for coder, values in codes.items():
        for unit, code in zip(session.units, values, strict=True):
            note = "why" if code == "unfaithful" else None
            coders.code(conn, session, coder, events.Submission(unit, (code,), note))


# --- Sessions ----------------------------------------------------------------------------------------------


def test_a_session_made_in_the_test_shows_on_sessions_with_its_coders(db, page) -> None:
    made = create(db, "listed", sample=5, seed=3, coders=("ana", "ben"))
    coders.code(db, made, "ana", events.Submission(made.units[0], ("faithful",)))
    at = page(SESSIONS, session=made.name)
    listing = frame_with(at, "coders")
    row = listing[listing["session"] == made.name].iloc[0]
    assert row["units"] == 5 and row["level"] == "sentence"
    assert row["coders"] == "ana 1/5, ben 0/5"
    assert row["codebook"] == f"{BOOK}@{made.codebook_version}"
    bars = {bar.proto.text: bar.proto.value for bar in at.get("progress")}
    assert bars == {"ana: 1 of 5 coded": 20, "ben: 0 of 5 coded": 0}
    links = {link.proto.label: parse_qs(link.proto.query_string) for link in at.get("page_link")}
    assert links["Open this session on the Code page"] == {"dataset": [DATASET], "session": [made.name]}
    assert not [label for label in links if label.startswith("Code as")], "no link codes as someone else"
    assert any(c.value.endswith(f"session={made.name}") for c in at.code)
    assert "coder=" not in "".join(c.value for c in at.code)


def test_the_agreement_table_equals_scikit_learns_kappa(db, page) -> None:
    made = create(db, "agree", sample=12, seed=5, coders=("ana", "ben", "cai"), ordering="fixed")
    picks = ["faithful", "unfaithful", "na"]
    codes = {
        "ana": [picks[i % 3] for i in range(12)],
        "ben": [picks[i % 3] if i % 4 else picks[(i + 1) % 3] for i in range(12)],
        "cai": [picks[(i * 7) % 3] if i % 5 else "faithful" for i in range(12)],
    }
    save_codes(db, made, codes)
    at = page(SESSIONS, session=made.name)
    pairs = frame_with(at, "Cohen's κ")
    for _, row in pairs.iterrows():
        expected = cohen_kappa_score(codes[row["coder A"]], codes[row["coder B"]])
        assert row["n"] == 12
        assert row["Cohen's κ"] == pytest.approx(expected)
    overall = frame_with(at, "Fleiss' κ").iloc[0]
    ratings = np.array([[picks.index(codes[c][i]) for c in ("ana", "ben", "cai")] for i in range(12)])
    assert overall["Fleiss' κ"] == pytest.approx(fleiss_kappa(aggregate_raters(ratings)[0]))
    assert overall["Krippendorff's α"] == pytest.approx(
        krippendorff.alpha(reliability_data=ratings.T, level_of_measurement="nominal")
    )
    unanimous = sum(len({codes[c][i] for c in codes}) == 1 for i in range(12))
    assert overall["% all agree"] == pytest.approx(100 * unanimous / 12)
    assert overall["units complete"] == 12
    assert '<div class="fl-cm">' in "".join(h.value for h in at.html), "the confusion matrix of two coders"


def test_adjudication_makes_the_adjudicated_label(db, page) -> None:
    made = create(db, "adjudicate", sample=3, seed=2, coders=("ana", "ben"), ordering="fixed")
    save_codes(db, made, {"ana": ["faithful", "faithful", "na"], "ben": ["unfaithful", "faithful", "na"]})
    unit = made.units[0]
    at = page(SESSIONS, session=made.name)
    prefix = f"sessions.{DATASET}.{made.name}.adjudicate"
    decides = [b.key for b in at.button if b.key.startswith(prefix) and b.key.endswith(".decide")]
    assert decides == [f"{prefix}.{unit}.decide"], "one disagreement"
    at.selectbox(key=f"{prefix}.{unit}.codes").set_value("unfaithful").run()
    at.text_input(key=f"{prefix}.{unit}.note").input("the story says otherwise").run()
    assert not [w for w in at.text_input if w.key == f"{prefix}.adjudicator"], "no adjudicator name to type"
    source = made.source(sessions.ADJUDICATED)
    at.button(key=f"{prefix}.{unit}.decide").click().run()
    clean(at)
    assert support.current_label(db, DATASET, source, "sentence", unit) is None, "blind: no label before the close"
    closing.close(db, ADMIN, sessions.get(db, made.name))
    assert support.current_label(db, DATASET, source, "sentence", unit) == (
        "unfaithful",
        "unfaithful",
        "the story says otherwise",
        LOCAL_USER,
    ), "the decision is the signed-in person's (local mode's one user)"
    assert not [b for b in at.button if b.key == f"{prefix}.{unit}.decide"], "decided units leave the open list"


def test_the_explore_filter_becomes_a_new_sessions_unit_set(db, page) -> None:
    records = raw.storysumm_records()
    hard_tests = sum(1 for r in records.values() if r["split"] == "test" and r["difficulty"] == "hard")
    at = page("pages/explore.py", split="test", difficulty="hard")
    link = next(link for link in at.get("page_link") if link.proto.label == "Code the filtered set")
    carried = parse_qs(link.proto.query_string)
    assert carried == {"dataset": [DATASET], "view": ["new"], "split": ["test"], "difficulty": ["hard"]}
    at = page(SESSIONS, **{name: values[0] for name, values in carried.items() if name != "dataset"})
    new = f"sessions.{DATASET}.new"
    assert at.selectbox(key=f"{new}.units").value == "explore"
    at.selectbox(key=f"{new}.level.codes").set_value("summary").run()
    words = f"{hard_tests} summaries where split is test and difficulty is hard"
    assert f"The session holds {hard_tests:,} units: {words}." in shown_text(at.caption)
    name = unique("from-explore")
    at.text_input(key=f"{new}.name").input(name).run()
    at.text_input(key=f"{new}.coders").input("ana, ben").run()
    at.button(key=f"{new}.create").click().run()
    clean(at)
    made = sessions.get(db, name)
    assert len(made.units) == hard_tests and made.coders == ("ana", "ben") and made.blind
    assert at.query_params["session"] == name and "view" not in at.query_params, "the new session is open"


def test_every_codebook_shows_its_definitions(page) -> None:
    at = page(SESSIONS, view="codebooks", codebook=BOOK)
    shown = "\n".join(m.value for m in at.markdown)
    for code in raw_codebook(BOOK)["codes"]:
        assert code["name"].replace("(", "\\(").replace(")", "\\)") in shown


def raw_codebook(name: str) -> dict:
    return yaml.safe_load((raw.DATA.parent / "faithlens" / "coding" / "codebooks" / f"{name}.yaml").read_text())


CUSTOM = """
name: {name}
title: Plot holes
choice: single
codes:
  - key: hole
    name: A plot hole
    verdict: unfaithful
    definition: The summary states something the story contradicts.
    explanation: required
  - key: fine
    name: No hole
    verdict: faithful
    definition: Nothing contradicts the story.
"""


def test_a_codebook_file_loads_and_saves_as_a_new_version(db, page) -> None:
    name = unique("holes")
    at = page(SESSIONS, view="codebooks")
    at.get("file_uploader")[0].upload("holes.yaml", CUSTOM.format(name=name).encode(), "application/yaml")
    at.run()
    clean(at)
    assert any(m.value == "**A plot hole** · key hole · verdict unfaithful · explanation required" for m in at.markdown)
    at.button(key=f"sessions.{DATASET}.codebooks.save_upload").click().run()
    clean(at)
    assert db.execute("SELECT origin FROM codebook WHERE name = ?", [name]).fetchall() == [("custom",)]
    assert at.query_params["codebook"] == name, "the saved codebook is shown"


def test_a_bad_codebook_file_shows_one_error_box(db, page) -> None:
    at = page(SESSIONS, view="codebooks")
    before = support.row_counts(db)
    body = CUSTOM.format(name="Not A Name").encode()
    at.get("file_uploader")[0].upload("broken.yaml", body, "application/yaml")
    at.run()
    assert not at.exception
    (box,) = at.error
    assert shown_text([box])[0].startswith("broken.yaml: name: 'Not A Name': expected lowercase letters"), box.value
    assert support.row_counts(db) == before


def test_an_edited_copy_of_a_codebook_saves_as_a_custom_version(db, page) -> None:
    at = page(SESSIONS, view="codebooks", codebook=BOOK)
    edit = f"sessions.{DATASET}.codebooks.edit"
    name_key = next(t.key for t in at.text_input if t.key.startswith(edit) and t.key.endswith(".name"))
    assert at.text_input(key=name_key).value == f"{BOOK}-custom", "a built-in codebook is copied under a new name"
    name = unique("mine")
    at.text_input(key=name_key).input(name).run()
    at.button(key=f"sessions.{DATASET}.codebooks.save").click().run()
    clean(at)
    (body,) = db.execute("SELECT body FROM codebook WHERE name = ?", [name]).fetchone()
    saved = json.loads(body)
    assert [c["key"] for c in saved["codes"]] == [c["key"] for c in raw_codebook(BOOK)["codes"]]
    assert saved["title"] == raw_codebook(BOOK)["title"]


# --- Code ---------------------------------------------------------------------------------------------------


def test_the_code_page_codes_a_unit_and_the_event_is_stored(db, page) -> None:
    made = create(db, "code", sample=4, seed=7, coders=("ana",))
    at = page(CODE, session=made.name, coder="ana")
    unit = shown_unit(at, made, "ana")
    assert unit == made.order_for("ana")[0]
    markup = "".join(h.value for h in at.html)
    assert '<mark class="flc-unit">' in markup, "the sentence is marked in its summary"
    assert '<mark class="fl-align-best">' in markup, "its best-matching passage is highlighted in the source"
    at.button(key=f"{base(made, 'ana', unit)}.code.2").click().run()  # N/A, just commentary
    at.text_area(key=f"{base(made, 'ana', unit)}.note").input("a comment on the story").run()
    at.button(key=action(made, "ana", "save")).click().run()
    clean(at)
    assert stored_events(db, made) == [("ana", unit, "code", ["na"], "a comment on the story", None)]
    assert any(s.value.startswith("Saved unit 1") for s in at.success)
    assert shown_unit(at, made, "ana") == made.order_for("ana")[1], "Save goes on to the next unit"
    assert at.get("progress")[0].proto.text == "1 of 4 units coded by ana"
    at.button(key=action(made, "ana", "undo")).click().run()
    clean(at)
    assert stored_events(db, made)[-1][2:4] == ("undo", [])
    assert shown_unit(at, made, "ana") == unit


def test_a_missing_required_explanation_shows_an_error_and_writes_nothing(db, page) -> None:
    made = create(db, "explain", sample=3, seed=1, coders=("ana",))
    at = page(CODE, session=made.name, coder="ana")
    unit = shown_unit(at, made, "ana")
    before = support.row_counts(db)
    at.button(key=f"{base(made, 'ana', unit)}.code.1").click().run()  # No (inconsistent): explanation required
    at.button(key=action(made, "ana", "save")).click().run()
    assert len(at.error) == 1 and "needs an explanation" in at.error[0].value
    assert support.row_counts(db) == before
    assert shown_unit(at, made, "ana") == unit, "the unit stays"
    chosen = at.button(key=f"{base(made, 'ana', unit)}.code.1")
    assert chosen.proto.type == "primary", "the chosen code is kept"
    at.text_area(key=f"{base(made, 'ana', unit)}.note").input("the story says she was sitting").run()
    at.button(key=action(made, "ana", "save")).click().run()
    clean(at)
    assert stored_events(db, made)[0][3:5] == (["unfaithful"], "the story says she was sitting")


def test_the_code_page_resumes_at_the_first_uncoded_unit(db, page) -> None:
    made = create(db, "resume", sample=6, seed=4, coders=("ana",))
    order = made.order_for("ana")
    for unit in order[:2] + order[3:4]:
        coders.code(db, made, "ana", events.Submission(unit, ("faithful",)))
    at = page(CODE, session=made.name, coder="ana")
    assert shown_unit(at, made, "ana") == order[2]
    assert "unit" not in at.query_params, "where the coder resumes stays out of the URL"
    at.button(key=action(made, "ana", "back")).click().run()
    assert shown_unit(at, made, "ana") == order[1]
    assert at.query_params["unit"] == order[1]
    assert at.button(key=f"{base(made, 'ana', order[1])}.code.0").proto.type == "primary", "the saved code shows"


def test_the_signed_in_person_joins_as_themself(db, page) -> None:
    made = create(db, "join", sample=2, seed=1)
    at = page(CODE, session=made.name)
    assert not [w for w in (*at.selectbox, *at.text_input) if w.label in ("Coder", "New coder: your name")]
    at.button(key=f"code.{DATASET}.{made.name}.join").click().run()
    clean(at)
    joined = db.execute("SELECT coder FROM coding_coder WHERE session_id = ?", [made.session_id]).fetchall()
    assert joined == [(LOCAL_USER,)]
    assert "coder" not in at.query_params
    assert shown_unit(at, made, LOCAL_USER) == made.order_for(LOCAL_USER)[0]


def test_a_link_naming_another_coder_is_refused_and_shows_your_own_work(db, page) -> None:
    made = create(db, "other", sample=3, seed=4, coders=("ana", "ben"), ordering="fixed")
    coders.code(db, made, "ben", events.Submission(made.units[0], ("unfaithful",), "ben's secret reason"))
    before = support.row_counts(db)
    at = page(CODE, session=made.name, coder="ben")
    notes = [w.value for w in at.warning]
    assert any("coder='ben' in the link was ignored" in note and LOCAL_USER in note for note in notes), notes
    assert "0 of 3 units coded by ana" in page_text(at, main_only=True)
    assert "ben's secret reason" not in page_text(at)
    assert shown_unit(at, made, LOCAL_USER) == made.units[0]
    assert support.row_counts(db) == before, "opening the link wrote nothing"


def blind_summary() -> str:
    """A StorySumm summary the dataset labels unfaithful whose story and summary never say 'gold' or 'faithful'."""
    records = raw.storysumm_records()
    words = re.compile(r"gold|faithful", re.IGNORECASE)
    return next(
        summary_id
        for summary_id, r in sorted(records.items())
        if BINARY[int(r["label"])] == "unfaithful" and not words.search(r["story"] + " ".join(r["summary"]))
    )


@pytest.mark.parametrize("blind", [True, False])
def test_blind_sessions_show_no_gold_label(db, page, blind: bool) -> None:
    summary_id = blind_summary()
    made = create(
        db, "blind" if blind else "open", level="summary", ordering="fixed", blind=blind, coders=("ana", "ben")
    )
    coders.code(db, made, "ben", events.Submission(summary_id, ("unfaithful",), "ben's secret reason"))
    at = page(CODE, session=made.name, coder="ana", unit=summary_id)
    assert shown_unit(at, made, "ana") == summary_id
    text = page_text(at)
    gold = BINARY[int(raw.storysumm_records()[summary_id]["label"])]
    if blind:
        assert not re.search(r"\bgold\b", text, re.IGNORECASE)
        assert not re.search(rf"\b{gold}\b", text)
        assert "secret reason" not in text, "no other coder's code or note"
    else:
        assert re.search(r"\bgold\b", text) and f"**{gold}**" in text
        assert "secret reason" in text


def test_line_by_line_codes_every_sentence(db, page) -> None:
    made = create(db, "lines", level="summary", mode="line-by-line", sample=1, seed=9, coders=("ana",), blind=False)
    (summary_id,) = made.units
    sentences = len(raw.storysumm_records()[summary_id]["summary"])
    at = page(CODE, session=made.name, coder="ana")
    radios = [r for r in at.radio if r.key.startswith(base(made, "ana", summary_id) + ".s.")]
    assert len(radios) == sentences
    for radio in radios:
        radio.set_value("faithful")
    radios[-1].set_value("unfaithful")
    at.run()
    at.button(key=action(made, "ana", "save")).click().run()
    assert len(at.error) == 1 and "needs an explanation" in at.error[0].value
    assert stored_events(db, made) == []
    at.text_input(key=f"{radios[-1].key}.note").input("not in the story").run()
    at.button(key=action(made, "ana", "save")).click().run()
    clean(at)
    ((coder, unit, _, codes, _, detail),) = stored_events(db, made)
    assert (coder, unit, codes) == ("ana", summary_id, ["unfaithful"]), "a summary with an inconsistent line"
    parts = json.loads(detail)["sentences"]
    assert len(parts) == sentences and sum(p["code"] == "unfaithful" for p in parts.values()) == 1
    assert support.current_value(db, DATASET, made.source("ana"), "summary", summary_id) == "unfaithful"


def test_hybrid_shows_each_suggestion_then_the_label(db, page) -> None:
    summary_id = support.storysumm_ids("test")[0]
    source = f"llm/{unique('hybrid')}/model"
    items = ["The summary says she lies in the water.", "The ministers are not named."]
    support.plant_inconsistencies(db, source, summary_id, items)
    made = create(db, "hybrid", level="summary", mode="hybrid", suggestions=source, coders=("ana",))
    assert made.units == (summary_id,)
    at = page(CODE, session=made.name, coder="ana")
    prefix = base(made, "ana", summary_id)
    assert [t.value for t in at.text if t.value[3:] in items] == [f"1. {items[0]}", f"2. {items[1]}"]
    at.radio(key=f"{prefix}.g.0").set_value(True)
    at.text_input(key=f"{prefix}.g.0.why").input("she sits in it")
    at.radio(key=f"{prefix}.g.1").set_value(False)
    at.text_input(key=f"{prefix}.g.1.why").input("they are not named in the story either")
    at.run()
    at.button(key=f"{prefix}.code.1").click().run()
    at.text_area(key=f"{prefix}.note").input("one real inconsistency").run()
    at.button(key=action(made, "ana", "save")).click().run()
    clean(at)
    ((_, _, _, codes, _, detail),) = stored_events(db, made)
    assert codes == ["unfaithful"]
    assert [(s["agree"], s["why"]) for s in json.loads(detail)["suggestions"]] == [
        (True, "she sits in it"),
        (False, "they are not named in the story either"),
    ]


def test_arm_preference_shows_a_and_b_without_saying_which(db, page) -> None:
    summary_id = support.storysumm_ids("val")[0]
    unit = f"{summary_id}#c0"
    original = raw.storysumm_records()[summary_id]["claims"][0]
    source = f"llm/{unique('arm')}/model"
    rewrite = "A rewritten claim that fits the story better."
    support.plant_rewrite(db, source, unit, rewrite)
    support.plant_points(db, source, unit, ["Fixes the place.", "Keeps the tone."])
    made = create(
        db,
        "prefer",
        level="claim",
        mode="arm-preference",
        codebook="arm-preference",
        suggestions=source,
        coders=("ana",),
    )
    at = page(CODE, session=made.name, coder="ana")
    markup = "".join(h.value for h in at.html)
    tags = {
        tag: html.unescape(text)
        for tag, text in re.findall(r'<span class="flc-tag">([AB])</span>([^<]*)</div>', markup)
    }
    assert sorted(tags) == ["A", "B"] and rewrite in tags.values()
    assert next(text for text in tags.values() if text != rewrite).strip() == original.strip()
    labels = [b.label for b in at.button if b.key.startswith(base(made, "ana", unit) + ".code.")]
    assert sorted(labels) == ["A is better", "B is better", "Neither"]
    assert not re.search(r"\b(original|rewrite|rewritten)\b", "\n".join(labels + [m.value for m in at.markdown]))
    rewrite_tag = next(tag for tag, text in tags.items() if text == rewrite)
    button = next(b for b in at.button if b.label == f"{rewrite_tag} is better")
    button.click().run()
    prefix = base(made, "ana", unit)
    at.radio(key=f"{prefix}.p.0").set_value("IMPORTANT")
    at.radio(key=f"{prefix}.p.1").set_value("NEUTRAL")
    at.run()
    at.button(key=action(made, "ana", "save")).click().run()
    clean(at)
    ((_, _, _, codes, _, detail),) = stored_events(db, made)
    assert codes == ["rewrite"] and json.loads(detail)["points"] == ["IMPORTANT", "NEUTRAL"]


def test_an_arm_preference_session_shows_table_5s_majority_row_beside_the_individual_and_the_papers(db, page) -> None:
    summary_id = support.storysumm_ids("val")[0]
    unit = f"{summary_id}#c0"
    source = f"llm/{unique('arm')}/model"
    support.plant_rewrite(db, source, unit, "A rewritten claim that fits the story better.")
    support.plant_points(db, source, unit, ["Fixes the place.", "Keeps the tone."])
    made = create(
        db, "table5", level="claim", mode="arm-preference", codebook="arm-preference", suggestions=source,
        coders=("ana", "ben", "cai"),
    )  # fmt: skip
    for coder, code, marks in (
        ("ana", "rewrite", ["IMPORTANT", "NEUTRAL"]),
        ("ben", "rewrite", ["IMPORTANT", "WRONG"]),
        ("cai", "original", None),
    ):
        coders.code(db, made, coder, events.Submission(unit, (code,), None, {"points": marks}))
    at = page(SESSIONS, session=made.name)
    table5 = frame_with(at, "% none important")
    columns = ["% important", "% none important", "% wrong", "% none wrong"]
    rows = {(row["row"], row["figures"]): [row[c] for c in columns] for _, row in table5.iterrows()}
    # By hand. Individual: ana 1/2 important, 0 wrong; ben 1/2 important, 1/2 wrong. Majority of the three
    # coders: point 1 IMPORTANT (ana, ben), point 2 none (NEUTRAL 1, WRONG 1; cai marked nothing).
    assert rows[("Individual (each coder's marks)", "this session")] == [50.0, 0.0, 25.0, 50.0]
    assert rows[("Maj. vote", "this session")] == [50.0, 0.0, 0.0, 100.0]
    # ARM section 5.4, Table 5, as printed.
    assert rows[("Individual (each coder's marks)", "paper (Table 5)")] == [84.11, 5.29, 7.52, 87.83]
    assert rows[("Maj. vote", "paper (Table 5)")] == [68.72, 24.39, 0.56, 98.78]
    figures = frame_with(at, "paper")
    preferred = figures[figures["metric"] == "% rewrite preferred (majority)"].iloc[0]
    assert (preferred["value"], preferred["paper"]) == (100.0, "76.92 (Table 4)")
    assert any("majority" in c.value and "82" in c.value for c in at.caption)


def test_the_exports_serve_the_sessions_codes(db, db_path, page) -> None:
    made = create(db, "export", sample=3, seed=6, coders=("ana", "ben"), ordering="fixed")
    save_codes(db, made, {"ana": ["faithful", "na", "faithful"], "ben": ["faithful", "unfaithful", "na"]})
    at = page(SESSIONS, session=made.name)
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == [f"Download {what} {fmt}" for what in ("codes", "comments") for fmt in ("CSV", "JSONL", "PARQUET")]
    codes = coding_sessions._export_bytes(str(db_path), ADMIN, made.name, "csv", "codes").decode()
    rows = list(csv.DictReader(io.StringIO(codes)))
    assert len(rows) == 6 and {row["coder"] for row in rows} == {"ana", "ben"}
    assert [row["codes"] for row in rows if row["coder"] == "ben"] == ["faithful", "unfaithful", "na"]
    lines = coding_sessions._export_bytes(str(db_path), ADMIN, made.name, "jsonl", "codes").decode().splitlines()
    assert len(lines) == 6 and json.loads(lines[0])["session"] == made.name
    assert coding_sessions._export_bytes(str(db_path), ADMIN, made.name, "parquet", "codes")[:4] == b"PAR1"
    coders.comment(db, made, made.units[1], "S2 is commentary, <b>not</b> a claim", "ana", "coder")
    talk = coding_sessions._export_bytes(str(db_path), ADMIN, made.name, "csv", "comments").decode()
    said = list(csv.DictReader(io.StringIO(talk)))
    assert [(r["unit_id"], r["author"], r["role"], r["text"]) for r in said] == [
        (made.units[1], "ana", "coder", "S2 is commentary, <b>not</b> a claim")
    ]


def test_arm_faithfulness_shows_one_variant_in_place_and_never_says_which(db, page) -> None:
    summary_id = support.storysumm_ids("val")[1]
    unit = f"{summary_id}#c0"
    original = raw.storysumm_records()[summary_id]["claims"][0].strip()
    source = f"llm/{unique('armf')}/model"
    rewrite = "A claim the model rewrote to fit the story."
    support.plant_rewrite(db, source, unit, rewrite)
    made = create(
        db, "armf", level="claim", mode="arm-faithfulness", codebook="arm-status", suggestions=source, coders=("ana",)
    )
    at = page(CODE, session=made.name, coder="ana")
    markup = html.unescape("".join(h.value for h in at.html))
    shown = [text for text in (original, rewrite) if text in markup]
    assert len(shown) == 1, "exactly one variant is shown"
    text = page_text(at, main_only=True).replace(rewrite, "")
    assert not re.search(r"\b(original|rewrite|rewritten|rewrote)\b", text, re.I)
    at.button(key=f"{base(made, 'ana', unit)}.code.0").click().run()
    at.button(key=action(made, "ana", "save")).click().run()
    clean(at)
    ((_, _, _, codes, _, detail),) = stored_events(db, made)
    assert codes == ["supported"] and json.loads(detail)["text"] == shown[0]
