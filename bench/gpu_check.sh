#!/usr/bin/env bash
# All GPU checks in one place, for the lent H200 (../shared/device/README.md):
#   bench/gpu_check.sh COMMIT SECTION...   with SECTION in field, ntt, curve, msm, groth16
#   SECTION:tests or SECTION:bench runs one half only.
#   bench/gpu_check.sh COMMIT all         every GPU test in one `pytest -m gpu` call: the
#   kernels' tests and the GPU-only ones the simulator skips (the GPU prover with queued
#   proofs, the engine on every GPU, a whole zkey checked on the device, GPU MSMs against
#   arkworks). Run it whenever prover or engine code changes; its log, $OUT/gpu-tests-DATE.log
#   (also written to bench/results/), goes with the results. A skipped test fails it.
# For each section: the real-GPU run of its kernel tests (pytest -m gpu), then its
# benchmark, each stopped after $TEST_TIMEOUT / $BENCH_TIMEOUT seconds (default 300;
# curve's tests compile every G2 formula into one kernel: give them ~540). Full logs and results go to $OUT (or ./gpu-out); stdout gets their tails.
# Carry .whl (fetch-wheels).
set -uo pipefail
commit=$1; shift
out=${OUT:-gpu-out}; mkdir -p "$out"
if ls .whl/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
        && export PYTHONPATH=/tmp/site
fi
export PYTHONPATH=$PWD:${PYTHONPATH:-} PYTHONUNBUFFERED=1 NUMBA_CUZK_COMMIT=$commit
status=0

every_gpu_test() {
    echo "# numba-cuzk $commit, $(date -u +%FT%TZ), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
    timeout "${TEST_TIMEOUT:-570}" python3 -m pytest -m gpu -v -rs -p no:cacheprovider --durations=15 \
        -W ignore::numba.core.errors.NumbaPerformanceWarning tests
    local rc=$?
    echo "# pytest exit status $rc (124: stopped after ${TEST_TIMEOUT:-570} s)"
    return $rc
}

for arg in "$@"; do
    if [ "$arg" = all ]; then
        log="$out/gpu-tests-$(date -u +%F).log"
        echo "=== every GPU test: pytest -m gpu tests"
        every_gpu_test > "$log" 2>&1 || status=1
        if grep -Eq "^SKIPPED|[0-9]+ skipped" "$log"; then
            echo "FAILED: GPU tests skipped on the GPU (the SKIPPED lines of $log say why)"; status=1
        fi
        mkdir -p bench/results && cp "$log" bench/results/
        grep -E "^(FAILED|ERROR|SKIPPED)" "$log" | head -40; tail -2 "$log"
        continue
    fi
    section=${arg%%:*}; part=${arg#*:}; [ "$part" = "$arg" ] && part=all
    if [ "$part" != bench ]; then
        echo "=== $section: pytest -m gpu"
        timeout "${TEST_TIMEOUT:-300}" python3 -m pytest -m gpu -q -p no:cacheprovider --maxfail=5 \
            -W ignore::numba.core.errors.NumbaPerformanceWarning "tests/$section" > "$out/$section-tests.log" 2>&1 || status=1
        tail -15 "$out/$section-tests.log"
    fi
    if [ "$part" != tests ]; then
        echo "=== $section: benchmark"
        timeout "${BENCH_TIMEOUT:-300}" python3 -m "bench.$section" --out "$out/$section.json" > "$out/$section-bench.log" 2>&1 || status=1
        grep -v Warning "$out/$section-bench.log" | tail -40
    fi
done
exit $status
