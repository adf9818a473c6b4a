#!/usr/bin/env python3
"""How fast the PE bench's golden model is, against one `tcrtl dot` process per vector.

    python3 testbenches/cocotb/bench_golden.py [--tcrtl PATH] [--steps N] [--cli-vectors M]

A vector is one PE step: the accumulator before it, the FP16 pair, the FP32 sum after it.
The script draws the PE bench's constrained-random chains (stimulus.py, seed 1) until they
hold at least N steps (default 50,000), times `golden.step_sums` on them (the call the PE
bench makes, the `tcrtl` package in process; best of three runs), then runs the first M of
those steps (default 300) through the command-line tool, one `tcrtl dot --format fp16 --acc
ieee --width 1 --c .. --a .. --b .. --json` process per vector, checks that both give the
same bits for every one, and prints both rates and their ratio. With `--require-ratio R` it
exits 1 when the ratio is below R. A benchmark to run by hand, not a test: the rates depend
on the machine.

The command-line tool: `--tcrtl PATH`, else `$TCRTL_BIN`, else `tcrtl` on PATH, else the
repository's `target/release/tcrtl` or `target/debug/tcrtl` (`cargo build --release`).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))

import golden  # after the path above
import stimulus


def find_tcrtl(explicit: str | None) -> str:
    """The command-line tool to time, or exit 2 with one line saying how to get one."""
    candidates = [explicit, os.environ.get("TCRTL_BIN"), shutil.which("tcrtl")]
    candidates += [str(REPO / "target" / p / "tcrtl") for p in ("release", "debug")]
    for c in candidates:
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return c
    if explicit:
        print(f"error: --tcrtl {explicit}: not an executable file", file=sys.stderr)
    else:
        print(
            "error: no tcrtl binary (give --tcrtl PATH or run cargo build --release)",
            file=sys.stderr,
        )
    sys.exit(2)


def draw_vectors(steps: int):
    """Chains of the PE bench (seed 1, up to 16 steps each) until they hold `steps` steps."""
    chains, total, count = [], 0, 1000
    while total < steps:
        chains = stimulus.chains(1, count, 16)
        total = sum(len(ch.a) for ch in chains)
        count *= 2
    return chains, total


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tcrtl", help="the tcrtl binary to time per vector")
    p.add_argument("--steps", type=int, default=50_000, help="golden-model vectors (steps)")
    p.add_argument("--cli-vectors", type=int, default=300, help="vectors through the CLI")
    p.add_argument("--require-ratio", type=float, help="exit 1 below this ratio")
    args = p.parse_args(argv)
    if args.steps < 1 or args.cli_vectors < 1:
        print("error: --steps and --cli-vectors must be at least 1", file=sys.stderr)
        return 2
    tool = find_tcrtl(args.tcrtl)

    chains, total = draw_vectors(args.steps)
    c = np.array([ch.c for ch in chains], np.uint32)
    a = [ch.a for ch in chains]
    b = [ch.b for ch in chains]
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        sums = golden.step_sums(c, a, b)
        best = min(best, time.perf_counter() - t0)
    model_rate = total / best

    # The first M vectors: (accumulator before, a, b) -> accumulator after.
    vectors = []
    for ch, s in zip(chains, sums):
        before = [ch.c] + [int(x) for x in s[:-1]]
        for k in range(len(ch.a)):
            vectors.append((int(before[k]), int(ch.a[k]), int(ch.b[k]), int(s[k])))
            if len(vectors) == args.cli_vectors:
                break
        if len(vectors) == args.cli_vectors:
            break
    mismatches = 0
    t0 = time.perf_counter()
    for acc, x, y, want in vectors:
        out = subprocess.run(
            [
                tool,
                "dot",
                "--format",
                "fp16",
                "--acc",
                "ieee",
                "--width",
                "1",
                "--c",
                f"0x{acc:08x}",
                "--a",
                f"0x{x:04x}",
                "--b",
                f"0x{y:04x}",
                "--json",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if out.returncode != 0:
            print(f"error: tcrtl dot failed: {out.stderr.strip()}", file=sys.stderr)
            return 2
        got = int(json.loads(out.stdout)["bits"], 16)
        if got != want:
            mismatches += 1
            if mismatches <= 5:
                print(
                    f"MISMATCH c=0x{acc:08x} a=0x{x:04x} b=0x{y:04x}: "
                    f"CLI 0x{got:08x}, package 0x{want:08x}"
                )
    cli_time = time.perf_counter() - t0
    cli_rate = len(vectors) / cli_time
    ratio = model_rate / cli_rate

    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    )
    print(
        f"golden model (tcrtl package, golden.step_sums): {total} vectors in {best:.4f} s "
        f"= {model_rate:,.0f} vectors/s"
    )
    print(
        f"CLI ({tool} dot, one process per vector): {len(vectors)} vectors in "
        f"{cli_time:.2f} s = {cli_rate:,.0f} vectors/s"
    )
    print(f"ratio: {ratio:,.0f}x")
    print(f"agreement: {len(vectors) - mismatches} of {len(vectors)} vectors give the same bits")
    if mismatches:
        return 1
    if args.require_ratio is not None and ratio < args.require_ratio:
        print(f"ratio {ratio:,.0f} is below the required {args.require_ratio:g}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
