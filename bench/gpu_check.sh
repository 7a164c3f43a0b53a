#!/usr/bin/env bash
# All GPU checks in one place, for the lent H200 (../shared/device/README.md):
#   bench/gpu_check.sh COMMIT SECTION...   with SECTION in field, ntt, curve, msm, groth16
#   COMMIT labels the records: write it out here (a `$(git rev-parse ...)` in the device command reads
#   the device copy's git metadata, which can name an older commit than the tree carried).
#   SECTION:tests or SECTION:bench runs one half only.
#   bench/gpu_check.sh COMMIT all         every GPU test (`pytest -m gpu tests`): the kernels'
#   tests and the GPU-only ones the simulator skips (the GPU prover with queued proofs, the
#   engine on every GPU, a whole zkey checked on the device, the 2^24-2^27 MSM plans against a
#   closed form, prebuilt kernels). Run it whenever prover or engine code changes; its log,
#   $OUT/gpu-tests-HOST-COMMIT-DATE.log (also written to bench/results/gpu-tests/), goes with
#   the results. A skipped test fails it, and so does a package the tests import that is
#   missing (checked first, in seconds: carry .whl). Then `numba-cuzk compile` fills the
#   kernel cache (~55 s cold, seconds warm); the `alone` tests (whole-GPU readings: memory in
#   use, NVML counters) run one at a time with nothing beside them; then the rest under
#   pytest-xdist in $GPU_TEST_WORKERS processes (default 8), which compile the tests' own
#   kernels side by side (one process alone took over 330 s for the first 15 tests' G2
#   kernels), --dist loadgroup: the closed forms in one worker (their 2^27 bases once), the
#   slow tests started first (tests/conftest.py). pytest is stopped (SIGINT: its summary is
#   still printed) at $TEST_TIMEOUT s, by default what is left of 565 s since this script
#   started. Predicted ~7-8.5 min on a fresh H200, ~1 min less warm (compile cached).
#   all:kernels / all:rest   the same in two calls of ~5 min each, back to back: tests/field,
#   tests/curve and tests/ntt (the formulas' property tests, compile-bound); then the rest
#   bench/gpu_check.sh COMMIT startup     a warm one-shot 2^14 prove as a user runs it (issue 40,
#   ~2-3 min, < 4): `numba-cuzk compile` into $NUMBA_CUZK_CACHE_DIR (else ~/.cache/numba-cuzk;
#   seconds when an earlier step of the call filled it for this commit, ~70-90 s when empty),
#   then bench.startup: cold_prove_log14 (5 processes after one that records the key's check:
#   median, spread, steps, each process's interpreter/command/exit split; 2 more without the
#   bytecode cache) and one more under cProfile ($OUT/warm-prove.prof, its top rows in
#   warm-prove.prof.txt); with $PREBUILT_ARCHIVE (an archive of `compile --targets cpu,sm_90
#   --archive`, built already), bench.prebuilt: first_prove_log14_prebuilt, 2 runs. Carry .whl.
#   bench/gpu_check.sh COMMIT engine      bench.engine, the measured configuration of the
#   device-busy issue: bit_heavy 2^20, 4 jobs x 10, 15 workers, 3 rounds, CUPTI, at the
#   engine's 0.5 ms GIL switch interval and at Python's default 5 ms; its timeline in
#   $OUT/timeline-traced.jsonl
#   bench/gpu_check.sh COMMIT porep       every figure of issue 35 from one key, alone in a call (<= 560 s,
#   POREP_DEADLINE): `numba-cuzk compile` (~1 min into an empty cache), bench.porep: the bit_heavy
#   2^27 key built and set up resident with the bit/tail split (its plan printed), one Prover's 3
#   proofs (prove_log27_split, _device_ms, _peak_gpu_gb), then 3 jobs of 10 partitions through the
#   engine, queued behind a 2-partition warm-up (porep_s_per_proof, _kernel_ms_per_partition,
#   device busy); peak host memory from /usr/bin/time; to $OUT: porep.json, porep.log, the timeline
#   report and PNG, porep-extra.tgz (the timelines, the compile log); POREP_ARGS adds bench.porep
#   options (a dry run on the CPU: POREP_DEADLINE=3000 POREP_ARGS="--log 12 --partitions 3")
#   bench/gpu_check.sh COMMIT kernels     the kernel figures of issue 18 in one call (~5 min): `numba-cuzk
#   compile`, the peer (bench/peer/sppark.sh, when peer/sppark is carried: sppark's NTT and field
#   products, the ntt and field records' peer), bench.msm (G1 2^20, 2^24 with and without upload; G2 2^16, 2^20; beside the plan's:
#   window bits -1 and +1, scatter per 1 and 2 windows, runs of 256, 64 buckets per reduce thread), bench.ntt at 2^24,
#   bench.field (fr_mul), bench.groth16 at 2^20 (bit_heavy and mimc), then bench.sass (the hot
#   kernels' SASS and instruction mix, $OUT/sass.tgz), ncu on bench.profile (the NTT pass's and the
#   accumulations' stall reasons, $OUT/ncu.txt); KERNEL_STEPS="msm ...;ntt ..." runs other steps,
#   KERNEL_PROFILE=0 skips bench.sass and ncu
#   bench/gpu_check.sh COMMIT counters    issue 36 in one call (~5 min; carry peer/): bench.counters (NVML GPM
#   against ncu over the same launches of a 2^24 NTT, accumulate_g1, accumulate_g2: $OUT/counters.json), then
#   bench.engine --trace kernels,counters --traced-only, 3 rounds (engine_sm_active_gw2, engine_pipe_util_gw2,
#   the stack, counters_overhead_pct: $OUT/engine-counters.json), then bench.msm against sppark's msm_t from
#   this call, both timings (G1 2^20, 2^24, G2 2^16, 2^20; 2^21-2^23 checked: $OUT/msm-sppark.json);
#   sppark_msm is built on the CPU during bench.counters. $OUT/counters.tgz: the logs, each step's
#   seconds, the engine's timeline with its report and PNG
#   bench/gpu_check.sh COMMIT archive     this machine's cpu,sm_90 archive (`compile --targets --archive`, timed;
#   the versions it is keyed by printed), to $OUT and .prebuilt/; the sections after it in the call use it
#   bench/gpu_check.sh COMMIT compile     `numba-cuzk compile` into $NUMBA_CUZK_CACHE_DIR, timed,
#   with bench.cpu_soak (80 tiny CPU proofs, each checked) beside it: the load under which a
#   CPU proof inside `compile` once failed its check; $OUT/compile.log, soak.log
#   bench/gpu_check.sh COMMIT oneshot     issue 40's one-shot against snarkjs here (carry .peer: node and
#   snarkjs, bench/peer/snarkjs_bundle.sh): bench.startup --oneshot, oneshot_prove_log14 and _log16 with the
#   peer alternating; ONESHOT_ARGS="--cpu" for a dry run on the CPU
#   bench/gpu_check.sh COMMIT serve       issue 38's daemon figures in one call (~2-2.5 min with a warm
#   kernel cache; an empty one adds `numba-cuzk compile`'s ~1 min): bench.serve --part gpu, MiMC 2^14 and
#   2^20 (built and set up first where build/bench-serve lacks them, ~30 s): client processes per proof
#   (split by step), then rounds of this process's Engine, one client and 8 clients back to back on the
#   same keys; $OUT/serve.json (the records), $OUT/serve.tgz (log, versions, the daemon's and engines'
#   timelines)
# Every section that needs the kernel cache fills it with fill_kernel_cache: from $PREBUILT_ARCHIVE
# when that is set (carry it: `numba-cuzk compile --targets cpu,sm_90 --archive .prebuilt/kernels.tar.gz`
# on the CPU at the same commit, ~4-5 min on 2 idle cores) and the tiny GPU paths then compile nothing,
# else by `numba-cuzk compile`.
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
# The device's copy of the tree may carry git metadata older than the commit carried (on
# 2026-12-04 it lacked it, and bench.common refused the name after 230 s of compile): the
# name given here is the record's, so git is not asked
export GIT_DIR=/nonexistent-git
# bytecode cached as any installed package's is (a warm process on the H200 spent 0.55 s of
# 2.3 compiling 255 modules' sources): in a folder of its own, off the checkout
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX=${PYTHONPYCACHEPREFIX:-/tmp/pycache}
status=0

