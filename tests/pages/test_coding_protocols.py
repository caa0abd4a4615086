"""The papers' protocols on the Code and Sessions pages as a coder and a lab see them (issue 26):

- ARM preference says only "A" or "B" to the coder: no text the page sends, before or after Save and
  Undo, and in the open reference, puts "rewrite" or "original" next to A or B; the source highlights the
  passages of both versions alike;
- ARM faithfulness shows no gold label of the original wording, and highlights the passages of the
  wording shown;
- line-by-line names a sentence as the form does ("S2 needs an explanation") and reports agreement on
  the sentences in the per-code table and the confusion matrix too;
- hybrid offers no "N/A, just commentary" for a whole summary and warns, without refusing, when a coder
  agrees with an inconsistency yet labels the summary consistent;
- counts read as English ("1 summary", "1 unit").

Sessions and LLM answers are planted through the core (`tests.coding.support`); expected texts, labels
and passages come from the raw StorySumm file and the test's own inputs."""

from __future__ import annotations

import html
import re

import pytest
from sklearn.metrics import cohen_kappa_score

from faithlens import access
from faithlens.build import alignment
from faithlens.coding import events, modes
from tests import coders, raw
from tests.apptest import clean
from tests.coding import support
from tests.pages.test_coding_pages import (
    CODE,
    DATASET,
    SESSIONS,
    action,
    base,
    create,
    frame_with,
    page_text,
    shown_unit,
    stored_events,
    unique,
)

NAMED = re.compile(r"(?i:rewrit\w*|original\w*)")
LEAK = re.compile(rf"\b[AB]\b[^\n]{{0,80}}{NAMED.pattern}|{NAMED.pattern}[^\n]{{0,80}}\b[AB]\b")
"""A or B (as words) and "rewrite" or "original" within one line of what the page sends."""
POINTS = ["It names the hospital wall.", "It keeps the rain."]


def _plain(summary_id: str) -> bool:
    """The story, summary and claims never say 'original' or 'rewrite' (so only the page's words could)."""
    record = raw.storysumm_records()[summary_id]
    return not NAMED.search(record["story"] + " ".join(record["summary"]) + " ".join(record["claims"]))


def _said(elements) -> list[str]:
    """What the coder reads in these elements (their Markdown escapes undone)."""
    return [re.sub(r"\\(.)", r"\1", element.value) for element in elements]


def _leaks(at) -> list[str]:
    """Where the page names a version next to A or B, or names one at all in what the coder is told
    (messages, buttons, the reference's lines)."""
    told = _said((*at.success, *at.warning, *at.info, *at.error, *at.markdown))
    told += [b.label for b in at.button]
    return [match.group(0) for match in LEAK.finditer(page_text(at))] + [t for t in told if NAMED.search(t)]


def _versions(at) -> dict[str, str]:
    """Versions A and B as the page shows them: tag -> text."""
    markup = "".join(h.value for h in at.html)
    found = re.findall(r'<span class="flc-tag">([AB])</span>([^<]*)</div>', markup)
    return {tag: html.unescape(text) for tag, text in found}


def _marks(at) -> dict[str, list[str]]:
    """The source's highlighted passages by class."""
    markup = "".join(h.value for h in at.html)
    found: dict[str, list[str]] = {}
    for cls, text in re.findall(r'<mark class="(fl-align[\w-]*)">([^<]*)</mark>', markup):
        found.setdefault(cls, []).append(html.unescape(text))
    return found


