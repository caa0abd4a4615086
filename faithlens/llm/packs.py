"""Demo packs: the stored answers about chosen units carried to another database in one file.

A presenter asks beforehand, with keys, at the office (Explore, Rewrite, a run), exports the answers
about the summaries of the demo (every answer about the summary, its sentences and its claims: the
verdicts, ARM's rewrites and their explanation points, every sample), and imports the file on the
conference laptop. There, asking the same thing finds the answer in the cache and makes no call: the
request key is the same, since it hashes what is sent (provider, base URL, model, prompt version,
parameters, texts), never the key or the machine.

An import is checked in full first (`pack_file.read`, then every unit against this database), then
written in one transaction. It never overwrites: an answer already stored here under the same request
and sample is left as it is, and when it differs the result says so. Imported answers are recorded
as such (`llm_pack_call`, `llm_pack_import` with who imported it); they count toward no one's
spending here (`llm_call.person` stays NULL: bought elsewhere). Importing is a write, open to those
allowed `import_answers` (runners and admins).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import duckdb

from faithlens import access, store
from faithlens.errors import FaithLensError, InputError, NotFoundError
from faithlens.llm import ask, methods, pack_file, prompts, providers

SUFFIX = ".faithlens-pack.json"
_JSON_COLUMNS = ("parameters", "request", "parsed")


# ----------------------------------------------------------------------------------------------- export


@dataclass(frozen=True)
class Exported:
    data: bytes
    answers: int
    targets: int


def export(conn: duckdb.DuckDBPyConnection, dataset: str, summaries: list[str], units: list[str] = ()) -> Exported:
    """Every stored answer about `summaries` (each with its sentences and claims) and `units`, as a pack."""
    if not summaries and not units:
        raise FaithLensError("no summary or unit chosen", "name at least one summary (or unit) to pack")
    with conn.cursor() as cur:
        targets = _targets(cur, dataset, list(summaries), list(units))
        answers = _answers(cur, dataset, list(targets), [])
        shared = _points_keys(answers) - {answer["request_key"] for answer in answers}
        if shared:
            answers = _answers(cur, dataset, list(targets), sorted(shared))
            targets |= _texts(cur, dataset, [a["target_id"] for a in answers if a["target_id"] not in targets])
    if not answers:
        chosen = ", ".join([*summaries, *units])
        raise FaithLensError(
            f"no stored answer about {chosen} in {dataset}", "ask a model about it first (Explore, Rewrite or a run)"
        )
    asked = {answer["target_id"] for answer in answers}
    pack = {
        "format": pack_file.FORMAT,
        "version": pack_file.VERSION,
        "exported_at": datetime.now().isoformat(timespec="seconds"),
        "dataset": dataset,
        "summaries": list(summaries),
        "units": list(units),
        "targets": {target: text for target, text in targets.items() if target in asked},
        "answers": answers,
    }
    data = json.dumps(pack, ensure_ascii=False, indent=1).encode("utf-8")
    return Exported(data, len(answers), len(asked))


def export_to(
    conn: duckdb.DuckDBPyConnection, dataset: str, summaries: list[str], units: list[str], out: Path
) -> Exported:
    """`export`, written to `out` (replaced if it exists)."""
    if not out.parent.is_dir():
        raise FaithLensError(f"{out}: the folder {out.parent} does not exist", "create it first, or write elsewhere")
    exported = export(conn, dataset, summaries, units)
    out.write_bytes(exported.data)
    return exported


@dataclass(frozen=True)
class Answered:
    """A summary with stored answers about it (or its sentences and claims): what a pack of it holds."""

    summary_id: str
    title: str | None
    generator: str | None
    answers: int
    newest: str


def answered(cur: duckdb.DuckDBPyConnection, dataset: str) -> list[Answered]:
    """The dataset's summaries with stored answers, the most recently asked first."""
    return store.fetch_all(
        cur,
        Answered,
        """
        SELECT s.summary_id, d.title, s.model AS generator, count(*) AS answers,
               strftime(max(c.created_at), '%Y-%m-%d %H:%M') AS newest
        FROM llm_call c
        LEFT JOIN unit u ON u.dataset = c.dataset AND u.unit_id = c.target_id
        JOIN summary s ON s.dataset = c.dataset AND s.summary_id = coalesce(u.summary_id, c.target_id)
        LEFT JOIN document d ON d.dataset = s.dataset AND d.document_id = s.document_id
        WHERE c.dataset = ? GROUP BY ALL ORDER BY max(c.created_at) DESC, s.summary_id
        """,
        [dataset],
    )


def file_name(dataset: str, summaries: list[str]) -> str:
    first = summaries[0][:12] if summaries else "units"
    more = f"-and-{len(summaries) - 1}-more" if len(summaries) > 1 else ""
    return f"{dataset}-{first}{more}{SUFFIX}"


