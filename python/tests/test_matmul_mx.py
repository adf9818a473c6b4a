"""tcrtl.matmul with block-scaled formats (MX, MXINT8, NVFP4): the functional model against the
command line on the same arrays. Fused (the core's mode) against `tcrtl gemm --out --json
--check` in both dataflows, bit for bit with the flags; every mode `dot` offers against
`tcrtl dot` element by element (row i of A, column j of B, C[i, j]); every refusal with the
command line's message."""

import numpy as np
import pytest

import tcrtl
from conftest import cli_error, cli_json
from test_gemm_mx_sparse import BLOCK, cli_run, mx_files
from test_gemm_mx_sparse import mx_problem as _mx_problem


def mx_problem(fmt, m, n, k, seed):
    """The random problem of `test_gemm_mx_sparse` without E5M2's infinities and NaNs (so D
    is not all NaN)."""
    a, b, sa, sb, c = _mx_problem(fmt, m, n, k, seed)
    if fmt == "mxfp8e5m2":
        for x in (a, b):
            x[(x & 0x7C) == 0x7C] = 0x3C
    return a, b, sa, sb, c

MATMUL_RUNS = [
    dict(fmt="mxfp8e4m3", m=5, n=6, k=64),
    dict(fmt="mxfp8e5m2", m=4, n=4, k=32, width=8),
    dict(fmt="mxfp6e2m3", fmt_b="mxfp6e3m2", m=4, n=7, k=64, width=2),
    dict(fmt="mxfp4", m=7, n=4, k=96, width=32),
    dict(fmt="mxint8", m=5, n=5, k=64, width=16),
    dict(fmt="nvfp4", m=6, n=6, k=48, width=16, tensor=(0.5, 3.0)),
    # The weight-stationary order: folds of `rows` K-blocks, width the block size.
    dict(fmt="mxfp8e4m3", m=5, n=6, k=160, width=32, rows=2, cols=3, dataflow="ws"),
    dict(fmt="mxint8", m=4, n=6, k=96, width=32, rows=1, dataflow="ws"),
    dict(fmt="nvfp4", m=5, n=4, k=64, width=16, dataflow="ws", tensor=(2.0, 0.25)),
]

FLAG_BITS = {"invalid": 8, "overflow": 4, "underflow": 2, "inexact": 1}


def flag_bits(names):
    return sum(FLAG_BITS[n] for n in names)


@pytest.mark.parametrize("run", MATMUL_RUNS,
                         ids=lambda r: "-".join(f"{k}={v}" for k, v in r.items()))
def test_mx_matmul_matches_cli_gemm(tmp_path, npy, run):
    """The functional model gives the clocked core's bits (`tcrtl gemm --out`) and its flags."""
    run = dict(run)
    fmt, m, n, k = run.pop("fmt"), run.pop("m"), run.pop("n"), run.pop("k")
    tensor = run.pop("tensor", None)
    a, b, sa, sb, c = mx_problem(fmt, m, n, k, seed=3 * m + n + k)
    opts = ["--format", fmt, *mx_files(npy, a, b, sa, sb, c), "--check"]
    for key, v in run.items():
        opts += [{"fmt_b": "--format-b"}.get(key, f"--{key}"), v]
    kw = dict(run)
    if tensor is not None:
        opts += ["--a-tensor-scale", tensor[0], "--b-tensor-scale", tensor[1]]
        kw.update(a_tensor_scale=tensor[0], b_tensor_scale=tensor[1])
    j, d = cli_run(tmp_path, *opts)
    assert j["check"]["mismatches"] == 0
    r = tcrtl.matmul(a, b, c, a_scales=sa, b_scales=sb, fmt=fmt, **kw)
    assert r.bits.dtype == np.uint32 and r.bits.shape == (m, n)
    assert np.array_equal(r.bits, d.reshape(m, n))
    assert r.flags == flag_bits(j["flags"])
    assert np.array_equal(r.values, r.bits.view(np.float32).astype(np.float64))
    # Not a degenerate problem: most of D is nonzero and C matters.
    assert np.count_nonzero(r.values) > m * n // 2 and not np.isnan(r.values).any()
    r0 = tcrtl.matmul(a, b, a_scales=sa, b_scales=sb, fmt=fmt, **kw)
    assert not np.array_equal(r0.bits, r.bits)
    # An explicit acc="fused" is the default.
    rf = tcrtl.matmul(a, b, c, a_scales=sa, b_scales=sb, fmt=fmt, acc="fused", **kw)
    assert np.array_equal(rf.bits, r.bits)


