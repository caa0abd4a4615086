"""Issue 9: warm page switches in Chromium, Explore <-> Compare through the sidebar links, from the
click until the page is idle, against a minimal two-page app measured beside it (budget 1.5x).

Idle means: the server sent `script_finished` for the run the click started, the browser has
handled every message up to it, the app says it is not running, no skeleton or stale element is
left, and every Plotly chart, Vega chart and dataframe has drawn; checked again two animation
frames later. The time is taken in the page (`performance.now()` at the click's capture), so
Playwright's round trips do not count. The `script_finished` signal matters: a fast run can go
from running to not running within one React commit, so watching the app's state alone can miss it.

The baseline is two pages, each a Plotly bar chart and a 100-row `st.dataframe`, linked from the
sidebar like FaithLens's pages. Both servers run side by side and their round trips alternate, so
the machine's load falls on both alike. One round trip per app is a warm-up (the first visit of a
page imports its modules and fills its caches); its time is reported for the record.

The per-page rows (informational) also say what the browser received for the page: elements
(tables = `st.dataframe` + `st.table`, charts = Plotly + Vega) and kilobytes of ForwardMsg,
decoded from the WebSocket frames (`SwitchProbe`).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from bench.measure import Measure
from faithlens import config
from faithlens.build import ingest

ROOT = Path(__file__).resolve().parent.parent
ROUND_TRIPS = 5
BUDGET_RATIO = 1.5
DATASET = "storysumm"
BASELINE_PAGE = """\
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

st.sidebar.page_link("app.py", label="One")
st.sidebar.page_link("pages/two.py", label="Two")
st.title({title!r})
st.plotly_chart(go.Figure(go.Bar(x=list("abcde"), y={values!r})))
st.dataframe(pd.DataFrame({{"n": range(100), "square": [i * i for i in range(100)], "name": [f"row {{i}}" for i in range(100)]}}))
"""
BASELINE_CONFIG = '[client]\nshowSidebarNavigation = false\n\n[server]\nfileWatcherType = "none"\n'

# Counts the WebSocket messages the page's own code has been handed (our listener runs first).
COUNT_MESSAGES = """
(() => {
  const Native = window.WebSocket;
  window.__benchMessages = 0;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', () => { window.__benchMessages += 1; });
    }
  };
})();
"""
ARM = """
() => {
  const probe = window.__benchSwitch = {t0: null};
  document.addEventListener('click', () => { probe.t0 = performance.now(); }, {capture: true, once: true});
}
"""
WAIT_IDLE = """
async ([messages, fromNow]) => {
  const app = document.querySelector('[data-testid="stApp"]');
  const probe = fromNow ? {t0: performance.now()} : window.__benchSwitch;
  const drawn = (testid, inner) =>
      [...document.querySelectorAll(`[data-testid="${testid}"]`)].every(e => e.querySelector(inner));
  const idle = () => window.__benchMessages >= messages
      && app.getAttribute('data-test-script-state') === 'notRunning'
      && app.getAttribute('data-test-connection-state') === 'CONNECTED'
      && !document.querySelector('[data-testid="stSkeleton"], [data-stale="true"]')
      && drawn('stPlotlyChart', '.main-svg') && drawn('stVegaLiteChart', 'canvas, svg')
      && drawn('stDataFrame', 'canvas');
  return await new Promise((resolve, reject) => {
    const tick = () => {
      if (performance.now() - probe.t0 > 60000) { reject(new Error('page not idle 60 s after the click')); return; }
      if (!idle()) { requestAnimationFrame(tick); return; }
      const at = performance.now();
      requestAnimationFrame(() => requestAnimationFrame(() => (idle() ? resolve(at - probe.t0) : tick())));
    };
    tick();
  });
}
"""


@dataclass
class Received:
    """What the browser received for one run: elements by kind and ForwardMsg bytes."""

    elements: Counter = field(default_factory=Counter)
    kilobytes: float = 0.0

    def summary(self) -> str:
        kinds = self.elements
        charts = sum(kinds[k] for k in ("plotly_chart", "vega_lite_chart", "deck_gl_json_chart"))
        grids = kinds["dataframe"] + kinds["table"]
        return (
            f"{sum(kinds.values())} elements, {grids} tables, {charts} charts, "
            f"{kinds['html']} html, {self.kilobytes:.0f} kB"
        )


class SwitchProbe:
    """One app in one browser page: clicks a sidebar link and times it to idle."""

    def __init__(self, browser, url: str, must_show: str = "") -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        self._forward_msg = ForwardMsg
        self.must_show = must_show
        """A query parameter (`dataset=storysumm`) every page switched to must keep in its URL."""
        self.page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
        self.page.add_init_script(COUNT_MESSAGES)
        self.frames = 0
        self.finished = 0
        self._kinds: dict[str, str] = {}
        self.received = Received()
        self.page.on("websocket", lambda ws: ws.on("framereceived", self._frame))
        self.page.goto(url)
        self._wait_finished(0)

    def _frame(self, payload: bytes | str) -> None:
        self.frames += 1
        if isinstance(payload, str):
            return
        self.received.kilobytes += len(payload) / 1024
        msg = self._forward_msg.FromString(payload)
        kind = msg.WhichOneof("type")
        if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element.WhichOneof("type")
            self._kinds[msg.hash] = element
            self.received.elements[element] += 1
        elif kind == "ref_hash":  # a message the browser already holds, sent by reference
            self.received.elements[self._kinds.get(msg.ref_hash, "unknown")] += 1
        elif kind == "script_finished" and msg.script_finished == self._forward_msg.FINISHED_SUCCESSFULLY:
            self.finished += 1

    def _wait_finished(self, before: int) -> None:
        deadline = time.monotonic() + 60
        while self.finished == before:
            if time.monotonic() > deadline:
                raise RuntimeError(f"no finished script run 60 s after the click on {self.page.url}")
            self.page.wait_for_timeout(5)

    def _idle_ms(self, from_now: bool = False) -> float:
        """ms from the armed click (or from now) until the page is idle."""
        return self.page.evaluate(WAIT_IDLE, [self.frames, from_now])

    def switch(self, label: str) -> tuple[float, Received]:
        """Click the sidebar link `label`; ms from the click to idle, and what the run sent."""
        self._idle_ms(from_now=True)  # the previous page is idle before the click
        before, self.received = self.finished, Received()
        self.page.evaluate(ARM)
        self.page.get_by_test_id("stSidebar").get_by_test_id("stPageLink").filter(has_text=label).click()
        self._wait_finished(before)
        ms = self._idle_ms()
        if self.must_show and self.must_show not in self.page.url.partition("?")[2].split("&"):
            raise RuntimeError(
                f"the {label} link opened {self.page.url}, without {self.must_show}: not the page to time"
            )
        return ms, self.received

    def close(self) -> None:
        self.page.context.close()


@dataclass
class Switches:
    """Times of every timed switch per target page, the warm-up's, and what each page received."""

    first: dict[str, float] = field(default_factory=dict)
    times: dict[str, list[float]] = field(default_factory=dict)
    received: dict[str, Received] = field(default_factory=dict)

    def add(self, label: str, ms: float, received: Received, warmup: bool) -> None:
        if warmup:
            self.first[label] = ms
        else:
            self.times.setdefault(label, []).append(ms)
        self.received[label] = received

    @property
    def median(self) -> float:
        return statistics.median(ms for samples in self.times.values() for ms in samples)