def _answers(cur: duckdb.DuckDBPyConnection, dataset: str, targets: list[str], keys: list[str]) -> list[dict]:
    """The stored answers about `targets`, and those to the requests `keys` whichever unit asked them."""
    rows = cur.execute(
        f"""
        SELECT {", ".join(pack_file.CALL_FIELDS)}, person AS asked_by, created_at::VARCHAR AS asked_at
        FROM llm_call WHERE dataset = ? AND (list_contains(?::VARCHAR[], target_id) OR list_contains(?::VARCHAR[], request_key))
        ORDER BY call_id
        """,
        [dataset, targets, keys],
    )
    names = [column[0] for column in rows.description]
    return [_decoded(dict(zip(names, row, strict=True))) for row in rows.fetchall()]


def _points_keys(answers: list[dict]) -> set[str]:
    """The request keys of ARM's explanation points (A.3) of the packed rewrites. Points are asked by
    their explanation, so another unit with the same explanation may have bought them: a replay of
    these rewrites looks them up by key, and the pack must hold them wherever they are stored."""
    template = prompts.load(methods.POINTS_PROMPT)
    keys = set()
    for answer in answers:
        explanation = answer["parsed"].get("explanation")
        method = methods.METHODS.get(answer["method"])
        if method is None or method.action != "rewrite" or answer["status"] != "ok" or not explanation:
            continue
        endpoint = providers.Endpoint(answer["provider"], answer["base_url"])
        what = ask.Ask(template.name, answer["provider"], answer["model"], base_url=answer["base_url"])
        keys.add(ask.render(endpoint, what, template, {"explanation": explanation}, answer["source"]).key)
    return keys


def _texts(cur: duckdb.DuckDBPyConnection, dataset: str, ids: list[str]) -> dict[str, str]:
    """{id: text} of these summaries and units."""
    return dict(
        cur.execute(
            """
            SELECT summary_id, text FROM summary WHERE dataset = $d AND list_contains($ids::VARCHAR[], summary_id)
            UNION ALL
            SELECT unit_id, text FROM unit WHERE dataset = $d AND list_contains($ids::VARCHAR[], unit_id)
            """,
            {"d": dataset, "ids": ids},
        ).fetchall()
    )


def _targets(cur: duckdb.DuckDBPyConnection, dataset: str, summaries: list[str], units: list[str]) -> dict[str, str]:
    """{target id: its text} of the chosen summaries, their sentences and claims, and the chosen units."""
    known = cur.execute("SELECT count(*) FROM dataset WHERE name = ?", [dataset]).fetchone()[0]
    if not known:
        names = ", ".join(row[0] for row in cur.execute("SELECT name FROM dataset ORDER BY name").fetchall())
        raise NotFoundError(f"no dataset {dataset!r}", f"use one of {names}")
    found = dict(
        cur.execute(
            "SELECT summary_id, text FROM summary WHERE dataset = ? AND list_contains(?::VARCHAR[], summary_id)",
            [dataset, summaries],
        ).fetchall()
    )
    missing = [s for s in summaries if s not in found]
    found |= dict(
        cur.execute(
            """
            SELECT unit_id, text FROM unit WHERE dataset = ?
              AND (list_contains(?::VARCHAR[], summary_id) OR list_contains(?::VARCHAR[], unit_id))
            """,
            [dataset, summaries, units],
        ).fetchall()
    )
    missing += [u for u in units if u not in found]
    if missing:
        raise NotFoundError(f"{dataset} has no summary or unit {missing[0]!r}", "use an id Explore shows in its URL")
    return found


def _decoded(row: dict) -> dict:
    """An llm_call row as a pack holds it: JSON columns as objects, the replies as a list."""
    return {**row, **{name: json.loads(row[name]) for name in _JSON_COLUMNS}, "replies": list(row["replies"])}


# ----------------------------------------------------------------------------------------------- import


@dataclass(frozen=True)
class Imported:
    """What an import did; `lines` says it in words."""

    name: str
    dataset: str
    answers: int
    added: int
    already: int
    differing: tuple[str, ...]
    """Units whose stored answer here differs from the pack's for the same request and sample: kept."""
    stale_prompts: tuple[str, ...]
    """Prompt files whose version here is not the pack's: those answers are stored but cannot replay."""
    endpoints: tuple[str, ...]

    def lines(self) -> list[str]:
        out = [
            f"{self.name}: {self.answers:,} answers about {self.dataset}: {self.added:,} added, "
            f"{self.already:,} already stored here, {len(self.differing):,} differ from the answer stored here "
            "(kept as stored, not overwritten)"
        ]
        if self.differing:
            shown = ", ".join(self.differing[:5]) + (" ..." if len(self.differing) > 5 else "")
            out.append(f"differ: {shown}")
        if self.stale_prompts:
            out.append(
                "these prompts are at another version here, so their answers will not replay: "
                + ", ".join(self.stale_prompts)
            )
        out.append(
            "they replay from the cache, with no call, when asked with the same provider, base URL and model: "
            + "; ".join(self.endpoints)
        )
        return out


