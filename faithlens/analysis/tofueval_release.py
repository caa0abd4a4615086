"""TofuEval's release measured against its paper: the gold error rates per generator group, corpus,
topic type, split and topic, and the checks that explain where the release departs from Table 2.

The release (github.com/amazon-science/tofueval) holds the paper's five summarizers as shuffled slots
model_A..model_E (`faithlens.analysis.generator_names`) plus Model-Extra, added after the paper. The
paper's Table 2 Average covers its five models; pooling the five slots reproduces its main-topic
cells. Its marginal-topic cells differ; the functions here measure what the release allows one to say
about why (`faithlens.analysis.tofueval_table2` words it beside the figure):
- `rate`: any pooled rate (a group, a corpus, a topic type, a split), best over `collapse`d tallies;
- `topics_to_drop`: the fewest whole marginal topics whose removal would bring a rate down to a
  printed one, choosing those with the most errors: a bound on "the paper left some topics out";
- `table6_check`: what the paper's Table 6 (summaries with an error per model, all topics) implies
  for the marginal topics, given Table 2's main-topic rows and the release's share of main topics;
- `sentence_gaps`: sentence positions the release never annotated in the slots' summaries.
Counting is one DuckDB query; the rest is arithmetic on its small result.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

import duckdb

from faithlens.analysis import published
from faithlens.analysis.generator_names import NO_MODEL, SHUFFLED_SLOTS, SLOTS_POOLED, generator_sql, group_of
from faithlens.vocab import GOLD

CORPORA = ("mediasum", "meetingbank")
TOPIC_TYPES = ("main", "marginal")
LEVELS = ("sentence", "summary")


@dataclass(frozen=True)
class Tally:
    """Gold labels of one level on one topic's summaries by one generator: how many are unfaithful of n."""

    level: str
    generator: str
    corpus: str
    topic_type: str
    split: str
    topic: tuple[str, str]
    """(document, topic): a topic is one of a dialogue's three."""
    unfaithful: int
    n: int
    group: str
    """The generator's group: the pooled slots for a slot, else the generator (`group_of`)."""


_TALLY = f"""
SELECT l.level, coalesce({generator_sql("s")}, $no_model) AS generator, coalesce(d.source, '') AS corpus,
       coalesce(s.topic_type, '') AS topic_type, coalesce(s.split, '') AS split, s.document_id,
       coalesce(s.topic, '') AS topic, count(*) FILTER (l.value = 'unfaithful') AS unfaithful, count(*) AS n
FROM current_label l
LEFT JOIN unit u ON l.level <> 'summary' AND u.dataset = l.dataset AND u.unit_id = l.target_id
JOIN summary s ON s.dataset = l.dataset AND s.summary_id = coalesce(u.summary_id, l.target_id)
LEFT JOIN document d ON d.dataset = s.dataset AND d.document_id = s.document_id
WHERE l.dataset = $dataset AND l.source = $gold AND l.level IN ('sentence', 'summary') AND l.value IS NOT NULL
GROUP BY ALL
"""


def tallies(cur: duckdb.DuckDBPyConnection, dataset: str) -> tuple[Tally, ...]:
    """Every (level, generator, corpus, topic type, split, topic) of the dataset's gold labels."""
    params = {"dataset": dataset, "gold": GOLD, "no_model": NO_MODEL}
    rows = cur.execute(_TALLY, params).fetchall()
    groups = {row[1]: group_of(row[1]) for row in rows}
    return tuple(Tally(lv, g, c, t, sp, (doc, topic), u, n, groups[g]) for lv, g, c, t, sp, doc, topic, u, n in rows)


def collapse(found: tuple[Tally, ...]) -> tuple[Tally, ...]:
    """The tallies summed over topics (topic ('', '')): what `rate` needs, a few hundred rows, not thousands."""
    summed: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])
    for t in found:
        counts = summed[t.level, t.generator, t.corpus, t.topic_type, t.split, t.group]
        counts[0] += t.unfaithful
        counts[1] += t.n
    return tuple(Tally(lv, g, c, tt, sp, ("", ""), u, n, grp) for (lv, g, c, tt, sp, grp), (u, n) in summed.items())


@dataclass(frozen=True)
class Rate:
    unfaithful: int
    n: int

    @property
    def pct(self) -> float | None:
        return 100.0 * self.unfaithful / self.n if self.n else None


def rate(found: tuple[Tally, ...], keep: Callable[[Tally], bool]) -> Rate:
    """The pooled rate of the tallies `keep` accepts."""
    kept = [t for t in found if keep(t)]
    return Rate(sum(t.unfaithful for t in kept), sum(t.n for t in kept))


