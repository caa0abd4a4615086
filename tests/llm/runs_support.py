"""What the run tests share: StorySumm's summaries read from the raw file (not through faithlens),
a responder that answers per summary by a rule, and readers of what a run stored."""

from __future__ import annotations

import ast
import itertools
import json
import threading
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import duckdb

from tests import raw
from tests.llm.conftest import rows
from tests.llmserver import Reply, Request


@dataclass(frozen=True)
class RawSummary:
    summary_id: str
    first_sentence: str
    gold: str
    split: str


def storysumm_summaries(split: str | None = None) -> list[RawSummary]:
    """The release's summaries (in id order, as runs list them), with their gold summary label."""
    found = []
    for summary_id, record in sorted(raw.storysumm_records().items()):
        sentences = record["summary"]
        sentences = ast.literal_eval(sentences) if isinstance(sentences, str) else sentences
        found.append(RawSummary(summary_id, sentences[0], raw.BINARY[int(record["label"])], record["split"]))
    firsts = Counter(s.first_sentence for s in found)
    assert max(firsts.values()) == 1, "first sentences must tell the summaries apart"
    return [s for s in found if split is None or s.split == split]


class PerSummary:
    """A responder: finds which summary a request is about and answers `rule(summary, attempt)`, where
    `attempt` counts this summary's requests so far (0 first). Thread-safe: runs call concurrently."""

    def __init__(self, rule: Callable[[RawSummary, int], Reply | str], split: str | None = None) -> None:
        self.rule = rule
        self.summaries = storysumm_summaries(split)
        self.asked: Counter[str] = Counter()
        self._lock = threading.Lock()

    def which(self, request: Request) -> RawSummary:
        text = request.last_user_text()
        return next(s for s in self.summaries if s.first_sentence in text)

    def __call__(self, request: Request) -> Reply | str:
        summary = self.which(request)
        with self._lock:
            attempt = self.asked[summary.summary_id]
            self.asked[summary.summary_id] += 1
        return self.rule(summary, attempt)


def verdict(summary: RawSummary) -> str:
    """The scripted model's verdict: 'No' for every third summary by id, else 'Yes'."""
    return "No" if zlib.crc32(summary.summary_id.encode()) % 3 == 0 else "Yes"


def current_labels(conn: duckdb.DuckDBPyConnection, source: str) -> dict[str, str]:
    found = rows(conn, "SELECT target_id, value FROM current_label WHERE source = ? AND level = 'summary'", [source])
    return {row["target_id"]: row["value"] for row in found}


def answers_per_request(conn: duckdb.DuckDBPyConnection) -> Counter[tuple[str, int]]:
    """(request key, sample) -> stored answers: more than 1 anywhere would be an answer bought twice."""
    found = rows(conn, "SELECT request_key, sample, count(*) AS n FROM llm_call GROUP BY ALL")
    return Counter({(row["request_key"], row["sample"]): row["n"] for row in found})


def prompt_chars(request: Request) -> int:
    """Characters of a request as the app stores it (system prompt and turns as JSON)."""
    turns = [m["content"] for m in request.messages if m["role"] == "user"]
    return len(json.dumps({"system": request.system, "turns": turns}))


def model_requests(requests: list[Request]) -> list[Request]:
    """Requests that asked a model (not model listings or batch bookkeeping)."""
    return [r for r in requests if r.path in ("/v1/chat/completions", "/v1/messages")]


def pairs(items: list) -> list[tuple]:
    return list(itertools.combinations(items, 2))
