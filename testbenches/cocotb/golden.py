"""The benches' golden model: every accumulator value a PE must show, from the `tcrtl` package.

The Verilog PE computes `acc <- RNE32(acc + a * b)` once per step (FP16 x FP16 + FP32,
`ieee`, width 1). `tcrtl.dot(a, b, c, fmt="fp16", acc="ieee", width=1)` is that chain for
every row of `a` and `b` at once, so one call per step index gives step k of every chain:
the accumulators after step k are `dot(a[:, k:k+1], b[:, k:k+1], acc_after_step_k_minus_1)`.
All expected values are computed before the simulation starts, in a few vectorised calls.
"""

from __future__ import annotations

import numpy as np

try:
    import tcrtl
except ImportError as err:  # pragma: no cover - reported once, clearly
    raise ImportError(
        "the cocotb benches need the tcrtl Python package as their golden model: "
        "pip install ./python (from the repository root)"
    ) from err


def step_sums(c: np.ndarray, a: list[np.ndarray], b: list[np.ndarray]) -> list[np.ndarray]:
    """The accumulator after every step of every chain.

    `c[i]` is chain i's FP32 preload (bits), `a[i]`, `b[i]` its FP16 operands (bits, one per
    step, any length >= 1). Returns one `np.uint32` array per chain, element k the
    accumulator after step k. Chains of different lengths are batched together: at step k
    only the chains that have one take part.
    """
    n = len(a)
    if len(b) != n or len(c) != n:
        raise ValueError(f"need as many C ({len(c)}), A ({n}) and B ({len(b)}) chains")
    lengths = np.array([len(x) for x in a], dtype=np.int64)
    for i in range(n):
        if len(b[i]) != lengths[i]:
            raise ValueError(f"chain {i}: {lengths[i]} A operands but {len(b[i])} B operands")
    k_max = int(lengths.max()) if n else 0
    a_pad = np.zeros((n, k_max), np.uint16)
    b_pad = np.zeros((n, k_max), np.uint16)
    for i in range(n):
        a_pad[i, : lengths[i]] = a[i]
        b_pad[i, : lengths[i]] = b[i]
    acc = np.asarray(c, np.uint32).copy()
    sums = np.zeros((n, k_max), np.uint32)
    for k in range(k_max):
        live = np.nonzero(lengths > k)[0]
        res = tcrtl.dot(
            a_pad[live, k : k + 1],
            b_pad[live, k : k + 1],
            acc[live],
            fmt="fp16",
            acc="ieee",
            width=1,
        )
        acc[live] = np.asarray(res.bits, np.uint32)
        sums[live, k] = acc[live]
    return [sums[i, : lengths[i]].copy() for i in range(n)]