def test_arm_preference_never_names_either_version_to_the_coder(db, page) -> None:
    summary_id = next(sid for sid in support.storysumm_ids("val") if _plain(sid))
    unit = f"{summary_id}#c0"
    original = raw.storysumm_records()[summary_id]["claims"][0].strip()
    source = f"llm/{unique('arm')}/model"
    rewrite = "The ministers are shot at half past six in the rain."
    support.plant_rewrite(db, source, unit, rewrite)
    support.plant_points(db, source, unit, POINTS)
    made = create(
        db, "prefer", level="claim", mode="arm-preference", codebook="arm-preference", suggestions=source,
        coders=("ana", "ben"), blind=False,
    )  # fmt: skip
    coders.code(db, made, "ben", events.Submission(unit, ("rewrite",), None, {"points": ["IMPORTANT", "WRONG"]}))
    at = page(CODE, session=made.name, coder="ana")
    versions = _versions(at)
    assert sorted(versions.values()) == sorted([original, rewrite])
    tag = {text: letter for letter, text in versions.items()}
    assert not _leaks(at)
    assert f"ben: **{tag[rewrite]} is better**" in page_text(at), "another coder's choice reads A or B"

    prefix = base(made, "ana", unit)
    next(b for b in at.button if b.label == f"{tag[original]} is better").click().run()
    at.button(key=action(made, "ana", "save")).click().run()
    clean(at)
    assert _said(at.success)[0] == f"Saved unit 1: {tag[original]} is better."
    assert not _leaks(at)

    next(b for b in at.button if b.label == f"{tag[rewrite]} is better").click().run()
    assert not _leaks(at), "the explanation's points name no version"
    at.radio(key=f"{prefix}.p.0").set_value("IMPORTANT")
    at.radio(key=f"{prefix}.p.1").set_value("NEUTRAL")
    at.run()
    at.button(key=action(made, "ana", "save")).click().run()
    clean(at)
    assert _said(at.success)[0] == f"Saved unit 1: {tag[rewrite]} is better."
    assert not _leaks(at)

    at.button(key=action(made, "ana", "undo")).click().run()
    clean(at)
    assert _said(at.success)[0] == f"Undone: unit 1 is back to {tag[original]} is better."
    assert not _leaks(at)
    codes = [row[3] for row in stored_events(db, made) if row[0] == "ana"]
    assert codes == [["original"], ["rewrite"], ["original"]], "the export keeps which version was chosen"


def _sentence_and_far_passage(db) -> tuple[str, str, str, tuple[int, int]]:
    """(summary id, its first sentence's unit id, a story sentence of 8+ words, the span of the sentence's
    best stored passage), the story sentence chosen outside that passage."""
    summary_id = next(sid for sid in support.storysumm_ids("val") if _plain(sid))
    unit = f"{summary_id}#s0"
    story = _story(db, summary_id)
    best = db.execute(
        "SELECT start_char, end_char FROM alignment WHERE dataset = ? AND unit_id = ? AND rank = 1", [DATASET, unit]
    ).fetchone()
    sentences = [part.strip() for part in re.split(r"(?<=[.!?])\s+", story) if len(part.split()) >= 8]
    far = next(s for s in reversed(sentences) if not _overlaps(story, s, story[best[0] : best[1]]))
    return summary_id, unit, far, best


def _story(db, summary_id: str) -> str:
    """The story as the app holds it (the raw file's text, as ingested)."""
    return db.execute(
        "SELECT d.text FROM summary s JOIN document d USING (dataset, document_id) "
        "WHERE s.dataset = ? AND s.summary_id = ?",
        [DATASET, summary_id],
    ).fetchone()[0]


def _overlaps(story: str, one: str, other: str) -> bool:
    """Whether two pieces of the story share characters (each found where it first occurs)."""
    a, b = story.index(one), story.index(other)
    return a < b + len(other) and b < a + len(one)


def test_arm_preference_highlights_the_passages_of_both_versions_alike(db, page) -> None:
    summary_id, unit, far, best = _sentence_and_far_passage(db)
    story = _story(db, summary_id)
    source = f"llm/{unique('arm')}/model"
    support.plant_rewrite(db, source, unit, far, level="sentence")  # the rewrite copies one sentence of the story
    made = create(
        db, "alike", level="sentence", mode="arm-preference", codebook="arm-preference", suggestions=source,
        coders=("ana",),
    )  # fmt: skip
    at = page(CODE, session=made.name, coder="ana")
    marks = _marks(at)
    assert list(marks) == ["fl-align"], "no passage is marked best: none favours a version"
    assert story[best[0] : best[1]] in marks["fl-align"], "the original's best passage is highlighted"
    assert any(_overlaps(story, passage, far) for passage in marks["fl-align"]), "and the rewrite's"
    assert any(c.value.startswith("The passages of the source that best match either version") for c in at.caption)


