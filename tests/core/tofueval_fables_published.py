"""The TofuEval and FABLES papers' printed figures, typed here from the papers (../shared/papers) for the
tests, apart from faithlens/analysis/published/*.toml, which the tests check against these."""

from __future__ import annotations

from pathlib import Path

PAPERS = Path(__file__).resolve().parents[2].parent / "shared" / "papers"
TOFUEVAL_PAPER = PAPERS / "004_71ffb014882a14ed.txt"
FABLES_PAPER = PAPERS / "002_8c289d2a059dae6a.txt"

# TofuEval (Tang et al., NAACL 2024), section 4, Table 2 (text lines 139-144): sentence-level % error for
# MediaSum main, marginal, MeetingBank main, marginal; then the same at the summary level.
TOFUEVAL_TABLE2 = {
    "Vicuna-7B": ("19.6", "35.8", "17.6", "36.8", "42.7", "55.4", "33.0", "58.0"),
    "WizardLM-7B": ("29.1", "36.4", "21.3", "42.4", "49.6", "54.8", "35.6", "49.0"),
    "WizardLM-13B": ("17.4", "27.2", "15.8", "25.4", "35.9", "44.4", "41.3", "46.8"),
    "WizardLM-30B": ("14.6", "27.2", "13.7", "26.2", "35.9", "48.2", "31.5", "44.8"),
    "GPT-3.5-Turbo": ("8.8", "13.6", "4.4", "9.4", "22.2", "27.2", "10.9", "19.8"),
    "Average": ("17.5", "27.8", "14.4", "27.8", "37.2", "46.0", "30.4", "43.6"),
}
# TofuEval, appendix A, Table 5 (text lines 395-396): # Doc., Avg Len, #Asp./Doc., # LLM, Main Topic (%),
# # Turn, # Speaker.
TOFUEVAL_TABLE5 = {
    "MediaSum": ("50", "970", "3", "5", "78", "16.6", "5.7"),
    "MeetingBank": ("50", "930", "3", "5", "73", "19.9", "4.9"),
}
# TofuEval, appendix D, Table 6 (text lines 442-446): MediaSum Len, Rel, Cmp, Err %, then MeetingBank's.
TOFUEVAL_TABLE6 = {
    "Vicuna-7B": ("65", "0.89", "0.64", "47.3", "72", "0.81", "0.72", "43.6"),
    "Wizard-7B": ("44", "0.84", "0.53", "51.4", "51", "0.76", "0.61", "41.0"),
    "Wizard-13B": ("70", "0.87", "0.69", "38.9", "73", "0.88", "0.75", "43.6"),
    "Wizard-30B": ("69", "0.91", "0.72", "40.3", "66", "0.88", "0.75", "37.2"),
    "GPT-3.5-Tb": ("57", "0.91", "0.70", "24.0", "53", "0.91", "0.74", "14.7"),
}
# TofuEval, section 3.3 "Dataset Splits" (text line 110): 1,500 summaries generated, 23 removed, 1,479 kept,
# 3,966 summary sentences.
TOFUEVAL_SECTION3_3 = ("1,500", "23", "1,479", "3,966")
# TofuEval, section 5.2 (text line 274), the prose about Figure 4, which prints no numbers: "GPT-3.5-Turbo only
# detect 50% of such errors—approximately 30% lower than the rate for non-LLM based metrics".
TOFUEVAL_FIGURE4_PROSE = ("50", "30")
# TofuEval, appendix F.4 (text line 605): "only 2% of topics in the benchmark were annotated as irrelevant".
TOFUEVAL_IRRELEVANT_PCT = 2

# FABLES (Kim et al., COLM 2024), section 3, Table 2 (text lines 89-93): chunk size, avg # claims, its std,
# % faithful, unfaithful, partial support, can't verify. Caption (line 95): CLAUDE-3-OPUS over 24 of 26 books.
FABLES_TABLE2 = {
    "GPT-3.5-TURBO": ("2,048", "23.23", "3.29", "71.52", "11.26", "13.08", "4.14"),
    "MIXTRAL": ("2,048", "27.50", "4.61", "68.67", "11.47", "17.2", "2.66"),
    "GPT-4": ("2,048", "26.23", "3.54", "78.15", "4.55", "15.98", "1.32"),
    "GPT-4-TURBO": ("100,000", "21.65", "2.35", "77.62", "7.64", "12.08", "2.66"),
    "CLAUDE-3-OPUS": ("180,000", "22.85", "4.87", "90.89", "2.1", "6.65", "0.35"),
}
# The two books CLAUDE-3-OPUS "was unable to merge" (Table 2's caption, footnote 11): found by reading its
# 26 summaries in the release: these two, and only these, open by saying the chunk summaries it was given
# "do not appear to be related to the same story" instead of summarising (Table 24 quotes The Guest's).
FABLES_DECLINED = ("Same Time Next Year", "The Guest")