def test_mx_matmul_ws_order_is_not_os():
    """Weight-stationary folds round where the output-stationary chain does not: the two
    orders differ somewhere on this problem, and each is its own core's (`gemm`); the
    input-stationary order is the weight-stationary one, and its core gives it."""
    a, b, sa, sb, c = mx_problem("mxfp8e4m3", 8, 8, 256, seed=40)
    common = dict(a_scales=sa, b_scales=sb, fmt="mxfp8e4m3", width=32, rows=1, cols=4)
    os_ = tcrtl.matmul(a, b, c, **common)
    ws = tcrtl.matmul(a, b, c, dataflow="ws", **common)
    assert np.count_nonzero(os_.bits != ws.bits) > 0
    assert np.array_equal(ws.bits, tcrtl.gemm(a, b, c, dataflow="ws", **common).d)
    assert np.array_equal(os_.bits, tcrtl.gemm(a, b, c, **common).d)
    # The input-stationary order is the weight-stationary one, and its core's D is ws's.
    is_ = tcrtl.matmul(a, b, c, dataflow="is", **common)
    assert np.array_equal(is_.bits, ws.bits)
    assert np.array_equal(tcrtl.gemm(a, b, c, dataflow="is", **common).d, ws.bits)
    with pytest.raises(ValueError, match=r"weight-stationary order \(dataflow is\) .* fused"):
        tcrtl.matmul(a, b, c, dataflow="is", acc="exact", **common)


def _hex_codes(fmt, row):
    return ",".join(str(int(np.int8(x))) if fmt == "mxint8" else hex(int(x)) for x in row)


def _f32hex(v):
    return hex(int(np.array(v, np.float32).view(np.uint32)))


@pytest.mark.parametrize("fmt,acc,tensor", [("mxfp4", "exact", None),
                                            ("mxint8", "block-rz", None),
                                            ("nvfp4", "exact", (0.75, 4.0)),
                                            ("mxfp8e4m3", "fused", None),
                                            ("mxfp6e3m2", "block-rz", None)])
def test_mx_matmul_elements_match_cli_dot(fmt, acc, tensor):
    """Element (i, j) is `tcrtl dot` of row i of A and column j of B with C[i, j], in each
    mode `dot` offers; the flags are the OR of the elements'."""
    m, n, k = 2, 3, 2 * BLOCK[fmt]
    a, b, sa, sb, c = mx_problem(fmt, m, n, k, seed=50 + k)
    kw = dict(a_scales=sa, b_scales=sb, fmt=fmt, acc=acc)
    if tensor is not None:
        kw.update(a_tensor_scale=tensor[0], b_tensor_scale=tensor[1])
    r = tcrtl.matmul(a, b, c, **kw)
    want, flags = np.zeros((m, n), np.uint32), 0
    for i in range(m):
        for j in range(n):
            opts = ["--format", fmt, "--acc", acc, "--c", hex(int(c[i, j])),
                    "--a", _hex_codes(fmt, a[i]), "--b", _hex_codes(fmt, b[:, j]),
                    "--a-scales", ",".join(hex(int(x)) for x in sa[i]),
                    "--b-scales", ",".join(hex(int(x)) for x in sb[:, j])]
            if tensor is not None:
                opts += ["--a-tensor-scale", _f32hex(tensor[0]),
                         "--b-tensor-scale", _f32hex(tensor[1])]
            out = cli_json("dot", *opts)
            want[i, j] = int(out["bits"], 16)
            flags |= flag_bits(out["flags"])
    assert np.array_equal(r.bits, want)
    assert r.flags == flags