@pytest.mark.parametrize("variant", [modes.REWRITE, modes.ORIGINAL])
def test_arm_faithfulness_shows_no_gold_and_the_passages_of_the_wording_shown(db, page, variant: str) -> None:
    summary_id, unit, far, best = _sentence_and_far_passage(db)
    story = _story(db, summary_id)
    gold = "faithful" if raw.storysumm_records()[summary_id]["errors"][0] else "unfaithful"
    source = f"llm/{unique('armf')}/model"
    support.plant_rewrite(db, source, unit, far, level="sentence")  # the rewrite copies a story sentence
    seed = next(seed for seed in range(100) if modes.shown_variant(seed, unit) == variant)
    made = create(
        db, "armf", level="sentence", mode="arm-faithfulness", codebook="arm-status", suggestions=source,
        coders=("ana",), blind=False, seed=seed,
    )  # fmt: skip
    at = page(CODE, session=made.name, coder="ana")
    text = page_text(at, main_only=True)
    assert not re.search(r"\bgold \(", text) and f"**{gold}**" not in text, "no gold label of the original wording"
    expander = next(e for e in at.expander if e.label.startswith("Reference"))
    assert expander.label == "Reference: other coders' codes (not blind)"
    assert any("show no gold label" in c.value for c in at.caption)
    (shown_best,) = _marks(at)["fl-align-best"]
    if variant == modes.REWRITE:
        assert _overlaps(story, shown_best, far), "the best passage is the one the rewrite copies"
    else:
        assert shown_best == story[best[0] : best[1]], "shown as written: the sentence's own stored best passage"


def _matrices(at) -> dict[str, dict[str, list[int]]]:
    """Each confusion matrix on the page: title -> row label -> counts."""
    markup = "".join(h.value for h in at.html)
    found = {}
    for block in markup.split('<div class="fl-cm">')[1:]:
        title = html.unescape(re.search(r'<div class="fl-cm-title">([^<]*)</div>', block).group(1))
        rows = re.findall(r'<th class="fl-cm-row">([^<]+)</th>((?:<td.*?</td>)+)</tr>', block)
        found[title] = {name: [int(n) for n in re.findall(r'fl-cm-count">(\d+)<', cells)] for name, cells in rows}
    return found


def test_line_by_line_agreement_on_the_sentences_per_code_and_as_a_matrix(db, page) -> None:
    made = create(db, "lines", level="summary", mode="line-by-line", sample=2, seed=4, coders=("ana", "ben"))
    sentences = [f"{unit}#s{i}" for unit in made.units for i in range(len(raw.storysumm_records()[unit]["summary"]))]
    ana = {uid: "faithful" for uid in sentences}
    ben = {uid: ("unfaithful" if n % 3 == 0 else "na" if n % 3 == 1 else "faithful") for n, uid in enumerate(sentences)}
    for coder, codes in (("ana", ana), ("ben", ben)):
        for unit in made.units:
            parts = {
                uid: {"code": code, "note": "why" if code == "unfaithful" else None}
                for uid, code in codes.items()
                if uid.startswith(unit + "#")
            }
            coders.code(db, made, coder, events.Submission(unit, detail={"sentences": parts}))
    at = page(SESSIONS, session=made.name)
    per_code = [d.value for d in at.dataframe if "code" in d.value.columns]
    assert len(per_code) == 2, "per code on the summaries, then on the sentences"
    assert list(per_code[0]["code"]) == ["faithful", "unfaithful"], "a summary is never N/A"
    on_sentences = per_code[1].set_index("code")
    for key in ("faithful", "unfaithful", "na"):
        expected = cohen_kappa_score([ana[u] == key for u in sentences], [ben[u] == key for u in sentences])
        found = on_sentences.loc[key, "κ ana–ben"]
        assert (found != found and expected != expected) or found == pytest.approx(expected), key
    matrices = _matrices(at)
    labels = sorted(set(ana.values()) | set(ben.values()))
    assert matrices["Sentences: ana (rows) vs ben (columns)"] == {
        a: [sum(ana[u] == a and ben[u] == b for u in sentences) for b in labels] for a in labels
    }
    assert "Summaries: ana (rows) vs ben (columns)" in matrices
    assert f"{len(sentences)} sentences both coded" in "".join(h.value for h in at.html)


