"""Steps shared by the protocol tests (`test_protocols.py`): a lab of one app server and one scripted
LLM server, a run from the Runs page, a session from the Sessions page, coders who join by their link
and save, the figures the Sessions page shows, and the same figures computed here from what the coders
entered (scikit-learn, statsmodels and krippendorff for agreement; arithmetic for ARM's percentages).

Everything goes through the app in a browser: no CLI, no write to the database."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from playwright.sync_api import Locator, Page, expect

from tests import raw
from tests.browser import helpers
from tests.llmserver import LLMServer, Reply

DATASET = "storysumm"
MODEL = "gpt-4o"
RUN_WITHIN_MS = 90_000
REWORDED = "as the story tells it"
"""What the scripted ARM rewrite adds to a sentence: the rewrite is found on a page by these words."""
POINTS = ("It assumes a detail the story leaves open.", "It skips why it happened.")
SUGGESTIONS = {
    "identify as many inconsistent details": ("The summary names a place the story does not.", "It adds a motive."),
    "identify the most inconsistent detail": ("The summary gets the ending wrong.",),
}
"""StorySumm B.2's two prompts (told apart by their instruction) and the inconsistencies each reply holds."""


def _inconsistencies(items: Sequence[str]) -> str:
    return "\n\n".join(
        f"Inconsistency: {item}\nReason for inconsistency: The story says otherwise.\n"
        "Reason for consistency: The story leaves room for it."
        for item in items
    )


def rewrite_of(sentence: str) -> str:
    """The scripted ARM rewrite of a sentence: the same words with REWORDED before its full stop."""
    return sentence.rstrip().removesuffix(".") + f", {REWORDED}."


def scripted(unchanged: frozenset[str] = frozenset()):
    """The scripted model: StorySumm's inconsistency prompts get their SUGGESTIONS; ARM's rewrite prompt
    a rewrite (the sentence itself for those in `unchanged`: r = s) with an explanation naming the
    sentence; ARM's explanation-points prompt the two POINTS."""

    def respond(request) -> Reply:
        prompt = request.last_user_text()
        for instruction, items in SUGGESTIONS.items():
            if instruction in prompt:
                return Reply(_inconsistencies(items))
        if "Rewrite the following summary sentence" in prompt:
            sentence = prompt.rsplit("Sentence:", 1)[1].strip()
            if sentence in unchanged:
                return Reply(f"<answer>{sentence}</answer>\nThe sentence is accurate and clear.")
            return Reply(
                f"<answer>{rewrite_of(sentence)}</answer>\nThe sentence “{sentence}” reads more into the story."
            )
        if "Summarize the key reasons described in this explanation" in prompt:
            return Reply("".join(f"<item>{point}</item>" for point in POINTS))
        return Reply("Yes")

    return respond


LAB = "lead"
"""The lab's admin in `lab`: runs the models and makes the sessions."""


@contextmanager
def lab(
    browser_db: Path, folder: Path, unchanged: frozenset[str] = frozenset()
) -> Iterator[tuple[helpers.Server, dict[str, str]]]:
    """A fresh app server whose OpenAI base URL is a scripted LLM server, signing people in by link:
    `LAB` (an admin, who runs the models and makes the sessions) and the coders alice and bob. Yields
    the server and each person's sign-in link."""
    with LLMServer(scripted(unchanged)) as llm:
        settings = {"OPENAI_API_KEY": "test-key", "FAITHLENS_OPENAI_BASE_URL": llm.openai_base_url}
        db = helpers.copy_db(browser_db, folder / "lab.duckdb")
        roles = {LAB: "admin", "alice": "coder", "bob": "coder"}
        with helpers.links_server(db, folder / "server.log", roles, extra_env=settings) as made:
            yield made


def choose(page: Page, label: str, option: str | re.Pattern) -> None:
    """Pick `option` (its exact text, or a pattern) in the select box labelled `label`."""
    box = page.get_by_test_id("stSelectbox").filter(has_text=label)
    if isinstance(option, str) and box.locator("input").input_value() == option:
        return
    box.locator("input").click()
    page.get_by_role("option", name=option, exact=isinstance(option, str)).click()
    helpers.wait_for_app(page)


