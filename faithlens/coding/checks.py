"""The checks every code passes whatever the mode: known codes, each once, as many as the codebook's
choice takes, the none code alone, and an explanation where a code requires one."""

from __future__ import annotations

from faithlens.coding.codebook import Codebook
from faithlens.errors import FaithLensError


class CodingError(FaithLensError):
    """A code the session cannot take: an unknown code, a missing required explanation, a unit outside it."""


def require_note(book: Codebook, codes: tuple[str, ...], note: str | None, where: str) -> None:
    for key in codes:
        if book.code(key).explanation == "required" and not (note or "").strip():
            raise CodingError(f"{where}: the code {key!r} needs an explanation", "give an explanation (the note)")


def check_codes(book: Codebook, codes: tuple[str, ...], where: str) -> tuple[str, ...]:
    """The codes in codebook order, or a CodingError saying what is wrong with them."""
    unknown = [key for key in codes if key not in book.keys]
    if unknown:
        raise CodingError(f"{where}: unknown code {unknown[0]!r}", f"use one of {', '.join(book.keys)} ({book.name})")
    if len(set(codes)) != len(codes):
        raise CodingError(f"{where}: a code is given twice", "give each code once")
    if book.choice == "single" and len(codes) != 1:
        raise CodingError(f"{where}: {book.name} takes exactly one code, got {len(codes)}", "pick one code")
    if not codes:
        hint = f", {book.code(book.none).name} when none applies," if book.none else ""
        raise CodingError(f"{where}: no code chosen", f"pick at least one code{hint} or skip the unit")
    if book.none in codes and len(codes) > 1:
        raise CodingError(
            f"{where}: {book.code(book.none).name} excludes the other codes",
            f"choose {book.code(book.none).name} alone, or drop it",
        )
    return tuple(key for key in book.keys if key in codes)


def refuse_closed(session) -> None:
    """A closed session (`faithlens.coding.sessions.Session.closed`) takes no more codes."""
    if session.closed:
        raise CodingError(f"session {session.name!r} is closed", f"its codes are final ({session.closed_by} closed it)")


def refuse_closed_since(cur, session) -> None:
    """Inside a code's transaction: refuse it when the session was closed after the caller read it (the
    close wrote the session's labels; a later code would never reach them)."""
    closed = cur.execute("SELECT closed_by FROM coding_close WHERE session_id = ?", [session.session_id]).fetchone()
    if closed is not None:
        raise CodingError(f"session {session.name!r} is closed", f"its codes are final ({closed[0]} closed it)")
