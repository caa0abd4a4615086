"""Prices per model from the user-editable price table, and the cost of one answer.

A model missing from the table has an unknown cost (None), never 0: a researcher budgeting a run
must see that the app cannot price it rather than a reassuring zero.
"""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from faithlens import config
from faithlens.errors import FaithLensError

PER_TOKENS = 1_000_000


@dataclass(frozen=True)
class Price:
    """US dollars per million input and output tokens, at the interactive and the batch rate."""

    model: str
    input: float
    output: float
    batch_input: float | None = None
    batch_output: float | None = None


def load_prices(path: Path | None = None) -> dict[str, Price]:
    """The price table (FAITHLENS_LLM_PRICES, else the bundled one), checked row by row; read again
    only when the file changes."""
    path = path or Path(config.get("llm_prices"))
    try:
        stamp = path.stat().st_mtime_ns
    except OSError as exc:
        raise FaithLensError(
            f"{path}: cannot read the price table: {exc.strerror}", "check FAITHLENS_LLM_PRICES"
        ) from None
    return _read_prices(path, stamp)


@functools.lru_cache(maxsize=4)
def _read_prices(path: Path, stamp: int) -> dict[str, Price]:
    hint = "fix the file or point FAITHLENS_LLM_PRICES elsewhere"
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise FaithLensError(
            f"{path}: cannot read the price table: {exc.strerror}", "check FAITHLENS_LLM_PRICES"
        ) from None
    except UnicodeDecodeError:
        raise FaithLensError(f"{path}: not UTF-8 text", hint) from None
    except tomllib.TOMLDecodeError as exc:
        raise FaithLensError(f"{path}: not valid TOML: {exc}", hint) from None
    models = table.get("models", {})
    if not isinstance(models, dict):
        raise FaithLensError(f"{path}: 'models' must be a table of [models.\"NAME\"] rows", hint)
    return {model: _price(path, model, row) for model, row in models.items()}


def _price(path: Path, model: str, row: object) -> Price:
    expected = "expected input, output and optionally batch_input, batch_output, in USD per million tokens"
    if not isinstance(row, dict):
        raise FaithLensError(f"{path}: models.{model!r}: {expected}", "fix the row")
    try:
        price = Price(model=model, **row)
    except TypeError:
        raise FaithLensError(f"{path}: models.{model!r}: {expected}", "fix the row") from None
    if any(isinstance(v, bool) or not isinstance(v, int | float) or v < 0 for v in row.values()):
        raise FaithLensError(f"{path}: models.{model!r}: prices must be non-negative numbers", "fix the row")
    return price


SNAPSHOT = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8}|\d{4})$")
"""A dated snapshot suffix: gpt-4o-2024-08-06, claude-3-opus-20240229, gpt-4-0613."""


def price_for(model: str, prices: dict[str, Price]) -> Price | None:
    """The row for `model`: its exact name, else the name without a dated snapshot suffix. Any other
    model is unpriced: gpt-4.1-nano is not gpt-4.1."""
    if model in prices:
        return prices[model]
    return prices.get(SNAPSHOT.sub("", model))


def cost_usd(
    model: str, input_tokens: int | None, output_tokens: int | None, prices: dict[str, Price], batch: bool = False
) -> float | None:
    """Dollars for one answer; None when the model has no price or the provider reported no usage."""
    price = price_for(model, prices)
    if price is None or input_tokens is None or output_tokens is None:
        return None
    per_input = price.batch_input if batch and price.batch_input is not None else price.input
    per_output = price.batch_output if batch and price.batch_output is not None else price.output
    return (input_tokens * per_input + output_tokens * per_output) / PER_TOKENS


def describe_cost(cost: float | None) -> str:
    """How a cost reads on the page and in the CLI's text output."""
    if cost is None:
        return "cost unknown"
    return f"${cost:.4f}" if cost < 1 else f"${cost:,.2f}"
