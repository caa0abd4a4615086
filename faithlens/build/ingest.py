"""Build or refresh the database from data/, and import single files. Each is one transaction.

Everything is parsed and validated in memory first; only then does one transaction replace the
affected rows, so a bad file leaves the database exactly as it was.
"""

from __future__ import annotations

import hashlib
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from faithlens import datasets as registry
from faithlens import store
from faithlens.build import alignment
from faithlens.datasets.bundle import Bundle, write_bundle
from faithlens.errors import FaithLensError, InputError
from faithlens.store.claim_sets import claim_set_sql

BUNDLED_TABLES = (
    "document",
    "summary",
    "key_point",
    "alignment",
    "alignment_ranker",
    "passage_embedding",
    "alignment_job",
    "ingest_log",
)
"""A dataset's rows that a rebuild of its bundled files replaces whole (units, labels and tags only in part)."""
DATASET_TABLES = (*BUNDLED_TABLES, "unit", "label", "label_source", "tag")
BUILD_HASH_KEY = "build_hash"
EXTRACTED_CLAIM = claim_set_sql()
"""Non-NULL for a claim a model extracted (`faithlens.llm.records`): kept when a bundled dataset is rebuilt."""
PACKAGE = Path(__file__).resolve().parent.parent
DATASET_NAME = re.compile(r"[A-Za-z0-9_-]+")
BUILDER_FILES = ("store/schema.sql", "store/sql.py", "build/*.py", "datasets/*.py")
"""The code that decides what a built database holds, relative to the package."""


@dataclass
class Report:
    """What an ingest or import did, for the CLI to print."""

    datasets: dict[str, dict[str, int]] = field(default_factory=dict)
    log: list[tuple[str, str, str, str]] = field(default_factory=list)
    seconds: float = 0.0
    skipped: bool = False

    def add(self, dataset: str, bundle: Bundle) -> None:
        self.datasets[dataset] = {table: bundle.count(table) for table in ("document", "summary", "unit", "label")}
        self.log.extend(
            (row["kind"], row["file"], row["position"], row["message"]) for row in bundle.rows["ingest_log"]
        )


def build_hash(data_dir: Path) -> str:
    """Content hash of every bundled raw file and of the code that builds the database from them,
    so a rebuild is due when either changes (a new loader or alignment must reach old databases)."""
    digest = hashlib.sha256()
    builders = [path for pattern in BUILDER_FILES for path in sorted(PACKAGE.glob(pattern))]
    raw_files = [p for item in registry.VENDORED for p in sorted((data_dir / item.folder).rglob("*")) if p.is_file()]
    for path, root in [(p, PACKAGE) for p in builders] + [(p, data_dir) for p in raw_files]:
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def is_stale(db_path: Path, data_dir: Path) -> bool:
    """True when the database is missing or was built from other raw files or by other loader code."""
    if not db_path.exists():
        return True
    conn = store.connect(db_path, read_only=True)
    try:
        return store.get_meta(conn, BUILD_HASH_KEY) != build_hash(data_dir)
    except duckdb.CatalogException:
        return True
    finally:
        conn.close()


def _delete_bundled(cur: duckdb.DuckDBPyConnection, dataset: str) -> list[tuple[str, str, str]]:
    """Remove a bundled dataset's own rows; returns imported texts to re-attach.

    Label sources imported onto the dataset (origin 'import') and their labels are kept, and so are
    LLM label sources (origin 'app') and the claim sets models extracted.
    """
    kept_texts = cur.execute(
        "SELECT document_id, text, text_origin FROM document WHERE dataset = ? AND text_origin IS NOT NULL", [dataset]
    ).fetchall()
    bundled_sources = "SELECT source FROM label_source WHERE dataset = ? AND origin = 'bundled'"
    cur.execute(f"DELETE FROM label WHERE dataset = ? AND source IN ({bundled_sources})", [dataset, dataset])
    cur.execute(f"DELETE FROM tag WHERE dataset = ? AND source IN ({bundled_sources})", [dataset, dataset])
    cur.execute("DELETE FROM label_source WHERE dataset = ? AND origin = 'bundled'", [dataset])
    for table in BUNDLED_TABLES:
        cur.execute(f"DELETE FROM {table} WHERE dataset = ?", [dataset])
    cur.execute(f"DELETE FROM unit WHERE dataset = ? AND {EXTRACTED_CLAIM} IS NULL", [dataset])
    cur.execute("DELETE FROM dataset WHERE name = ?", [dataset])
    return kept_texts