find_ncu() {
    command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1
}

SUITE_NEEDS="xdist hypothesis py_ecc py_arkworks_bls12381 dask distributed grpc google.protobuf prometheus_client
    cupti pynvml matplotlib"  # what `pytest -m gpu tests` imports beyond numba (collection included)

fill_kernel_cache() {  # fill_kernel_cache: this tree's kernels into the cache (output on stdout)
    # From $PREBUILT_ARCHIVE (carried: `numba-cuzk compile --targets cpu,sm_90 --archive`, built
    # on the CPU at this commit) when the tiny GPU paths then compile nothing, ~10-20 s; else
    # `numba-cuzk compile` (~200 s on the H200 on 2026-12-04, warm or cold)
    if [ -f "${PREBUILT_ARCHIVE:-}" ]; then
        if python3 -m numba_cuzk.cli compile --fetch "$PREBUILT_ARCHIVE" && python3 -c 'import sys
from numba_cuzk import kernel_cache
from numba_cuzk.commands.compile import gpu_paths
for path, args in gpu_paths():
    path(*args)
stats = kernel_cache.compile_stats()
print("the tiny GPU paths after the archive:", stats)
sys.exit(stats["compiled"] > 0)'; then
            echo "kernels from $PREBUILT_ARCHIVE"; return 0
        fi
        echo "$PREBUILT_ARCHIVE did not cover this GPU's paths: numba-cuzk compile"
    fi
    python3 -m numba_cuzk.cli compile
}

