#!/usr/bin/env bash
# Peer figures from sppark (supranational/sppark, the CUDA library under cuzk), measured in
# the same device call as ours: builds bench/peer/sppark_bench.cu against the sppark tree and
# runs it (NTT 2^20/22/24 NN, 2^24 NR and coset; Fr and Fq chained products).
#   bash bench/peer/sppark.sh [OUT_JSONL]     default $OUT/sppark.jsonl (/tmp/sppark.jsonl without $OUT)
# Env: SPPARK_DIR (default peer/sppark), BLST_DIR (default peer/blst: blst_t.hpp, vect.h,
# bytes.h, for sppark's host-side field types), NVCC (default: nvcc on PATH, else
# /usr/local/cuda/bin/nvcc), ARCH (default sm_90), COMMIT (labels the records).
# peer/ is git-ignored (.git/info/exclude): carry it to the device (run's carry: ["peer"]). To fill it
# (the commits measured; only ff/ ec/ ntt/ util/ of sppark and blst's src/blst_t.hpp, vect.h, bytes.h are read):
#   git clone -q https://github.com/supranational/sppark peer/sppark && git -C peer/sppark checkout -q 17278d7
#   git clone -q https://github.com/supranational/blst peer/blst && git -C peer/blst checkout -q dece82e
# The build takes ~15 s (one nvcc call, 14 s on the dev box); the run a few seconds.
set -euo pipefail
out=$(realpath -m "${1:-${OUT:-/tmp}/sppark.jsonl}")   # before the cd: relative to the caller
cd "$(dirname "$0")/../.."

sppark=${SPPARK_DIR:-peer/sppark}
blst=${BLST_DIR:-peer/blst}
arch=${ARCH:-sm_90}
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}

die() { echo "sppark.sh: $*" >&2; exit 2; }
[ -x "$nvcc" ] || die "nvcc not found (tried '$nvcc'); set NVCC"
[ -f "$sppark/ntt/ntt.cuh" ] || die "no sppark tree at '$sppark' (need ntt/ntt.cuh); fetch supranational/sppark there or set SPPARK_DIR"
[ -f "$blst/src/blst_t.hpp" ] || die "no blst headers at '$blst/src' (need blst_t.hpp, vect.h, bytes.h); set BLST_DIR"

bin=${TMPDIR:-/tmp}/sppark_bench
sppark_commit=$(cat "$sppark/COMMIT" 2>/dev/null || echo unknown)
t0=$(date +%s)
"$nvcc" -arch="$arch" -O3 -std=c++17 -DFEATURE_BLS12_381 -DTAKE_RESPONSIBILITY_FOR_ERROR_MESSAGE \
    -DSPPARK_COMMIT="\"$sppark_commit\"" -DREPO_COMMIT="\"${COMMIT:-unknown}\"" \
    -I"$sppark" -I"$blst/src" -Xcompiler -Wno-unused-function \
    bench/peer/sppark_bench.cu "$sppark/util/all_gpus.cpp" -o "$bin" \
    || die "build failed"
echo "sppark.sh: built $bin in $(( $(date +%s) - t0 )) s (sppark $sppark_commit, $arch)" >&2

mkdir -p "$(dirname "$out")"
"$bin" > "$out" || die "sppark_bench failed (rc $?)"
echo "sppark.sh: wrote $(wc -l < "$out") records to $out" >&2
