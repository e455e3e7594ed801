#!/usr/bin/env bash
# The message catalogs (docs/translating.md): extract | update | compile | check | init LANG
#   bash scripts/i18n.sh extract && bash scripts/i18n.sh update   # after changing texts
#   bash scripts/i18n.sh check                                     # share translated, placeholders
set -euo pipefail
cd "$(dirname "$0")/.."
PY=python3; [ -x .venv/bin/python ] && PY=.venv/bin/python
exec "$PY" scripts/i18n.py "$@"