def fill(page: Page, label: str, value: str) -> None:
    """Type into a text or number input and send it (Enter), as a user does before the next control."""
    box = page.get_by_label(label, exact=True)
    box.fill(value)
    box.press("Enter")
    helpers.wait_for_app(page)


def main_text(page: Page) -> Locator:
    return page.get_by_test_id("stMain")


# Sources: the Runs page ----------------------------------------------------------------------------


def run_method(page: Page, level: str, method: str, units: str | None = None) -> str:
    """On the Runs page already open: a run of `method` over `level` (plural noun, "sentences") and
    `units` (the unit set's title; None keeps the page's first choice), estimated, started and waited
    for; returns its source name as the estimate gives it."""
    choose(page, "Level", re.compile(rf"^{level} \("))
    choose(page, "Method", method)
    if units is not None:
        choose(page, "Units", units)
    page.get_by_role("button", name="Estimate").click()
    helpers.wait_for_app(page)
    expect(main_text(page)).to_contain_text(re.compile(r"items: 0 already stored \(free\), 0 unfit"))
    source = re.search(r"Estimate for (\S+) over", main_text(page).inner_text())
    assert source, "the estimate names the run's label source"
    page.get_by_role("button", name="Start run").click()
    helpers.wait_for_app(page)
    expect(main_text(page)).to_contain_text(
        re.compile(r"State: finished: (\d+) done, 0 failed of \1"), timeout=RUN_WITHIN_MS
    )
    helpers.assert_no_exception(page)
    return source.group(1)


def run_on_explore_filter(page: Page, url: str, search: str, level: str, method: str) -> str:
    """Explore filtered by a full-text search, its "Run a method on the filtered set", then the run."""
    helpers.open_app(page, f"{url}/explore?dataset={DATASET}&search={search}")
    main_text(page).get_by_role("link", name="Run a method on the filtered set").click()
    helpers.wait_for_app(page)
    return run_method(page, level, method)


# Sessions: the Sessions page -----------------------------------------------------------------------


@dataclass(frozen=True)
class NewSession:
    """The New session form as a user fills it; None leaves the form's own choice."""

    name: str
    mode: str
    codebook: str | None = None
    level: str | None = None
    sample: int | None = None
    suggestions: str | None = None


def create_session(page: Page, url: str, wanted: NewSession) -> int:
    """Fill the New session form (fixed order, so both coders get the same sequence), check what it
    says the session will hold, create it; returns the number of units the form announced."""
    helpers.open_app(page, f"{url}/sessions?dataset={DATASET}&view=new")
    fill(page, "Name", wanted.name)
    choose(page, "Mode (protocol)", wanted.mode)
    if wanted.codebook is not None:
        choose(page, "Codebook", re.compile(rf"\({re.escape(wanted.codebook)}@"))
    if wanted.level is not None:
        choose(page, "Level", re.compile(rf"^{wanted.level} \("))
    if wanted.suggestions is not None:
        choose(page, "from (", wanted.suggestions)
    if wanted.sample is not None:
        fill(page, "Random sample of N units (optional)", str(wanted.sample))
    page.get_by_text("fixed, the same for every coder").click()
    helpers.wait_for_app(page)
    holds = re.search(r"The session holds (\d+) units", main_text(page).inner_text())
    assert holds, "the form says how many units the session holds"
    page.get_by_role("button", name="Create session").click()
    helpers.wait_for_app(page)
    expect(page.get_by_role("heading", name=wanted.name, exact=True)).to_be_visible()
    helpers.assert_no_exception(page)
    return int(holds.group(1))


def join(page: Page, url: str, session: str, name: str) -> Page:
    """A coder signed in as `name` (in a browser context of their own) follows the session's Code page
    link and joins."""
    helpers.open_app(page, f"{url}/code?dataset={DATASET}&session={session}")
    page.get_by_role("button", name=f"Join as {name}").click()
    helpers.wait_for_app(page)
    expect(page.get_by_role("button", name="Save and go on")).to_be_visible()
    return page


def press_code(page: Page, name: str) -> None:
    """Click the code (or version) button whose label starts with `name` (its shortcut digit follows)."""
    page.get_by_role("button", name=starts(name)).click()
    helpers.wait_for_app(page)


