"""`python -m faithlens.access check-listen ADDRESS`: exit 2 with one line when the settings may not
serve on ADDRESS (`local` mode beyond loopback); `make run` calls it before starting the server.
`python -m faithlens.access auth-mode`: print FAITHLENS_AUTH as the settings give it (environment or
secrets), so `make run` serves the sign-in routes in `links` mode."""

from __future__ import annotations

import sys

from faithlens import config
from faithlens.errors import FaithLensError

USAGE = "usage: python -m faithlens.access check-listen ADDRESS | auth-mode"


def main(argv: list[str]) -> int:
    command = argv[0] if argv else ""
    if not ((command == "check-listen" and len(argv) == 2) or (command == "auth-mode" and len(argv) == 1)):
        print(USAGE, file=sys.stderr)
        return 2
    try:
        if command == "auth-mode":
            print(config.auth_mode())
        else:
            config.check_listen(argv[1])
    except FaithLensError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


sys.exit(main(sys.argv[1:]))