def import_file(conn: duckdb.DuckDBPyConnection, path: Path, actor: access.Actor) -> Imported:
    access.require(actor, "import_answers")
    if not path.is_file():
        raise FaithLensError(f"{path}: no such file", "give the path of a pack written by `demo-pack export`")
    return import_pack(conn, path.name, path.read_bytes(), actor)


def import_pack(conn: duckdb.DuckDBPyConnection, name: str, data: bytes, actor: access.Actor) -> Imported:
    """Check that `actor` may import and the pack `data` (file `name`) in full, then store its answers in
    one transaction, recorded as imported by them."""
    access.require(actor, "import_answers")
    pack = pack_file.read(name, data)
    with conn.cursor() as cur:
        _check_targets(cur, pack)

    def body(cur: duckdb.DuckDBPyConnection) -> tuple[int, int, tuple[str, ...]]:
        added, already, differing = 0, 0, []
        for answer in pack.answers:
            held = cur.execute(
                "SELECT replies FROM llm_call WHERE request_key = ? AND sample = ?",
                [answer["request_key"], answer["sample"]],
            ).fetchone()
            if held is None:
                _insert(cur, pack, answer)
                added += 1
            elif list(held[0]) == answer["replies"]:
                already += 1
            else:
                differing.append(answer["target_id"])
        _record(cur, pack, added, already, len(differing), actor.id)
        return added, already, tuple(differing)

    added, already, differing = store.write_retrying(conn, f"demo pack {name}", body)
    return Imported(
        name, pack.dataset, len(pack.answers), added, already, differing, _stale_prompts(pack), _endpoints(pack)
    )


def _check_targets(cur: duckdb.DuckDBPyConnection, pack: pack_file.Pack) -> None:
    """Every unit the pack's answers are about exists here with the same text (the same dataset release)."""
    if not cur.execute("SELECT count(*) FROM dataset WHERE name = ?", [pack.dataset]).fetchone()[0]:
        raise InputError(pack.name, "", f"dataset {pack.dataset!r} is not in this database; expected it loaded first")
    here = _texts(cur, pack.dataset, list(pack.targets))
    for target, text in pack.targets.items():
        if target not in here:
            raise InputError(
                pack.name, f"unit {target}", f"not in {pack.dataset} here; expected a unit of this database"
            )
        if here[target] != text:
            raise InputError(
                pack.name, f"unit {target}", f"its text here differs from the pack's; expected the same {pack.dataset}"
            )


def _insert(cur: duckdb.DuckDBPyConnection, pack: pack_file.Pack, answer: dict) -> None:
    """One answer as an llm_call row (bought elsewhere: no person here) and its record of the pack."""
    call_id = store.next_id(cur, "llm_call_seq")
    values = [json.dumps(answer[f]) if f in _JSON_COLUMNS else answer[f] for f in pack_file.CALL_FIELDS]
    columns = ", ".join(pack_file.CALL_FIELDS)
    cur.execute(
        f"INSERT INTO llm_call (call_id, {columns}, created_at) VALUES (?{', ?' * len(values)}, ?)",
        [call_id, *values, answer["asked_at"]],
    )
    cur.execute(
        "INSERT INTO llm_pack_call (call_id, pack_sha256, file_name, asked_by) VALUES (?, ?, ?, ?)",
        [call_id, pack.sha256, pack.name, answer["asked_by"]],
    )


def _record(
    cur: duckdb.DuckDBPyConnection, pack: pack_file.Pack, added: int, already: int, differing: int, by: str
) -> None:
    cur.execute(
        """
        INSERT INTO llm_pack_import (pack_sha256, file_name, exported_at, dataset, answers, added, already, differing,
                                     imported_by, imported_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """,
        [
            pack.sha256,
            pack.name,
            pack.exported_at,
            pack.dataset,
            len(pack.answers),
            added,
            already,
            differing,
            by,
            store.stamp(),
        ],
    )


def _stale_prompts(pack: pack_file.Pack) -> tuple[str, ...]:
    """`name@version` of the pack's prompts that this code has at another version (or not at all)."""
    stale = []
    for name, version in sorted({(a["prompt_name"], a["prompt_version"]) for a in pack.answers}):
        try:
            here = prompts.load(name).version
        except FaithLensError:
            here = None
        if here != version:
            stale.append(f"{name}@{version} (here: {here or 'no such prompt'})")
    return tuple(stale)


def _endpoints(pack: pack_file.Pack) -> tuple[str, ...]:
    found = {(a["model"], a["provider"], a["base_url"]) for a in pack.answers}
    return tuple(
        f"{model} ({provider}{' at ' + base if base else ', its default URL'})"
        for model, provider, base in sorted(found, key=lambda item: (item[0], item[1], item[2] or ""))
    )