@pytest.mark.parametrize("fmt", ["mxfp8e4m3", "nvfp4", "mxint8"])
def test_mx_matmul_modes_are_dot_over_rows_and_columns(fmt):
    """A larger problem in process: every mode's matmul is tcrtl.dot over the rows of A and
    the columns of B; the modes differ from each other somewhere (the mode is not ignored)."""
    m, n, k = 9, 7, 4 * BLOCK[fmt]
    a, b, sa, sb, c = mx_problem(fmt, m, n, k, seed=60)
    rows, cols = np.repeat(a, n, axis=0), np.tile(b.T, (m, 1))
    srows, scols = np.repeat(sa, n, axis=0), np.tile(sb.T, (m, 1))
    got = {}
    for acc in ("exact", "fused", "block-rz"):
        r = tcrtl.matmul(a, b, c, a_scales=sa, b_scales=sb, fmt=fmt, acc=acc)
        d = tcrtl.dot(rows, cols, c.reshape(-1), a_scales=srows, b_scales=scols, fmt=fmt,
                      acc=acc)
        assert np.array_equal(r.bits.reshape(-1), d.bits), acc
        assert r.flags == int(np.bitwise_or.reduce(d.flags)), acc
        got[acc] = r.bits
    # (NVFP4's block sums are exact in FP32, so there fused and block-rz agree.)
    assert not np.array_equal(got["exact"], got["block-rz"])
    assert not np.array_equal(got["exact"], got["fused"])


def test_mx_matmul_takes_ml_dtypes_values():
    ml = pytest.importorskip("ml_dtypes")
    a, b, sa, sb, c = mx_problem("mxfp8e4m3", 4, 5, 64, seed=9)
    r = tcrtl.matmul(a, b, c, a_scales=sa, b_scales=sb, fmt="mxfp8e4m3")
    rv = tcrtl.matmul(a.view(ml.float8_e4m3fn), b.view(ml.float8_e4m3fn), c.view(np.float32),
                      a_scales=sa.view(ml.float8_e8m0fnu), b_scales=sb.view(ml.float8_e8m0fnu),
                      fmt="mxfp8e4m3")
    assert np.array_equal(r.bits, rv.bits)
    # Quantised operands: D is close to the float64 product of their values.
    g = np.random.default_rng(4)
    q = tcrtl.quantize(g.normal(size=(6, 64)), "nvfp4")
    qb = tcrtl.quantize(g.normal(size=(5, 64)), "nvfp4")
    r = tcrtl.matmul(q.elements, qb.elements.T, a_scales=q.scales, b_scales=qb.scales.T,
                     a_tensor_scale=q.tensor_scale, b_tensor_scale=qb.tensor_scale,
                     fmt="nvfp4")
    exact = tcrtl.dequantize(q) @ tcrtl.dequantize(qb).T
    assert np.allclose(r.values, exact, rtol=1e-5, atol=1e-5)


