"""Each coding mode as a lab runs it, in the app alone, with two coders in two browsers: the source the
mode needs is made on the Runs page against the scripted LLM server (hybrid: StorySumm's suggested
inconsistencies; the ARM modes: ARM rewrites of the sentences of one summary, found with Explore's
search), the session on the Sessions page, the codes on the Code page, and the session's figures on the
Sessions page equal those computed here from the codes the coders entered. The server signs people in by
link: the lab's admin runs the models and makes the sessions, alice and bob code."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.browser import helpers
from tests.browser import protocols as steps
from tests.browser.protocols import NewSession, agreement_tab, expect_agreement, grid, number, pct, save
from tests.browser.test_coding import sign_in

pytestmark = pytest.mark.browser

BOOK = "storysumm-faithfulness"
YES, NO, NA = "Yes (consistent)", "No (inconsistent)", "N/A, just commentary"
KEYS = {YES: "faithful", NO: "unfaithful", NA: "na"}
ARM_SENTENCES = 5
ARM_TEXTS = steps.storysumm_summary(ARM_SENTENCES)[1]
UNCHANGED = frozenset(ARM_TEXTS[-1:])
"""The scripted model leaves the summary's last sentence as it is (r = s): no ARM session shows it."""
Joins = Callable[[str, str], Page]


@pytest.fixture
def signed(browser_db: Path, tmp_path: Path) -> Iterator[tuple[helpers.Server, dict[str, str]]]:
    with steps.lab(browser_db, tmp_path, UNCHANGED) as made:
        yield made


@pytest.fixture
def app(signed) -> helpers.Server:
    return signed[0]


@pytest.fixture
def page(browser: Browser, signed) -> Iterator[Page]:
    """The lab's admin, signed in: runs the models, makes the sessions, reads the figures."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.set_default_timeout(30_000)
    yield sign_in(context, signed[0], signed[1][steps.LAB])
    context.close()


@pytest.fixture
def coder(browser: Browser, signed) -> Iterator[Joins]:
    """`coder(session, name)`: that coder signed in and joined, in a browser context of their own (closed
    after the test)."""
    contexts: list[BrowserContext] = []
    server, links = signed

    def joined(session: str, name: str) -> Page:
        contexts.append(browser.new_context(viewport={"width": 1400, "height": 1000}))
        contexts[-1].set_default_timeout(30_000)
        return steps.join(sign_in(contexts[-1], server, links[name]), server.url, session, name)

    yield joined
    for context in contexts:
        context.close()


def _code_one(page: Page, position: int, code: str) -> None:
    """Press the code's button (with a note where the code requires one) and save."""
    steps.press_code(page, code)
    if code in (NO, "Unsupported"):
        steps.note(page, "the story does not say so")
    save(page, position)


def test_codes_two_coders_then_their_agreement(coder: Joins, page: Page, app: helpers.Server) -> None:
    codes = {"alice": (YES, NO, YES, NA, YES), "bob": (YES, YES, NA, NA, NO)}
    wanted = NewSession("codes-pilot", "Codes", BOOK, "sentences", sample=len(codes["alice"]))
    assert steps.create_session(page, app.url, wanted) == len(codes["alice"])
    for name, given in codes.items():
        coding = coder(wanted.name, name)
        for position, code in enumerate(given, start=1):
            _code_one(coding, position, code)
    expect_agreement(agreement_tab(page, app.url, wanted.name), codes["alice"], codes["bob"])


LINE_BY_LINE = {"alice": ({2: NO}, {1: NO}, {}), "bob": ({}, {1: NO, 3: NA}, {2: NA})}
"""Per coder and summary, the sentences (S1 = 1) not coded Yes; every sentence of every summary is coded."""


def _code_lines(page: Page, lines: tuple[dict[int, str], ...]) -> list[str]:
    """Code every sentence of each summary; returns the sentence codes in reading order."""
    given = []
    for position, exceptions in enumerate(lines, start=1):
        count = page.get_by_role("radiogroup", name=re.compile(r"^Code of S\d+$")).count()
        assert count >= 3, "a StorySumm summary has three sentences or more"
        for sentence in range(1, count + 1):
            code = exceptions.get(sentence, YES)
            steps.mark(page, f"Code of S{sentence}", code)
            if code == NO:
                page.get_by_role("textbox", name=f"Why (S{sentence})", exact=True).fill("the story says otherwise")
            given.append(code)
        save(page, position)
    return given


def test_line_by_line_two_coders_then_summary_and_sentence_agreement(
    coder: Joins, page: Page, app: helpers.Server
) -> None:
    wanted = NewSession("lines-pilot", "Line by line (StorySumm annotators)", BOOK, sample=len(LINE_BY_LINE["alice"]))
    assert steps.create_session(page, app.url, wanted) == len(LINE_BY_LINE["alice"])
    lines = {name: _code_lines(coder(wanted.name, name), given) for name, given in LINE_BY_LINE.items()}
    summaries = {
        name: [NO if NO in marked.values() else YES for marked in given] for name, given in LINE_BY_LINE.items()
    }
    agreement = agreement_tab(page, app.url, wanted.name)
    expect_agreement(agreement, summaries["alice"], summaries["bob"])
    expect_agreement(agreement, lines["alice"], lines["bob"])
    pairs = [(KEYS[a], KEYS[b]) for a, b in zip(lines["alice"], lines["bob"], strict=True)]
    labels = sorted({code for pair in pairs for code in pair})
    matrix = agreement.locator(".fl-cm").filter(has_text=re.compile(r"sentences: alice \(rows\) vs bob", re.I))
    counts = [int(text) for text in matrix.locator(".fl-cm-count").all_inner_texts()]
    assert counts == [pairs.count((a, b)) for a in labels for b in labels], "the sentences' confusion matrix"


