"""StorySumm's published figures, typed here by hand as test data (independently of
faithlens/analysis/published/storysumm.toml, which the tests check against these).

Sources: the paper, Subbiah et al., "STORYSUMM: Evaluating Faithfulness in Story Summarization",
EMNLP 2024 (text in ../shared/papers/000_bef4cfce87aaa627.txt: Table 2 at line ~84, Table 6 ~line 186,
Table 8 ~line 258, Table 11 ~line 755, Table 12 ~line 775), and the release's notebook,
github.com/melaniesubbiah/storysumm Results.ipynb at e6e5d9a (its results cell's printed output).
Metric tuples are (kappa, % faithful, precision, recall, % easy, % hard, balanced accuracy).
"""

from __future__ import annotations

FIELDS = ("kappa", "pct_faithful", "precision", "recall", "pct_easy_detected", "pct_hard_detected", "balanced_accuracy")

# The release notebook's figures for the released predicted labels, rounded as the notebook rounds them.
AUTHORS_NOTEBOOK = {
    ("claude-3-opus-20240229/justquestion", "all"): (0.06, 95, 0.4, 1.0, 20.0, 2.5, 54.2),
    ("gpt-4-0125-preview/justquestion", "all"): (0.11, 70, 0.42, 0.78, 55.0, 25.0, 56.4),
    ("mixtral/justquestion", "all"): (0.12, 91, 0.41, 1.0, 15.0, 15.0, 57.5),
    ("claude-3-opus-20240229/cot", "all"): (0.1, 90, 0.41, 0.97, 25.0, 10.0, 56.1),
    ("gpt-4-0125-preview/cot", "all"): (0.08, 94, 0.4, 1.0, 25.0, 2.5, 55.0),
    ("mixtral/cot", "all"): (0.04, 97, 0.39, 1.0, 0.0, 7.5, 52.5),
    ("fables-gpt-4-turbo-preview", "all"): (0.33, 55, 0.53, 0.78, 70.0, 52.5, 68.1),
    ("minicheck-flan-t5-large", "all"): (0.02, 16, 0.4, 0.17, 90.0, 82.5, 50.8),
    ("unieval", "val"): (0.25, 39, 0.38, 0.62, 80.0, 60.0, 65.3),
    ("unieval", "test"): (0.04, 30, 0.47, 0.32, 80.0, 68.0, 51.8),
    ("alignscore-roberta-large", "val"): (0.21, 42, 0.36, 0.62, 80.0, 53.3, 63.3),
    ("alignscore-roberta-large", "test"): (-0.07, 68, 0.42, 0.64, 40.0, 24.0, 46.4),
}
AUTHORS_THRESHOLDS = {"unieval": 0.8791946308724832, "alignscore-roberta-large": 0.785234899328859}

# Paper, Section 4.1, Table 8 (expanded gold labels).
PAPER_TABLE_8 = {
    ("claude-3-opus-20240229/justquestion", "all"): (0.06, 95, 0.40, 1.00, 20.0, 2.5, 54.2),
    ("gpt-4-0125-preview/justquestion", "all"): (0.13, 71, 0.43, 0.81, 55.0, 25.0, 57.8),
    ("mixtral/justquestion", "all"): (0.05, 96, 0.39, 1.00, 10.0, 5.0, 53.3),
    ("claude-3-opus-20240229/cot", "all"): (0.10, 90, 0.41, 0.97, 20.0, 12.5, 56.1),
    ("gpt-4-0125-preview/cot", "all"): (0.04, 94, 0.39, 0.97, 20.0, 2.5, 52.8),
    ("mixtral/cot", "all"): (0.04, 97, 0.39, 1.00, 5.0, 5.0, 52.5),
    ("fables-gpt-4-turbo-preview", "all"): (0.28, 53, 0.51, 0.72, 70.0, 52.5, 65.3),
    ("minicheck-flan-t5-large", "all"): (-0.07, 18, 0.29, 0.14, 80.0, 80.0, 46.9),
    ("unieval", "val"): (0.34, 33, 0.45, 0.62, 90.0, 66.7, 69.2),
    ("unieval", "test"): (0.09, 24, 0.53, 0.29, 80.0, 80.0, 54.3),
    ("alignscore-roberta-large", "val"): (0.21, 42, 0.36, 0.62, 80.0, 53.3, 63.3),
    ("alignscore-roberta-large", "test"): (0.09, 70, 0.48, 0.75, 50.0, 28.0, 54.6),
}

