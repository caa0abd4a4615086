"""The pages' URL states: what each page shows, as typed values that `faithlens.querystate` reads
from and writes to the query string, and that cross-page links are built from.

Kept apart from the read models so the shell can know every page's state without importing the
heavier modules (scikit-learn behind Compare) that only one page needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from faithlens.analysis.mapping import DEFAULT, FAITHFUL, UNFAITHFUL, Mapping
from faithlens.analysis.thresholds import GRID, TUNINGS, Thresholds
from faithlens.build.alignment import TOP_K
from faithlens.build.rankers import ON_PAGES
from faithlens.filters import Filters
from faithlens.querystate import param
from faithlens.vocab import FIGURE_STATUSES, LEVELS


@dataclass(frozen=True)
class OverviewState:
    """The Overview's URL state: only the dataset."""

    dataset: str | None = None


@dataclass(frozen=True)
class DetailState:
    """The detail view's URL state: which summary, which sentence and which claim (each by the number
    the page shows: `sentence=3` is S3, `claim=2` is C2), or a unit by its stored id (`unit=`, as older
    links name it: `…#c1` is C2, since stored ids count from 0), and how the stored alignment and the
    n-gram overlap are shown: by which ranker's alignment (`ranker`, None: the default), and which
    source passage is picked (`passage`, its first character), lighting up the units aligned to it.

    `unit` is checked against the opened summary by `resolve_selection`, which turns it into
    `sentence` or `claim`, so the page's own URL always names what its labels say."""

    summary: str | None = None
    sentence: int | None = param(bounds=(1, 10_000))
    claim: int | None = param(bounds=(1, 10_000))
    unit: str | None = None
    ranker: str | None = param(choices=ON_PAGES)
    passages: int = param(3, bounds=(1, TOP_K))
    min_score: int = param(0, bounds=(0, 100))
    passage: int | None = param(bounds=(0, 100_000_000))
    ngram: int | None = param(bounds=(1, 8))


@dataclass(frozen=True)
class ExploreState:
    """Everything Explore shows, as its URL says it: the dataset, the filters, and the summary view."""

    dataset: str | None = None
    filters: Filters = field(default_factory=Filters)
    detail: DetailState = field(default_factory=DetailState)


CELLS = tuple(f"{reference},{compared}" for reference in (FAITHFUL, UNFAITHFUL) for compared in (FAITHFUL, UNFAITHFUL))
"""A confusion-matrix cell as the URL names it: the reference's label, then the compared source's."""


@dataclass(frozen=True)
class CompareState:
    """Everything Compare shows, as its URL says it. Empty `sources` means every other source at
    the level; `topics` adds rows per topic type; `tuning` is the score sources' threshold search
    and `thresholds` holds only the moved ones; `paper` shows the paper's published figures beside
    ours (StorySumm); `view` is the split the matrices show; `pair`, `dsplit` and `cell` pick the
    drill-down."""

    dataset: str | None = None
    level: str | None = param(choices=LEVELS)
    reference: str | None = None
    sources: tuple[str, ...] = ()
    mapping: Mapping = DEFAULT
    topics: bool = True
    tuning: str = param(GRID, choices=TUNINGS)
    thresholds: Thresholds = Thresholds()
    paper: bool = False
    view: str | None = None
    pair: str | None = None
    dsplit: str | None = None
    cell: str | None = param(choices=CELLS)


@dataclass(frozen=True)
class RewriteState:
    """The Rewrite page's URL state: the summary and the sentence (1-based) being rewritten."""

    dataset: str | None = None
    summary: str | None = None
    sentence: int | None = param(bounds=(1, 10_000))


@dataclass(frozen=True)
class RunsState:
    """The Runs page's URL state: the dataset, the run shown, and an Explore filter carried over by
    Explore's "Run a method on the filtered set" link (offered as the new run's unit set)."""

    dataset: str | None = None
    run: int | None = param(bounds=(1, 2**31))
    filters: Filters = field(default_factory=Filters)


@dataclass(frozen=True)
class CodeState:
    """The Code page's URL state: the session, and the unit shown when the coder moved away from where
    they resume (their first uncoded unit). `coder` is read only to refuse a link naming someone else:
    the coder is always the signed-in person, and the page writes no `coder`."""

    dataset: str | None = None
    session: str | None = None
    coder: str | None = None
    unit: str | None = None
    ranker: str | None = param(choices=ON_PAGES)
    """Which ranker's passages highlight the source (None: the default)."""


SESSIONS_VIEWS = ("sessions", "new", "codebooks")
"""The Sessions page's sections: the sessions (list, progress, agreement, adjudication), the new-session
form, the codebooks."""


@dataclass(frozen=True)
class SessionsState:
    """The Sessions page's URL state: the section shown, the session open in it, the codebook shown,
    the two coders whose confusion matrix is drawn (`a,b`), and an Explore filter carried over by
    Explore's "Code the filtered set" link (offered as the new session's unit set)."""

    dataset: str | None = None
    view: str = param(SESSIONS_VIEWS[0], choices=SESSIONS_VIEWS)
    session: str | None = None
    codebook: str | None = None
    pair: str | None = None
    filters: Filters = field(default_factory=Filters)


REPRODUCED_STATUSES = FIGURE_STATUSES
"""The Reproduced figures page's status filter: a figure's status (`faithlens.analysis.published`)."""


@dataclass(frozen=True)
class ReproducedState:
    """The Reproduced figures page's URL state: the sidebar's dataset (the page lists every paper's
    figures whichever is chosen) and the filters: one paper, one of its tables, one status."""

    dataset: str | None = None
    paper: str | None = None
    table: str | None = None
    status: str | None = param(choices=REPRODUCED_STATUSES)


ERRORS_BY = ("generator", "generator_group", "topic_type", "corpus", "split", "none")
"""What the Errors page's distribution is broken down by ('none': all units together;
'generator_group': TofuEval's shuffled slots pooled, beside Model-Extra)."""


@dataclass(frozen=True)
class ErrorsState:
    """The Errors page's URL state: the family (`error_type@sentence`, `verdict:gold@claim`), what the
    distribution is broken down by and the denominator of its %, whose tags count (None: the default,
    gold where the dataset's gold gives the family; `any`: every source's), and the recall's
    reference (`none`: every unit carrying the value), units (`single`: carrying one value only, as
    TofuEval Figure 4; `any`), split and sources (empty: every source at the family's level)."""

    dataset: str | None = None
    family: str | None = None
    by: str | None = param(choices=ERRORS_BY)
    of: str = param("tagged", choices=("tagged", "all"))
    tagged_by: str | None = None
    reference: str | None = None
    typed: str = param("single", choices=("single", "any"))
    split: str | None = None
    sources: tuple[str, ...] = ()


@dataclass(frozen=True)
class PeopleState:
    """The People page's URL state: only the dataset the other pages' links carry on."""

    dataset: str | None = None
