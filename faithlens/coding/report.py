"""What a session has produced: each coder's progress, agreement overall and per code (and for
line-by-line, on the sentences too), ARM's tables (Table 4: agreement and faithful by original vs
rewritten claim, preferred; Table 5: % important, % none important, % wrong, % none wrong, for each
coder's marks and by majority vote), and the disagreements an adjudicator settles."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import duckdb

from faithlens import access
from faithlens.coding import agreement, events, library, modes
from faithlens.coding.codebook import Codebook
from faithlens.coding.sessions import ADJUDICATED, Session, coders


@dataclass(frozen=True)
class Progress:
    coder: str
    coded: int
    total: int


@dataclass(frozen=True)
class SessionAgreement:
    session: str
    session_units: int
    overall: agreement.Agreement
    per_code: tuple[tuple[str, agreement.Agreement], ...]
    sentences: agreement.Agreement | None = None
    """Line-by-line: agreement on the summaries' sentences (StorySumm's level), as `overall` on the summaries."""
    sentence_per_code: tuple[tuple[str, agreement.Agreement], ...] = ()
    arm: dict[str, float | int | None] = field(default_factory=dict)

    def as_dict(self) -> dict:
        out = {"session": self.session, "session_units": self.session_units, **self.overall.as_dict()}
        out["per_code"] = [{"code": key, **found.as_dict()} for key, found in self.per_code]
        if self.sentences is not None:
            out["sentences"] = self.sentences.as_dict()
            out["sentences"]["per_code"] = [{"code": key, **found.as_dict()} for key, found in self.sentence_per_code]
        if self.arm:
            out["arm"] = dict(self.arm)
        return out


def progress(conn: duckdb.DuckDBPyConnection, session: Session) -> list[Progress]:
    """Units coded by each coder (invited, joined or with codes), of the session's units."""
    with conn.cursor() as cur:
        names = coders(cur, session)
    done = Counter(coder for by_coder in events.current_codes(conn, session).values() for coder in by_coder)
    return [Progress(coder, done[coder], len(session.units)) for coder in names]


def code_value(codes: tuple[str, ...]) -> str:
    """One categorical value per coder and unit: the code, or for multi-choice the chosen set."""
    return "|".join(codes)


def sentence_codes(current: dict) -> dict[str, dict[str, str]]:
    """Line-by-line: sentence -> coder -> the code the coder gave that sentence (from `events.current`)."""
    table: dict[str, dict[str, str]] = {}
    for (coder, _), code in current.items():
        if coder != ADJUDICATED:
            for uid, part in ((code.detail or {}).get("sentences") or {}).items():
                table.setdefault(uid, {})[coder] = part["code"]
    return table


def session_agreement(conn: duckdb.DuckDBPyConnection, session: Session) -> SessionAgreement:
    with conn.cursor() as cur:
        book = library.get(cur, session.codebook, session.codebook_version)
    table = events.current_codes(conn, session)
    detailed = session.mode != "codes"
    current = events.current(conn, session) if detailed else {}
    overall, per_code = agreement.with_per_code(table, modes.offered_codes(session.mode, book))
    sentences, sentence_per_code = None, []
    if session.mode == "line-by-line":
        sentences, sentence_per_code = agreement.with_per_code(sentence_codes(current), book.keys)
    return SessionAgreement(
        session=session.name,
        session_units=len(session.units),
        overall=overall,
        per_code=tuple(per_code),
        sentences=sentences,
        sentence_per_code=tuple(sentence_per_code),
        arm=_arm(session, book, current) if detailed else {},
    )


def _arm(session: Session, book: Codebook, current: dict) -> dict[str, float | int | None]:
    if session.mode == "arm-faithfulness":
        return _arm_faithfulness(book, current)
    if session.mode == "arm-preference":
        return {**_arm_preference(current), **explanation_points(current), **majority_points(current)}
    return {}


def _pct(part: int, whole: int) -> float | None:
    return 100 * part / whole if whole else None


def _arm_faithfulness(book: Codebook, current: dict) -> dict[str, float | int | None]:
    """ARM Table 4 by the variant shown: agreement (every coder gave the same label; units with 2+
    coders) and faithful (more than half of the coders said faithful)."""
    by_unit: dict[str, list] = {}
    for (coder, unit), code in current.items():
        if coder != ADJUDICATED:
            by_unit.setdefault(unit, []).append(code)
    out: dict[str, float | int | None] = {}
    for variant in (modes.ORIGINAL, modes.REWRITE):
        units = [codes for codes in by_unit.values() if (codes[0].detail or {}).get("shown") == variant]
        several = [codes for codes in units if len(codes) > 1]
        agree = sum(len({c.codes for c in codes}) == 1 for codes in several)
        faithful = sum(
            2 * sum(book.code(c.codes[0]).verdict == "faithful" for c in codes) > len(codes) for codes in units
        )
        out |= {
            f"{variant}_units": len(units),
            f"{variant}_pct_all_agree": _pct(agree, len(several)),
            f"{variant}_pct_faithful": _pct(faithful, len(units)),
        }
    return out


