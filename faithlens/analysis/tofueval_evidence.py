"""The words under TofuEval Table 2's comparison with the paper: how our Average is made, and what the
release says about the marginal-topic cells that differ, each with the figure that shows it.

Every number is measured here from the release (`faithlens.analysis.tofueval_release`) or read from the
paper's printed tables (`faithlens/analysis/published/tofueval.toml`); nothing is fitted. The one fact
stated rather than measured (the release's repeated row is a Model-Extra row, dropped at ingest) is
checked against the raw file by the tests.
"""

from __future__ import annotations

from faithlens.analysis import published
from faithlens.analysis import tofueval_release as release
from faithlens.analysis.generator_names import SLOTS_POOLED
from faithlens.analysis.tofueval_release import CORPORA, TOPIC_TYPES, Tally


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def _pair(values) -> str:
    """'34.8 / 36.4': MediaSum, then MeetingBank."""
    return " / ".join(_fmt(v) for v in values)


def _printed(level: str, topic_type: str, row: str = "average") -> list[float | None]:
    table2 = published.table("tofueval", "table2")
    return [table2.printed(row, f"{level}_{c}_{topic_type}").value for c in CORPORA]


def _ours(found: tuple[Tally, ...], level: str, topic_type: str, **where) -> list[float | None]:
    return [release.rate(found, release.cell(level, c, topic_type, **where)).pct for c in CORPORA]


def _row_means(level: str) -> str:
    """The mean of the five printed model rows per cell, in Table 2's column order."""
    table2 = published.table("tofueval", "table2")
    models = [row for row in table2.rows if row.key != "average"]
    means = []
    for c in CORPORA:
        for t in TOPIC_TYPES:
            index = table2.columns.index(f"{level}_{c}_{t}")
            means.append(sum(row.values[index].value for row in models) / len(models))
    return " / ".join(_fmt(m) for m in means)


def notes(found: tuple[Tally, ...], level: str, unit: str, gaps: int) -> tuple[str, ...]:
    """The notes for one level, in reading order (`found`: the tallies per topic)."""
    cells = release.collapse(found)
    out = [_how(cells, level, unit), _marginal(found, cells, level, unit)]
    if level == "summary":
        out.append(_table6(cells))
    out.append(
        "What the release cannot tell: it holds one category per topic (main or marginal), not the annotators' "
        "categories before the merge of 'irrelevant' into 'marginal', and its labels after the authors' "
        "second-stage review (appendix F.4) with none from before, so which summaries, categories or labels "
        "Table 2's marginal column counted cannot be recovered from it. No subset is fitted here to force a match."
    )
    if level == "sentence":
        out.append(_size(found, gaps))
    return tuple(out)


def _how(found: tuple[Tally, ...], level: str, unit: str) -> str:
    summaries = sum(t.n for t in found if t.level == "summary" and t.group == SLOTS_POOLED)
    section = published.table("tofueval", "section3_3").printed("five models", "summaries")
    head = (
        f"Ours: slots A–E pooled, Model-Extra left out, dev and test together ({summaries:,} summaries; section "
        f"3.3 counts {section.text} for the paper's five models). It reproduces the printed main-topic Average: "
        f"{_pair(_ours(found, level, 'main'))} here, {_pair(_printed(level, 'main'))} printed (MediaSum / MeetingBank)."
    )
    if level == "sentence":
        return (
            f"{head} The printed Average is the pooled rate: the mean of the five printed model rows would be "
            f"{_row_means(level)} (Table 2's column order), as pooling weights a model by its {unit}. With the "
            "models shuffled per topic, only the pooled rate can be computed from the release."
        )
    return (
        f"{head} With about one summary per model and topic, the pooled rate and the mean of the five printed "
        f"rows ({_row_means(level)}, Table 2's column order) agree within rounding."
    )


def _topic_shares(found: tuple[Tally, ...]) -> tuple[list[float], int]:
    """(% of each corpus's topics that are main, number of topics)."""
    topics = {(t.corpus, t.topic_type, t.topic) for t in found}
    shares = []
    for c in CORPORA:
        main = sum(1 for corpus, tt, _ in topics if corpus == c and tt == "main")
        every = sum(1 for corpus, _, _ in topics if corpus == c)
        shares.append(100.0 * main / every if every else None)
    return shares, len(topics)