def cell(level: str, corpus: str, topic_type: str, group: str | None = SLOTS_POOLED, split: str | None = None):
    """A filter for `rate`: one level, corpus and topic type; one generator group (None: every
    generator) and one split (None: both)."""

    def keep(t: Tally) -> bool:
        return (
            (t.level, t.corpus, t.topic_type) == (level, corpus, topic_type)
            and (group is None or t.group == group)
            and (split is None or t.split == split)
        )

    return keep


def has_slots(found: tuple[Tally, ...]) -> bool:
    return any(t.group == SLOTS_POOLED for t in found)


def topics_to_drop(found: tuple[Tally, ...], level: str, corpus: str, printed: float) -> int | None:
    """The fewest whole marginal topics of the pooled slots to leave out for their rate to round to
    `printed` or less, leaving out the topics with the most errors first (so no other choice of topics
    needs fewer); None when no number of topics does."""
    per_topic: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for t in found:
        if (t.level, t.corpus, t.topic_type, t.group) == (level, corpus, "marginal", SLOTS_POOLED):
            per_topic[t.topic][0] += t.unfaithful
            per_topic[t.topic][1] += t.n
    share = (printed + 0.05) / 100  # the highest rate that still prints as `printed`
    excess = sorted((u - share * n for u, n in per_topic.values()), reverse=True)
    unfaithful, n = (sum(parts) for parts in zip(*per_topic.values(), strict=True)) if per_topic else (0, 0)
    needed, dropped = unfaithful - share * n, 0.0
    for count, more in enumerate(excess):
        if dropped >= needed - 1e-9:
            return count
        dropped += more
    return len(excess) if dropped >= needed - 1e-9 else None


@dataclass(frozen=True)
class Table6Check:
    """What the paper's Table 6 says about the marginal topics of one corpus, at the summary level."""

    corpus: str
    table6_mean: float
    """The mean of Table 6's Err % over the five models (summaries with an error, all topics)."""
    release_all: float | None
    """The pooled slots' summary-level rate over all topics of the corpus, here."""
    main_share: float
    """The share of the pooled slots' summaries on main topics, here (0-1)."""
    implied_marginal: float
    """The marginal-topic rate Table 6 implies given Table 2's main rows and `main_share`."""
    implied_main_shares: tuple[float, ...]
    """Per model, the main-topic share at which Table 2's main and marginal rows give Table 6's Err %."""


def table6_check(found: tuple[Tally, ...], corpus: str) -> Table6Check:
    """Table 6 against Table 2 and the release (see Table6Check); models are the rows of Table 6."""
    table2, table6 = published.table("tofueval", "table2"), published.table("tofueval", "table6")
    models = [row.key for row in table6.rows]
    err = [table6.printed(m, f"{corpus}_err").value for m in models]
    main = [table2.printed(m, f"summary_{corpus}_main").value for m in models]
    marginal = [table2.printed(m, f"summary_{corpus}_marginal").value for m in models]
    summaries = {tt: rate(found, cell("summary", corpus, tt)).n for tt in TOPIC_TYPES}
    share = summaries["main"] / (summaries["main"] + summaries["marginal"])
    mean_err, mean_main = sum(err) / len(err), sum(main) / len(main)
    everything = rate(found, lambda t: t.level == "summary" and t.corpus == corpus and t.group == SLOTS_POOLED)
    return Table6Check(
        corpus,
        mean_err,
        everything.pct,
        share,
        (mean_err - share * mean_main) / (1 - share),
        tuple((m2 - e) / (m2 - m1) for e, m1, m2 in zip(err, main, marginal, strict=True)),
    )


def slot_spread(found: tuple[Tally, ...], level: str, corpus: str, topic_type: str) -> tuple[float, float] | None:
    """The lowest and highest rate of a single slot in one cell: how far shuffling spreads them."""
    rates = [
        rate(found, lambda t, slot=slot: cell(level, corpus, topic_type, None)(t) and t.generator == slot.shown).pct
        for slot in SHUFFLED_SLOTS
    ]
    present = [r for r in rates if r is not None]
    return (min(present), max(present)) if present else None


_GAPS = f"""
SELECT coalesce(sum(last - n), 0) FROM (
    SELECT max(CAST(json_extract_string(u.attributes, '$.sent_idx') AS INTEGER)) AS last, count(*) AS n
    FROM unit u JOIN summary s ON s.dataset = u.dataset AND s.summary_id = u.summary_id
    WHERE u.dataset = ? AND u.kind = 'sentence' AND {generator_sql("s")} IN ({", ".join("?" for _ in SHUFFLED_SLOTS)})
    GROUP BY u.summary_id
)
"""


def sentence_gaps(cur: duckdb.DuckDBPyConnection, dataset: str) -> int:
    """Sentence positions the release skips inside the slots' summaries (gaps in `sent_idx`)."""
    row = cur.execute(_GAPS, [dataset, *(slot.shown for slot in SHUFFLED_SLOTS)]).fetchone()
    return int(row[0] or 0)