def test_line_by_line_names_a_sentence_without_its_explanation_as_the_form_does(db, page) -> None:
    made = create(db, "lines", level="summary", mode="line-by-line", sample=1, seed=9, coders=("ana",))
    (summary_id,) = made.units
    at = page(CODE, session=made.name, coder="ana")
    assert any(" · 1 summary · " in c for c in _said(at.caption))
    assert "summarys" not in page_text(at)
    assert at.get("progress")[0].proto.text == "0 of 1 unit coded by ana"
    prefix = base(made, "ana", summary_id)
    for radio in [r for r in at.radio if r.key.startswith(prefix + ".s.")]:
        radio.set_value("faithful")
    at.radio(key=f"{prefix}.s.{summary_id}#s1").set_value("unfaithful")
    at.run()
    at.button(key=action(made, "ana", "save")).click().run()
    (box,) = at.error
    assert box.value.startswith("S2 needs an explanation") and "#s" not in box.value
    assert "S2" in page_text(at, main_only=True).split("S2 needs")[0], "the form names the sentence S2 too"


def test_hybrid_offers_no_n_a_and_warns_when_an_agreed_inconsistency_meets_a_consistent_label(db, page) -> None:
    summary_id = support.storysumm_ids("test")[0]
    source = f"llm/{unique('hybrid')}/model"
    items = ["The summary says she lies in the water.", "The ministers are not named."]
    support.plant_inconsistencies(db, source, summary_id, items)
    made = create(db, "hybrid", level="summary", mode="hybrid", suggestions=source, coders=("ana",))
    at = page(CODE, session=made.name, coder="ana")
    prefix = base(made, "ana", summary_id)
    labels = [b.label for b in at.button if b.key.startswith(prefix + ".code.")]
    assert labels == ["Yes (consistent)", "No (inconsistent)"], "no N/A for a whole summary"
    assert "N/A, just commentary" not in page_text(at, main_only=True)
    at.radio(key=f"{prefix}.g.0").set_value(True)
    at.text_input(key=f"{prefix}.g.0.why").input("she sits in it")
    at.radio(key=f"{prefix}.g.1").set_value(False)
    at.text_input(key=f"{prefix}.g.1.why").input("they are not named in the story either")
    at.run()
    assert not at.warning
    at.button(key=f"{prefix}.code.0").click().run()  # Yes (consistent)
    (warning,) = at.warning
    assert "You agree with suggested inconsistency 1 yet label the summary consistent" in warning.value
    at.button(key=action(made, "ana", "save")).click().run()
    clean(at)
    ((_, _, _, codes, _, _),) = stored_events(db, made)
    assert codes == ["faithful"], "a warning, not a refusal"
    assert any(w.startswith("Unit 1: You agree with suggested inconsistency 1") for w in _said(at.warning))


def test_arm_preference_figures_count_the_units_a_version_won(db, page) -> None:
    summary_id = support.storysumm_ids("val")[0]
    units = [f"{summary_id}#c{i}" for i in range(3)]
    source = f"llm/{unique('arm')}/model"
    for unit in units:
        support.plant_rewrite(db, source, unit, f"Another wording of claim {unit[-1]}.")
    made = create(
        db, "won", level="claim", mode="arm-preference", codebook="arm-preference", suggestions=source,
        coders=("ana", "ben"),
    )  # fmt: skip
    chosen = {units[0]: ("rewrite", "rewrite"), units[1]: ("neutral", "neutral"), units[2]: ("original", "neutral")}
    for unit, codes in chosen.items():
        for coder, code in zip(("ana", "ben"), codes, strict=True):
            coders.code(db, made, coder, events.Submission(unit, (code,)))
    at = page(SESSIONS, session=made.name)
    figures = frame_with(at, "paper").set_index("metric")["value"]
    # Three units judged; the rewrite won the first; the second's coders both chose Neither; the third is a tie.
    assert figures["units judged (each % below is of these)"] == 3
    assert figures["units a version won (the coders' majority preferred it)"] == 1
    assert figures["units no version won (the majority chose Neither, or a tie)"] == 2
    assert figures["% rewrite preferred (majority)"] == pytest.approx(100 / 3)


