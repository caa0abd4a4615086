#!/usr/bin/env bash
# Browser tests drive Debian's Chromium (Playwright's own browser download is not available).
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
run() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
echo "installing Debian's chromium for the browser tests..."
run apt-get update -q
DEBIAN_FRONTEND=noninteractive run apt-get install -y -q chromium
