"""One report: for the same job, the dict ``tcrtl.gemm`` returns (``.json``) and the command
line's ``tcrtl gemm --json`` object have the same keys and the same values (the wall-clock
figures aside), in each dataflow, on each memory path, dense, 2:4 sparse, block-scaled and
integer; and a weight- or input-stationary report has none of the output-stationary port's
keys."""

import json

import numpy as np
import pytest

import tcrtl
from conftest import cli, random_patterns

# Wall-clock figures: they differ from run to run.
TIMING = {"sim_seconds", "cycles_per_second", "macs_per_second"}

# The memory keys only the output-stationary port has.
OS_ONLY = {"a_panel_reuse", "swizzle", "window_wait_cycles", "overlap_cycles"}

FLAG = {"fmt": "--format", "fmt_b": "--format-b", "out_fmt": "--out-format"}


def opts(run):
    out = []
    for key, v in run.items():
        if v is True:
            out.append(f"--{key}")
        else:
            out += [FLAG.get(key, f"--{key}"), v]
    return out


def cli_json(*args):
    return json.loads(cli("gemm", "--json", *args)[1])


def assert_same_report(j, r):
    """The command line's JSON `j` and the package's result `r` report the same run."""
    assert set(r.json) == set(j), (set(r.json) ^ set(j))
    for key in set(j) - TIMING:
        assert r.json[key] == j[key], key
    for key in TIMING:
        assert isinstance(r.json[key], float) and r.json[key] >= 0, key


def assert_dataflow_keys(j):
    memory = j["memory"]
    if j["dataflow"] in ("ws", "is"):
        assert not OS_ONLY & set(memory), memory
        assert not OS_ONLY & set(j), j
    else:
        want = OS_ONLY if memory["path"] == "tma" else {"window_wait_cycles"}
        assert want <= set(memory), memory
    if memory["path"] == "tma":
        assert memory["params"]["latency"] > 0
        assert ("weight_stages" in memory) == (j["dataflow"] == "ws"), memory


RANDOM_RUNS = [
    dict(m=9, n=7, k=40, seed=3, fmt="fp16"),
    dict(m=9, n=7, k=40, seed=3, fmt="fp16", memory="tma"),
    dict(m=9, n=7, k=40, seed=3, fmt="bf16", dataflow="ws"),
    dict(m=9, n=7, k=40, seed=3, fmt="bf16", dataflow="ws", memory="tma"),
    dict(m=9, n=7, k=40, seed=3, fmt="bf16", dataflow="is", rows=3, cols=5),
    dict(m=7, n=6, k=32, seed=5, fmt="s8", satfinite=True, width=4, dataflow="is"),
    dict(m=8, n=8, k=64, seed=2, fmt="e4m3", acc="nvidia", preset="hopper", width=8),
    dict(m=8, n=6, k=32, seed=4, fmt="fp16", sparse=True),
    dict(m=8, n=6, k=32, seed=4, fmt="fp16", sparse=True, dataflow="ws", memory="tma"),
    dict(m=7, n=6, k=32, seed=5, fmt="s8"),
    dict(m=7, n=6, k=32, seed=5, fmt="s8", satfinite=True, dataflow="ws", memory="tma"),
    dict(m=6, n=6, k=16, seed=6, fmt="s4", width=4),
    dict(m=5, n=6, k=8, fmt="fp16", pattern="iota"),
]


@pytest.mark.parametrize("run", RANDOM_RUNS,
                         ids=lambda r: "-".join(f"{k}={v}" for k, v in r.items()))
def test_generated_report_matches_cli(run):
    j = cli_json(*opts(run))
    r = tcrtl.gemm(**run)
    assert_same_report(j, r)
    assert_dataflow_keys(j)
    assert j["check"]["mismatches"] == 0
    integer = run["fmt"] in ("s8", "s4")
    assert ("overflow" in j) == integer and ("preset" in j) == (not integer)
    assert ("steps_per_tile" in j) == bool(run.get("sparse"))


@pytest.mark.parametrize("dataflow,memory", [("os", "ideal"), ("os", "tma"), ("ws", "ideal"),
                                             ("ws", "tma")])
def test_given_operands_report_matches_cli(npy, dataflow, memory):
    a = random_patterns("fp16", (6, 24), seed=40)
    b = random_patterns("fp16", (24, 5), seed=41)
    c = np.linspace(-2, 2, 30, dtype=np.float32).reshape(6, 5)
    j = cli_json("--a", npy("A", a), "--b", npy("B", b), "--c", npy("C", c), "--check",
                 "--dataflow", dataflow, "--memory", memory)
    r = tcrtl.gemm(a, b, c, check=True, dataflow=dataflow, memory=memory)
    assert_same_report(j, r)
    assert_dataflow_keys(j)
    assert j["seed"] is None


def mx_codes(m, n, k, seed):
    """MXFP8 E4M3 element codes (no NaN code) and E8M0 scale codes near 1, drawn with numpy."""
    g = np.random.default_rng(seed)
    a = g.integers(0, 256, (m, k)).astype(np.uint8)
    b = g.integers(0, 256, (k, n)).astype(np.uint8)
    for x in (a, b):
        x[(x & 0x7F) == 0x7F] = 0x3C
    sa = g.integers(120, 134, (m, k // 32)).astype(np.uint8)
    sb = g.integers(120, 134, (k // 32, n)).astype(np.uint8)
    return a, b, sa, sb


@pytest.mark.parametrize("dataflow,memory,width", [("os", "ideal", 4), ("os", "tma", 8),
                                                   ("ws", "ideal", 32), ("ws", "tma", 32)])
def test_block_scaled_report_matches_cli(npy, dataflow, memory, width):
    a, b, sa, sb = mx_codes(5, 6, 64, seed=7)
    j = cli_json("--format", "mxfp8e4m3", "--a", npy("A", a), "--b", npy("B", b),
                 "--a-scales", npy("SA", sa), "--b-scales", npy("SB", sb), "--check",
                 "--width", width, "--dataflow", dataflow, "--memory", memory)
    r = tcrtl.gemm(a, b, a_scales=sa, b_scales=sb, fmt="mxfp8e4m3", check=True, width=width,
                   dataflow=dataflow, memory=memory)
    assert_same_report(j, r)
    assert_dataflow_keys(j)
    assert j["block"] == 32 and "seed" not in j and "preset" not in j