def _arm_preference(current: dict) -> dict[str, float | int | None]:
    """ARM Table 4's Preferred: of the units judged, % whose coders' majority (the most common choice, no
    tie) preferred each variant, as the paper's "percent of each claim type" over its 91 claims; how many
    units a variant won, and how many none did (the majority chose Neither, or a tie); and % of units (2+
    coders) where every coder chose the same."""
    by_unit: dict[str, list[str]] = {}
    for (coder, unit), code in current.items():
        if coder != ADJUDICATED:
            by_unit.setdefault(unit, []).append(code.codes[0])
    several = [codes for codes in by_unit.values() if len(codes) > 1]
    majority = Counter()
    for codes in by_unit.values():
        (top, count), *rest = Counter(codes).most_common()
        if not rest or rest[0][1] < count:
            majority[top] += 1
    preferred = majority[modes.REWRITE] + majority[modes.ORIGINAL]
    return {
        "preference_units": len(by_unit),
        "preferred_units": preferred,
        "no_preference_units": len(by_unit) - preferred,
        "pct_rewrite_preferred": _pct(majority[modes.REWRITE], len(by_unit)),
        "pct_original_preferred": _pct(majority[modes.ORIGINAL], len(by_unit)),
        "preference_pct_all_agree": _pct(sum(len(set(c)) == 1 for c in several), len(several)),
    }


def explanation_points(current: dict) -> dict[str, float | int | None]:
    """ARM section 4.3 over every coder's marked explanation E (the set R): % important is the mean
    share of IMPORTANT points, % none important the share of E with no IMPORTANT point; likewise WRONG.
    Table 5's "Individual" row."""
    marked = [
        code.detail["points"]
        for (coder, _), code in current.items()
        if coder != ADJUDICATED and (code.detail or {}).get("points")
    ]
    return _point_shares(marked, "")


def majority_points(current: dict) -> dict[str, float | int | None]:
    """Table 5's "Maj. vote" row: the same figures over one explanation per rewrite, each point carrying
    the mark that more than half of the unit's coders gave it (none when no mark has a majority). A
    coder who preferred the original or neither marked no point, so gave it no mark: with three coders
    a point is IMPORTANT by majority when two or three marked it so. R is the rewrites at least one
    coder marked.

    The paper ("labeled as IMPORTANT by majority vote", section 5.4) states neither choice; its figures
    fit both. Its majority row is over 82 explanations (20/82 = 24.39% none important, 81/82 = 98.78%
    none wrong) of its 91 rewritten claims (Table 4: 44 shown as written, 47 as the rewrite): the
    rewrites someone marked. Counting the coders who marked nothing keeps a point only one of three
    marked IMPORTANT from being IMPORTANT by majority, which fits "none important" rising from 5.29%
    of the 189 individual explanations (10/189) to 24.39% by majority."""
    by_unit: dict[str, list[list[str] | None]] = {}
    for (coder, unit), code in current.items():
        if coder != ADJUDICATED:
            by_unit.setdefault(unit, []).append((code.detail or {}).get("points"))
    voted = []
    for marks in by_unit.values():
        marked = [points for points in marks if points]
        if marked:
            voted.append([_majority_mark(marked, index, len(marks)) for index in range(len(marked[0]))])
    return _point_shares(voted, "majority_")


def _majority_mark(marked: list[list[str]], index: int, coders: int) -> str | None:
    """The mark more than half of the unit's `coders` gave point `index`, or None."""
    given = Counter(points[index] for points in marked if index < len(points))
    mark, count = given.most_common(1)[0] if given else (None, 0)
    return mark if 2 * count > coders else None


def _point_shares(explanations: list[list[str | None]], prefix: str) -> dict[str, float | int | None]:
    """% important, % none important, % wrong, % none wrong over the explanations R, as section 4.3
    defines them, keyed `<prefix>pct_important` etc., with `<prefix>explanations` = |R|."""
    out: dict[str, float | int | None] = {f"{prefix}explanations": len(explanations)}
    for mark, name in (("IMPORTANT", "important"), ("WRONG", "wrong")):
        share = sum(points.count(mark) / len(points) for points in explanations)
        having = sum(mark in points for points in explanations)
        out[f"{prefix}pct_{name}"] = _pct(share, len(explanations))
        out[f"{prefix}pct_none_{name}"] = 100 - _pct(having, len(explanations)) if explanations else None
    return out


@dataclass(frozen=True)
class Disagreement:
    unit: str
    codes: dict[str, events.Current]
    adjudicated: events.Current | None


def disagreements(conn: duckdb.DuckDBPyConnection, session: Session) -> list[Disagreement]:
    """Units two or more coders coded differently, in reading order, with the adjudicated code if any."""
    current = events.current(conn, session)
    by_unit: dict[str, dict[str, events.Current]] = {}
    for (coder, unit), code in current.items():
        if coder != ADJUDICATED:
            by_unit.setdefault(unit, {})[coder] = code
    out = []
    for unit in session.units:
        codes = by_unit.get(unit, {})
        if len(codes) > 1 and not agreement.all_agree({c: code_value(v.codes) for c, v in codes.items()}):
            out.append(Disagreement(unit, dict(sorted(codes.items())), current.get((ADJUDICATED, unit))))
    return out


def adjudicate(
    conn: duckdb.DuckDBPyConnection,
    actor: access.Actor,
    session: Session,
    unit: str,
    codes: tuple[str, ...],
    note: str | None,
) -> int:
    """Settle a unit (adjudicators and admins, while the session is open): the decision becomes the
    session's `adjudicated` label source, made by the actor."""
    access.require(actor, "adjudicate", closed=session.closed)
    sub = events.Submission(unit, codes, note)
    return events.store_code(conn, session, ADJUDICATED, sub, actor.id, "adjudicate")
