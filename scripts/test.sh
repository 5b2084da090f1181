#!/usr/bin/env bash
# Set up (see setup.sh) and run the whole test suite, slow tests included, plus ruff.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check vizgrad tests gallery benchmarks
.venv/bin/python -m mypy  # vizgrad/core, vizgrad/graph and the typed public API (see [tool.mypy] in pyproject.toml)
# User-style scripts type-check clean: the gallery's vizgrad scripts (those without torch)
# and tests/typing/user_script.py see Tensor's methods and operators (tensor_methods.pyi)
.venv/bin/python -m mypy $(grep -L "import torch\|from torch" gallery/*.py) tests/typing/user_script.py
.venv/bin/python -m pytest -q "$@"
