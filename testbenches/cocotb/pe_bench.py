"""cocotb bench of the FP16 PE (`pe`, lab 1; ports in docs/course/interfaces.md).

Each chain: one cycle of `load` with C on `c_in`, then its K steps (a cycle with `a_vld_in`
and `b_vld_in` both high), with random bubbles in between: cycles with neither valid, or
with only one of the two valid bits high and garbage operands (NaN among them), which must
not be taken as steps. The bench knows no latency: every cycle in which `acc_vld` is high it
checks `acc` against the next step's golden sum (from `tcrtl`, golden.py), and it loads the
next chain once the PE has raised `acc_vld` K times; a design that has not done so
DRAIN_LIMIT_CYCLES cycles after the last step fails with a timeout, and one more `acc_vld`
than steps is a failure too. After the K-th sum the accumulator must hold it for an idle
cycle. Every cycle also checks the pass-through: `a_out`, `a_vld_out`, `b_out`, `b_vld_out`
are the inputs of the cycle before.
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


def _describe(chain: stimulus.Chain, index: int, k: int) -> str:
    """Chain `index` up to step k: C and the operands (the last four steps of a long one)."""
    first = max(0, k - 3)
    ops = ", ".join(
        f"{h16(a)}*{h16(b)}" for a, b in zip(chain.a[first : k + 1], chain.b[first : k + 1])
    )
    if first:
        ops = f"{first} earlier, " + ops
    return f"chain {index} ({chain.scenario}) step {k}: c={h32(chain.c)} steps [{ops}]"


class PassThrough:
    """Checks that the registered outputs repeat the previous cycle's inputs."""

    def __init__(self, report: Report):
        self.report = report
        self.prev = None

    def sample(self, dut, cycle: int) -> None:
        if self.prev is not None:
            got = (
                dut.a_out.value.to_unsigned(),
                int(dut.a_vld_out.value),
                dut.b_out.value.to_unsigned(),
                int(dut.b_vld_out.value),
            )
            want = self.prev
            if got == want:
                self.report.ok()
            else:
                self.report.fail(
                    f"cycle {cycle}: (a_out, a_vld_out, b_out, b_vld_out) = "
                    f"({h16(got[0])}, {got[1]}, {h16(got[2])}, {got[3]}), want "
                    f"({h16(want[0])}, {want[1]}, {h16(want[2])}, {want[3]})"
                )

    def drive(self, dut, a: int, a_vld: int, b: int, b_vld: int) -> None:
        dut.a_in.value = a
        dut.a_vld_in.value = a_vld
        dut.b_in.value = b
        dut.b_vld_in.value = b_vld
        self.prev = (a, a_vld, b, b_vld)


