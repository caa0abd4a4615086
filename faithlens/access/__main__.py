"""`python -m faithlens.access check-listen ADDRESS`: exit 2 with one line when the settings may not
serve on ADDRESS (`local` mode beyond loopback); `make run` calls it before starting the server."""

from __future__ import annotations

import sys

from faithlens import config
from faithlens.errors import FaithLensError


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "check-listen":
        print("usage: python -m faithlens.access check-listen ADDRESS", file=sys.stderr)
        return 2
    try:
        config.check_listen(argv[1])
    except FaithLensError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


sys.exit(main(sys.argv[1:]))
