"""tcrtl.PE, the step-level processing element, against tcrtl.dot: a cocotb-style
scoreboard feeding one step a cycle and predicting the accumulator."""

import numpy as np
import pytest

import tcrtl
from conftest import random_c, random_patterns


def run_tile(pe, a_rows, b_rows, c, width):
    """Preloads C, feeds K in steps of `width` lanes (the last marked), drains the pipeline;
    returns the accumulator and the cycle `done` rose."""
    pe.step(shift=(0, int(c)))
    k = len(a_rows)
    steps = [(a_rows[i:i + width], b_rows[i:i + width]) for i in range(0, k, width)]
    for s, (a, b) in enumerate(steps):
        pe.step([int(x) for x in a], [int(x) for x in b], last=(s == len(steps) - 1))
    pe.step()
    assert pe.done
    return pe.acc(0)


@pytest.mark.parametrize("fmt,acc,preset,width", [("fp16", "ieee", None, 1),
                                                 ("fp16", "fused", None, 4),
                                                 ("bf16", "fused", None, 8),
                                                 ("e4m3", "nvidia", "hopper", 32),
                                                 ("fp16", "nvidia", "volta", 4)])
def test_pe_matches_dot(fmt, acc, preset, width):
    k = 32
    a = random_patterns(fmt, (20, k), seed=40)
    b = random_patterns(fmt, (20, k), seed=41)
    c = random_c(20)
    want = tcrtl.dot(a, b, c, fmt=fmt, acc=acc, preset=preset, width=width).bits
    for i in range(20):
        pe = tcrtl.PE(fmt, acc, width, preset=preset)
        fire_steps = None
        if acc == "nvidia" and width < 32:
            # A block spans several steps: `fire` on each block's last step.
            pe.step(shift=(0, int(c[i])))
            block = 8 if preset == "volta" else 16
            steps = range(0, k, width)
            for s, j in enumerate(steps):
                pe.step([int(x) for x in a[i, j:j + width]], [int(x) for x in b[i, j:j + width]],
                        last=(s == len(steps) - 1), fire=((j + width) % block == 0))
            pe.step()
            got = pe.acc(0)
        else:
            got = run_tile(pe, a[i], b[i], c[i], width)
        assert got == want[i], (i, hex(got), hex(int(want[i])))
        assert fire_steps is None


def test_pe_timing_and_stage_fields():
    pe = tcrtl.PE()  # fp16, ieee, one lane
    assert "pe_harness.pe.s1_prod" in pe.signals()
    pe.step(shift=(1, 0x3F800000))            # C = 1.0 into set 1
    assert pe.acc(1) == 0x3F800000 and pe.cycle == 1
    pe.step([0x4000], [0x4200], last=True, set=1)   # 2.0 x 3.0
    assert pe.a_out == ([0x4000], 1 | 0x200 | 0x40 | 0x100)
    assert pe.b_out == ([0x4200], True)
    assert pe.acc(1) == 0x3F800000 and not pe.done  # stage 2 one cycle later
    assert pe.peek("s1_prod") != 0
    pe.step()
    assert pe.done and pe.acc(1) == 0x40E00000      # 7.0
    assert pe.flags == 0                            # 2 x 3 + 1 is exact
    pe.step()
    assert not pe.done


def test_pe_hazard_and_errors():
    pe = tcrtl.PE("fp16", "fused", 2)
    pe.step([0x3C00, 0x3C00], [0x3C00, 0x3C00], last=True)
    pe.step(shift=(0, 0x0))   # stage 2 writes set 0 while the shift path writes it
    assert pe.hazard
    with pytest.raises(ValueError, match="lanes"):
        pe.step([1, 2, 3], [1, 2, 3])
    with pytest.raises(ValueError, match="--acc exact is a reference"):
        tcrtl.PE("fp16", "exact")
    with pytest.raises(ValueError, match="1, 2, 4, 8, 16 or 32"):
        tcrtl.PE("fp16", "fused", 3)


def test_pe_waveform(tmp_path):
    p = tmp_path / "pe.vcd"
    pe = tcrtl.PE(vcd=str(p))
    pe.step([0x3C00], [0x3C00], last=True)
    pe.step()
    pe.close()
    assert "s1_prod" in p.read_text()
    with pytest.raises(ValueError, match="closed"):
        pe.step()