every_gpu_test() {  # every_gpu_test PATH... [--ignore=PATH...]: the GPU tests there; 0 if all passed
    echo "# numba-cuzk $commit, $(date -u +%FT%TZ), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
    python3 -c 'import importlib, sys
missing = []
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except Exception as exc:  # an ImportError, or a module that fails as it loads (a library it needs)
        missing.append(f"{name} ({type(exc).__name__}: {exc})")
if missing:
    sys.exit("FAILED: not importable here (carry .whl): " + "; ".join(missing))' $SUITE_NEEDS || return 1
    fill_kernel_cache || return 1
    local common=(-m pytest -v -rs -p no:cacheprovider -p no:benchmark --disable-warnings --durations=25)  # a log < 100 KB
    echo "=== the alone tests, one at a time ($((SECONDS)) s)"
    python3 "${common[@]}" -m "gpu and alone" "$@"
    local rc=$?
    [ $rc -eq 5 ] && rc=0  # none here (all:kernels)
    local left=${TEST_TIMEOUT:-$((565 - SECONDS))}  # SIGINT then, SIGKILL 15 s later: the log is back by ~580 s
    echo "=== the rest, ${GPU_TEST_WORKERS:-8} workers ($((SECONDS)) s; stopped after $left s)"
    # each worker's numba and arkworks pools sized to its share of the cores (a pool per core in
    # each of 8 workers spins in each other's waits: commands/compile.py's WORKER_ENV)
    local threads=$(( $(nproc) / ${GPU_TEST_WORKERS:-8} )); [ "$threads" -ge 1 ] || threads=1
    NUMBA_NUM_THREADS=$threads RAYON_NUM_THREADS=$threads timeout -s INT -k 15 "$left" python3 "${common[@]}" \
        -m "gpu and not alone" -n "${GPU_TEST_WORKERS:-8}" --dist loadgroup "$@"
    local rest=$?
    echo "# pytest exit status $rc (alone), $rest (the rest; 124 or 130: stopped after $left s), at $SECONDS s"
    [ $rc -eq 0 ] && [ $rest -eq 0 ]
}