HYBRID = {
    "alice": ((True, False, False, NO), (False, False, True, YES), (False, False, False, YES)),
    "bob": ((True, False, False, NO), (False, True, False, NO), (False, False, False, YES)),
}
"""Per coder and summary: agree (True) or disagree with each of the three suggestions, then the label.
Alice agrees with one on her second summary and still labels it consistent: a warning, not a refusal."""


def _code_hybrid(page: Page, answers: tuple[tuple, ...]) -> list[str]:
    suggested = [item for items in steps.SUGGESTIONS.values() for item in items]
    for position, (*agree, label) in enumerate(answers, start=1):
        shown = page.get_by_role("radiogroup", name=re.compile(r"^Suggestion \d+$"))
        expect(shown, "both B.2 prompts' inconsistencies, concatenated").to_have_count(len(suggested))
        for text in suggested:
            expect(steps.main_text(page)).to_contain_text(text)
        expect(page.get_by_role("button", name=steps.starts("N/A")), "no N/A for a whole summary").to_have_count(0)
        for suggestion, yes in enumerate(agree, start=1):
            steps.mark(page, f"Suggestion {suggestion}", "Agree" if yes else "Disagree")
            page.get_by_role("textbox", name=f"Why ({suggestion})", exact=True).fill("as the story tells it")
        _code_one(page, position, label)
        warned = any(agree) and label == YES
        expect(page.get_by_test_id("stAlertContentWarning")).to_have_count(1 if warned else 0)
    return [label for *_, label in answers]


def test_hybrid_from_an_inconsistencies_run_then_agreement(coder: Joins, page: Page, app: helpers.Server) -> None:
    helpers.open_app(page, f"{app.url}/runs?dataset={steps.DATASET}")
    source = steps.run_method(page, "summaries", "StorySumm hybrid: suggested inconsistencies", "split val")
    wanted = NewSession("hybrid-pilot", "Hybrid (StorySumm)", BOOK, sample=len(HYBRID["alice"]), suggestions=source)
    assert steps.create_session(page, app.url, wanted) == len(HYBRID["alice"])
    labels = {name: _code_hybrid(coder(wanted.name, name), given) for name, given in HYBRID.items()}
    expect_agreement(agreement_tab(page, app.url, wanted.name), labels["alice"], labels["bob"])


def _rewrite_run(page: Page, url: str) -> str:
    """ARM rewrites of ARM_TEXTS, one summary's sentences: Explore's search finds it, Runs rewrites them."""
    return steps.run_on_explore_filter(page, url, quote(ARM_TEXTS[0]), "sentences", "ARM rewrite")


def _table4(page: Page) -> dict[str, float | None]:
    return {row["metric"]: number(row["value"]) for row in grid(page, "metric")}


ARM_FAITHFULNESS = {
    "alice": ("Supported", "Unsupported", "Supported", "Ambiguous"),
    "bob": ("Supported", "Supported", "Supported", "Ambiguous"),
}


def _judge(page: Page, codes: tuple[str, ...]) -> list[str]:
    """Judge each unit; returns the version each was shown as, read from the page (the rewrite carries
    the scripted REWORDED words)."""
    shown = []
    for position, code in enumerate(codes, start=1):
        shown.append("rewrite" if steps.REWORDED in steps.main_text(page).inner_text() else "original")
        _code_one(page, position, code)
    return shown


def _faithfulness_table(shown: list[str], codes: dict[str, tuple[str, ...]]) -> dict[str, float | None]:
    """ARM Table 4 by the version shown: units, % where both coders agree, % judged faithful by more than
    half of the coders (Supported is arm-status's faithful code)."""
    out: dict[str, float | None] = {}
    for variant, words in (("original", "shown as written"), ("rewrite", "shown as the rewrite")):
        units = [i for i, v in enumerate(shown) if v == variant]
        agree = sum(codes["alice"][i] == codes["bob"][i] for i in units)
        faithful = sum(2 * sum(given[i] == "Supported" for given in codes.values()) > len(codes) for i in units)
        out |= {
            f"units {words}": len(units),
            f"% all agree, {words}": pct(agree, len(units)),
            f"% judged faithful, {words}": pct(faithful, len(units)),
        }
    return out


