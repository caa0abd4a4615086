"""The record every benchmark returns, and small timing helpers."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True)
class Measure:
    """One figure: what was timed, the value, its unit and the budget it must stay within (a ceiling,
    or with `at_least` a floor, for a figure such as a recall that must reach a goal)."""

    name: str
    value: float
    unit: str
    budget: float
    at_least: bool = False

    @property
    def ok(self) -> bool:
        return self.value >= self.budget if self.at_least else self.value <= self.budget


def median_ms(action: Callable[[], object], repeat: int = 7, warmup: int = 1) -> float:
    """Median wall time of `action` in milliseconds, after `warmup` untimed calls."""
    for _ in range(warmup):
        action()
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


@contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    """Settings (the database path, keys) set for a bench's pages, restored after it."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
