"""How many printed figures the Reproduced figures page lists over every paper, counted from the figures
typed in the tests from the papers (not from faithlens/analysis/published/*.toml)."""

from __future__ import annotations

from tests.core import storysumm_published as storysumm
from tests.core import tofueval_fables_published as tofueval_fables
from tests.core.test_published_arm import TYPED as ARM

TOFUEVAL = (
    sum(
        len(values)
        for table in (tofueval_fables.TOFUEVAL_TABLE2, tofueval_fables.TOFUEVAL_TABLE5)
        for values in table.values()
    )
    + len(tofueval_fables.TOFUEVAL_SECTION3_3)
    + len(tofueval_fables.TOFUEVAL_FIGURE4_PROSE)
)
"""Tables 2 and 5, section 3.3's counts and the two numbers Figure 4's prose states."""
FABLES = sum(len(values) for values in tofueval_fables.FABLES_TABLE2.values())
ARM_FIGURES = sum(len(values) for table in ARM.values() for values in table.values())
ALL_PAPERS = storysumm.PRINTED_FIGURES + FABLES + TOFUEVAL + ARM_FIGURES
TABLES = {"storysumm": 6, "fables": 1, "tofueval": 7, "arm": 4}
"""Tables shown per paper: StorySumm's 2, 6, 8, 11, 12 and the release's; FABLES' Table 2; TofuEval's Tables 2
and 5, section 3.3, Figures 2, 4 (and its prose) and 5; ARM's Tables 2-5."""
