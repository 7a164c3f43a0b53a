#!/usr/bin/env bash
# Peer figures from sppark (supranational/sppark, the CUDA library under cuzk), measured in
# the same device call as ours: builds bench/peer/sppark_bench.cu against the sppark tree and
# runs it (NTT 2^20/22/24 NN, 2^24 NR and coset; Fr and Fq chained products). Also builds
# bench/peer/sppark_msm.cu (sppark's msm_t) to $TMPDIR/sppark_msm, which bench.msm --sppark
# runs on its own bases and scalars; a failed build of it is reported and the rest goes on.
#   bash bench/peer/sppark.sh [OUT_JSONL]     default $OUT/sppark.jsonl (/tmp/sppark.jsonl without $OUT)
#   bash bench/peer/sppark.sh --build-only    both harnesses built, nothing run (on the CPU while the GPU
#                                             measures something else)
# Env: SPPARK_DIR (default peer/sppark), BLST_DIR (default peer/blst: blst_t.hpp, vect.h,
# bytes.h, for sppark's host-side field types), NVCC (default: nvcc on PATH, else
# /usr/local/cuda/bin/nvcc), ARCH (default sm_90), COMMIT (labels the records).
# peer/ is git-ignored (.gitignore): carry it to the device (run's carry: ["peer"]). It holds the
# commits measured, sppark 17278d7 and blst dece82e, each a `git archive` of the commit with
# its short hash in COMMIT (peer/sppark/COMMIT labels the records). Read: sppark's ff/ ec/
# msm/ ntt/ util/; blst's src/, build.sh and build/assembly.S with build/elf/ (libblst.a, for
# sppark_msm's host-side window sums); the rest can go (2.4 MB left).
# The builds take ~15 s (sppark_bench) and ~40 s (sppark_msm, with libblst.a) on the dev box; the run a
# few seconds.
set -euo pipefail
build_only=0
if [ "${1:-}" = --build-only ]; then build_only=1; shift; fi
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

# sppark's MSM sums the windows on the host in blst's field arithmetic: libblst.a, built here
# portable (its own run-time ADX dispatch exports the field functions blst_t.hpp calls), ~8 s;
# then ~30 s of nvcc
msm_bin=${TMPDIR:-/tmp}/sppark_msm
build_msm() {
    local lib=${TMPDIR:-/tmp}/blst-build
    rm -rf "$lib" && cp -r "$blst" "$lib" && (cd "$lib" && sh build.sh -D__BLST_PORTABLE__ >/dev/null 2>&1) || return 1
    "$nvcc" -arch="$arch" -O3 -std=c++17 -DFEATURE_BLS12_381 -DTAKE_RESPONSIBILITY_FOR_ERROR_MESSAGE \
        -DSPPARK_COMMIT="\"$sppark_commit\"" -I"$sppark" -I"$blst/src" -Xcompiler -Wno-unused-function \
        bench/peer/sppark_msm.cu "$sppark/util/all_gpus.cpp" "$lib/libblst.a" -o "$msm_bin"
}
t0=$(date +%s)
if build_msm; then
    echo "sppark.sh: built $msm_bin in $(( $(date +%s) - t0 )) s (bench.msm --sppark $msm_bin)" >&2
else
    echo "sppark.sh: sppark_msm build FAILED: bench.msm runs without sppark's MSM" >&2
fi

[ "$build_only" = 1 ] && exit 0
mkdir -p "$(dirname "$out")"
"$bin" > "$out" || die "sppark_bench failed (rc $?)"
echo "sppark.sh: wrote $(wc -l < "$out") records to $out" >&2