def test_arm_faithfulness_from_a_rewrite_run_then_table_4(coder: Joins, page: Page, app: helpers.Server) -> None:
    source = _rewrite_run(page, app.url)
    wanted = NewSession("arm-faith-pilot", "ARM faithfulness", "arm-status", "sentences", suggestions=source)
    assert steps.create_session(page, app.url, wanted) == ARM_SENTENCES - len(UNCHANGED)
    shown = {name: _judge(coder(wanted.name, name), given) for name, given in ARM_FAITHFULNESS.items()}
    assert shown["alice"] == shown["bob"], "every coder sees a unit as the same version"
    agreement = agreement_tab(page, app.url, wanted.name)
    expect_agreement(agreement, ARM_FAITHFULNESS["alice"], ARM_FAITHFULNESS["bob"])
    table4 = _faithfulness_table(shown["alice"], ARM_FAITHFULNESS)
    assert {metric: _table4(agreement).get(metric) for metric in table4} == pytest.approx(table4)


IMP, NEU, WRO = "IMPORTANT", "NEUTRAL", "WRONG"
ARM_PREFERENCE = {
    "alice": (("rewrite", (IMP, NEU)), ("rewrite", (WRO, IMP)), ("original", ()), ("neutral", ())),
    "bob": (("rewrite", (IMP, IMP)), ("original", ()), ("original", ()), ("rewrite", (NEU, NEU))),
}
"""Per coder and unit: the version preferred, and when it is the rewrite the mark of each explanation point."""


def _prefer(page: Page, choices: tuple[tuple[str, tuple[str, ...]], ...]) -> None:
    """Say which of A and B is better (the rewrite is the box with the REWORDED words), mark the points."""
    for position, (preferred, marks) in enumerate(choices, start=1):
        rewrite = page.locator(".flc-version").filter(has_text=steps.REWORDED).inner_text().strip()[0]
        letter = {"rewrite": rewrite, "original": "B" if rewrite == "A" else "A"}.get(preferred)
        steps.press_code(page, f"{letter} is better" if letter else "Neither")
        expect(page.get_by_role("radiogroup", name=re.compile(r"^Point \d+$"))).to_have_count(len(marks))
        for point, given in enumerate(marks, start=1):
            expect(steps.main_text(page)).to_contain_text(steps.POINTS[point - 1])
            steps.mark(page, f"Point {point}", given)
        save(page, position)
        flash = page.get_by_text(re.compile(rf"^Saved unit {position}\b"))
        expect(flash, "A or B, never which is the rewrite").not_to_contain_text(re.compile("rewrite|original", re.I))


def _majority(given: list[str | None], coders: int) -> str | None:
    """What more than half of the coders gave, else None."""
    top = max(set(given), key=given.count)
    return top if 2 * given.count(top) > coders else None


def _point_shares(explanations: list[list[str | None]]) -> dict[str, float | None]:
    """ARM section 4.3 over the explanations R: mean share of IMPORTANT (WRONG) points, and % of R with none."""
    out: dict[str, float | None] = {"explanations": len(explanations)}
    for mark, name in ((IMP, "important"), (WRO, "wrong")):
        out[f"% {name}"] = pct(sum(points.count(mark) / len(points) for points in explanations), len(explanations))
        out[f"% none {name}"] = pct(sum(mark not in points for points in explanations), len(explanations))
    return out


def _preference_figures(choices: dict[str, tuple]) -> tuple[dict[str, float | None], dict[str, dict]]:
    """Table 4's Preferred figures, and Table 5's individual and majority-vote rows, from the choices."""
    units = list(zip(*choices.values(), strict=True))
    preferred = [[chosen for chosen, _ in unit] for unit in units]
    table4 = {
        "% rewrite preferred (majority)": pct(sum(_majority(p, 2) == "rewrite" for p in preferred), len(units)),
        "% original preferred (majority)": pct(sum(_majority(p, 2) == "original" for p in preferred), len(units)),
        "% all coders chose the same": pct(sum(len(set(p)) == 1 for p in preferred), len(units)),
    }
    marked = [list(marks) for unit in units for _, marks in unit if marks]
    voted = [
        [_majority([marks[i] if marks else None for _, marks in unit], len(unit)) for i in range(len(steps.POINTS))]
        for unit in units
        if any(marks for _, marks in unit)
    ]
    return table4, {"Individual": _point_shares(marked), "Maj. vote": _point_shares(voted)}


def test_arm_preference_from_a_rewrite_run_then_tables_4_and_5(coder: Joins, page: Page, app: helpers.Server) -> None:
    source = _rewrite_run(page, app.url)
    mode = "ARM preference and explanation points"
    wanted = NewSession("arm-pref-pilot", mode, "arm-preference", "sentences", suggestions=source)
    assert steps.create_session(page, app.url, wanted) == ARM_SENTENCES - len(UNCHANGED)
    for name, choices in ARM_PREFERENCE.items():
        _prefer(coder(wanted.name, name), choices)
    agreement = agreement_tab(page, app.url, wanted.name)
    table4, table5 = _preference_figures(ARM_PREFERENCE)
    assert {metric: _table4(agreement).get(metric) for metric in table4} == pytest.approx(table4)
    rows = {row["row"].split(" (")[0]: row for row in grid(agreement, "row") if row["figures"] == "this session"}
    for row, figures in table5.items():
        assert {column: number(rows[row][column]) for column in figures} == pytest.approx(figures), row
