#!/usr/bin/env bash
# Builds scripts/gpu/capture.cu and captures, on the Hopper GPU of this machine, the
# measurement sets (OUTDIR/GPU/FORMAT/) and the TMA box loads (OUTDIR/GPU/tma_loads.txt).
# Usage: scripts/gpu/capture.sh OUTDIR [GPU] [SAMPLES] [all|mma|tma|tma-store]
# Needs nvcc (CUDA 12.3 or later) and an sm_90 GPU; the project never needs it to build or test.
set -euo pipefail
out=${1:?usage: capture.sh OUTDIR [GPU] [SAMPLES] [all|mma|tma|tma-store]}
gpu=${2:-H200}
samples=${3:-4096}
what=${4:-all}
here=$(cd "$(dirname "$0")" && pwd)
bin=$(mktemp -d)/capture
nvcc -O2 -std=c++17 -arch=sm_90a -o "$bin" "$here/capture.cu" -ldl
mkdir -p "$out/$gpu"
if [ "$what" = all ] || [ "$what" = mma ]; then
    "$bin" "$out" "$gpu" "$samples"
fi
if [ "$what" = all ] || [ "$what" = tma ]; then
    # One process a case: a load the GPU refuses at run time leaves its context unusable.
    f="$out/$gpu/tma_loads.txt"
    "$bin" tma-header >"$f"
    n=$("$bin" tma-count)
    for ((i = 0; i < n; i++)); do
        "$bin" tma-one "$i" orig >>"$f"
        if tail -n 1 "$f" | grep -q ' error='; then
            "$bin" tma-one "$i" smem0 >>"$f"
            "$bin" tma-one "$i" coords0 >>"$f"
        fi
    done
    echo "tma: $n cases, $(grep -c ' bytes=' "$f") loads ran, $(grep -c ' error=' "$f") errors"
fi
if [ "$what" = all ] || [ "$what" = tma-store ]; then
    f="$out/$gpu/tma_stores.txt"
    echo "# TMA box stores on a real GPU: shared byte i (from the 1024-byte-aligned buffer) holds (i * 7 + 3) mod 256, global memory 0xee before; tensor = the tensor's bytes after one store of the box at smem; error = what a failed launch reported." >"$f"
    n=$("$bin" tma-store-count)
    for ((i = 0; i < n; i++)); do "$bin" tma-store-one "$i" >>"$f"; done
    echo "tma stores: $n cases, $(grep -c ' tensor=' "$f") ran"
fi
