"""Tags as escaped text for the Explore detail: each family with its source named, a tag the filters
asked for in bold and said in words beside its sentence or claim. Classes come from
`faithlens.views.highlight.CLASSES`; every tag family, value, name and source is escaped."""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import groupby


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


@dataclass(frozen=True)
class Tag:
    """One tag of a summary or unit: its family (`kind`), value and the source that tagged it; `name` is
    the code's name in its codebook when that says more than the value; `hit` when a filter asked for it."""

    kind: str
    value: str
    source: str
    name: str | None = None
    hit: bool = False

    @property
    def item(self) -> str:
        """`family: value`, as the Tags filter names it."""
        return f"{self.kind}: {self.value}"

    def words(self) -> str:
        return f"{self.value} “{self.name}”" if self.name else self.value


def _tag_groups(tags: Sequence[Tag]) -> list[tuple[str, str, list[Tag]]]:
    """(family, source, its tags) in the order given (by family, then gold first, then source)."""
    return [(kind, source, list(found)) for (kind, source), found in groupby(tags, lambda t: (t.kind, t.source))]


def tags_text(tags: Sequence[Tag]) -> str:
    """'error_type: Contradiction, Reasoning Error (gold); ambiguity_type: 2 “Detail” (coding/pilot/ann)'."""
    return "; ".join(
        f"{kind}: {', '.join(tag.words() for tag in found)} ({source})" for kind, source, found in _tag_groups(tags)
    )


def render_tags(tags: Sequence[Tag]) -> str:
    """The tags as a line of text, each family with its source named; a tag a filter asked for in bold."""
    if not tags:
        return ""
    groups = []
    for kind, source, found in _tag_groups(tags):
        values = ", ".join(
            f'<strong class="fl-hit">{esc(tag.words())}</strong>' if tag.hit else esc(tag.words()) for tag in found
        )
        groups.append(f"{esc(kind)}: {values} ({esc(source)})")
    return f'<div class="fl-meta fl-tags">Tags: {"; ".join(groups)}</div>'


HIT = "matches the filter"
"""The words beside a sentence or claim carrying a tag the filters asked for (bold is not the only marker)."""


def hit_badge(tags: Sequence[Tag]) -> str:
    return f'<span class="fl-badge fl-hit">{HIT}</span>' if any(tag.hit for tag in tags) else ""
