#!/usr/bin/env bash
# Set up (see setup.sh) and run the whole test suite, slow tests included, plus ruff.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check vizgrad cli tests gallery benchmarks
.venv/bin/python -m mypy  # vizgrad/core, vizgrad/graph and the typed public API (see [tool.mypy] in pyproject.toml)
.venv/bin/python -m pytest -q "$@"
