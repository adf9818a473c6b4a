"""cocotb bench of the 4 x 4 mesh (`mesh4x4`, lab 2; ports in docs/course/interfaces.md).

Each tile: one cycle of `load` with C on `c_flat`, then its K steps (a cycle with `vld` high
carrying column k of A on `a_col` and row k of B on `b_row`, unskewed), with random bubbles
(`vld` low, garbage on `a_col` and `b_row`). The bench knows no latency and no skew: every
cycle it checks, for each PE (i, j) whose bit of `acc_vld_flat` is high, that PE's word of
`acc_flat` against the golden sum after its next step (row i of A times column j of B from
C[i][j], from `tcrtl`, golden.py). The tile is done when every PE has raised its bit K times;
the next tile is loaded then. A PE that has not, DRAIN_LIMIT_CYCLES cycles after the last
step, fails with a timeout (so does a mesh without its skew, whose off-diagonal PEs meet
fewer than K valid pairs), and a PE raising its bit more than K times fails. After the tile
the 16 accumulators must hold D for an idle cycle.
"""

from __future__ import annotations

import numpy as np

import cocotb
from cocotb.triggers import FallingEdge

import golden
import stimulus
from bench_common import (
    DRAIN_LIMIT_CYCLES,
    MAX_TIMEOUTS,
    Report,
    env_int,
    h16,
    h32,
    seed,
    start_and_reset,
)

MASK32 = (1 << 32) - 1


def _pack(words, width: int) -> int:
    """Words into one integer, word w in bits [width w +: width]."""
    out = 0
    for w, x in enumerate(words):
        out |= int(x) << (width * w)
    return out


def _describe(tile: stimulus.Tile, t: int, i: int, j: int, k: int) -> str:
    first = max(0, k - 3)
    ops = ", ".join(f"{h16(tile.a[i, s])}*{h16(tile.b[s, j])}" for s in range(first, k + 1))
    if first:
        ops = f"{first} earlier, " + ops
    return f"tile {t} ({tile.scenario}) PE ({i}, {j}) step {k}: c={h32(tile.c[i, j])} steps [{ops}]"


def sample(dut, report: Report, t: int, tile: stimulus.Tile, want, seen: list[int]) -> None:
    """One falling-edge sample: check each PE whose acc_vld bit is high against its next
    golden step (`seen[p]` counts PE p's sums so far this tile)."""
    bits = dut.acc_vld_flat.value.to_unsigned()
    if not bits:
        return
    k = tile.a.shape[1]
    accs = dut.acc_flat.value.to_unsigned()
    for p in range(16):
        if not (bits >> p) & 1:
            continue
        i, j = divmod(p, 4)
        got = (accs >> (32 * p)) & MASK32
        s = seen[p]
        if s >= k:
            report.fail(
                f"tile {t} ({tile.scenario}) PE ({i}, {j}): acc_vld raised a "
                f"{s + 1}th time for {k} steps (acc={h32(got)})"
            )
        else:
            w = int(want[p][s])
            if got == w:
                report.ok()
            else:
                report.fail(f"{_describe(tile, t, i, j, s)}: acc got {h32(got)} want {h32(w)}")
        seen[p] = s + 1


async def run_tiles(dut, tiles: list[stimulus.Tile], bubble: float, rng, what: str):
    """Drive `tiles` through the mesh and check every PE's every step."""
    # Golden sums: 16 chains a tile, PE (i, j) = 4 i + j.
    cs, as_, bs = [], [], []
    for tile in tiles:
        for i in range(4):
            for j in range(4):
                cs.append(tile.c[i, j])
                as_.append(tile.a[i, :])
                bs.append(tile.b[:, j])
    flat = golden.step_sums(np.array(cs, np.uint32), as_, bs)
    expected = [flat[16 * t : 16 * t + 16] for t in range(len(tiles))]

    dut.vld.value = 0
    dut.a_col.value = 0
    dut.b_row.value = 0
    dut.load.value = 0
    dut.c_flat.value = 0
    await start_and_reset(dut)
    report = Report(what)
    timeouts = 0

    for t, tile in enumerate(tiles):
        want = expected[t]
        k = tile.a.shape[1]
        seen = [0] * 16

        dut.load.value = 1
        dut.c_flat.value = _pack(tile.c.reshape(16), 32)
        dut.vld.value = 0
        await FallingEdge(dut.clk)
        sample(dut, report, t, tile, want, seen)
        dut.load.value = 0
        step = 0
        while step < k:
            if bubble and rng.random() < bubble:
                dut.vld.value = 0
                dut.a_col.value = int(rng.integers(0, 1 << 63)) << 1 | 1
                dut.b_row.value = int(rng.integers(0, 1 << 63))
            else:
                dut.vld.value = 1
                dut.a_col.value = _pack(tile.a[:, step], 16)
                dut.b_row.value = _pack(tile.b[step, :], 16)
                step += 1
            await FallingEdge(dut.clk)
            sample(dut, report, t, tile, want, seen)
        dut.vld.value = 0
        waited = 0
        while min(seen) < k and waited < DRAIN_LIMIT_CYCLES:
            await FallingEdge(dut.clk)
            waited += 1
            sample(dut, report, t, tile, want, seen)
        late = [divmod(p, 4) for p in range(16) if seen[p] < k]
        if late:
            report.fail(
                f"tile {t} ({tile.scenario}): PEs {late} raised acc_vld fewer than {k} times "
                f"within {DRAIN_LIMIT_CYCLES} cycles of the last step (timeout)"
            )
            timeouts += 1
            if timeouts == MAX_TIMEOUTS:
                report.fail(f"stopped after {timeouts} timeouts, at tile {t} of {len(tiles)}")
                break
        await FallingEdge(dut.clk)
        sample(dut, report, t, tile, want, seen)
        accs = dut.acc_flat.value.to_unsigned()
        for p in range(16):
            got = (accs >> (32 * p)) & MASK32
            final = int(want[p][-1])
            i, j = divmod(p, 4)
            if got == final:
                report.ok()
            else:
                report.fail(
                    f"tile {t} ({tile.scenario}) PE ({i}, {j}): acc after the tile "
                    f"holds {h32(got)}, want D = {h32(final)}"
                )
    report.finish(dut._log)


@cocotb.test()
async def mesh_random_tiles(dut):
    """Constrained-random tiles of 1..16 steps in every tile scenario, bubbles in a quarter
    of the cycles."""
    s = seed()
    tiles = stimulus.tiles(s, env_int("TCRTL_COCOTB_TILES", 60), 16)
    await run_tiles(dut, tiles, 0.25, np.random.default_rng(s + 2000), "mesh_random_tiles")


@cocotb.test()
async def mesh_full_rate(dut):
    """Tiles of up to 32 steps, a step every cycle: the wavefront at full throughput."""
    s = seed()
    count = max(1, env_int("TCRTL_COCOTB_TILES", 60) // 3)
    tiles = stimulus.tiles(s + 1, count, 32)
    await run_tiles(dut, tiles, 0.0, np.random.default_rng(s + 2001), "mesh_full_rate")