# Paper, Appendix E, Table 11 (expanded gold, val split) and Table 12 (test split).
PAPER_TABLE_11 = {
    "claude-3-opus-20240229/justquestion": (0.06, 91, 0.27, 1.0, 20.0, 6.7, 56.0),
    "gpt-4-0125-preview/justquestion": (0.14, 48, 0.31, 0.62, 70.0, 46.7, 59.2),
    "mixtral/justquestion": (0.04, 94, 0.26, 1.0, 10.0, 6.7, 54.0),
    "claude-3-opus-20240229/cot": (0.08, 88, 0.28, 1.0, 30.0, 6.7, 58.0),
    "gpt-4-0125-preview/cot": (0.02, 85, 0.25, 0.88, 30.0, 6.7, 51.7),
    "mixtral/cot": (0.04, 94, 0.26, 1.0, 10.0, 6.7, 54.0),
    "fables-gpt-4-turbo-preview": (0.25, 39, 0.38, 0.62, 70.0, 66.7, 65.3),
    "minicheck-flan-t5-large": (0.01, 12, 0.25, 0.12, 80.0, 93.3, 50.2),
    "unieval": (0.13, 61, 0.3, 0.75, 70.0, 26.7, 59.5),
    "alignscore-roberta-large": (0.21, 42, 0.36, 0.62, 80.0, 53.3, 63.3),
}
PAPER_TABLE_12 = {
    "claude-3-opus-20240229/justquestion": (0.05, 97, 0.46, 1.0, 20.0, 0.0, 52.9),
    "gpt-4-0125-preview/justquestion": (0.05, 83, 0.46, 0.86, 40.0, 12.0, 52.9),
    "mixtral/justquestion": (0.05, 97, 0.46, 1.0, 10.0, 4.0, 52.9),
    "claude-3-opus-20240229/cot": (0.1, 90, 0.47, 0.96, 10.0, 16.0, 55.4),
    "gpt-4-0125-preview/cot": (0.03, 98, 0.45, 1.0, 10.0, 0.0, 51.4),
    "mixtral/cot": (0.03, 98, 0.45, 1.0, 0.0, 4.0, 51.4),
    "fables-gpt-4-turbo-preview": (0.26, 60, 0.55, 0.75, 70.0, 44.0, 63.2),
    "minicheck-flan-t5-large": (-0.12, 21, 0.31, 0.14, 80.0, 72.0, 44.3),
    "unieval": (-0.09, 59, 0.41, 0.54, 20.0, 44.0, 45.4),
    "alignscore-roberta-large": (0.09, 70, 0.48, 0.75, 50.0, 28.0, 54.6),
}
# Tables 11 and 12 print Python's rounded numbers: kappa, precision and recall are to 2 decimals
# even where the print shows one ("1.0", "0.3"), as each column's other cells show.
TWO_DECIMALS = ("kappa", "precision", "recall")

# Paper, Section 2.3, Table 2 (annotator labels): (raw model, split) -> (summaries, % faithful, # easy, # hard).
PAPER_TABLE_2 = {
    ("text-davinci-003", "val"): (11, 72.7, 1, 2),
    ("gpt-3.5-turbo-instruct", "test"): (21, 57.1, 3, 6),
    ("chatGPT", "val"): (11, 54.5, 4, 1),
    ("gpt-4", "test"): (21, 57.1, 2, 7),
    ("claude", "val"): (11, 36.4, 4, 3),
    ("claude", "test"): (21, 90.5, 0, 2),
    ("Overall", "all"): (96, 63.5, 14, 21),
}
# Paper, Section 3.2, Table 6, the Gold row: (% faithful, # easy, # hard).
PAPER_TABLE_6_GOLD = (37.5, 20, 40)

PRINTED_FIGURES = (
    4 * len(PAPER_TABLE_2)
    + len(PAPER_TABLE_6_GOLD)
    + 7 * (len(PAPER_TABLE_8) + len(PAPER_TABLE_11) + len(PAPER_TABLE_12))
    + 7 * len(AUTHORS_NOTEBOOK)
    + 2 * len(AUTHORS_THRESHOLDS)
)
"""Every printed figure above (each score source's notebook threshold is printed on its val and test rows)."""
