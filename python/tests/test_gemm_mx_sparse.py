"""tcrtl.gemm with block-scaled formats (MX, MXINT8, NVFP4) and with 2:4-sparse numpy
operands, against `tcrtl gemm --out ... --json` on the same arrays: D bit for bit, the
counters and the check; every refusal raises ValueError with the command line's message (its
file named by the argument instead); and the weight-stationary core through the TMA memory
path against `--dataflow ws --memory tma`."""

import json

import numpy as np
import pytest

import tcrtl
from conftest import cli, cli_error, random_patterns

# Element bits of each block format's codes and its block size.
BITS = {"mxfp8e4m3": 8, "mxfp8e5m2": 8, "mxfp6e2m3": 6, "mxfp6e3m2": 6, "mxfp4": 4,
        "mxint8": 8, "nvfp4": 4}
BLOCK = {name: 16 if name == "nvfp4" else 32 for name in BITS}


def mx_problem(fmt, m, n, k, seed):
    """Random codes of `fmt` (no E4M3 NaN codes), scale codes near 1 (E8M0 around 127;
    UE4M3 for NVFP4) and an FP32 C, drawn with numpy."""
    g = np.random.default_rng(seed)
    bs = BLOCK[fmt]

    def codes(shape):
        x = g.integers(0, 1 << BITS[fmt], shape).astype(np.uint8)
        if fmt == "mxfp8e4m3":
            x[(x & 0x7F) == 0x7F] = 0x3C
        return x

    a, b = codes((m, k)), codes((k, n))
    if fmt == "mxint8":
        a, b = a.view(np.int8), b.view(np.int8)
    if fmt == "nvfp4":
        sa = g.integers(0x28, 0x48, (m, k // bs)).astype(np.uint8)
        sb = g.integers(0x28, 0x48, (k // bs, n)).astype(np.uint8)
    else:
        sa = g.integers(120, 134, (m, k // bs)).astype(np.uint8)
        sb = g.integers(120, 134, (k // bs, n)).astype(np.uint8)
    c = g.uniform(-8, 8, (m, n)).astype(np.float32).view(np.uint32)
    return a, b, sa, sb, c


def cli_run(tmp_path, *opts):
    out = tmp_path / "D.npy"
    j = json.loads(cli("gemm", "--out", out, "--json", *opts)[1])
    d = np.load(out)
    return j, (d.view(np.uint32) if d.dtype == np.float32 else d)


def mx_files(npy, a, b, sa, sb, c=None):
    opts = ["--a", npy("A", a), "--b", npy("B", b), "--a-scales", npy("SA", sa),
            "--b-scales", npy("SB", sb)]
    if c is not None:
        opts += ["--c", npy("C", c)]
    return opts


MX_RUNS = [
    dict(fmt="mxfp8e4m3", m=5, n=6, k=64, width=4),
    dict(fmt="mxfp8e5m2", m=4, n=4, k=32),
    dict(fmt="mxfp6e3m2", m=6, n=5, k=96, width=8),
    dict(fmt="mxfp6e2m3", m=4, n=7, k=64, width=2, rows=2, cols=3),
    dict(fmt="mxfp4", m=7, n=4, k=64, width=32),
    dict(fmt="mxint8", m=5, n=5, k=64, width=16),
    dict(fmt="nvfp4", m=6, n=6, k=48, width=16, tensor=(0.5, 3.0)),
    # The weight-stationary core: width = the block size.
    dict(fmt="mxfp8e4m3", m=5, n=6, k=160, width=32, rows=2, cols=3, dataflow="ws"),
    dict(fmt="mxfp4", m=6, n=5, k=64, width=32, dataflow="ws"),
    dict(fmt="mxint8", m=4, n=6, k=96, width=32, rows=3, cols=2, dataflow="ws"),
    dict(fmt="nvfp4", m=5, n=4, k=64, width=16, dataflow="ws", tensor=(2.0, 0.25)),
    # Through the TMA memory path (the block scales travel beside their operands), in os
    # and in ws.
    dict(fmt="mxfp8e4m3", m=9, n=6, k=160, width=16, memory="tma"),
    dict(fmt="nvfp4", m=5, n=7, k=64, width=8, rows=2, cols=3, memory="tma",
         tensor=(0.5, -2.0)),
    dict(fmt="mxfp6e2m3", m=5, n=6, k=96, width=32, rows=2, cols=3, dataflow="ws",
         memory="tma"),
    dict(fmt="nvfp4", m=6, n=5, k=64, width=16, dataflow="ws", memory="tma",
         tensor=(0.5, -2.0)),
]


@pytest.mark.parametrize("run", MX_RUNS, ids=lambda r: "-".join(f"{k}={v}" for k, v in r.items()))
def test_mx_gemm_matches_cli(tmp_path, npy, run):
    run = dict(run)
    fmt, m, n, k = run.pop("fmt"), run.pop("m"), run.pop("n"), run.pop("k")
    tensor = run.pop("tensor", None)
    a, b, sa, sb, c = mx_problem(fmt, m, n, k, seed=m * n + k)
    opts = ["--format", fmt, *mx_files(npy, a, b, sa, sb, c), "--check"]
    for key, v in run.items():
        opts += [f"--{key}", v]
    kw = dict(run)
    if tensor is not None:
        opts += ["--a-tensor-scale", tensor[0], "--b-tensor-scale", tensor[1]]
        kw.update(a_tensor_scale=tensor[0], b_tensor_scale=tensor[1])
    j, d = cli_run(tmp_path, *opts)
    r = tcrtl.gemm(a, b, c, a_scales=sa, b_scales=sb, fmt=fmt, check=True, **kw)
    assert r.d.dtype == np.uint32 and r.d.shape == (m, n)
    assert np.array_equal(r.d, d.reshape(m, n))
    # Not a degenerate problem: most of D is nonzero.
    assert np.count_nonzero(r.values) > m * n // 2
    for key in ("m", "n", "k", "format", "format_b", "acc", "block", "width", "rows", "cols",
                "dataflow", "cycles", "tiles", "macs", "utilization", "flags", "check"):
        assert r.json[key] == j[key], key
    assert r.check["mismatches"] == 0
    for key in ("a_tensor_scale", "b_tensor_scale"):
        if j[key] is None:
            assert r.json[key] is None
        else:
            assert np.float32(r.json[key]) == np.float32(j[key]), key
    assert r.cycles == j["cycles"] and r.utilization == j["utilization"]
    assert j["memory"]["path"] == r.json["memory"]["path"] == run.get("memory", "ideal")
    for key, v in j["memory"].items():
        if key in r.json["memory"]:
            assert r.json["memory"][key] == v, key


def test_mx_gemm_takes_ml_dtypes_values(tmp_path, npy):
    """ml_dtypes arrays of the element and scale formats are their codes bit for bit."""
    ml = pytest.importorskip("ml_dtypes")
    a, b, sa, sb, c = mx_problem("mxfp8e4m3", 4, 5, 64, seed=9)
    r = tcrtl.gemm(a, b, c, a_scales=sa, b_scales=sb, fmt="mxfp8e4m3", width=8)
    rv = tcrtl.gemm(a.view(ml.float8_e4m3fn), b.view(ml.float8_e4m3fn), c.view(np.float32),
                    a_scales=sa.view(ml.float8_e8m0fnu), b_scales=sb.view(ml.float8_e8m0fnu),
                    fmt="mxfp8e4m3", width=8)
    assert np.array_equal(r.d, rv.d)
    j, d = cli_run(tmp_path, "--format", "mxfp8e4m3", *mx_files(npy, a, b, sa, sb, c),
                   "--width", 8)
    assert np.array_equal(rv.d, d.reshape(4, 5))
    # Without C, D is A x B alone (as the command line without --c).
    j0, d0 = cli_run(tmp_path, "--format", "mxfp8e4m3", *mx_files(npy, a, b, sa, sb))
    r0 = tcrtl.gemm(a, b, a_scales=sa, b_scales=sb, fmt="mxfp8e4m3")
    assert np.array_equal(r0.d, d0.reshape(4, 5)) and r0.check is None


def _same_error(cli_args, paths, **kw):
    """tcrtl.gemm(**kw) raises ValueError with the command line's message, each file path in
    it replaced by the argument's name."""
    msg = cli_error("gemm", *cli_args)
    for path, name in paths.items():
        msg = msg.replace(str(path), name)
    with pytest.raises(ValueError) as e:
        tcrtl.gemm(**kw)
    assert str(e.value) == msg
    return msg


def test_mx_gemm_refusals_match_cli(npy):
    a, b, sa, sb, _ = mx_problem("mxfp6e2m3", 4, 4, 64, seed=3)
    files = {"A": npy("A", a), "B": npy("B", b), "SA": npy("SA", sa), "SB": npy("SB", sb)}
    names = {files["A"]: "a", files["B"]: "b", files["SA"]: "a_scales", files["SB"]: "b_scales"}

    def case(fmt, extra, a_=a, b_=b, sa_=sa, sb_=sb, **kw):
        args = ["--format", fmt, "--a", npy("A", a_), "--b", npy("B", b_),
                "--a-scales", npy("SA", sa_), "--b-scales", npy("SB", sb_), *extra]
        return _same_error(args, names, a=a_, b=b_, a_scales=sa_, b_scales=sb_, fmt=fmt, **kw)

    # Scale shapes, K not a multiple of 32, codes too wide for the element format.
    assert "A scales are 4 x 3" in case("mxfp6e2m3", [], sa_=np.full((4, 3), 127, np.uint8))
    assert "B scales are 4 x 4" in case("mxfp6e2m3", [], sb_=np.full((4, 4), 127, np.uint8))
    assert "multiple of 32" in case("mxfp6e2m3", [], a_=np.ones((4, 48), np.uint8),
                                    b_=np.ones((48, 4), np.uint8))
    msg = case("mxfp4", [], a_=np.full((4, 64), 0x3F, np.uint8))
    assert msg.startswith("a: A[0][0] = 0x3f does not fit in 4 bits"), msg
    assert "inner dimensions differ" in case("mxfp6e2m3", [], b_=np.ones((32, 4), np.uint8))
    # Options MX does not take.
    assert "fused" in case("mxfp6e2m3", ["--acc", "nvidia", "--preset", "hopper"],
                           acc="nvidia", preset="hopper")
    assert "--preset" in case("mxfp6e2m3", ["--acc", "fused", "--preset", "hopper"],
                              acc="fused", preset="hopper")
    assert "--satfinite" in case("mxfp4", ["--satfinite"], satfinite=True)
    assert "--out-format" in case("mxfp4", ["--out-format", "fp16"], out_fmt="fp16")
    assert "--sparse" in case("mxfp4", ["--sparse"], sparse=True)
    # Formats that do not pair up, tensor scales outside NVFP4, a bad B format.
    assert "applies to nvfp4 only" in case("mxfp4", ["--a-tensor-scale", "2"],
                                           a_tensor_scale=2.0)
    assert "MXINT8 pairs with MXINT8 only" in case("mxint8", ["--format-b", "mxfp8e4m3"],
                                                   fmt_b="mxfp8e4m3")
    assert "block-scaled --format-b" in case("mxfp4", ["--format-b", "fp16"], fmt_b="fp16")
    # Scales with a format that is not block-scaled.
    msg = case("e4m3", [])
    assert "need a block-scaled --format" in msg
    # Random problems are not offered for MX (the command line takes files).
    msg = cli_error("gemm", "--format", "mxfp4", "--m", 4, "--n", 4, "--k", 64)
    with pytest.raises(ValueError) as e:
        tcrtl.gemm(m=4, n=4, k=64, fmt="mxfp4")
    assert str(e.value) == msg and "--m/--n/--k" in msg
    # A missing array.
    msg = cli_error("gemm", "--format", "mxfp8e5m2", "--a", files["A"], "--b", files["B"])
    with pytest.raises(ValueError) as e:
        tcrtl.gemm(a, b, fmt="mxfp8e5m2")
    assert str(e.value) == msg and "--a-scales" in msg


def test_nvfp4_refusals_match_cli(npy):
    a, b, sa, sb, _ = mx_problem("nvfp4", 4, 4, 32, seed=5)
    names = {}

    def case(extra, sa_=sa, **kw):
        pa, pb, psa, psb = npy("A", a), npy("B", b), npy("SA", sa_), npy("SB", sb)
        names.update({pa: "a", pb: "b", psa: "a_scales", psb: "b_scales"})
        args = ["--format", "nvfp4", "--a", pa, "--b", pb, "--a-scales", psa, "--b-scales", psb,
                *extra]
        return _same_error(args, names, a=a, b=b, a_scales=sa_, b_scales=sb, fmt="nvfp4", **kw)

    assert "blocks hold 16" in case(["--width", "32"], width=32)
    assert "one block size" in case(["--format-b", "mxfp4"], fmt_b="mxfp4")
    msg = case([], sa_=np.full((4, 2), 0xB8, np.uint8))
    assert msg.startswith("a_scales: scale [0][0] = 0xb8") and "unsigned E4M3" in msg
    assert "needs 4 x 2" in case([], sa_=np.full((4, 1), 0x38, np.uint8))


def test_mx_ws_width_refused_as_cli(npy):
    """The weight-stationary core holds one K-block a PE: another width is the core's refusal,
    with the command line's message."""
    a, b, sa, sb, c = mx_problem("mxfp8e4m3", 4, 4, 64, seed=6)
    msg = cli_error("gemm", "--format", "mxfp8e4m3", *mx_files(npy, a, b, sa, sb, c),
                    "--width", 8, "--dataflow", "ws")
    with pytest.raises(ValueError) as e:
        tcrtl.gemm(a, b, c, a_scales=sa, b_scales=sb, fmt="mxfp8e4m3", width=8, dataflow="ws")
    assert str(e.value) == msg and "--width 32" in msg


def sparse_a(fmt, m, k, seed, violate=False):
    """A random dense A of `fmt` patterns with at most two nonzeros in each group of four
    along K (drawn with numpy); with `violate`, one group keeps three."""
    g = np.random.default_rng(seed)
    a = random_patterns(fmt, (m, k), seed=seed)
    for i in range(m):
        for q in range(k // 4):
            drop = g.choice(4, size=int(g.integers(2, 5)), replace=False)
            a[i, 4 * q + drop] = 0
    if violate:
        a[m - 1, 4:7] = random_patterns(fmt, (3,), seed=seed + 1) | 1
    return a


SPARSE_RUNS = [
    dict(fmt="fp16", m=8, n=8, k=32, width=2),
    dict(fmt="bf16", m=6, n=9, k=40, acc="fused", width=4),
    dict(fmt="e4m3", m=8, n=8, k=64, acc="nvidia", preset="hopper", width=8),
    dict(fmt="fp16", m=8, n=6, k=32, width=2, rows=2, cols=3, dataflow="ws"),
    dict(fmt="fp16", m=5, n=7, k=48, acc="fused", width=4, dataflow="ws"),
    dict(fmt="fp16", m=8, n=8, k=32, width=2, memory="tma"),
    # The weight-stationary core through the TMA memory path: E beside A in its stages.
    dict(fmt="fp16", m=9, n=6, k=40, width=2, rows=2, cols=3, dataflow="ws", memory="tma"),
    dict(fmt="bf16", m=7, n=5, k=32, acc="fused", width=1, dataflow="ws", memory="tma"),
]


@pytest.mark.parametrize("run", SPARSE_RUNS,
                         ids=lambda r: "-".join(f"{k}={v}" for k, v in r.items()))
def test_sparse_numpy_operands_match_cli(tmp_path, npy, run):
    run = dict(run)
    fmt, m, n, k = run.pop("fmt"), run.pop("m"), run.pop("n"), run.pop("k")
    a = sparse_a(fmt, m, k, seed=m + k)
    b = random_patterns(fmt, (k, n), seed=m + k + 1)
    c = np.random.default_rng(k).uniform(-2, 2, (m, n)).astype(np.float32)
    opts = ["--format", fmt, "--sparse", "--a", npy("A", a), "--b", npy("B", b),
            "--c", npy("C", c), "--check"]
    for key, v in run.items():
        opts += [f"--{key}", v]
    j, d = cli_run(tmp_path, *opts)
    r = tcrtl.gemm(a, b, c, fmt=fmt, sparse=True, check=True, **run)
    assert np.array_equal(r.d, d.reshape(m, n))
    for key in ("cycles", "tiles", "macs", "mac_slots_used", "mac_slots_offered", "utilization",
                "dataflow", "acc", "width", "flags", "check"):
        assert r.json[key] == j[key], key
    assert r.check["mismatches"] == 0
    for key, v in j["memory"].items():
        if key in r.json["memory"]:
            assert r.json["memory"][key] == v, key
    # The sparse run is not the dense one: half the MACs of the dense problem.
    assert r.macs == m * n * k // 2


def test_sparse_prune_matches_cli(tmp_path, npy):
    a = sparse_a("fp16", 4, 16, seed=3, violate=True)
    b = random_patterns("fp16", (16, 4), seed=4)
    j, d = cli_run(tmp_path, "--sparse", "--prune", "--a", npy("A", a), "--b", npy("B", b),
                   "--width", 2)
    r = tcrtl.gemm(a, b, sparse=True, prune=True, width=2)
    assert np.array_equal(r.d, d.reshape(4, 4))


def test_sparse_refusals_match_cli(npy):
    b = random_patterns("fp16", (16, 4), seed=4)
    bad = sparse_a("fp16", 4, 16, seed=3, violate=True)
    for a_, b_, flags, kw, needle in [
        (bad, b, [], {}, "2:4 sparsity allows at most 2"),
        (sparse_a("fp16", 4, 16, seed=5)[:, :6], random_patterns("fp16", (6, 4), seed=6), [],
         {}, "not a multiple of 4"),
        (sparse_a("fp16", 4, 16, seed=5), random_patterns("fp16", (12, 4), seed=6), [], {},
         "inner dimensions differ"),
        (sparse_a("tf32", 4, 16, seed=7), random_patterns("tf32", (16, 4), seed=8),
         ["--format", "tf32", "--width", "1"], dict(fmt="tf32", width=1), "bit bus"),
    ]:
        msg = cli_error("gemm", "--sparse", "--a", npy("A", a_), "--b", npy("B", b_), *flags)
        assert needle in msg, msg
        with pytest.raises(ValueError) as e:
            tcrtl.gemm(a_, b_, sparse=True, **kw)
        assert str(e.value) == msg
    # The B-bus refusal holds for random sparse problems too.
    msg = cli_error("gemm", "--sparse", "--m", 4, "--n", 4, "--k", 16, "--format", "tf32",
                    "--width", 1)
    with pytest.raises(ValueError) as e:
        tcrtl.gemm(m=4, n=4, k=16, sparse=True, fmt="tf32", width=1)
    assert str(e.value) == msg
    with pytest.raises(ValueError, match="prune applies to 2:4 sparse problems"):
        tcrtl.gemm(bad, b, prune=True)


def test_ws_through_tma_matches_cli(tmp_path):
    """The weight-stationary core through the TMA memory path: D and the memory counters
    (shared-memory reads and writes among them) as `--dataflow ws --memory tma`."""
    run = dict(m=12, n=8, k=32, seed=21, fmt="fp16", width=2, dataflow="ws", memory="tma")
    opts = []
    for key, v in run.items():
        opts += [{"fmt": "--format"}.get(key, f"--{key}"), v]
    j, d = cli_run(tmp_path, *opts)
    r = tcrtl.gemm(**run)
    assert np.array_equal(r.d.reshape(-1), d.reshape(-1))
    assert r.json["dataflow"] == j["dataflow"] == "ws"
    assert r.json["memory"]["path"] == j["memory"]["path"] == "tma"
    for key in ("smem_read_bytes", "smem_write_bytes"):
        assert key in j["memory"], key
        assert r.json["memory"][key] == j["memory"][key], key
    assert j["memory"]["smem_read_bytes"] > 0 and j["memory"]["smem_write_bytes"] > 0
    for key in ("bytes_loaded", "bytes_stored", "tx_bytes", "stall_cycles", "stages",
                "requests", "bank_conflicts"):
        assert r.json["memory"][key] == j["memory"][key], key
    assert r.cycles == j["cycles"] and r.check == j["check"]
    assert r.check["mismatches"] == 0


def test_docs_examples_run():
    """The examples of docs/python.md: a sparse numpy A in ws, and quantised MX operands."""
    a = np.zeros((8, 32), np.float16)
    a[:, ::4] = 1.5
    a[:, 1::4] = -2.0
    b = np.random.default_rng(3).uniform(-1, 1, (32, 8)).astype(np.float16)
    r = tcrtl.gemm(a, b, sparse=True, width=2, dataflow="ws", check=True)
    assert r.check["mismatches"] == 0 and r.macs == 8 * 8 * 32 // 2
    q = tcrtl.quantize(np.random.default_rng(1).normal(size=(8, 64)), "mxfp8e4m3")
    qb = tcrtl.quantize(np.random.default_rng(2).normal(size=(8, 64)), "mxfp8e4m3")
    r = tcrtl.gemm(q.elements, qb.elements.T, a_scales=q.scales, b_scales=qb.scales.T,
                   fmt="mxfp8e4m3", width=32, dataflow="ws", check=True)
    assert r.check["mismatches"] == 0
    assert r.check["reference"] == "verify::mx_ref and mx_dot fused, in the ws order"
    # D is close to the float64 product of the dequantised operands.
    exact = tcrtl.dequantize(q) @ tcrtl.dequantize(qb).T
    assert np.allclose(r.values, exact, rtol=1e-5, atol=1e-5)
