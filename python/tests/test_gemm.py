"""tcrtl.gemm against `tcrtl gemm --out ... --json` (D, cycles, utilization and counters) and
tcrtl.matmul against both."""

import json

import numpy as np
import pytest

import tcrtl
from conftest import cli, random_patterns


def cli_gemm(tmp_path, *opts):
    out = tmp_path / "D.npy"
    j = json.loads(cli("gemm", "--out", out, "--json", *opts)[1])
    d = np.load(out)
    return j, (d.view(np.uint32) if d.dtype == np.float32 else d)


RUNS = [
    dict(m=8, n=8, k=32, seed=1, fmt="fp16"),
    dict(m=5, n=7, k=19, seed=3, fmt="bf16", acc="fused", width=4),
    dict(m=8, n=8, k=64, seed=2, fmt="e4m3", acc="nvidia", preset="hopper", width=8),
    dict(m=8, n=8, k=32, seed=4, fmt="fp16", out_fmt="fp16", acc="nvidia", preset="ampere"),
    dict(m=12, n=8, k=16, seed=5, fmt="fp16", rows=8, cols=4),
    dict(m=8, n=8, k=16, seed=6, fmt="fp16", dataflow="ws"),
    dict(m=7, n=9, k=13, seed=9, fmt="fp16", rows=3, cols=5, dataflow="is"),
    dict(m=8, n=8, k=32, seed=7, fmt="fp16", memory="tma"),
    dict(m=8, n=8, k=32, seed=8, fmt="fp16", sparse=True),
]

FLAG = {"fmt": "--format", "fmt_b": "--format-b", "out_fmt": "--out-format"}


def to_opts(run):
    opts = []
    for key, v in run.items():
        if v is True:
            opts.append(f"--{key}")
        else:
            opts += [FLAG.get(key, f"--{key}"), v]
    return opts


@pytest.mark.parametrize("run", RUNS, ids=lambda r: "-".join(f"{k}={v}" for k, v in r.items()))
def test_gemm_matches_cli(tmp_path, run):
    j, d = cli_gemm(tmp_path, *to_opts(run))
    r = tcrtl.gemm(**run)
    assert np.array_equal(r.d.reshape(-1), d.reshape(-1))
    for key in ("cycles", "tiles", "macs", "mac_slots_used", "mac_slots_offered", "utilization",
                "rows", "cols", "dataflow", "acc", "width", "out_format"):
        assert r.json[key] == j[key], key
    assert r.flags == j["flags"]
    assert r.check == j["check"]
    assert r.check["mismatches"] == 0
    for key, v in j["memory"].items():
        if key in r.json["memory"]:
            assert r.json["memory"][key] == v, key
    if "traffic" in j:
        assert r.json["traffic"] == j["traffic"]


def test_gemm_numpy_operands_match_cli(tmp_path, npy):
    a = random_patterns("fp16", (6, 20), seed=30)
    b = random_patterns("fp16", (20, 9), seed=31)
    c = np.linspace(-1, 1, 54, dtype=np.float32).reshape(6, 9)
    j, d = cli_gemm(tmp_path, "--a", npy("A", a), "--b", npy("B", b), "--c", npy("C", c),
                    "--acc", "nvidia", "--preset", "hopper", "--width", "4")
    r = tcrtl.gemm(a, b, c, acc="nvidia", preset="hopper", width=4)
    assert np.array_equal(r.d, d.reshape(6, 9))
    assert r.cycles == j["cycles"]
    # The functional model tiles the same product into dot steps: the same bits.
    mm = tcrtl.matmul(a, b, c, acc="nvidia", preset="hopper", width=4)
    assert np.array_equal(mm.bits, r.d)
    # And each element is tcrtl.dot of its row and column with C first.
    rows = np.repeat(a, 9, axis=0)
    cols = np.tile(b.T, (6, 1))
    dd = tcrtl.dot(rows, cols, c.reshape(-1), acc="nvidia", preset="hopper", width=4)
    assert np.array_equal(dd.bits.reshape(6, 9), r.d)


def test_matmul_ws_order_matches_clocked_ws():
    a = random_patterns("fp16", (8, 24), seed=32)
    b = random_patterns("fp16", (24, 8), seed=33)
    r = tcrtl.gemm(a, b, acc="fused", width=2, dataflow="ws")
    mm = tcrtl.matmul(a, b, acc="fused", width=2, dataflow="ws")
    assert np.array_equal(mm.bits, r.d)


IS_RUNS = [
    dict(fmt="fp16", rows=3, cols=5),
    dict(fmt="bf16", acc="fused", width=4, rows=2, cols=3),
    dict(fmt="e4m3", acc="nvidia", preset="hopper", width=32),
    dict(fmt="s8", width=4, satfinite=True, rows=3, cols=2),
]


