"""`make bench`: speed figures measured on this machine, each against its budget.

Every `bench/bench_*.py` module exposes `run() -> list[Measure]`; `python -m bench [NAME ...]`
runs them all (or the named ones) and prints one table. Budgets are reported, not asserted by tests.
"""
