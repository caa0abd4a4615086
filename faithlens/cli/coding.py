"""`python -m faithlens coding import|agreement|export|sessions`: coding sessions from the command line.

`import` writes (codes from a CSV, in one transaction), so it needs the app stopped, like `import`;
the others only read, so they work while the app runs (from a snapshot, said on stderr). The CLI acts
as FAITHLENS_USER (or `--as NAME`) with admin rights, so `import` may record the codes of the CSV's
coders (its `coder` column) and make the session; each event records who imported it.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from faithlens import config, store
from faithlens.cli import options
from faithlens.cli.options import add_db, reading
from faithlens.coding import comments, exchange, report, sessions
from faithlens.errors import FaithLensError
from faithlens.vocab import LEVELS

PAIR_COLUMNS = ("a", "b", "n", "kappa")
CODE_COLUMNS = ("code", "units", "complete", "fleiss_kappa", "krippendorff_alpha", "pct_all_agree")


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    """The options of `coding import|agreement|export|sessions` (`faithlens.cli.COMMANDS`)."""
    options = {
        "import": _import_options,
        "agreement": _agreement_options,
        "export": _export_options,
        "sessions": _sessions_options,
    }
    options[name](parser)


def _import_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file",
        help="CSV with a header unit_id, coder, code and optionally note: each row is the named coder's code "
        "(the CLI is an admin, who may record other people's codes); the import is recorded as made by you",
    )
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--session", required=True, help="the session to add to; made when there is none")
    parser.add_argument("--codebook", required=True, help="a built-in or saved codebook, by name")
    parser.add_argument("--level", choices=LEVELS, help="the units' level (default: read from the unit ids)")
    parser.add_argument("--json", action="store_true", help="print what was imported as JSON")
    add_db(parser)
    options.add_actor(parser)
    parser.set_defaults(run=_import)


def _agreement_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--session", required=True)
    parser.add_argument("--json", action="store_true", help="print the JSON object")
    add_db(parser)
    parser.set_defaults(run=_agreement)


def _export_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--session", required=True)
    parser.add_argument("--format", required=True, choices=exchange.FORMATS)
    parser.add_argument("--out", required=True, help="the file to write (replaced if it exists)")
    parser.add_argument(
        "--what",
        choices=exchange.EXPORTS,
        default="codes",
        help="codes (default: one row per coder and unit) or comments (the discussion: one row per comment)",
    )
    add_db(parser)
    parser.set_defaults(run=_export)


def _sessions_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", help="only this dataset's sessions")
    parser.add_argument("--json", action="store_true", help="print JSON rows")
    add_db(parser)
    parser.set_defaults(run=_sessions)


@contextmanager
def _reading(db: str | None) -> Iterator[duckdb.DuckDBPyConnection]:
    """`reading`, saying so when the database predates coding sessions (read-only opens add no tables)."""
    with reading(db) as conn:
        found = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'coding_session'"
        ).fetchone()[0]
        if not found:
            raise FaithLensError(
                "this database has no coding sessions yet (it predates them)",
                "import codes with `coding import`, or open the app once, to add the coding tables",
            )
        yield conn


def _import(args: argparse.Namespace) -> int:
    conn = store.connect(config.db_path(args.db), create=False)
    try:
        store.catch_up(conn)
        done = exchange.import_codes(
            conn, options.actor(args), Path(args.file), args.dataset, args.session, args.codebook, level=args.level
        )
    finally:
        store.close(conn)
    session = done.session
    if args.json:
        record = {
            "session": session.name,
            "dataset": session.dataset,
            "level": session.level,
            "codebook": session.codebook,
            "codebook_version": session.codebook_version,
            "rows": done.rows,
            "coders": list(done.coders),
            "created": done.created,
        }
        print(json.dumps(record, indent=2, ensure_ascii=False))
        return 0
    made = "made session" if done.created else "added to session"
    print(
        f"imported {done.rows:,} codes by {len(done.coders)} coders ({', '.join(done.coders)}); {made} "
        f"{session.name!r} ({session.dataset}, {len(session.units):,} {session.level} units, "
        f"{session.codebook}@{session.codebook_version})"
    )
    return 0


def _agreement(args: argparse.Namespace) -> int:
    with _reading(args.db) as conn:
        found = report.session_agreement(conn, sessions.get(conn, args.session)).as_dict()
    if args.json:
        print(json.dumps(found, indent=2, ensure_ascii=False))
        return 0
    print(_agreement_text(found))
    return 0


def _agreement_text(found: dict) -> str:
    lines = [
        f"session {found['session']}: {found['units']:,} of {found['session_units']:,} units coded, "
        f"{found['complete']:,} by every coder ({', '.join(found['coders']) or 'no coders'})",
        f"Fleiss' kappa {_cell(found['fleiss_kappa'])}, Krippendorff's alpha {_cell(found['krippendorff_alpha'])}, "
        f"all agree {_cell(found['pct_all_agree'])}%",
        "",
        "coder pairs (Cohen's kappa over the units both coded):",
        _table(found["pairs"], PAIR_COLUMNS),
        "",
        "per code (chose it or not):",
        _table(found["per_code"], CODE_COLUMNS),
    ]
    if "sentences" in found:
        sentences = found["sentences"]
        lines += [
            "",
            f"sentences: {sentences['units']:,} coded, Fleiss' kappa {_cell(sentences['fleiss_kappa'])}, "
            f"Krippendorff's alpha {_cell(sentences['krippendorff_alpha'])}",
        ]
    if "arm" in found:
        lines += ["", "ARM:", *(f"  {key}: {_cell(value)}" for key, value in found["arm"].items())]
    return "\n".join(lines)


def _cell(value: object) -> str:
    """A number as a table shows it: floats to 3 significant digits, undefined as 'n/a'."""
    if value is None:
        return "n/a"
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def _table(rows: list[dict], columns: tuple[str, ...]) -> str:
    if not rows:
        return "  (none)"
    cells = [[_cell(row[column]) for column in columns] for row in rows]
    widths = [max(len(column), *(len(line[i]) for line in cells)) for i, column in enumerate(columns)]
    lines = [columns, *cells]
    return "\n".join(
        ("  " + "  ".join(v.ljust(w) for v, w in zip(line, widths, strict=True))).rstrip() for line in lines
    )


def _export(args: argparse.Namespace) -> int:
    out = Path(args.out)
    with _reading(args.db) as conn:
        found = sessions.get(conn, args.session)
        written = exchange.export(conn, options.actor(args), found, args.format, out, args.what)
        talked = len(comments.export_rows(conn, found)) if args.what == "codes" else 0
    print(f"wrote {written:,} {'rows' if args.what == 'codes' else 'comments'} to {out}")
    if talked:
        print(f"the session also has {talked:,} comments: export them with --what comments")
    return 0


def _sessions(args: argparse.Namespace) -> int:
    with _reading(args.db) as conn:
        with conn.cursor() as cur:
            found = sessions.listed(cur, args.dataset)
        rows = [_session_row(session, report.progress(conn, session)) for session in found]
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    if not rows:
        print("no coding sessions" + (f" of {args.dataset}" if args.dataset else ""))
    for row in rows:
        coded = ", ".join(f"{coder} {n:,}" for coder, n in row["coded"].items()) or "no coders yet"
        print(
            f"{row['name']}: {row['dataset']}, {row['level']}, {row['mode']}, "
            f"{row['codebook']}@{row['codebook_version']}, {row['units']:,} units; coded: {coded}"
            + (f"; closed by {row['closed_by']}" if row["closed_by"] else "")
        )
    return 0


def _session_row(session: sessions.Session, progress: list[report.Progress]) -> dict:
    return {
        "name": session.name,
        "dataset": session.dataset,
        "level": session.level,
        "mode": session.mode,
        "codebook": session.codebook,
        "codebook_version": session.codebook_version,
        "units": len(session.units),
        "coders": [p.coder for p in progress],
        "coded": {p.coder: p.coded for p in progress},
        "closed_by": session.closed_by,
    }