@pytest.mark.parametrize("run", IS_RUNS, ids=lambda r: "-".join(f"{k}={v}" for k, v in r.items()))
def test_gemm_is_is_the_ws_order_with_the_cli_cycles(tmp_path, npy, run):
    """The input-stationary core computes every element in the weight-stationary order: the
    same D as dataflow="ws" on the same problem; its cycles are the command line's for the
    same problem, and the weight-stationary schedule's of the transposed problem."""
    m, n, k = 7, 9, 26
    if run["fmt"] == "s8":
        g = np.random.default_rng(40)
        a = g.integers(-128, 128, size=(m, k)).astype(np.int8)
        b = g.integers(-128, 128, size=(k, n)).astype(np.int8)
        c = g.integers(-(1 << 31), 1 << 31, size=(m, n)).astype(np.int32)
    else:
        a = random_patterns(run["fmt"], (m, k), seed=40)
        b = random_patterns(run["fmt"], (k, n), seed=41)
        c = np.linspace(-2, 2, m * n, dtype=np.float32).reshape(m, n)
    r = tcrtl.gemm(a, b, c, dataflow="is", check=True, **run)
    assert r.json["dataflow"] == "is"
    assert r.check["mismatches"] == 0
    ws = tcrtl.gemm(a, b, c, dataflow="ws", **run)
    assert np.array_equal(r.d, ws.d)
    assert r.flags == ws.flags
    mm = tcrtl.matmul(a, b, c, dataflow="is", **run)
    assert np.array_equal(mm.bits, r.d)

    j, d = cli_gemm(tmp_path, "--a", npy("A", a), "--b", npy("B", b), "--c", npy("C", c),
                    "--dataflow", "is", "--check", *to_opts(run))
    assert j["dataflow"] == "is"
    assert j["check"]["mismatches"] == 0
    assert r.cycles == j["cycles"]
    assert np.array_equal(r.d.reshape(-1), d.reshape(-1).astype(r.d.dtype))
    # The schedule of the transposed problem (N streamed, M held): ws on B^T A^T + C^T.
    t = tcrtl.gemm(np.ascontiguousarray(b.T), np.ascontiguousarray(a.T),
                   np.ascontiguousarray(c.T), dataflow="ws", **run)
    assert r.cycles == t.cycles


def test_gemm_is_refusals_and_dataflow_choices():
    """What the input-stationary core does not take yet is refused with the library's
    message; an unknown dataflow lists the three."""
    with pytest.raises(ValueError, match="2:4 sparse GEMM in the input-stationary dataflow"):
        tcrtl.gemm(m=4, n=4, k=8, sparse=True, dataflow="is")
    with pytest.raises(ValueError, match="TMA memory path in the input-stationary dataflow"):
        tcrtl.gemm(m=4, n=4, k=8, memory="tma", dataflow="is")
    with pytest.raises(ValueError, match=r"ws \(weight-stationary\), is \(input-stationary\)"):
        tcrtl.gemm(m=4, n=4, k=8, dataflow="xs")


def test_gemm_writes_a_vcd(tmp_path):
    p = tmp_path / "g.vcd"
    r = tcrtl.gemm(m=4, n=4, k=4, seed=1, vcd=str(p))
    assert r.json["waves"] == str(p)
    text = p.read_text()
    assert text.startswith("$date") or "$timescale" in text
    assert "$enddefinitions" in text


@pytest.mark.parametrize("case", [
    dict(dtype="fp16", box=[64, 8], coords=[-8, 4], swizzle="128B"),
    dict(dtype="u8", box=[32, 4], coords=[0, 0]),
    dict(dtype="fp32", box=[16, 4], coords=[8, -2], oob="nan", swizzle="64B"),
])
def test_tma_load_matches_cli(npy, case):
    g = np.random.default_rng(50)
    t = {"fp16": g.normal(size=(16, 96)).astype(np.float16),
         "u8": g.integers(0, 256, (8, 64)).astype(np.uint8),
         "fp32": g.normal(size=(12, 40)).astype(np.float32)}[case["dtype"]]
    opts = ["--tensor", npy("T", t), "--dtype", case["dtype"],
            "--box", ",".join(map(str, case["box"])),
            "--coords", ",".join(map(str, case["coords"])),
            "--swizzle", case.get("swizzle", "none"), "--oob", case.get("oob", "zero")]
    j = json.loads(cli("tma", "load", *opts, "--json")[1])
    r = tcrtl.tma_load(t, dtype=case["dtype"], box=case["box"], coords=case["coords"],
                       swizzle=case.get("swizzle", "none"), oob=case.get("oob", "zero"))
    assert list(map(int, r.smem)) == j["smem"]
    for key in ("tx_bytes", "cycles", "oob_elements", "bank_conflicts", "requests",
                "bytes_loaded", "dtype", "swizzle"):
        assert r.json[key] == j[key], key


