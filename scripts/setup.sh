#!/usr/bin/env bash
# Install everything vizgrad needs on a Debian machine, idempotently:
# Graphviz (binary + headers for pygraphviz) and Chromium (the real browser the viewer's
# tests in tests/browser drive through Playwright; Playwright never downloads its own)
# from apt where missing, a virtualenv in .venv, and the package with its extras. A second run that finds everything in
# place only checks and returns.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
why=()
command -v dot >/dev/null 2>&1 || { need_apt+=(graphviz); why+=("graphviz (the dot program that lays out the pictures)"); }
[ -f /usr/include/graphviz/cgraph.h ] || { need_apt+=(libgraphviz-dev); why+=("libgraphviz-dev (headers to build pygraphviz)"); }
command -v chromium >/dev/null 2>&1 || { need_apt+=(chromium); why+=("chromium (the browser the viewer tests in tests/browser drive)"); }
command -v gcc >/dev/null 2>&1 || { need_apt+=(gcc); why+=("gcc (compiles pygraphviz)"); }
python3 -c "import venv, ensurepip" >/dev/null 2>&1 || { need_apt+=(python3-venv); why+=("python3-venv (to create .venv)"); }
if [ ${#need_apt[@]} -gt 0 ]; then
    echo "setup: installing Debian packages with apt-get:"
    printf '  - %s\n' "${why[@]}"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    # -q keeps apt's own list of what it installs and sets up, without progress bars
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q \
        "${need_apt[@]}"
fi

if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv"
    python3 -m venv .venv
fi

# Reinstall only when the project's requirements changed since the last install.
stamp=.venv/.vizgrad-installed
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "setup: installing vizgrad and its extras into .venv (first run takes a few minutes)"
    .venv/bin/python -m pip install -q --upgrade pip
    # torch==2.13.0 is the test oracle (CPU wheel); the exact pin avoids a CUDA download.
    # pyproject lists the packages (vizgrad.cli among them), so setuptools makes the
    # editable install with a meta path finder and prints a notice box ("Editable
    # installation ... folders in your working directory with the same name as your
    # package may take precedence"): here that folder *is* the package. Only that notice
    # is filtered; every other warning still shows.
    PYTHONWARNINGS="ignore:Editable installation:UserWarning" \
        .venv/bin/python -m pip install -q -e ".[dev,layout,data,notebook]"
    echo "$want" > "$stamp"
fi
