"""What a coder may not look at while they code blind: the labels (gold, evaluators', models', other
coders') of the units of an open blind session they code in.

The coding pages already hide them (`faithlens.coding.visible`); this is the same rule for the pages
that show labels of any unit. Explore leaves the session's summaries out of its list and refuses to
open one; Compare and Errors, whose figures and unit lists cover every unit of a dataset, and Rewrite,
which shows any sentence's stored rewrites, refuse the dataset; label downloads wait. All of it until an admin closes the session. Adjudicators and admins,
who see every label of a blind session anyway (`read_blind_others`), are never blindfolded.

Other coders' codes need no such rule: a blind session writes them as label sources only when it
closes (`faithlens.coding.closing`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb

from faithlens import access
from faithlens.coding.sessions import Session, is_member, listed
from faithlens.coding.visible import sees_others
from faithlens.unit_filter import level_noun

_WAIT = "the labels show once an admin closes the session; read the units on the Code page meanwhile"


@dataclass(frozen=True)
class Blind:
    """One open blind session the actor codes in: its name, dataset and the summaries its units are in."""

    session: str
    dataset: str
    level: str
    units: int
    summaries: frozenset[str]


@dataclass(frozen=True)
class Blindfold:
    """The open blind sessions the acting person codes in (none for most people)."""

    actor: access.Actor
    blinds: tuple[Blind, ...] = field(default=())

    def _of(self, dataset: str) -> tuple[Blind, ...]:
        return tuple(b for b in self.blinds if b.dataset == dataset)

    def hidden_summaries(self, dataset: str) -> frozenset[str]:
        """The summaries of `dataset` whose labels the actor may not see."""
        return frozenset().union(*(b.summaries for b in self._of(dataset)))

    def summary_refusal(self, dataset: str, summary_id: str) -> access.PermissionDenied | None:
        """Why the actor may not open this summary's labels (None: they may)."""
        found = next((b for b in self._of(dataset) if summary_id in b.summaries), None)
        if found is None:
            return None
        why = f"you code this summary blind in session {found.session}"
        return access.PermissionDenied(self.actor, "read_blind_others", why, _WAIT)

    def dataset_refusal(self, dataset: str) -> access.PermissionDenied | None:
        """Why the actor may not see figures or downloads over every unit of `dataset` (None: they may)."""
        found = self._of(dataset)
        if not found:
            return None
        names = ", ".join(b.session for b in found)
        units = sum(b.units for b in found)
        noun = level_noun(found[0].level, units) if len({b.level for b in found}) == 1 else "units"
        why = f"you code {units:,} {noun} of {dataset} blind (session {names}), and this page shows their labels"
        return access.PermissionDenied(self.actor, "read_blind_others", why, _WAIT)

    def left_out_note(self, dataset: str, left_out: int) -> str:
        """Why a list of `dataset`'s summaries left `left_out` of them out."""
        names = ", ".join(b.session for b in self._of(dataset))
        noun = "summary" if left_out == 1 else "summaries"
        return (
            f"{left_out:,} {noun} left out: you code them blind in session {names}; they return, with their labels, "
            "once an admin closes it."
        )

    def require_dataset(self, dataset: str) -> None:
        refused = self.dataset_refusal(dataset)
        if refused is not None:
            raise refused


def _summaries(cur: duckdb.DuckDBPyConnection, session: Session) -> frozenset[str]:
    if session.level == "summary":
        return session.unit_set
    rows = cur.execute(
        "SELECT DISTINCT summary_id FROM unit WHERE dataset = ? AND unit_id IN (SELECT unnest(?::VARCHAR[]))",
        [session.dataset, list(session.units)],
    ).fetchall()
    return frozenset(row[0] for row in rows)


def blindfold(cur: duckdb.DuckDBPyConnection, actor: access.Actor) -> Blindfold:
    """The acting person's blindfold: every open blind session they code in, unless they may see its labels."""
    blinds = tuple(
        Blind(session.name, session.dataset, session.level, len(session.units), _summaries(cur, session))
        for session in listed(cur)
        if session.blind
        and not session.closed
        and not sees_others(actor, session)
        and is_member(cur, session, actor.id)
    )
    return Blindfold(actor, blinds)