def starts(text: str) -> re.Pattern:
    """A name that starts with `text` (escaped for Playwright's /pattern/ syntax, where / ends it)."""
    return re.compile("^" + re.escape(text).replace("/", r"\/"))


def mark(page: Page, group: str, option: str) -> None:
    """Choose `option` in the radio group named `group` ("Point 1", "Code of S2", "Suggestion 1").

    No wait for the rerun it starts: a radio's value is state the browser sends with every later rerun
    (unlike a button's click), so the next click may interrupt it; Save waits for its own rerun."""
    page.get_by_role("radiogroup", name=group, exact=True).get_by_text(option, exact=True).click()


def note(page: Page, text: str) -> None:
    page.get_by_role("textbox", name="Note (your explanation)", exact=True).fill(text)


def save(page: Page, position: int) -> None:
    """Save and go on; the page must acknowledge this unit's save."""
    page.get_by_role("button", name="Save and go on").click()
    helpers.wait_for_app(page)
    expect(page.get_by_text(re.compile(rf"^Saved unit {position}\b"))).to_be_visible()
    helpers.assert_no_exception(page)


def agreement_tab(page: Page, url: str, session: str) -> Page:
    helpers.open_app(page, f"{url}/sessions?dataset={DATASET}&session={session}")
    page.get_by_role("tab", name="Agreement").click()
    helpers.wait_for_app(page)
    helpers.assert_no_exception(page)
    return page


# Figures: what the page shows, and the same computed here ------------------------------------------


def agreement_figures(a: Sequence[str], b: Sequence[str]) -> dict[str, float]:
    """Two coders' codes on the same units: Cohen's and Fleiss' kappa, Krippendorff's alpha, % agree."""
    import krippendorff
    import numpy as np
    from sklearn.metrics import cohen_kappa_score
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    labels = sorted(set(a) | set(b))
    numbers = np.array([[labels.index(x), labels.index(y)] for x, y in zip(a, b, strict=True)])
    return {
        "cohen": cohen_kappa_score(a, b),
        "fleiss": fleiss_kappa(aggregate_raters(numbers)[0], method="fleiss"),
        "alpha": krippendorff.alpha(reliability_data=numbers.T.astype(float), level_of_measurement="nominal"),
        "agree": 100 * sum(x == y for x, y in zip(a, b, strict=True)) / len(a),
    }


def expect_agreement(page: Page, a: Sequence[str], b: Sequence[str]) -> None:
    """The page states these figures of alice's codes `a` and bob's `b` (both coded every unit)."""
    f = agreement_figures(a, b)
    line = (
        rf"Fleiss' κ {f['fleiss']:.3f} and all agree on {f['agree']:.1f}%.*Krippendorff's α {f['alpha']:.3f}"
        rf".*Cohen's κ alice–bob {f['cohen']:.3f} \(n {len(a)}\)"
    )
    expect(page.get_by_text(re.compile(line)).first).to_be_visible()


def grid(page: Page, first_column: str) -> list[dict[str, str]]:
    """The rows of the data frame whose first column is `first_column`, read from the grid's accessible
    table (the cells themselves are drawn on a canvas): column -> the cell's value as sent."""
    table = (
        page.get_by_test_id("stDataFrame")
        .locator("table[role=grid]")
        .filter(has=page.locator("th[aria-colindex='1']", has_text=re.compile(rf"^{re.escape(first_column)}$")))
    )
    expect(table).to_have_count(1)
    columns = table.locator("thead th").all_text_contents()
    return [
        dict(zip(columns, row.locator("td").all_text_contents(), strict=True))
        for row in table.locator("tbody tr").all()
    ]


def number(cell: str) -> float | None:
    """A cell's value as a number; None for an empty cell (a figure the session cannot give)."""
    return float(cell) if cell.strip() else None


def pct(part: float, whole: int) -> float | None:
    return 100 * part / whole if whole else None


def storysumm_summary(sentences: int, split: str = "val") -> tuple[str, tuple[str, ...]]:
    """The first StorySumm summary (by id) of `split` with that many sentences: (id, its sentences)."""
    for summary_id, record in sorted(raw.storysumm_records().items()):
        if record["split"] == split and len(record["summary"]) == sentences:
            return summary_id, tuple(s.strip() for s in record["summary"])
    raise AssertionError(f"no {split} summary of {sentences} sentences in the raw file")
