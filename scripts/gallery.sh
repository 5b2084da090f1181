#!/usr/bin/env bash
# Set up (see setup.sh) and render the gallery: SVGs and an index.html side by side
# with the source of every example.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/vizgrad gallery "$@"
