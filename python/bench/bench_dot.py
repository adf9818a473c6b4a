"""Batch `dot` throughput from Python against the Rust bench, in the same run.

The case of benches/dot_batch.rs (docs/performance.md, "rows per second"): nvidia hopper,
FP16 inputs, K = w = 16 (one block FMA per row), 2^18 rows, the same operands (the bench's
SplitMix64 stream, reproduced here with numpy). The script runs `cargo bench --bench
dot_batch` (criterion's throughput) unless --no-rust, then times `tcrtl.dot` on numpy arrays
in process (the median of --iters calls, each converting the arrays, running the batch on the
rayon pool without the GIL and building the result), and prints both rates and the ratio.

    python python/bench/bench_dot.py            # from the repository root
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import tcrtl

ROWS = 1 << 18
K = 16
GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def splitmix64(count: int, start: int = 1) -> np.ndarray:
    """The bench's SplitMix64 stream from state `start`: `count` outputs."""
    with np.errstate(over="ignore"):
        s = np.uint64(start) + GOLDEN * np.arange(1, count + 1, dtype=np.uint64)
        z = (s ^ (s >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def operands():
    """A, B (ROWS x K FP16 patterns) and C (FP32 patterns) exactly as the Rust bench draws
    them: sign, an exponent 13..17 and a fraction from each SplitMix64 output."""
    r = splitmix64(2 * ROWS * K)

    def fp16(x):
        return (((x & np.uint64(1)) << np.uint64(15))
                | ((np.uint64(13) + (x >> np.uint64(8)) % np.uint64(5)) << np.uint64(10))
                | ((x >> np.uint64(16)) & np.uint64(0x3FF))).astype(np.uint16)

    a = fp16(r[: ROWS * K]).reshape(ROWS, K)
    b = fp16(r[ROWS * K:]).reshape(ROWS, K)
    c = (np.uint32(0x3F800000) | (np.arange(ROWS, dtype=np.uint32) & np.uint32(0x7FFFFF)))
    return a, b, c


def python_rate(iters: int) -> float:
    a, b, c = operands()
    times = []
    for _ in range(iters + 2):
        t = time.perf_counter()
        r = tcrtl.dot(a, b, c, fmt="fp16", acc="nvidia", preset="hopper", width=16)
        times.append(time.perf_counter() - t)
        assert len(r.bits) == ROWS
    return ROWS / statistics.median(times[2:])


def rust_rate(repo: Path) -> float:
    """criterion's median throughput of benches/dot_batch.rs, in rows per second."""
    p = subprocess.run(["cargo", "bench", "--bench", "dot_batch", "--", "--noplot"], cwd=repo,
                       capture_output=True, text=True, check=True)
    m = re.search(r"thrpt:\s+\[\s*[\d.]+ \w+/s\s+([\d.]+) (\w)elem/s", p.stdout)
    if not m:
        sys.exit(f"no throughput in cargo bench's output:\n{p.stdout}")
    scale = {"K": 1e3, "M": 1e6, "G": 1e9}[m.group(2)]
    return float(m.group(1)) * scale


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--no-rust", action="store_true", help="skip the Rust bench")
    args = ap.parse_args()
    repo = Path(__file__).resolve().parents[2]
    rust = None if args.no_rust else rust_rate(repo)
    py = python_rate(args.iters)
    print(f"python tcrtl.dot: {py / 1e6:.2f} M rows/s (median of {args.iters} calls, "
          f"2^18 rows, K = w = 16, nvidia hopper fp16)")
    if rust is not None:
        print(f"rust dot_batch:   {rust / 1e6:.2f} M rows/s (criterion median)")
        print(f"ratio rust/python: {rust / py:.3f}")


if __name__ == "__main__":
    main()
