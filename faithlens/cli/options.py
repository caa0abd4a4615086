"""Options several commands share."""

from __future__ import annotations

import argparse


def add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", help="database file (default: $FAITHLENS_DB or data/faithlens.duckdb)")
