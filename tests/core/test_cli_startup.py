"""The command line loads only what the command run needs: `--help` lists every command from
`faithlens.cli.COMMANDS` alone, and a command imports its own module, never the libraries of the
others (scikit-learn alone cost every command a second). Timings are `make bench`'s (bench_cli)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from faithlens import cli

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("sklearn", "scipy", "pandas", "pyarrow", "duckdb", "numpy", "psycopg", "openai", "anthropic")
REPORT = """
import sys
from faithlens import cli
try:
    cli.main(sys.argv[1:])
except SystemExit:
    pass
print(" ".join(sorted(name for name in {heavy!r} if name in sys.modules)), file=sys.stderr)
"""


def _loaded(*args: str) -> set[str]:
    """The heavy libraries `python -m faithlens ARGS` has imported once it is done."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", REPORT.format(heavy=HEAVY), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    return set(done.stderr.splitlines()[-1].split())


def test_the_command_list_imports_no_library() -> None:
    assert _loaded("--help") == set()
    assert _loaded("llm", "--help") == set(), "a group's list of actions comes from COMMANDS too"


SLOW_TO_LOAD = {"sklearn", "scipy", "pandas", "pyarrow", "statsmodels", "psycopg", "openai", "anthropic"}
"""The libraries that cost a command's start a second or more between them; a command's own --help loads
none of them (its options come from light modules; its body imports the rest when it runs)."""


@pytest.mark.parametrize("command", cli.COMMANDS, ids=lambda c: " ".join(c.words))
def test_every_command_s_help_loads_no_slow_library(command: cli.Command) -> None:
    loaded = _loaded(*command.words, "--help")
    assert loaded & SLOW_TO_LOAD == set(), f"`{' '.join(command.words)} --help` imported {sorted(loaded)}"


def test_stats_and_ingest_load_neither_scikit_learn_nor_pandas(built_db: Path, tmp_path: Path) -> None:
    assert _loaded("stats", "--json", "--db", str(built_db)) == {"duckdb"}
    ingest = _loaded("ingest", "--db", str(tmp_path / "fresh.duckdb"))
    # scipy.sparse comes with bm25s: ingest aligns by BM25, the default ranker (issue 29)
    assert ingest & {"sklearn", "pandas", "pyarrow"} == set(), ingest
    assert (tmp_path / "fresh.duckdb").exists()


@pytest.mark.parametrize("command", cli.COMMANDS, ids=lambda c: " ".join(c.words))
def test_every_listed_command_has_its_options_and_its_body(command: cli.Command, capsys) -> None:
    """What COMMANDS lists is what runs: its module configures that command and names the function
    that does the work."""
    parser = cli.build_parser(list(command.words))
    with pytest.raises(SystemExit) as leaving:
        parser.parse_args([*command.words, "--help"])
    assert leaving.value.code == 0
    usage = capsys.readouterr().out
    assert usage.startswith(f"usage: python -m faithlens {' '.join(command.words)}")
    for word in command.words:
        (choices,) = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
        parser = choices.choices[word]
    run = parser.get_default("run")
    assert callable(run) and run.__module__ == f"faithlens.cli.{command.module}"