async def run_chains(dut, chains: list[stimulus.Chain], bubble: float, rng, what: str):
    """Drive `chains` through the PE, check every sum and the pass-through, report."""
    expected = golden.step_sums(
        np.array([ch.c for ch in chains], np.uint32),
        [ch.a for ch in chains],
        [ch.b for ch in chains],
    )
    dut.load.value = 0
    dut.c_in.value = 0
    report = Report(what)
    links = PassThrough(report)
    links.drive(dut, 0, 0, 0, 0)
    await start_and_reset(dut)
    links.prev = None  # the reset edge cleared the pass-through registers
    links.drive(dut, 0, 0, 0, 0)
    cycle = 0
    timeouts = 0

    def sample_acc(state: dict) -> None:
        """One falling-edge sample of acc / acc_vld against the current chain."""
        if not int(dut.acc_vld.value):
            return
        ch, want, idx = state["chain"], state["want"], state["index"]
        seen = state["seen"]
        got = dut.acc.value.to_unsigned()
        if seen >= len(want):
            report.fail(
                f"chain {idx} ({ch.scenario}): acc_vld raised a {seen + 1}th time "
                f"for {len(want)} steps (acc={h32(got)})"
            )
        else:
            w = int(want[seen])
            if got == w:
                report.ok()
            else:
                report.fail(f"{_describe(ch, idx, seen)}: acc got {h32(got)} want {h32(w)}")
        state["seen"] = seen + 1

    for idx, ch in enumerate(chains):
        state = {"chain": ch, "want": expected[idx], "index": idx, "seen": 0}
        k = len(ch.a)
        # The load cycle.
        dut.load.value = 1
        dut.c_in.value = ch.c
        links.drive(dut, 0, 0, 0, 0)
        await FallingEdge(dut.clk)
        cycle += 1
        links.sample(dut, cycle)
        sample_acc(state)
        dut.load.value = 0
        # The steps, with bubbles.
        step = 0
        while step < k:
            if bubble and rng.random() < bubble:
                kind = int(rng.integers(0, 3))  # 0: neither, 1: A only, 2: B only
                junk_a = int(rng.choice([0x7E00, 0x7C00, int(rng.integers(0, 1 << 16))]))
                junk_b = int(rng.choice([0xFC00, 0x3C00, int(rng.integers(0, 1 << 16))]))
                links.drive(dut, junk_a, int(kind == 1), junk_b, int(kind == 2))
            else:
                links.drive(dut, int(ch.a[step]), 1, int(ch.b[step]), 1)
                step += 1
            await FallingEdge(dut.clk)
            cycle += 1
            links.sample(dut, cycle)
            sample_acc(state)
        # Drain: wait for the remaining acc_vld pulses, bounded.
        links.drive(dut, 0, 0, 0, 0)
        waited = 0
        while state["seen"] < k and waited < DRAIN_LIMIT_CYCLES:
            await FallingEdge(dut.clk)
            cycle += 1
            waited += 1
            links.sample(dut, cycle)
            sample_acc(state)
        if state["seen"] < k:
            report.fail(
                f"chain {idx} ({ch.scenario}): acc_vld raised {state['seen']} times for "
                f"{k} steps, {DRAIN_LIMIT_CYCLES} cycles after the last step (timeout)"
            )
            timeouts += 1
            if timeouts == MAX_TIMEOUTS:
                report.fail(f"stopped after {timeouts} timeouts, at chain {idx} of {len(chains)}")
                break
        # One idle cycle: acc must hold the chain's result, acc_vld must stay low.
        await FallingEdge(dut.clk)
        cycle += 1
        links.sample(dut, cycle)
        sample_acc(state)
        final = int(expected[idx][-1])
        got = dut.acc.value.to_unsigned()
        if got == final:
            report.ok()
        else:
            report.fail(
                f"chain {idx} ({ch.scenario}): acc after the last step holds "
                f"{h32(got)}, want {h32(final)}"
            )
    report.finish(dut._log)


@cocotb.test()
async def pe_random_chains(dut):
    """Constrained-random chains of 1..16 steps in every scenario, bubbles in a quarter of
    the cycles."""
    s = seed()
    chains = stimulus.chains(s, env_int("TCRTL_COCOTB_CHAINS", 300), 16)
    await run_chains(dut, chains, 0.25, np.random.default_rng(s + 1000), "pe_random_chains")


@cocotb.test()
async def pe_full_rate(dut):
    """Long chains (up to 48 steps) with a step every cycle: the PE at full throughput."""
    s = seed()
    count = max(1, env_int("TCRTL_COCOTB_CHAINS", 300) // 6)
    chains = stimulus.chains(s + 1, count, 48)
    await run_chains(dut, chains, 0.0, np.random.default_rng(s + 1001), "pe_full_rate")


@cocotb.test()
async def pe_special_pairs(dut):
    """Every pair of named FP16 specials on every named FP32 C, one step each (4335 steps)."""
    await run_chains(
        dut, stimulus.special_pairs(), 0.0, np.random.default_rng(0), "pe_special_pairs"
    )