def test_tma_load_errors(npy):
    from conftest import cli_error
    t = np.zeros((4, 8), np.uint16)
    for kw, flags in [(dict(dtype="fp8"), ["--dtype", "fp8"]),
                      (dict(dtype="fp16", swizzle="16B"), ["--dtype", "fp16", "--swizzle", "16B"]),
                      (dict(dtype="fp32"), ["--dtype", "fp32"])]:
        msg = cli_error("tma", "load", "--tensor", npy("T", t), "--box", "8,4", "--coords",
                        "0,0", *flags)
        with pytest.raises(ValueError) as e:
            tcrtl.tma_load(t, box=[8, 4], coords=[0, 0], **kw)
        assert str(e.value) == msg.replace(str(npy("T", t)), "the tensor")


INT_RUNS = [
    dict(m=8, n=8, k=32, seed=11, fmt="s8"),
    dict(m=6, n=9, k=40, seed=12, fmt="s8", fmt_b="u8", width=4, satfinite=True),
    dict(m=5, n=4, k=24, seed=13, fmt="s4", width=8),
    dict(m=8, n=6, k=16, seed=14, fmt="u4", fmt_b="s4", rows=2, cols=3, dataflow="ws"),
    dict(m=8, n=8, k=32, seed=15, fmt="u8", memory="tma"),
]


@pytest.mark.parametrize("run", INT_RUNS, ids=lambda r: "-".join(f"{k}={v}" for k, v in r.items()))
def test_integer_gemm_matches_cli(tmp_path, run):
    j, d = cli_gemm(tmp_path, *to_opts(run))
    r = tcrtl.gemm(**run)
    assert r.d.dtype == np.int32
    assert np.array_equal(r.d.reshape(-1), d.reshape(-1).astype(np.int32))
    for key in ("cycles", "tiles", "macs", "utilization", "format", "format_b", "acc",
                "overflow", "rows", "cols", "dataflow", "width"):
        assert r.json[key] == j[key], key
    assert r.check == j["check"]
    assert r.check["mismatches"] == 0
    if "traffic" in j:
        assert r.json["traffic"] == j["traffic"]


def test_integer_numpy_operands_match_cli(tmp_path, npy):
    g = np.random.default_rng(21)
    a = g.integers(-128, 128, size=(6, 20)).astype(np.int8)
    b = g.integers(0, 256, size=(20, 7)).astype(np.uint8)
    c = g.integers(-(1 << 31), 1 << 31, size=(6, 7)).astype(np.int32)
    j, d = cli_gemm(tmp_path, "--a", npy("A", a), "--b", npy("B", b), "--c", npy("C", c),
                    "--format", "s8", "--format-b", "u8", "--width", "4", "--satfinite")
    r = tcrtl.gemm(a, b, c, fmt="s8", fmt_b="u8", width=4, satfinite=True)
    assert np.array_equal(r.d, d.reshape(6, 7).astype(np.int32))
    assert r.cycles == j["cycles"]
    # The functional model gives the same int32 words, and so does an exact int64 sum
    # clamped to int32 (satfinite).
    mm = tcrtl.matmul(a, b, c, fmt="s8", fmt_b="u8", width=4, satfinite=True)
    assert np.array_equal(mm.bits, r.d)
    exact = a.astype(np.int64) @ b.astype(np.int64) + c.astype(np.int64)
    assert np.array_equal(r.d, np.clip(exact, -(1 << 31), (1 << 31) - 1).astype(np.int32))


def test_integer_gemm_refusals():
    with pytest.raises(ValueError, match="accumulate exactly in int32"):
        tcrtl.gemm(m=4, n=4, k=8, fmt="s8", acc="fused")
    with pytest.raises(ValueError, match="integer GEMMs accumulate into int32"):
        tcrtl.gemm(m=4, n=4, k=8, fmt="s8", out_fmt="fp16")
    with pytest.raises(ValueError, match="satfinite applies to integer formats"):
        tcrtl.gemm(m=4, n=4, k=8, fmt="fp16", satfinite=True)
    with pytest.raises(ValueError, match="run dense"):
        tcrtl.gemm(m=4, n=4, k=8, fmt="s8", sparse=True)
    with pytest.raises(ValueError, match="range -8..7"):
        tcrtl.matmul(np.full((2, 4), 9, np.int8), np.zeros((4, 2), np.uint8), fmt="s4")