gpu_host() {  # the host part of a result's file name (bench/common.host_slug): h200, h200x2
    python3 -c 'import subprocess
from bench.common import host_slug
names = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                       text=True).stdout.splitlines()
print(host_slug(names[:1] or ["unknown"]) + (f"x{len(names)}" if len(names) > 1 else ""))'
}

for arg in "$@"; do
    if [ "${arg%%:*}" = all ]; then
        label=""; suite=(tests)
        case $arg in
            all) ;;
            all:kernels) label=-kernels; suite=(tests/field tests/curve tests/ntt) ;;
            all:rest) label=-rest; suite=(tests --ignore=tests/field --ignore=tests/curve --ignore=tests/ntt) ;;
            *) echo "unknown section $arg (all, all:kernels, all:rest)"; status=1; continue ;;
        esac
        log="$out/gpu-tests-$(gpu_host)-$commit-$(date -u +%F)$label.log"  # bench/results/gpu-tests/'s name
        echo "=== GPU tests ($arg): pytest -m gpu ${suite[*]}"
        every_gpu_test "${suite[@]}" > "$log" 2>&1 || status=1
        if grep -Eq "^SKIPPED|[0-9]+ skipped" "$log"; then
            echo "FAILED: GPU tests skipped on the GPU (the SKIPPED lines of $log say why)"; status=1
        fi
        mkdir -p bench/results/gpu-tests && cp "$log" bench/results/gpu-tests/
        grep -E "^(FAILED|ERROR|SKIPPED)" "$log" | head -40; tail -2 "$log"
        continue
    fi
    if [ "$arg" = startup ]; then
        echo "=== startup: numba-cuzk compile, bench.startup (cold_prove_log14), a profiled warm prove"
        lscpu | grep -E "^(Model name|CPU\(s\)|Thread|Core|Socket)" | tee "$out/host.txt"
        cache=${NUMBA_CUZK_CACHE_DIR:-$HOME/.cache/numba-cuzk}
        start=$SECONDS
        NUMBA_CUZK_CACHE_DIR=$cache fill_kernel_cache > "$out/startup.log" 2>&1 || status=1
        echo "kernel cache filled: $((SECONDS - start)) s" | tee -a "$out/startup.log"
        timeout "${STARTUP_TIMEOUT:-150}" python3 -m bench.startup --no-compile --no-first --runs 5 --no-bytecode 2 \
            --warm-cache "$cache" --profile "$out/warm-prove.prof" --out "$out/startup.json" 2>&1 \
            | grep -v Warning | tee -a "$out/startup.log"; [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
        head -45 "$out/warm-prove.prof.txt" 2>/dev/null | tail -36
        if [ -f "${PREBUILT_ARCHIVE:-}" ]; then
            timeout 120 python3 -m bench.prebuilt --archive "$PREBUILT_ARCHIVE" --runs 2 --out "$out/startup.json" 2>&1 \
                | grep -v Warning | tail -4 | tee -a "$out/startup.log"; [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
        fi
        continue
    fi
    if [ "$arg" = oneshot ]; then
        # issue 40: a one-shot prove against snarkjs as users run them, here (bench.startup --oneshot:
        # oneshot_prove_log14, oneshot_prove_log16, 5 pairs of processes each, alternating). The image has no
        # Node: carry .peer (bench/peer/snarkjs_bundle.sh: node and snarkjs, the chain circuits without
        # keys; bench.startup sets the keys up here, on the GPU). ~3 min with the archive section first
        echo "=== oneshot: bench.startup --oneshot, snarkjs alternating"
        peer=$(mktemp -d)
        circuits=$(mktemp -d)
        tar -xJf .peer/node-snarkjs.tar.xz -C "$peer" && tar -xJf .peer/chain-circuits.tar.xz -C "$circuits" \
            || { status=1; echo "FAILED: no .peer bundle (bench/peer/snarkjs_bundle.sh, then carry .peer)"; continue; }
        echo "node $(PATH=$peer/bin:$PATH node --version), snarkjs from the bundle" | tee "$out/oneshot.log"
        fill_kernel_cache >> "$out/oneshot.log" 2>&1 || status=1
        tail -1 "$out/oneshot.log"
        PATH=$peer/bin:$PATH NUMBA_CUZK_NODE_MODULES=$peer/node_modules timeout "${ONESHOT_TIMEOUT:-300}" \
            python3 -m bench.startup --oneshot --sizes "${ONESHOT_SIZES:-14,16}" --runs 5 --dir "$circuits" \
            ${ONESHOT_ARGS:-} --out "$out/oneshot.json" 2>&1 | grep -v Warning | tee -a "$out/oneshot.log" | tail -6
        [ "${PIPESTATUS[0]}" -eq 0 ] || { status=1; echo "FAILED: bench.startup --oneshot"; }
        continue
    fi
    if [ "$arg" = serve ]; then
        echo "=== serve: bench.serve --part gpu"
        work=$(mktemp -d)
        python3 -c 'import sys, grpc, google.protobuf as pb; from google.protobuf.internal import api_implementation as a
from numba_cuzk.serve import proving_pb2
print(f"python {sys.version.split()[0]}, grpcio {grpc.__version__}, protobuf {pb.__version__} ({a.Type()})")' \
            > "$work/versions.txt" 2>&1 || status=1
        cat "$work/versions.txt"
        # what a process's start and its grpc import (bench.serve's python_grpc_ms) are made of:
        # site's .pth files, grpc's own imports: the 5 costliest, cumulative us
        for code in pass "import grpc"; do
            python3 -X importtime -c "$code" 2>&1 | sort -t'|' -k2 -n | tail -5 | sed "s/^/[$code] /" | tee -a "$work/versions.txt"
        done
        fill_kernel_cache > "$work/serve.log" 2>&1 || status=1  # seconds when the cache is warm
        tail -1 "$work/serve.log"
        sizes=${SERVE_SIZES:-14,20}  # 8,10 for a dry run on the CPU backend
        timeout "${SERVE_TIMEOUT:-200}" python3 -m bench.serve --part gpu --runs "${SERVE_RUNS:-10}" --rounds 3 \
            --sizes "$sizes" --rate-sizes "$sizes" --timeline "$work/daemon-timeline.jsonl" --out "$out/serve.json" \
            >> "$work/serve.log" 2>&1 || { status=1; echo "FAILED: bench.serve"; }
        grep -E "^(2\^|round|serve_|engine_)" "$work/serve.log"
        tar czf "$out/serve.tgz" -C "$work" .
        continue
    fi
    if [ "$arg" = archive ]; then
        # this machine's prebuilt kernels (cpu,sm_90), built as `compile --archive` builds them (no context):
        # an archive built elsewhere matches only a machine with the same Python and compiler versions
        # (kernel_cache.versions(), printed), so the H200's comes from the H200; the later sections of this
        # call use it ($PREBUILT_ARCHIVE), later calls can carry it (.prebuilt/), and it goes to $OUT
        archive=.prebuilt/kernels-$(gpu_host).tar.gz; mkdir -p .prebuilt
        python3 -c 'import json; from numba_cuzk import kernel_cache as k; print("versions", json.dumps(k.versions()), "key", k.source_key())'
        start=$SECONDS
        python3 -m numba_cuzk.cli compile --targets cpu,sm_90 --archive "$archive" > "$out/archive.log" 2>&1 || status=1
        echo "archive built in $((SECONDS - start)) s: $(tail -2 "$out/archive.log" | head -1)"
        [ -f "$archive" ] && cp "$archive" "$out/" && export PREBUILT_ARCHIVE=$PWD/$archive
        continue
    fi
    if [ "$arg" = compile ]; then
        echo "=== compile: numba-cuzk compile, bench.cpu_soak beside it"
        python3 -m bench.cpu_soak --rounds 80 --keep "$out/soak" > "$out/soak.log" 2>&1 &
        soak=$!
        start=$SECONDS
        python3 -m numba_cuzk.cli compile > "$out/compile.log" 2>&1 || status=1
        echo "numba-cuzk compile: $((SECONDS - start)) s"; grep -E "_g2 |tasks in" "$out/compile.log"
        wait $soak || status=1
        grep cpu_soak "$out/soak.log"; grep -q "cpu_soak: 0 failed" "$out/soak.log" || status=1
        continue
    fi
    if [ "$arg" = porep ]; then
        # issue 35 in one call, <= POREP_DEADLINE (560) s with an empty kernel cache: compile, the 2^27
        # key (built, set up resident), one Prover's proofs, 3 jobs of 10 partitions through the engine
        echo "=== porep: bench.porep"
        start=$SECONDS
        fill_kernel_cache > "$out/porep-compile.log" 2>&1 || status=1  # seconds when the cache is warm
        echo "compile: $((SECONDS - start)) s, $(tail -1 "$out/porep-compile.log")"; df -h /dev/shm; free -g | head -2
        kind=process  # witnesses wait in /dev/shm: a small one (a container's) takes thread synthesis
        [ "$(df --output=avail -B1G /dev/shm | tail -1)" -lt 9 ] && kind=thread  # room for 2 witnesses at 2^27, or threads
        scratch=$(mktemp -d)
        # stopped inside the call, 30 s kept for the report: the engine's own timeline (engine-porep.jsonl,
        # or its live .engine-porep.jsonl.*.tmp if cut short) keeps every event up to then, and the
        # records of the stages that ended are in porep.json
        left=$(( ${POREP_DEADLINE:-560} - (SECONDS - start) - 30 ))
        [ "$left" -gt 0 ] || { left=1; status=1; echo "FAILED: no time left for bench.porep"; }
        NUMBA_DISABLE_PERFORMANCE_WARNINGS=1 timeout "$left" \
            /usr/bin/time -v python3 -m bench.porep --synthesis $kind --timeline "$out/timeline-porep.jsonl" \
            --engine-timeline "$scratch/engine-porep.jsonl" --out "$out/porep.json" ${POREP_ARGS:-} > "$out/porep.log" 2>&1 \
            || status=1
        grep -E "^(porep|prove_log|memory plan|  (every|streamed|device memory))|Maximum resident|Elapsed|Error" \
            "$out/porep.log"
        [ -e "$out/timeline-porep.jsonl" ] && timeout 60 python3 -m numba_cuzk.cli timeline "$out/timeline-porep.jsonl" \
            --window steady --png "$out/timeline-porep.png" > "$out/timeline-porep.txt" 2>&1
        tail -30 "$out/timeline-porep.txt" 2>/dev/null
        # at most 8 files come back: the records, the log, the report and its PNG; the rest in one archive
        mv "$out/porep-compile.log" "$scratch/" && mv "$out/timeline-porep.jsonl" "$scratch/" 2>/dev/null
        tar czf "$out/porep-extra.tgz" -C "$scratch" . && ls -la "$out"
        echo "porep section: $((SECONDS - start)) s"
        continue
    fi
    if [ "$arg" = kernels ]; then
        # a call returns at most 8 files: one log, a json per benchmark, the SASS as one archive
        echo "=== kernels: issue 18's figures"
        log="$out/kernels.log"
        fill_kernel_cache > "$log" 2>&1 || status=1
        tail -1 "$log"
        peer=""  # sppark's figures from this call, the ntt and field steps' peer (--peer)
        msm_peer=""  # sppark's MSM (built by sppark.sh), run by bench.msm on its own inputs (--sppark)
        if [ -d peer/sppark ]; then
            COMMIT=$commit bash bench/peer/sppark.sh "$out/sppark.jsonl" 2>&1 | tee -a "$log" | tail -8
            [ "${PIPESTATUS[0]}" -eq 0 ] && peer="--peer $out/sppark.jsonl" || { status=1; echo "FAILED: sppark peer"; }
            [ -x "${TMPDIR:-/tmp}/sppark_msm" ] && msm_peer="--sppark ${TMPDIR:-/tmp}/sppark_msm"
        else
            echo "no peer/sppark (carry it): the ntt, field and msm records get no sppark peer" | tee -a "$log"
        fi
        IFS=';' read -ra steps <<< "${KERNEL_STEPS:-msm --g1 20,24 --g2 16,20 --sweep window_delta=-1,1 --sweep scatter=1,2 --sweep chunk=256 --sweep segment=64;ntt --sizes 24 --phase-sizes 24;field;groth16 --sizes 20 --cpu '';groth16 --sizes 20 --cpu '' --circuit mimc}"
        for step in "${steps[@]}"; do
            name=${step%% *}  # the groth16 runs share one json; a repeated msm or ntt step gets msm-2.json, ...
            if [ "$name" != groth16 ] && [ -e "$out/$name.json" ]; then
                k=2; while [ -e "$out/$name-$k.json" ]; do k=$((k + 1)); done; name=$name-$k
            fi
            echo "=== bench.$step" >> "$log"
            case $name in ntt*|field*) with_peer=$peer ;; msm*) with_peer=$msm_peer ;; *) with_peer="" ;; esac
            eval "timeout ${BENCH_TIMEOUT:-300} python3 -m bench.$step $with_peer --out $out/$name.json" 2>&1 \
                | grep -v -E "Warning|warn\(" | tee -a "$log" | tail -12
            [ "${PIPESTATUS[0]}" -eq 0 ] || { status=1; echo "FAILED: bench.$step"; }
        done
        [ "${KERNEL_PROFILE:-1}" = 0 ] && continue  # KERNEL_PROFILE=0: no SASS, no ncu
        sass=$(mktemp -d)
        timeout 120 python3 -m bench.sass --out "$sass" 2>&1 | grep -v Warning | tail -12 || status=1
        tar czf "$out/sass.tgz" -C "$sass" .
        # stall reasons, issue and memory figures of the NTT pass and the accumulations (bench.profile)
        ncu=$(find_ncu)
        if [ -n "$ncu" ]; then
            timeout "${NCU_TIMEOUT:-240}" "$ncu" --profile-from-start off --clock-control none \
                --kernel-name regex:'gpu_pass|accumulate_g' --section SpeedOfLight --section ComputeWorkloadAnalysis \
                --section MemoryWorkloadAnalysis --section Occupancy --section SchedulerStats --section WarpStateStats \
                --section InstructionStats --section LaunchStats python3 -m bench.profile > "$out/ncu.txt" 2>&1 \
                || { status=1; echo "FAILED: ncu bench.profile"; }
            grep -E "^  [a-z_]+.*\(|Duration|Compute \(SM\) Throughput|Memory Throughput|Issued Ipc|Achieved Occupancy" \
                "$out/ncu.txt" | head -40
        else
            echo "no ncu on this machine: bench.profile not run"
        fi
        continue
    fi
    if [ "$arg" = diagnose ]; then
        # what counters per instruction and the kernel trace say, for the next change (~4 min)
        echo "=== diagnose: the kernel-trace test, ncu's source counters"
        fill_kernel_cache > "$out/diagnose.log" 2>&1 || status=1
        timeout 240 python3 -m pytest -m gpu -q -s -p no:cacheprovider -W ignore::numba.core.errors.NumbaPerformanceWarning \
            --basetemp=/tmp/diagnose tests/engine/test_gpu.py -k kernel_trace >> "$out/diagnose.log" 2>&1 || status=1
        find /tmp/diagnose -name t.jsonl -exec cp {} "$out/kernel-trace.jsonl" \;
        tail -5 "$out/diagnose.log"
        ncu=$(find_ncu)
        # per SASS instruction: executions and stall samples of the NTT's first two passes and G1's sort and reduce
        timeout 240 "$ncu" --profile-from-start off --clock-control none --kernel-name regex:'gpu_pass|scatter|reduce_g1' \
            --launch-count 5 --section SourceCounters --section WarpStateStats -o "$out/diag" --force-overwrite \
            python3 -m bench.profile --g2-log 16 >> "$out/diagnose.log" 2>&1 || status=1
        "$ncu" -i "$out/diag.ncu-rep" --page source --print-source sass --csv > "$out/ncu-source.csv" 2>> "$out/diagnose.log" \
            || status=1
        "$ncu" -i "$out/diag.ncu-rep" > "$out/ncu-diag.txt" 2>&1
        ls -la "$out"; head -c 600 "$out/ncu-source.csv"
        continue
    fi
    if [ "$arg" = counters ]; then
        # four files to $OUT: three records files and one archive of the rest
        echo "=== counters: bench.counters (GPM vs ncu), bench.engine --trace kernels,counters, bench.msm --sppark"
        logs=$(mktemp -d)
        took() { echo "$1: $((SECONDS - $2)) s" | tee -a "$logs/seconds.txt"; }
        build=""  # sppark's msm_t harness, built on the CPU while the GPU steps below run; waited for before the engine
        if [ -d peer/sppark ]; then
            COMMIT=$commit bash bench/peer/sppark.sh --build-only > "$logs/sppark-build.log" 2>&1 &
            build=$!
        else
            echo "no peer/sppark (carry it): the MSM records get no sppark peer" | tee "$logs/sppark-build.log"
        fi
        t=$SECONDS; fill_kernel_cache > "$logs/compile.log" 2>&1 || status=1; took compile $t
        t=$SECONDS; ncu=$(find_ncu)
        timeout "${COUNTERS_TIMEOUT:-170}" python3 -m bench.counters --ncu "${ncu:-/usr/local/cuda/bin/ncu}" \
            --out "$out/counters.json" > "$logs/counters.log" 2>&1 || { status=1; echo "FAILED: bench.counters"; }
        took bench.counters $t
        grep -E "^(ntt_log|accumulate_g|wrote|ncu|bench.counters|Traceback|[A-Za-z]*Error)" "$logs/counters.log" | cut -c1-600
        if [ -n "$build" ]; then wait "$build" || echo "FAILED: sppark.sh --build-only"; cat "$logs/sppark-build.log"; fi
        t=$SECONDS
        timeout "${ENGINE_TIMEOUT:-200}" python3 -m bench.engine --workers 15 --scaling "" --jobs 4 --repeat 3 \
            --trace kernels,counters --traced-only --timeline "$logs/timeline-counters.jsonl" \
            --out "$out/engine-counters.json" > "$logs/engine.log" 2>&1 || { status=1; echo "FAILED: bench.engine"; }
        took bench.engine $t
        grep -E "^(stack|counters|traced|wrote|Traceback|[A-Za-z]*Error)" "$logs/engine.log" | cut -c1-600
        t=$SECONDS
        msm_peer=""; [ -x "${TMPDIR:-/tmp}/sppark_msm" ] && msm_peer="--sppark ${TMPDIR:-/tmp}/sppark_msm"
        timeout "${MSM_TIMEOUT:-150}" python3 -m bench.msm --g1 20,24 --g2 16,20 --no-arkworks $msm_peer \
            --check-g1 21,22,23 --check-g2 21,22,23 --out "$out/msm-sppark.json" > "$logs/msm.log" 2>&1 \
            || { status=1; echo "FAILED: bench.msm"; }
        took bench.msm $t
        grep -E "sppark|_call |_upload |checked|wrote|Traceback|[A-Za-z]*Error" "$logs/msm.log" | cut -c1-300
        python3 -m numba_cuzk.cli timeline "$logs/timeline-counters.jsonl" --window steady \
            --png "$logs/timeline-counters.png" > "$logs/timeline-counters.txt" 2>&1 || status=1
        tar czf "$out/counters.tgz" -C "$logs" . && ls -la "$out"
        continue
    fi
    if [ "$arg" = engine ]; then
        echo "=== engine: bench.engine"
        python3 -m bench.engine --workers 15 --scaling "" --jobs 4 --repeat 3 --trace kernels --compare-switch 5 \
            --timeline "$out/timeline-traced.jsonl" --out "$out/engine.json" 2>&1 | grep -v Warning | tee "$out/engine.log" || status=1
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
