"""Every method the README lists is offered wherever its level applies, with each of its variants, and runs
from each place against the scripted local server (`tests.llmserver`, base URL pointed at it): the Runs
form (Estimate, Start, the run to its end), Explore's "Ask a model", and the Rewrite page for ARM's
rewrite.

The methods and their levels come from the README's table, the variants from the prompt files
(`tests.llm.methods_support`), not from the code under test: a method added to the README or a variant
file added without being offered fails here. Each place must send exactly the prompt files those
settings name (recognised on the server by their fixed text), and the Runs form's caption must name
those files too. The units are those of the StorySumm summaries the search TERM finds (raw file): one, so
each run asks about a handful of units."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest

from faithlens import config
from tests import raw
from tests.apptest import clean
from tests.llm import methods_support as known
from tests.llmserver import LLMServer

DATASET = "storysumm"
TERM = "honeycombs that she used to enjoy"
NEW = f"runs.{DATASET}.new"
FINISHED_WITHIN_S = 60
FILE = re.compile(r"`([a-z0-9.-]+)@[0-9a-f]{12}`")


def _matching() -> dict[str, dict]:
    """StorySumm summaries whose summary, a sentence, a claim or an explanation mentions TERM (raw file)."""
    texts = ("summary", "claims", "explanations")
    return {
        summary_id: record
        for summary_id, record in raw.storysumm_records().items()
        if any(TERM in str(text).lower() for field in texts for text in record.get(field) or ())
    }


def _units(level: str) -> int:
    found = _matching().values()
    return {"summary": len(found), "sentence": sum(len(r["summary"]) for r in found)}.get(
        level, sum(len(r["claims"]) for r in found)
    )


def _combinations() -> list[tuple[str, str, str]]:
    """(level, method, variant) for every README method, level and variant; summaries last (an extraction
    there adds a claim set, which must not change the claim-level runs)."""
    order = {"claim": 0, "sentence": 1, "summary": 2}
    found = [
        (level, method, variant)
        for method, levels in known.readme_methods().items()
        for level in levels
        for variant in known.variants(method)
    ]
    return sorted(found, key=lambda combo: order[combo[0]])


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch, db_copy) -> Iterator[tuple[LLMServer, known.Scripted]]:
    responder = known.Scripted()
    with LLMServer(responder) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-methods")
        monkeypatch.setenv("FAITHLENS_OPENAI_BASE_URL", server.openai_base_url)
        monkeypatch.setenv("FAITHLENS_LLM_TIMEOUT", "20")
        monkeypatch.delenv("FAITHLENS_LLM_PRICES", raising=False)
        monkeypatch.setenv(config.SETTINGS["db"].env, str(db_copy))
        yield server, responder


def _sent(server: LLMServer, since: int) -> set[str]:
    return set(known.files(server.requests[since:]))


def _choose(at, key: str, value: str) -> bool:
    """Pick `value` in the select box `key` when it is offered; False when it is not."""
    box = at.selectbox(key=key)
    if box.format_func(value) not in box.options:
        return False
    box.set_value(value).run()
    return True


def _pick_variant(at, key: str, method: str, variant: str) -> str | None:
    """Choose the variant (a box only when the method has several); a problem in words, else None."""
    boxes = [box for box in at.selectbox if box.key == key]
    if len(known.variants(method)) == 1:
        return f"{method}: a variant box for one variant" if boxes else None
    if not boxes or not _choose(at, key, variant):
        return f"{method}: variant {variant!r} not offered"
    return None


def _finish(at) -> str:
    deadline = time.monotonic() + FINISHED_WITHIN_S
    while True:
        at.run()
        clean(at)
        line = next(m.value for m in at.markdown if m.value.startswith("**State:**"))
        if "running" not in line or time.monotonic() > deadline:
            return line
        time.sleep(0.2)


def _run_once(at, server: LLMServer, level: str, method: str, variant: str) -> list[str]:
    """One run from the form; the problems found, in words."""
    if not _choose(at, f"{NEW}.method.{level}", method):
        return [f"{method} not offered at {level} level"]
    problem = _pick_variant(at, f"{NEW}.variant.{method}", method, variant)
    if problem:
        return [problem]
    if at.error or at.exception:
        return [f"{method} {variant!r} at {level} level: {[e.value for e in (*at.error, *at.exception)]}"]
    expected = set(known.expected_files(method, level, variant))
    captioned = {name for c in at.caption if c.value.startswith("Prompt") for name in FILE.findall(c.value)}
    problems = [] if captioned == expected else [f"{method} {variant}: caption names {captioned}, sends {expected}"]
    since = len(server.requests)
    at.button(key=f"{NEW}.estimate").click().run()
    clean(at)
    at.button(key=f"{NEW}.start").click().run()
    clean(at)
    units = _units(level)
    line = _finish(at)
    if not line.startswith(f"**State:** finished: {units} done, 0 failed of {units}"):
        problems.append(f"{method} {variant} at {level} level: {line}")
    if _sent(server, since) != expected:
        problems.append(f"{method} {variant} at {level} level sent {_sent(server, since)}, not {expected}")
    return problems


def test_the_runs_form_offers_and_runs_every_method_with_each_variant(open_page, scripted) -> None:
    server, responder = scripted
    at = open_page("pages/runs.py", dataset=DATASET, search=TERM)
    assert at.selectbox(key=f"{NEW}.units").value == "explore", "the Explore filter is the unit set"
    problems: list[str] = []
    for level, method, variant in _combinations():
        if at.selectbox(key=f"{NEW}.level").value != level:
            at.selectbox(key=f"{NEW}.level").set_value(level).run()
        problems += _run_once(at, server, level, method, variant)
    assert not responder.unknown, f"prompts the test cannot answer: {dict(responder.unknown)}"
    assert not problems, "\n".join(problems)


def _explore(open_page, level: str):
    summary_id = sorted(_matching())[0]
    where = {"summary": {}, "sentence": {"sentence": "1"}, "claim": {"unit": f"{summary_id}#c0"}}[level]
    at = open_page("pages/explore.py", dataset=DATASET, summary=summary_id, **where)
    at.toggle(key="explore.asking").set_value(True).run()
    clean(at)
    return at


def test_explore_asks_every_method_of_the_chosen_level_with_each_variant(open_page, scripted) -> None:
    server, responder = scripted
    problems: list[str] = []
    for level in known.LEVELS:
        at = _explore(open_page, level)
        for _, method, variant in [c for c in _combinations() if c[0] == level]:
            if not _choose(at, f"explore.method.{level}", method):
                problems.append(f"Explore does not offer {method} for a {level}")
                continue
            problem = _pick_variant(at, f"explore.variant.{method}", method, variant)
            if problem:
                problems.append(problem)
                continue
            since = len(server.requests)
            at.button(key="explore.ask").click().run()
            clean(at)
            expected = set(known.expected_files(method, level, variant))
            if _sent(server, since) != expected:
                problems.append(f"Explore: {method} {variant} on a {level} sent {_sent(server, since)}, not {expected}")
            if any("Not stored as a label" in w.value or "failed" in w.value for w in at.warning):
                problems.append(f"Explore: {method} {variant} on a {level}: {[w.value for w in at.warning]}")
            if not any("new answer" in c.value for c in at.caption):
                problems.append(f"Explore: {method} {variant} on a {level} shows no new answer")
    assert not responder.unknown, f"prompts the test cannot answer: {dict(responder.unknown)}"
    assert not problems, "\n".join(problems)


def test_the_rewrite_page_offers_and_asks_every_arm_rewrite_variant(open_page, scripted) -> None:
    """The Rewrite page is ARM's rewrite of a summary sentence (README): every variant of its prompt files."""
    server, _ = scripted
    method = "arm-rewrite"
    assert "sentence" in known.readme_methods()[method]
    summary_id = sorted(_matching())[0]
    at = open_page("pages/rewrite.py", dataset=DATASET, summary=summary_id, sentence="1")
    box = at.selectbox(key="rewrite.dataset.variant")
    assert box.options == [box.format_func(v) for v in known.variants(method)]
    for variant in known.variants(method):
        box = at.selectbox(key="rewrite.dataset.variant").set_value(variant)
        at.run()
        since = len(server.requests)
        at.button(key="rewrite.dataset.go").click().run()
        clean(at)
        assert _sent(server, since) == set(known.expected_files(method, "sentence", variant)), variant
        assert any(f"arm-rewrite.{variant}@" in c.value for c in at.caption), "the caption names the prompt sent"
        assert any(c.value == "Explanation points (ARM A.3)" for c in at.caption), "the points are shown"
