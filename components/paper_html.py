"""Published figures beside ours as escaped HTML tables: Compare's "Paper's figures" section (each
compared source's rows, then the paper's printed rows under them) and the Reproduced figures page
(one table per paper table, one line per printed row, with the view that computes it).

A printed figure's cell holds the paper's number as printed, and under it ours and the difference
(ours minus the paper's): green when ours rounds to the printed figure, amber when it does not. Every
text is escaped with `faithlens.views.highlight.esc`; links are relative URLs (`urlstate.href`).
"""

from __future__ import annotations

from collections.abc import Sequence

from faithlens.analysis.published import DIFFERS, MATCHES, UNPRINTED, Compared
from faithlens.views.compare import PairResult
from faithlens.views.highlight import esc
from faithlens.views.reproduced import COLUMN_NAMES, Figure
from faithlens.views.storysumm_paper import PaperLine

_STYLE = (
    ".fl-pp{overflow-x:auto;margin-bottom:0.5rem}"
    ".fl-pp table{border-collapse:collapse;font-size:0.85rem}"
    ".fl-pp th{background:#f3f5f8;font-weight:600;padding:4px 8px;text-align:right;white-space:nowrap}"
    ".fl-pp td{padding:3px 8px;text-align:right;white-space:nowrap;vertical-align:top;"
    "font-variant-numeric:tabular-nums}"
    ".fl-pp tr.fl-pp-figures td{border-top:1px solid #d5dae1}"
    ".fl-pp .fl-pp-text{text-align:left}"
    ".fl-pp td.fl-pp-note{text-align:left;white-space:normal;color:#3d4450;padding:2px 8px 8px 8px;max-width:60rem}"
    ".fl-pp tr.fl-pp-ours td{border-top:2px solid #b9c1cc;font-weight:600}"
    ".fl-pp td.fl-pp-ok{background:#e8f5ec}"
    ".fl-pp td.fl-pp-diff{background:#fdf0dc}"
    ".fl-pp td.fl-pp-none{background:#f1f2f4;color:#6b7480}"
    ".fl-pp small{display:block;font-weight:400;color:#4a5360}"
    ".fl-pp .fl-pp-how{color:#6b7480}"
)
OURS_DECIMALS = {
    "kappa": 2,
    "pct_faithful": 1,
    "precision": 2,
    "recall": 2,
    "pct_easy_detected": 1,
    "pct_hard_detected": 1,
    "balanced_accuracy": 1,
    "threshold": 4,
}
STATUS_CLASS = {MATCHES: "fl-pp-ok", DIFFERS: "fl-pp-diff"}
MATCH_NOTE = "Every figure matches to the printed precision."


def _number(value: float, decimals: int) -> str:
    return f"{value:,.{min(decimals, 4)}f}"


def _beside(value: float, printed: int, sign: str = "") -> str:
    """`value` with one decimal more than the printed figure has, that decimal dropped when it is 0
    (ours 0.341 beside a printed 0.34; ours 20.0 beside a printed 20.0; ours 11 beside 11)."""
    text = f"{value:{sign},.{min(printed + 1, 4)}f}"
    return text[:-2] if text.endswith(".0") else text[:-1] if printed and text.endswith("0") else text


def figure_cell(compared: Compared, with_ours: bool = True) -> str:
    """The printed figure, then ours (one decimal more than printed, so a figure that rounds to the
    printed one shows how it does; left out under a row of ours) and the difference; the status as
    the cell's colour and tooltip."""
    printed = compared.paper
    if compared.status == UNPRINTED:
        ours = "none" if compared.ours is None else _number(compared.ours, 1 if compared.ours % 1 else 0)
        return f'<td class="fl-pp-none" title="no printed number">chart<small>ours {esc(ours)}</small></td>'
    if compared.ours is None:
        return f'<td class="fl-pp-none" title="no figure of ours">{esc(printed.text)}<small>no figure</small></td>'
    ours = f"ours {_beside(compared.ours, printed.decimals)}" if with_ours else ""
    if compared.status == MATCHES:
        note = f"{ours} ✓".strip()
    else:
        delta = f"Δ {_beside(compared.difference, printed.decimals, '+')}"
        note = f"{ours} · {delta}" if ours else delta
    title = f"paper {printed.text}, ours {compared.ours:.6g}: {compared.status}"
    return (
        f'<td class="{STATUS_CLASS[compared.status]}" title="{esc(title)}">{esc(printed.text)}'
        f"<small>{esc(note)}</small></td>"
    )


def _header(columns: Sequence[str], first: Sequence[str]) -> str:
    cells = [f'<th class="fl-pp-text">{esc(name)}</th>' for name in first]
    cells += [f"<th>{esc(COLUMN_NAMES.get(column, column))}</th>" for column in columns]
    return f"<thead><tr>{''.join(cells)}</tr></thead>"