def _delete_dataset(cur: duckdb.DuckDBPyConnection, dataset: str) -> None:
    for table in DATASET_TABLES:
        cur.execute(f"DELETE FROM {table} WHERE dataset = ?", [dataset])
    cur.execute("DELETE FROM dataset WHERE name = ?", [dataset])


def _checkpoint_on_commit(conn: duckdb.DuckDBPyConnection) -> None:
    """Have the build's commit write its rows straight into the database file (the checkpoint a commit
    over the threshold runs) instead of into the WAL first and again at the CHECKPOINT after it: half
    the bytes written. The commit is as atomic and durable either way; the CHECKPOINT that follows
    still folds in any WAL a commit could not checkpoint."""
    conn.execute("SET checkpoint_threshold = '0b'")


Aligned = dict[str, list[tuple]]
"""document id -> its summary units' alignment rows by the default ranker, computed from a parsed bundle."""


def _write(cur: duckdb.DuckDBPyConnection, dataset: str, bundle: Bundle) -> None:
    """Insert the bundle, then align the summary units of every document it brought or gave text to."""
    write_bundle(cur, bundle)
    _align_written(cur, dataset, bundle)


def _align_written(
    cur: duckdb.DuckDBPyConnection, dataset: str, bundle: Bundle, aligned: Aligned | None = None
) -> None:
    """Align, by the default ranker, the summary units of every document the written bundle brought or
    gave text to; `aligned` holds alignments computed from the bundle meanwhile, stored where no text
    was re-attached."""
    touched = {row["document_id"] for table in ("document", "document_text") for row in bundle.rows[table]}
    if aligned is not None:
        done = aligned.keys() - {row["document_id"] for row in bundle.rows["document_text"]}
        alignment.store_records(cur, [record for document in sorted(done) for record in aligned[document]])
        alignment.record_ranker(cur, dataset, done, alignment.DEFAULT)
        touched -= done
    alignment.align_documents(cur, dataset, touched)


def _align_bundles(bundles: dict[str, Bundle]) -> dict[str, Aligned]:
    """Each bundle's alignments, computed from its rows alone: ingest runs this on a thread while it writes
    the bundles (DuckDB's inserts and rapidfuzz's scoring work without Python's lock)."""
    return {
        name: {document[0]: alignment.aligned(name, [document]) for document in alignment.bundle_documents(bundle.rows)}
        for name, bundle in bundles.items()
    }


def _load_vendored(data_dir: Path, report: Report) -> dict[str, Bundle]:
    """Parse and check every vendored benchmark in memory (nothing is written yet)."""
    bundles = {}
    for item in registry.VENDORED:
        folder = data_dir / item.folder
        if not folder.is_dir():
            raise InputError(
                str(folder), "", f"missing folder; expected the vendored {item.name} files (see data/README.md)"
            )
        bundle = item.load(folder, item.name)
        bundle.add(
            "dataset",
            name=item.name,
            format=registry.format_of(item),
            origin="bundled",
            source_files=[str(folder)],
            description=item.description,
            license=item.license,
            citation=item.citation,
        )
        bundles[item.name] = bundle
        report.add(item.name, bundle)
    return bundles


def _load_and_open(
    data_dir: Path, db_path: Path, report: Report
) -> tuple[dict[str, Bundle], duckdb.DuckDBPyConnection]:
    """The parsed bundles and the open database. A new database file gets its schema on another
    thread while the files are parsed (DuckDB works without holding Python's lock), and is removed
    again when a file does not parse; an existing one is opened only once every file parsed."""
    if db_path.exists():
        bundles = _load_vendored(data_dir, report)
        return bundles, store.connect(db_path)
    with ThreadPoolExecutor(max_workers=1) as pool:
        opening = pool.submit(store.connect, db_path)
        try:
            bundles = _load_vendored(data_dir, report)
        except BaseException:
            if opening.exception() is None:
                store.close(opening.result())
                for path in (db_path, db_path.with_name(db_path.name + ".wal")):
                    path.unlink(missing_ok=True)
            raise
        return bundles, opening.result()