def _marginal(found: tuple[Tally, ...], cells: tuple[Tally, ...], level: str, unit: str) -> str:
    ours = [release.rate(cells, release.cell(level, c, "marginal")) for c in CORPORA]
    printed = _printed(level, "marginal")
    table5 = published.table("tofueval", "table5")
    shares, topics = _topic_shares(found)
    drops = [release.topics_to_drop(found, level, c, p) for c, p in zip(CORPORA, printed, strict=True)]
    return (
        f"Marginal topics differ: {_pair(r.pct for r in ours)} here ({' / '.join(f'{r.n:,}' for r in ours)} {unit}), "
        f"{_pair(printed)} printed. Not Model-Extra: with it, {_pair(_ours(cells, level, 'marginal', group=None))}. "
        f"Not one split: dev alone {_pair(_ours(cells, level, 'marginal', split='dev'))}, test alone "
        f"{_pair(_ours(cells, level, 'marginal', split='test'))}. Not the share of main topics: the release's "
        f"topic_category files make {' / '.join(f'{s:.1f}' for s in shares)}% of topics main, Table 5 prints "
        f"{' / '.join(table5.printed(c, 'main_topic_pct').text for c in CORPORA)}%. Not the topics merged into "
        f"'marginal': even leaving out first the marginal topics with the most errors, "
        f"{' and '.join('no number of' if d is None else str(d) for d in drops)} whole topics (MediaSum and "
        f"MeetingBank) would have to go to reach the printed rates, more than the 2% of the {topics} topics "
        f"(about {round(0.02 * topics)}) that appendix F.4 says were annotated 'irrelevant' and merged into 'marginal'."
    )


def _table6(found: tuple[Tally, ...]) -> str:
    checks = [release.table6_check(found, c) for c in CORPORA]
    table5 = published.table("tofueval", "table5")
    shares = [
        f"{100 * min(c.implied_main_shares):.0f}–{100 * max(c.implied_main_shares):.0f}% ({name})"
        for c, name in zip(checks, ("MediaSum", "MeetingBank"), strict=True)
    ]
    return (
        "The paper's own Table 6 sides with the release: its Err % per model (summaries with an error, main and "
        f"marginal topics together) averages {_pair(c.table6_mean for c in checks)}; the five slots here give "
        f"{_pair(c.release_all for c in checks)}. With Table 2's main-topic rows and the release's share of "
        f"summaries on main topics ({' / '.join(f'{100 * c.main_share:.1f}' for c in checks)}%), Table 6 implies "
        f"marginal-topic rates of about {_pair(c.implied_marginal for c in checks)}: the release's "
        f"{_pair(_ours(found, 'summary', 'marginal'))}, not Table 2's {_pair(_printed('summary', 'marginal'))}. "
        f"Read the other way, Table 2's main and marginal rows give Table 6's Err % only if {' and '.join(shares)} "
        f"of each model's summaries were on main topics, not the {'% / '.join(table5.printed(c, 'main_topic_pct').text for c in CORPORA)}% "
        "of Table 5."
    )


def _size(found: tuple[Tally, ...], gaps: int) -> str:
    section = published.table("tofueval", "section3_3")
    sentences = sum(t.n for t in found if t.level == "sentence" and t.group == SLOTS_POOLED)
    summaries = sum(t.n for t in found if t.level == "summary" and t.group == SLOTS_POOLED)
    topics = len({t.topic for t in found})
    printed = {column: section.printed("five models", column).text for column in section.columns}
    return (
        f"Size: slots A–E hold {summaries:,} summaries and {sentences:,} sentences; section 3.3 prints "
        f"{printed['summaries']} and {printed['sentences']}. The release's one exact repeated row is a Model-Extra "
        f"row (dropped at ingest), so it does not account for the difference; {gaps} sentence positions inside "
        f"slot summaries were never annotated (gaps in sent_idx), which would make {sentences + gaps:,}; the "
        f"release does not say which sentence the paper counted besides. Section 3.3's own arithmetic differs "
        f"too: {printed['generated']} summaries less {printed['removed']} removed is "
        f"{int(printed['generated'].replace(',', '')) - int(printed['removed']):,}, not {printed['summaries']}; "
        f"the release lacks {5 * topics - summaries} of its {topics} topics × 5 slot summaries."
    )