def _wrap(head: str, body: list[str]) -> str:
    return f'<style>{_STYLE}</style><div class="fl-pp"><table>{head}<tbody>{"".join(body)}</tbody></table></div>'


def _note(width: int, text: str, extra: str = "") -> str:
    """The line under a row of figures, across the table: why they differ, and what computes ours."""
    return f'<tr><td class="fl-pp-note" colspan="{width}">{esc(text)}{extra}</td></tr>'


def _ours_row(pair: PairResult, split: str, columns: Sequence[str]) -> str:
    row = pair.row(split)
    values = {**row.metrics.as_dict(), "threshold": row.threshold} if row else {}
    cells = "".join(
        "<td></td>"
        if values.get(column) is None
        else f"<td>{esc(_number(values[column], OURS_DECIMALS.get(column, 2)))}</td>"
        for column in columns
    )
    return (
        f'<tr class="fl-pp-ours"><td class="fl-pp-text">{esc(pair.source.name)}</td><td class="fl-pp-text">'
        f'{esc(split)}</td><td class="fl-pp-text">ours</td>{cells}</tr>'
    )


def _printed_rows(line: PaperLine, columns: Sequence[str]) -> list[str]:
    figures = {f.column: f for f in line.figures}
    cells = "".join(figure_cell(figures[column], False) if column in figures else "<td></td>" for column in columns)
    why = line.cause.text if line.cause else MATCH_NOTE
    return [
        f'<tr class="fl-pp-figures"><td></td><td></td><td class="fl-pp-text">{esc(line.table.name)}</td>{cells}</tr>',
        _note(len(columns) + 3, why),
    ]


def _threshold_words(pair: PairResult) -> str:
    threshold = pair.threshold
    if threshold is None:
        return ""
    return (
        f"Ours: threshold {threshold.value:.4f}, " + (threshold.how_tuned() if threshold.tuned else "set by you") + "."
    )


def compare_html(lines: Sequence[PaperLine], pairs: Sequence[PairResult]) -> str:
    """Compare's section: per compared source and split, our row, then each printed row for it with
    why it differs on the line under it."""
    columns = list(dict.fromkeys(column for line in lines for column in line.table.columns))
    body = []
    for pair in pairs:
        mine = [line for line in lines if line.source == pair.source.name]
        for split in dict.fromkeys(line.split for line in mine):
            body.append(_ours_row(pair, split, columns))
            if pair.threshold is not None:
                body.append(_note(len(columns) + 3, _threshold_words(pair)))
            for line in mine:
                if line.split == split:
                    body += _printed_rows(line, columns)
    return _wrap(_header(columns, ("Source", "Split", "Figures")), body)


def _sentence(text: str) -> str:
    """A cause as a sentence: capitalised, with a full stop."""
    text = text.strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def _why(figures: Sequence[Figure]) -> str:
    """The causes of a row's figures that do not match; each after the columns it explains when they differ."""
    columns: dict[str, list[str]] = {}
    for figure in figures:
        if figure.status != MATCHES and figure.compared.cause:
            columns.setdefault(figure.compared.cause, []).append(figure.column)
    if len(columns) == 1:
        return _sentence(next(iter(columns)))
    return " ".join(f"{', '.join(names)}: {_sentence(cause)}" for cause, names in columns.items())


def reproduced_html(figures: Sequence[Figure], hrefs: Sequence[str | None]) -> str:
    """One paper table's figures: a line per printed row, a cell per printed figure, and under it why
    they differ and a link to the view that computes ours (a cause the row above gives is not repeated)."""
    columns = list(figures[0].table.columns) if figures else []
    rows: dict[tuple[str, str, str], list[tuple[Figure, str | None]]] = {}
    for figure, href in zip(figures, hrefs, strict=True):
        rows.setdefault((figure.row.key, figure.row.split, figure.row.label), []).append((figure, href))
    body, previous, previous_how = [], None, None
    for (_key, split, label), found in rows.items():
        by_column = {figure.compared.column: figure for figure, _ in found}
        cells = "".join(
            figure_cell(by_column[column].compared) if column in by_column else "<td></td>" for column in columns
        )
        differing = any(figure.status != MATCHES for figure, _ in found)
        why = _why([figure for figure, _ in found]) if differing else MATCH_NOTE
        shown, previous = ("As the row above. " if why == previous and differing else why), why
        first, href = found[0]
        link = f' <a href="{esc(href)}" target="_self">{esc(first.link.label)}</a>' if href and first.link else ""
        how = f' <span class="fl-pp-how">({esc(first.how)})</span>' if first.how and first.how != previous_how else ""
        previous_how = first.how
        body.append(
            f'<tr class="fl-pp-figures"><td class="fl-pp-text">{esc(label)}</td><td class="fl-pp-text">{esc(split)}'
            f"</td>{cells}</tr>"
        )
        body.append(_note(len(columns) + 2, shown, link + how))
    return _wrap(_header(columns, ("Row", "Split")), body)