@pytest.mark.parametrize(
    ("mode", "codebook"),
    [
        ("line-by-line", "storysumm-faithfulness"),
        ("hybrid", "storysumm-faithfulness"),
        ("arm-faithfulness", "arm-status"),
    ],
)
def test_a_new_session_starts_with_its_protocols_codebook(page, mode: str, codebook: str) -> None:
    """The New session form offers the paper's codebook for a paper's protocol, not the first that fits."""
    at = page(SESSIONS, view="new")
    new = f"sessions.{DATASET}.new"
    at.selectbox(key=f"{new}.mode").set_value(mode).run()
    assert at.selectbox(key=f"{new}.codebook.{mode}").value == codebook


def test_arm_preference_buttons_read_a_b_neither_whichever_version_is_a(db, page) -> None:
    """The buttons' order and keys are the same for a unit whose A is the original and one whose A is the
    rewrite: neither the first button nor a key (a CSS class on the page) follows the version."""
    summary_id = next(sid for sid in support.storysumm_ids("val") if _plain(sid))
    claims = [f"{summary_id}#c{n}" for n in range(support.storysumm_claim_count(summary_id))]
    first_shown = {modes.shown_variant(0, unit): unit for unit in claims}
    assert set(first_shown) == {modes.ORIGINAL, modes.REWRITE}, "units shown each way first"
    source = f"llm/{unique('arm')}/model"
    for unit in first_shown.values():
        support.plant_rewrite(db, source, unit, f"A rewrite of {unit} that adds a detail.")
    made = create(
        db, "order", level="claim", mode="arm-preference", codebook="arm-preference", suggestions=source,
        coders=("ana",), seed=0,
    )  # fmt: skip
    for unit in first_shown.values():
        at = page(CODE, session=made.name, coder="ana", unit=unit)
        prefix = f"{base(made, 'ana', unit)}.code."
        buttons = [(b.label, b.key.removeprefix(prefix)) for b in at.button if b.key and b.key.startswith(prefix)]
        assert buttons == [("A is better", "0"), ("B is better", "1"), ("Neither", "2")]


def test_the_code_page_highlights_the_passages_of_the_chosen_ranker_and_keeps_it_in_the_link(db, page) -> None:
    documents = [
        row[0] for row in db.execute("SELECT document_id FROM document WHERE dataset = ?", [DATASET]).fetchall()
    ]
    alignment.align_and_store(db, access.cli_actor(), DATASET, documents, "token_set_ratio")
    made = create(db, "rankers", level="sentence", coders=("ana",))
    at = page(CODE, session=made.name, coder="ana")
    unit = shown_unit(at, made, "ana")
    story = _story(db, unit.split("#")[0])

    def best(ranker: str) -> str:
        start, end = db.execute(
            "SELECT start_char, end_char FROM alignment WHERE dataset = ? AND unit_id = ? AND ranker = ? AND rank = 1",
            [DATASET, unit, ranker],
        ).fetchone()
        return story[start:end]

    assert _marks(at)["fl-align-best"] == [best("bm25")], "the default ranker's best passage"
    at.selectbox(key=action(made, "ana", "ranker")).set_value("token_set_ratio").run()
    clean(at)
    assert _marks(at)["fl-align-best"] == [best("token_set_ratio")]
    assert at.query_params["ranker"] == "token_set_ratio"
    at.selectbox(key=action(made, "ana", "ranker")).set_value("semantic").run()
    clean(at)
    assert "fl-align-best" not in _marks(at), "nothing is stored by semantic for this story"
    assert any(c.value.startswith("No stored alignment of this unit by the chosen ranker") for c in at.caption)