def test_mx_matmul_refusals_match_cli(npy):
    """Every refusal of a block-scaled matmul is `tcrtl gemm`'s (the file named by the
    argument), or for the mode `tcrtl dot`'s."""
    a, b, sa, sb, _ = mx_problem("mxfp6e2m3", 4, 4, 64, seed=3)
    names = {}

    def case(fmt, extra, a_=a, b_=b, sa_=sa, sb_=sb, **kw):
        pa, pb, psa, psb = npy("A", a_), npy("B", b_), npy("SA", sa_), npy("SB", sb_)
        names.update({pa: "a", pb: "b", psa: "a_scales", psb: "b_scales"})
        msg = cli_error("gemm", "--format", fmt, "--a", pa, "--b", pb, "--a-scales", psa,
                        "--b-scales", psb, *extra)
        for path, name in names.items():
            msg = msg.replace(str(path), name)
        with pytest.raises(ValueError) as e:
            tcrtl.matmul(a_, b_, a_scales=sa_, b_scales=sb_, fmt=fmt, **kw)
        assert str(e.value) == msg
        return msg

    assert "A scales are 4 x 3" in case("mxfp6e2m3", [], sa_=np.full((4, 3), 127, np.uint8))
    assert "B scales are 4 x 4" in case("mxfp6e2m3", [], sb_=np.full((4, 4), 127, np.uint8))
    assert "multiple of 32" in case("mxfp6e2m3", [], a_=np.ones((4, 48), np.uint8),
                                    b_=np.ones((48, 4), np.uint8))
    msg = case("mxfp4", [], a_=np.full((4, 64), 0x3F, np.uint8))
    assert msg.startswith("a: A[0][0] = 0x3f does not fit in 4 bits"), msg
    assert "inner dimensions differ" in case("mxfp6e2m3", [], b_=np.ones((32, 4), np.uint8))
    assert "--preset" in case("mxfp6e2m3", ["--acc", "fused", "--preset", "hopper"],
                              acc="fused", preset="hopper")
    assert "--satfinite" in case("mxfp4", ["--satfinite"], satfinite=True)
    assert "--out-format" in case("mxfp4", ["--out-format", "fp16"], out_fmt="fp16")
    assert "applies to nvfp4 only" in case("mxfp4", ["--a-tensor-scale", "2"],
                                           a_tensor_scale=2.0)
    assert "MXINT8 pairs with MXINT8 only" in case("mxint8", ["--format-b", "mxfp8e4m3"],
                                                   fmt_b="mxfp8e4m3")
    assert "block-scaled --format-b" in case("mxfp4", ["--format-b", "fp16"], fmt_b="fp16")
    assert "need a block-scaled --format" in case("e4m3", [])
    assert "blocks hold 32" in case("mxfp4", ["--width", "64"], width=64)
    # The weight-stationary order takes the core's width, refused with the core's message.
    msg = case("mxfp6e2m3", ["--dataflow", "ws", "--width", "8"], dataflow="ws", width=8)
    assert "--width 32" in msg
    # A missing scale matrix.
    msg = cli_error("gemm", "--format", "mxfp8e5m2", "--a", npy("A", a), "--b", npy("B", b))
    with pytest.raises(ValueError) as e:
        tcrtl.matmul(a, b, fmt="mxfp8e5m2")
    assert str(e.value) == msg and "--a-scales" in msg
    # A mode block-scaled products do not have: `tcrtl dot`'s message.
    msg = cli_error("dot", "--format", "mxfp4", "--acc", "nvidia", "--a", "0x1", "--b", "0x1",
                    "--a-scales", "0x7f", "--b-scales", "0x7f")
    with pytest.raises(ValueError) as e:
        tcrtl.matmul(a, b, a_scales=sa, b_scales=sb, fmt="mxfp4", acc="nvidia")
    assert str(e.value) == msg and "exact, fused or block-rz" in msg
    # The weight-stationary order is the fused datapath's.
    a2, b2, sa2, sb2, _ = mx_problem("mxfp4", 4, 4, 64, seed=8)
    with pytest.raises(ValueError, match="weight-stationary order .* fused"):
        tcrtl.matmul(a2, b2, a_scales=sa2, b_scales=sb2, fmt="mxfp4", acc="exact",
                     dataflow="ws", width=32)


def test_docs_example_runs():
    """The block-scaled matmul example of docs/python.md."""
    q = tcrtl.quantize(np.random.default_rng(1).normal(size=(6, 64)), "nvfp4")
    qb = tcrtl.quantize(np.random.default_rng(2).normal(size=(5, 64)), "nvfp4")
    r = tcrtl.matmul(q.elements, qb.elements.T, a_scales=q.scales, b_scales=qb.scales.T,
                     a_tensor_scale=q.tensor_scale, b_tensor_scale=qb.tensor_scale,
                     fmt="nvfp4")
    exact = tcrtl.dequantize(q) @ tcrtl.dequantize(qb).T
    assert np.allclose(r.values, exact, rtol=1e-5, atol=1e-5)
    g = tcrtl.gemm(q.elements, qb.elements.T, a_scales=q.scales, b_scales=qb.scales.T,
                   a_tensor_scale=q.tensor_scale, b_tensor_scale=qb.tensor_scale, fmt="nvfp4",
                   width=16)
    assert np.array_equal(r.bits, g.d)
