"""Fixtures for the on-demand LLM tests: a scripted server per test, settings that point every
provider at it (so no test can reach the network, even one that forgets a base URL), a writable
copy of the bundled database, and helpers that read what a test expects from the files themselves
(prompt TOML, price table) rather than from the code under test."""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from faithlens import store
from faithlens.access import Actor, Person
from faithlens.llm import ask, targets
from tests.llmserver import LLMServer

ROOT = Path(__file__).resolve().parents[2]
PROMPTS = ROOT / "faithlens" / "llm" / "prompts"
PRICES = ROOT / "faithlens" / "llm" / "prices.toml"
OPENAI_KEY = "sk-test-openai-4f1c9e"
ANTHROPIC_KEY = "sk-ant-test-77b0d2"
ME = Actor(Person("tester", "Tester", None, "cli"), "admin")
"""Who asks in these tests: an admin with no budget set, so no limit (as the CLI and the local user are)."""


@pytest.fixture
def server() -> Iterator[LLMServer]:
    with LLMServer() as srv:
        yield srv


@pytest.fixture
def llm_env(server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> LLMServer:
    """Keys set, both providers' base URLs at the local server, the bundled price table, a 20 s timeout."""
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("FAITHLENS_OPENAI_BASE_URL", server.openai_base_url)
    monkeypatch.setenv("FAITHLENS_ANTHROPIC_BASE_URL", server.anthropic_base_url)
    monkeypatch.setenv("FAITHLENS_LLM_TIMEOUT", "20")
    monkeypatch.delenv("FAITHLENS_LLM_PRICES", raising=False)
    return server


@pytest.fixture
def conn(db_copy: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-write connection to a private copy of the bundled database."""
    connection = store.connect(db_copy)
    yield connection
    connection.close()


# Providers as the tests use them: the model priced in the bundled table, and the base URL property.
PROVIDERS = {
    "openai": ("gpt-4o", "openai_base_url"),
    "anthropic": ("claude-3-5-sonnet-20241022", "anthropic_base_url"),
}


def asking(server: LLMServer, method: str, provider: str = "openai", model: str | None = None, **options) -> ask.Ask:
    """An Ask sent to the local server for `provider` (the model defaults to the priced one)."""
    default_model, url = PROVIDERS[provider]
    return ask.Ask(method, provider, model or default_model, base_url=getattr(server, url), **options)


def target(conn: duckdb.DuckDBPyConnection, dataset: str, target_id: str) -> targets.Target:
    with conn.cursor() as cur:
        return targets.resolve(cur, dataset, target_id)


def rows(conn: duckdb.DuckDBPyConnection, sql: str, params: list | None = None) -> list[dict]:
    """Query rows as dicts by column name."""
    with conn.cursor() as cur:
        cur.execute(sql, params or [])
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def one(conn: duckdb.DuckDBPyConnection, sql: str, params: list | None = None) -> object:
    with conn.cursor() as cur:
        return cur.execute(sql, params or []).fetchone()[0]


@dataclass(frozen=True)
class PromptFile:
    """A prompt file as a test reads it: TOML text and its version (sha256 of the bytes, 12 hex digits)."""

    system: str | None
    turns: tuple[str, ...]
    version: str
    temperature: float

    def render(self, turn: int = 0, **values: str) -> str:
        text = self.turns[turn]
        for name, value in values.items():
            text = text.replace("{{" + name + "}}", value)
        return text


def prompt_file(name: str) -> PromptFile:
    data = (PROMPTS / f"{name}.toml").read_bytes()
    raw = tomllib.loads(data.decode())
    return PromptFile(
        system=raw["system"].strip() if "system" in raw else None,
        turns=tuple(turn["user"].strip() for turn in raw["turn"]),
        version=hashlib.sha256(data).hexdigest()[:12],
        temperature=float(raw["temperature"]),
    )


def price(model: str) -> tuple[float, float]:
    """(input, output) US dollars per million tokens, as the bundled table lists them."""
    row = tomllib.loads(PRICES.read_text())["models"][model]
    return row["input"], row["output"]


def storysumm_summaries(conn: duckdb.DuckDBPyConnection, n: int) -> list[dict]:
    """The first `n` StorySumm summaries (by id) with their text and their story's text."""
    return rows(
        conn,
        """
        SELECT s.summary_id, s.text AS summary, d.text AS story FROM summary s
        JOIN document d ON d.dataset = s.dataset AND d.document_id = s.document_id
        WHERE s.dataset = 'storysumm' ORDER BY s.summary_id LIMIT ?
        """,
        [n],
    )
