"""The price table: a model's row by exact name or dated snapshot, unknown models unpriced (None,
never 0), batch rates, the FAITHLENS_LLM_PRICES override, and a bad table reported in one line that
names the file, before anything is sent. Expected prices are read from the TOML file here."""

from __future__ import annotations

import tomllib
from pathlib import Path

import duckdb
import pytest

from faithlens import cli
from faithlens.errors import FaithLensError
from faithlens.llm import ask, costs
from tests.llm.conftest import ME, PRICES, asking, storysumm_summaries, target
from tests.llmserver import LLMServer, Reply

TABLE = tomllib.loads(PRICES.read_text())["models"]


def bundled() -> dict[str, costs.Price]:
    return costs.load_prices(PRICES)


def test_the_bundled_table_loads_every_row() -> None:
    prices = bundled()
    assert set(prices) == set(TABLE)
    for model, row in TABLE.items():
        assert (prices[model].input, prices[model].output) == (row["input"], row["output"])
        assert (prices[model].batch_input, prices[model].batch_output) == (
            row.get("batch_input"),
            row.get("batch_output"),
        )


@pytest.mark.parametrize(
    ("model", "row"),
    [
        ("gpt-4o", "gpt-4o"),
        ("gpt-4o-mini", "gpt-4o-mini"),
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("gpt-4-turbo-2024-04-09", "gpt-4-turbo"),
        ("gpt-4.1-mini-2025-04-14", "gpt-4.1-mini"),
        ("gpt-4-0613", "gpt-4"),
        ("claude-3-5-sonnet-20241022", "claude-3-5-sonnet"),
        ("claude-3-5-haiku-20241022", "claude-3-5-haiku"),
        ("claude-3-haiku-20240307", "claude-3-haiku"),
    ],
)
def test_exact_names_and_dated_snapshots(model: str, row: str) -> None:
    found = costs.price_for(model, bundled())
    assert found is not None, model
    assert (found.model, found.input, found.output) == (row, TABLE[row]["input"], TABLE[row]["output"])


@pytest.mark.parametrize("model", ["llama-3-local", "gpt", "gpt-4o2", "my-gpt-4o", "GPT-4O", ""])
def test_models_not_in_the_table_are_unpriced(model: str) -> None:
    assert costs.price_for(model, bundled()) is None
    assert costs.cost_usd(model, 1000, 100, bundled()) is None


def test_a_different_model_is_not_priced_as_its_namesake() -> None:
    """gpt-4.1-nano is its own, far cheaper model, not a snapshot of gpt-4.1, and has no row: its
    cost is unknown, as for any model missing from the table, not gpt-4.1's price."""
    assert costs.price_for("gpt-4.1-nano", bundled()) is None


def test_cost_is_tokens_times_price_per_million_and_batch_uses_the_batch_rate(tmp_path: Path) -> None:
    row = TABLE["gpt-4o"]
    assert costs.cost_usd("gpt-4o", 2_000_000, 500_000, bundled()) == pytest.approx(
        2 * row["input"] + 0.5 * row["output"]
    )
    assert costs.cost_usd("gpt-4o-2024-08-06", 2_000_000, 500_000, bundled(), batch=True) == pytest.approx(
        2 * row["batch_input"] + 0.5 * row["batch_output"]
    )
    assert costs.cost_usd("gpt-4o", 0, 0, bundled()) == 0
    assert costs.cost_usd("gpt-4o", None, 10, bundled()) is None, "no usage reported: unknown, not 0"
    path = tmp_path / "prices.toml"
    path.write_text('[models."local"]\ninput = 1.0\noutput = 3.0\n')
    assert costs.cost_usd("local", 1_000_000, 1_000_000, costs.load_prices(path), batch=True) == pytest.approx(4.0)


def test_describe_cost() -> None:
    assert costs.describe_cost(None) == "cost unknown"
    assert costs.describe_cost(0.00253) == "$0.0025"
    assert costs.describe_cost(1234.5) == "$1,234.50"


BAD_TABLES = {
    "not TOML": b'[models."gpt-4o"\ninput = 2.5\n',
    "missing output": b'[models."gpt-4o"]\ninput = 2.5\n',
    "unknown key": b'[models."gpt-4o"]\ninput = 2.5\noutput = 10\ncached = 1\n',
    "negative": b'[models."gpt-4o"]\ninput = -2.5\noutput = 10\n',
    "text price": b'[models."gpt-4o"]\ninput = "2.5"\noutput = 10\n',
    "row not a table": b"[models]\ngpt-4o = 2.5\n",
    "models not a table": b"models = 3\n",
    "not UTF-8": '# Preise in \u20ac, gepr\u00fcft\n[models."gpt-4o"]\ninput = 2.5\noutput = 10\n'.encode("cp1252"),
}


@pytest.mark.parametrize("case", sorted(BAD_TABLES))
def test_a_bad_price_table_is_one_line_naming_the_file(case: str, tmp_path: Path) -> None:
    path = tmp_path / "my prices.toml"
    path.write_bytes(BAD_TABLES[case])
    with pytest.raises(FaithLensError) as raised:
        costs.load_prices(path)
    message = str(raised.value)
    assert str(path) in message and "\n" not in message


def test_a_missing_price_table_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.toml"
    with pytest.raises(FaithLensError, match="cannot read the price table") as raised:
        costs.load_prices(path)
    assert str(path) in str(raised.value)


def test_the_override_prices_the_answer(
    llm_env: LLMServer, conn: duckdb.DuckDBPyConnection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "prices.toml"
    path.write_text('[models."local-judge"]\ninput = 1.0\noutput = 4.0\n')
    monkeypatch.setenv("FAITHLENS_LLM_PRICES", str(path))
    (summary,) = storysumm_summaries(conn, 1)
    llm_env.queue(Reply("No", input_tokens=3000, output_tokens=500))
    answer = ask.ask(
        conn,
        target(conn, "storysumm", summary["summary_id"]),
        asking(llm_env, "storysumm-binary", model="local-judge"),
        ME,
    )
    assert answer.cost == pytest.approx((3000 * 1.0 + 500 * 4.0) / 1_000_000)


@pytest.mark.parametrize("case", ["not TOML", "not UTF-8"])
def test_the_cli_refuses_a_bad_price_table_before_calling(
    case: str, llm_env: LLMServer, db_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    path = tmp_path / "prices.toml"
    path.write_bytes(BAD_TABLES[case])
    monkeypatch.setenv("FAITHLENS_LLM_PRICES", str(path))
    conn = duckdb.connect(str(db_copy), read_only=True)
    (summary,) = storysumm_summaries(conn, 1)
    conn.close()
    args = ["llm", "verify", "--dataset", "storysumm", "--unit", summary["summary_id"], "--method", "storysumm-binary"]
    code = cli.main([*args, "--provider", "openai", "--model", "gpt-4o", "--db", str(db_copy)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and str(path) in err
    assert len(err.strip().splitlines()) == 1
    assert llm_env.requests == [], "nothing is sent before the prices are known to be readable"
