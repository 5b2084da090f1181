#!/usr/bin/env bash
# The GPU run of issue #19, on a machine with CUDA and CuPy (see docs/gpu.md).
# Runs every op-table row on CUDA, a training run and a picture (tests/gpu), the
# host-transfer and strict-backend checks, then the GPU benchmark.  Wheels of missing
# pure-Python dependencies (graphviz) may wait in .whl/; they are installed first.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if compgen -G ".whl/*.whl" >/dev/null; then
    "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/vizgrad-site .whl/*.whl
    export PYTHONPATH=/tmp/vizgrad-site:${PYTHONPATH:-}
fi
export PYTHONPATH=$PWD:${PYTHONPATH:-}
export PYTHONUNBUFFERED=1
"$PYTHON" -c "import cupy; print('CuPy', cupy.__version__, 'GPUs:', cupy.cuda.runtime.getDeviceCount())"
"$PYTHON" -m pytest -q -p no:cacheprovider -rs tests/gpu tests/nn/test_no_host_transfers.py \
    tests/ops/test_strict_backend.py "$@"
"$PYTHON" benchmarks/bench_gpu.py
