#!/usr/bin/env bash
# The GPU run of issue #19 (docs/gpu.md): versions, the CUDA tests (tests/gpu), the
# host-transfer and strict-backend checks, then the GPU benchmark and its profile.  Every part runs even
# when an earlier one failed; the exit status is nonzero when any part failed.  Logs and
# the JUnit report go to $OUT (the device tool's result folder) or /tmp.  Wheels of
# missing pure-Python dependencies (graphviz) may wait in .whl/; they are installed first.
set -uo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
LOGS=${OUT:-/tmp}
mkdir -p "$LOGS"
export PYTHONPATH=$PWD:${PYTHONPATH:-} PYTHONUNBUFFERED=1
# CuPy compiles each kernel on first use; one cache serves every pytest worker.
export CUPY_CACHE_DIR=${CUPY_CACHE_DIR:-/tmp/vizgrad-cupy-cache}
failed=()

if compgen -G ".whl/*.whl" >/dev/null; then
    "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/vizgrad-site .whl/*.whl || failed+=(wheels)
    export PYTHONPATH=/tmp/vizgrad-site:$PYTHONPATH
fi

"$PYTHON" - <<'PY' 2>&1 | tee "$LOGS/gpu-versions.log" || failed+=(versions)
import numpy, cupy
props = cupy.cuda.runtime.getDeviceProperties(0)
print("numpy", numpy.__version__, "| cupy", cupy.__version__, "| GPUs",
      cupy.cuda.runtime.getDeviceCount(), "|", props["name"].decode())
try:
    import torch
    print("torch", torch.__version__, "| CUDA", torch.version.cuda, torch.cuda.is_available())
except ImportError:
    print("torch: not installed")
PY

args=(-q -rfEs -p no:cacheprovider)
"$PYTHON" -c "import xdist" 2>/dev/null && args+=(-n 8)
"$PYTHON" -c "import pytest_timeout" 2>/dev/null && args+=(--timeout 240)
[ -n "${OUT:-}" ] && args+=("--junitxml=$OUT/gpu-junit.xml")
# a time limit for the whole test part, so the benchmark still runs in a short lease
timeout "${TEST_LIMIT:-330}" "$PYTHON" -m pytest "${args[@]}" tests/gpu tests/nn/test_no_host_transfers.py \
    tests/ops/test_strict_backend.py "$@" 2>&1 | tee "$LOGS/gpu-tests.log" || failed+=(tests)

timeout 150 "$PYTHON" benchmarks/bench_gpu.py 2>&1 | tee "$LOGS/gpu-bench.log" \
    || failed+=(benchmark)

# Where each step's time goes: kernels per step, GPU busy time, the ten costliest kernels
# with their launches (issue #32); PROFILE=0 leaves it out.
if [ "${PROFILE:-1}" != 0 ]; then
    timeout 120 "$PYTHON" benchmarks/bench_gpu.py --profile 2>&1 \
        | tee "$LOGS/gpu-profile.log" || failed+=(profile)
fi

if [ ${#failed[@]} -gt 0 ]; then
    echo "gpu_check: FAILED: ${failed[*]}"
    exit 1
fi
echo "gpu_check: all parts passed"
