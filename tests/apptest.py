"""What every AppTest page test checks after a run."""

from __future__ import annotations


def clean(at) -> None:
    """The run ended with no exception and no error box."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
