#!/usr/bin/env bash
# The team-store tests start a throwaway cluster with Debian's PostgreSQL server programs
# (initdb, pg_ctl); install them when missing. Debian keeps them in /usr/lib/postgresql/<version>/bin.
set -euo pipefail
if compgen -G "/usr/lib/postgresql/*/bin/initdb" > /dev/null; then
  exit 0
fi
run() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
echo "installing Debian's PostgreSQL for the team-store tests..."
run apt-get update -q
DEBIAN_FRONTEND=noninteractive run apt-get install -y -q postgresql