def _baseline_app(folder: Path) -> Path:
    app = folder / "baseline"
    (app / "pages").mkdir(parents=True)
    (app / ".streamlit").mkdir()
    (app / ".streamlit" / "config.toml").write_text(BASELINE_CONFIG, encoding="utf-8")
    (app / "app.py").write_text(BASELINE_PAGE.format(title="One", values=[3, 1, 4, 1, 5]), encoding="utf-8")
    (app / "pages" / "two.py").write_text(BASELINE_PAGE.format(title="Two", values=[2, 7, 1, 8, 2]), encoding="utf-8")
    return app


def measure_switches(
    db: Path, folder: Path, round_trips: int = ROUND_TRIPS, app_dir: Path = ROOT
) -> tuple[Switches, Switches]:
    """(FaithLens, baseline): Explore <-> Compare and One <-> Two, round trips alternating."""
    from playwright.sync_api import sync_playwright

    from tests.browser import helpers

    apps = {
        "faithlens": (app_dir, f"/explore?dataset={DATASET}", ("Compare", "Explore")),
        "baseline": (_baseline_app(folder), "/", ("Two", "One")),
    }
    results = {name: Switches() for name in apps}
    with sync_playwright() as playwright:
        browser = helpers.launch_chromium(playwright)
        with (
            helpers.running_server(db, folder / "faithlens.log", app_dir=apps["faithlens"][0]) as ours,
            helpers.running_server(db, folder / "baseline.log", app_dir=apps["baseline"][0]) as base,
        ):
            probes = {
                "faithlens": SwitchProbe(browser, ours.url + apps["faithlens"][1], must_show=f"dataset={DATASET}"),
                "baseline": SwitchProbe(browser, base.url + apps["baseline"][1]),
            }
            for trip in range(round_trips + 1):
                for name, (_, _, labels) in apps.items():
                    for label in labels:
                        ms, received = probes[name].switch(label)
                        results[name].add(label, ms, received, warmup=trip == 0)
            for probe in probes.values():
                probe.close()
        browser.close()
    return results["faithlens"], results["baseline"]


def run() -> list[Measure]:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        db = folder / "bench.duckdb"
        ingest.ingest(db, config.data_dir())
        ours, base = measure_switches(db, folder)
    budget = BUDGET_RATIO * base.median
    count = sum(len(samples) for samples in ours.times.values())
    measures = [
        Measure(f"switch: Explore <-> Compare, click to idle (Chromium, median of {count})", ours.median, "ms", budget),
        Measure(
            f"  baseline: two pages, chart + 100-row table each (budget {BUDGET_RATIO}x)", base.median, "ms", budget
        ),
    ]
    informational = 10 * budget
    for label, samples in ours.times.items():
        row = f"  to {label}: {ours.received[label].summary()}"
        measures.append(Measure(row, statistics.median(samples), "ms", informational))
    for label, ms in ours.first.items():
        measures.append(Measure(f"  first visit to {label}, the warm-up (informational)", ms, "ms", informational))
    return measures
