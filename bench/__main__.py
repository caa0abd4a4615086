import importlib
import logging
import pkgutil
import sys
from pathlib import Path

from streamlit import logger

import bench


class _Drop(logging.Filter):
    """Drops one known message of one Streamlit logger, and nothing else it logs."""

    def __init__(self, message: str) -> None:
        super().__init__()
        self.message = message

    def filter(self, record: logging.LogRecord) -> bool:
        return self.message not in record.getMessage()


# The benches run pages with AppTest, which has no server runtime, and both warnings are about that:
# - `AppTest()` writes its session state before any script run exists (AppTest.__init__ sets
#   `session_state[TESTING_KEY]`), so every AppTest logs "missing ScriptRunContext";
# - after a bench clears the caches (`st.cache_data.clear()`, to time a cold first run), each cached
#   function's new cache logs that it uses the in-memory store, as it must without a runtime.
# Filters on those two loggers, rather than a global level: Streamlit resets every logger's level
# to `logger.level` whenever its config is parsed again, which each AppTest does.
for name, message in (
    ("streamlit.runtime.scriptrunner_utils.script_run_context", "missing ScriptRunContext"),
    ("streamlit.runtime.caching.cache_data_api", "No runtime found, using MemoryCacheStorageManager"),
):
    logger.get_logger(name).addFilter(_Drop(message))


NAME_WIDTH = 90


def main(names: list[str]) -> int:
    modules = sorted(
        m.name for m in pkgutil.iter_modules([str(Path(bench.__file__).parent)]) if m.name.startswith("bench_")
    )
    chosen = [m for m in modules if not names or m.removeprefix("bench_") in names]
    failed = 0
    print(f"{'benchmark':<{NAME_WIDTH}} {'value':>10} {'budget':>10}  ok")
    for module_name in chosen:
        module = importlib.import_module(f"bench.{module_name}")
        for measure in module.run():
            failed += not measure.ok
            flag = "yes" if measure.ok else "NO"
            digits = 2 if measure.unit in ("s", "x") else 1
            value, budget = f"{measure.value:>8.{digits}f}", f"{measure.budget:>8.{digits}f}"
            print(f"{measure.name:<{NAME_WIDTH}} {value}{measure.unit:<2} {budget}{measure.unit:<2} {flag}", flush=True)
    return 1 if failed else 0


sys.exit(main(sys.argv[1:]))
