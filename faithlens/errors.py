"""Typed errors that carry a message a user can act on.

The CLI prints `str(error)` as one line and exits 2; the app shows it in one error box.
"""

from __future__ import annotations


class FaithLensError(Exception):
    """Base error: `message` says what went wrong, `hint` what to do next."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class InputError(FaithLensError):
    """A raw file is not what its format expects: names the file, the position and the expectation."""

    def __init__(self, file: str, position: str, expected: str) -> None:
        where = f"{file}: {position}" if position else file
        super().__init__(f"{where}: {expected}")
        self.file = file
        self.position = position
        self.expected = expected


class DatabaseLockedError(FaithLensError):
    """Another process holds the DuckDB file (DuckDB allows one writer process per file)."""


class NotFoundError(FaithLensError):
    """A dataset, summary or label source that the caller named does not exist."""


class WritesPausedError(FaithLensError):
    """The team store did not answer, so a write was not made; reads go on from this server's copy."""
