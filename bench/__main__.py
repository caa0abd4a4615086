import importlib
import pkgutil
import sys
from pathlib import Path

from streamlit import logger

import bench

# AppTest runs the app without a server; Streamlit warns about that on every run. Keep the table readable.
logger.set_log_level("error")


def main(names: list[str]) -> int:
    modules = sorted(
        m.name for m in pkgutil.iter_modules([str(Path(bench.__file__).parent)]) if m.name.startswith("bench_")
    )
    chosen = [m for m in modules if not names or m.removeprefix("bench_") in names]
    failed = 0
    print(f"{'benchmark':<70} {'value':>10} {'budget':>10}  ok")
    for module_name in chosen:
        module = importlib.import_module(f"bench.{module_name}")
        for measure in module.run():
            failed += not measure.ok
            flag = "yes" if measure.ok else "NO"
            print(
                f"{measure.name:<70} {measure.value:>8.1f}{measure.unit:<2} {measure.budget:>8.1f}{measure.unit:<2} {flag}",
                flush=True,
            )
    return 1 if failed else 0


sys.exit(main(sys.argv[1:]))
