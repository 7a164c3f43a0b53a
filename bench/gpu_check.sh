#!/usr/bin/env bash
# All GPU checks in one place, for the lent H200 (../shared/device/README.md):
#   bench/gpu_check.sh COMMIT SECTION...   with SECTION in field, ntt, curve
# For each section: the real-GPU run of its kernel tests (pytest -m gpu), then its
# benchmark. Logs and results go to $OUT (or ./gpu-out). Carry .whl (fetch-wheels).
set -uo pipefail
commit=$1; shift
out=${OUT:-gpu-out}; mkdir -p "$out"
if ls .whl/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
        && export PYTHONPATH=/tmp/site
fi
export PYTHONPATH=$PWD:${PYTHONPATH:-} PYTHONUNBUFFERED=1 NUMBA_CUZK_COMMIT=$commit
status=0
for section in "$@"; do
    echo "=== $section: pytest -m gpu"
    timeout 300 python3 -m pytest -m gpu -q -p no:cacheprovider -W ignore::numba.core.errors.NumbaPerformanceWarning \
        "tests/$section" 2>&1 | tail -15 | tee "$out/$section-tests.log" || status=1
    echo "=== $section: benchmark"
    timeout 300 python3 -m "bench.$section" --out "$out/$section.json" 2>&1 | grep -v Warning | tee "$out/$section-bench.log" || status=1
done
exit $status
