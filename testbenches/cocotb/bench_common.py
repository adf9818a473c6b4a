"""What the PE and mesh benches share: their settings, the clock and reset, mismatch reports.

Settings come from environment variables (the runner `run.py` sets them from its options):
`TCRTL_COCOTB_SEED` (default 1), `TCRTL_COCOTB_CHAINS` (PE chains a test, default 300),
`TCRTL_COCOTB_TILES` (mesh tiles a test, default 60). A value that is not a non-negative
integer stops the test with one line naming the variable.

Timing follows docs/course/interfaces.md: `rst` is high for the first two rising edges,
inputs change on the falling edge and outputs are sampled on the falling edge.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge

# How long a design may take, after the last step went in, to raise its last output-valid:
# a bound on the wait, not a latency the bench expects (the same 64 cycles as tb/tb_mesh.v).
DRAIN_LIMIT_CYCLES = 64

# A test stops after this many timeouts (a design that never raises its output-valid would
# otherwise wait DRAIN_LIMIT_CYCLES on every chain).
MAX_TIMEOUTS = 3

# Mismatch lines printed in a failing test's message (all are counted).
SHOW_MISMATCHES = 10


def env_int(name: str, default: int) -> int:
    """A non-negative integer setting from the environment, or `default` when unset."""
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw, 0)
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not an integer") from None
    if value < 0:
        raise ValueError(f"{name}={raw!r} must not be negative")
    return value


def seed() -> int:
    """The stimulus seed of this run."""
    return env_int("TCRTL_COCOTB_SEED", 1)


async def start_and_reset(dut) -> None:
    """Start a 10 ns clock, hold `rst` high for two rising edges, return at a falling edge
    with `rst` low (inputs are set by the caller before this)."""
    Clock(dut.clk, 10, unit="ns").start(start_high=False)
    dut.rst.value = 1
    await RisingEdge(dut.clk)
    await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0


def h16(x: int) -> str:
    return f"0x{int(x):04x}"


def h32(x: int) -> str:
    return f"0x{int(x):08x}"


@dataclass
class Report:
    """Counts checks and mismatches; `finish` fails the test with the first mismatches."""

    what: str
    checks: int = 0
    mismatches: list[str] = field(default_factory=list)
    count: int = 0

    def ok(self) -> None:
        """Count one check that passed."""
        self.checks += 1

    def fail(self, line: str) -> None:
        """Count one check that failed, keeping its line for the report (the first few)."""
        self.checks += 1
        self.count += 1
        if len(self.mismatches) < SHOW_MISMATCHES:
            self.mismatches.append(line)

    def finish(self, log) -> None:
        log.info("%s: %d checks, %d failed", self.what, self.checks, self.count)
        if self.checks == 0:
            raise AssertionError(f"{self.what}: no check was made (no chains or tiles?)")
        if self.count:
            raise AssertionError(
                f"{self.what}: {self.count} of {self.checks} checks failed; first:\n  "
                + "\n  ".join(self.mismatches)
            )