def ingest(db_path: Path, data_dir: Path, only_if_stale: bool = False) -> Report:
    """Build or refresh every vendored benchmark from `data_dir` in one transaction."""
    started = time.perf_counter()
    report = Report()
    if only_if_stale and not is_stale(db_path, data_dir):
        report.skipped = True
        return report
    bundles, conn = _load_and_open(data_dir, db_path, report)
    digest = build_hash(data_dir)
    try:
        _checkpoint_on_commit(conn)
        with ThreadPoolExecutor(max_workers=1) as pool, store.write(conn, "ingest", local=True) as cur:
            aligning = pool.submit(_align_bundles, bundles)
            for name, bundle in bundles.items():
                for document_id, text, origin in _delete_bundled(cur, name):
                    bundle.add("document_text", document_id=document_id, text=text, text_origin=origin)
                write_bundle(cur, bundle)
            for name, bundle in bundles.items():
                _align_written(cur, name, bundle, aligning.result()[name])
            store.set_meta(cur, BUILD_HASH_KEY, digest)
        conn.execute("CHECKPOINT")
    finally:
        store.close(conn)
    report.seconds = time.perf_counter() - started
    return report


def dataset_name(fmt: registry.Adapter, path: Path, given: str | None) -> str:
    """The dataset an import creates: `given`, else from the file name; letters, digits, - and _ only."""
    name = given or fmt.default_dataset(path)
    if not fmt.attaches and not DATASET_NAME.fullmatch(name):
        origin = "" if given else " (taken from the file name)"
        raise FaithLensError(
            f"dataset name {name!r}{origin} is not allowed; expected letters, digits, - and _ only",
            "pass --name NAME",
        )
    return name


def _refuse_unused(fmt: registry.Adapter, options: dict[str, str | None]) -> None:
    """An option the format does not read would be silently ignored: refuse it instead."""
    unused = [f"--{option}" for option, value in options.items() if value is not None and option not in fmt.options]
    if unused:
        raise FaithLensError(f"{', '.join(unused)} does not apply to --format {fmt.name}", "leave it out")


def import_file(
    db_path: Path,
    path: Path,
    format_name: str,
    dataset: str | None = None,
    source: str | None = None,
    *,
    corpus: str | None = None,
    split: str | None = None,
) -> Report:
    """Add one file as dataset `dataset` (or attach it to one), in one transaction. The options
    `source`, `corpus` and `split` go to the formats that read them; the others refuse them."""
    started = time.perf_counter()
    fmt = registry.import_format(format_name)
    _refuse_unused(fmt, {"source": source, "corpus": corpus, "split": split})
    if not path.exists():
        raise InputError(str(path), "", "file not found")
    dataset = dataset_name(fmt, path, dataset)
    report = Report()
    conn = store.connect(db_path)
    try:
        _checkpoint_on_commit(conn)
        with store.write(conn, f"import {dataset}", local=True) as cur:
            existing = cur.execute("SELECT origin FROM dataset WHERE name = ?", [dataset]).fetchone()
            if fmt.attaches and existing is None:
                raise FaithLensError(
                    f"no dataset named {dataset!r} to attach {path} to", "load it first or pass --name DATASET"
                )
            if not fmt.attaches and existing is not None and existing[0] == "bundled":
                raise FaithLensError(
                    f"dataset {dataset!r} is a bundled benchmark", "pass --name NEW_NAME to import beside it"
                )
            if not fmt.attaches and existing is not None and store.is_replica(conn):
                raise FaithLensError(
                    f"dataset {dataset!r} is loaded already, and this database is a replica of a team store: "
                    "importing it again would replace its codes and LLM labels on this server only",
                    "pass --name NEW_NAME to import it beside the old one",
                )
            bundle = fmt.load(registry.ImportRequest(path, dataset, cur, source, corpus, split))
            if fmt.attaches:
                for row in bundle.rows["label_source"]:
                    cur.execute("DELETE FROM label WHERE dataset = ? AND source = ?", [dataset, row["source"]])
                    cur.execute("DELETE FROM label_source WHERE dataset = ? AND source = ?", [dataset, row["source"]])
            else:
                _delete_dataset(cur, dataset)
                bundle.add("dataset", name=dataset, format=fmt.name, origin="import", source_files=[str(path)])
            _write(cur, dataset, bundle)
        conn.execute("CHECKPOINT")
    finally:
        store.close(conn)
    report.add(dataset, bundle)
    report.seconds = time.perf_counter() - started
    return report
