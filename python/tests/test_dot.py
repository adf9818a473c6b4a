"""tcrtl.dot against `tcrtl dot` on the same operands (batches through .npy files, single rows
through typed values), and its ml_dtypes inputs against its bit-pattern inputs."""

import ml_dtypes
import numpy as np
import pytest

import tcrtl
from conftest import cli, cli_json, random_c, random_patterns, rng

ROWS, K = 300, 40


def cli_batch(npy, a, b, c, *opts):
    out = npy("D", np.zeros(1, np.uint8)).with_name("D_out.npy")
    cli("dot", "--a", npy("A", a), "--b", npy("B", b), "--c", npy("C", c), "--out", out, *opts)
    return np.load(out)


CASES = [
    ("fp16", "ieee", None, None),
    ("fp16", "fused", None, 4),
    ("fp16", "fused", None, None),
    ("fp16", "exact", None, None),
    ("bf16", "fused", None, 8),
    ("e4m3", "fused", None, 16),
    ("e5m2", "ieee", None, 2),
] + [(f, "nvidia", p, None) for f in ("fp16", "bf16", "e4m3", "e5m2")
     for p in ("volta", "ampere", "ada", "hopper", "blackwell")
     if not (f in ("e4m3", "e5m2") and p in ("volta", "ampere"))
     and not (f == "bf16" and p == "volta")]


@pytest.mark.parametrize("fmt,acc,preset,width", CASES)
def test_batch_matches_cli(npy, fmt, acc, preset, width):
    a = random_patterns(fmt, (ROWS, K), seed=3)
    b = random_patterns(fmt, (ROWS, K), seed=4)
    c = random_c(ROWS)
    opts = ["--format", fmt, "--acc", acc]
    if preset:
        opts += ["--preset", preset]
    if width:
        opts += ["--width", width]
    want = cli_batch(npy, a, b, c, *opts)
    got = tcrtl.dot(a, b, c, fmt=fmt, acc=acc, preset=preset, width=width)
    assert got.bits.dtype == np.uint32
    assert np.array_equal(got.bits, want)
    assert np.array_equal(got.values, want.view(np.float32).astype(np.float64))


TF32_CASES = [("ieee", None), ("fused", None), ("exact", None)] + [
    ("nvidia", p) for p in ("ampere", "ada", "hopper", "blackwell", "h200")]


@pytest.mark.parametrize("acc,preset", TF32_CASES)
def test_tf32_batch_matches_cli(npy, acc, preset):
    """TF32 as uint32 FP32 containers: the command's batch and tcrtl.dot give the same bits,
    and float32 values of the same words give them too."""
    a = random_patterns("tf32", (ROWS, K), seed=9)
    b = random_patterns("tf32", (ROWS, K), seed=10)
    c = random_c(ROWS)
    opts = ["--format", "tf32", "--acc", acc] + (["--preset", preset] if preset else [])
    want = cli_batch(npy, a, b, c, *opts)
    got = tcrtl.dot(a, b, c, fmt="tf32", acc=acc, preset=preset)
    assert np.array_equal(got.bits, want)
    values = tcrtl.dot(a.view(np.float32), b.view(np.float32), c, fmt="tf32", acc=acc,
                       preset=preset)
    assert np.array_equal(values.bits, want)


@pytest.mark.parametrize("acc,preset", [("fused", None), ("nvidia", "hopper"), ("nvidia", "volta")])
def test_fp16_output_matches_cli(npy, acc, preset):
    a = random_patterns("fp16", (ROWS, 16), seed=5)
    b = random_patterns("fp16", (ROWS, 16), seed=6)
    c = random_c(ROWS, fp16=True)
    opts = ["--format", "fp16", "--acc", acc, "--out-format", "fp16"]
    if preset:
        opts += ["--preset", preset]
    want = cli_batch(npy, a, b, c, *opts)
    got = tcrtl.dot(a, b, c, acc=acc, preset=preset, out_fmt="fp16")
    assert got.bits.dtype == np.uint16
    assert np.array_equal(got.bits, want)


@pytest.mark.parametrize("rounding", ["rtz", "rdn", "rup"])
def test_directed_rounding_matches_cli(npy, rounding):
    a = random_patterns("e4m3", (ROWS, 8), seed=7)
    b = random_patterns("e4m3", (ROWS, 8), seed=8)
    c = random_c(ROWS)
    want = cli_batch(npy, a, b, c, "--format", "e4m3", "--acc", "fused", "--rounding", rounding)
    got = tcrtl.dot(a, b, c, fmt="e4m3", acc="fused", rounding=rounding)
    assert np.array_equal(got.bits, want)


def test_flags_per_row_match_single_rows():
    """Each row's flags are those `tcrtl dot` prints for that row alone (rows with NaN,
    overflow and exact sums among them)."""
    a = np.array([[0x7C00, 0x3C00], [0x7BFF, 0x7BFF], [0x3C00, 0x3C00], [0x7E00, 0x0]], np.uint16)
    b = np.array([[0x0000, 0x3C00], [0x7BFF, 0x7BFF], [0x3C00, 0x3C00], [0x3C00, 0x0]], np.uint16)
    r = tcrtl.dot(a, b, None, fmt="fp16", acc="fused", out_fmt="fp16")
    for i in range(len(a)):
        j = cli_json("dot", "--format", "fp16", "--acc", "fused", "--out-format", "fp16",
                     "--c", "0x0", "--a", ",".join(hex(x) for x in a[i]),
                     "--b", ",".join(hex(x) for x in b[i]))
        assert int(j["bits"], 16) == int(r.bits[i])
        assert sorted(j["flags"]) == sorted(r.flag_names(i)), i


def test_ml_dtypes_values_equal_bit_patterns():
    for fmt, dt in (("e4m3", ml_dtypes.float8_e4m3fn), ("e5m2", ml_dtypes.float8_e5m2),
                    ("bf16", ml_dtypes.bfloat16), ("fp16", np.float16)):
        a = random_patterns(fmt, (50, 24), seed=9)
        b = random_patterns(fmt, (50, 24), seed=10)
        c = random_c(50)
        by_bits = tcrtl.dot(a, b, c, fmt=fmt, acc="nvidia", preset="hopper")
        by_vals = tcrtl.dot(a.view(dt), b.view(dt), c.view(np.float32), fmt=fmt, acc="nvidia",
                            preset="hopper")
        assert np.array_equal(by_bits.bits, by_vals.bits), fmt


def test_ieee_is_a_chain_of_fmas():
    """fmt=fp16, acc=ieee, width=1: C, then one FMA per product in k order with one RNE
    rounding each, checked against numpy's float64 (exact for one FP16 product plus an FP32
    sum, so one float32 rounding per step is an FMA)."""
    a = random_patterns("fp16", (200, 12), seed=11)
    b = random_patterns("fp16", (200, 12), seed=12)
    c = random_c(200)
    r = tcrtl.dot(a, b, c, fmt="fp16", acc="ieee", width=1)
    af = a.view(np.float16).astype(np.float64)
    bf = b.view(np.float16).astype(np.float64)
    acc = c.view(np.float32).copy()
    for k in range(12):
        acc = (acc.astype(np.float64) + af[:, k] * bf[:, k]).astype(np.float32)
    assert np.array_equal(r.bits, acc.view(np.uint32))
    # ieee gives the same bits for every width (one product per FMA).
    for w in (2, 4, 32, None):
        assert np.array_equal(tcrtl.dot(a, b, c, width=w).bits, r.bits)


def test_hopper_fp8_against_float64():
    """The README example: Hopper E4M3 dot products of a batch checked against float64. Per
    docs/numerics.md the hopper FP8 block (32 products) aligns to the largest term and keeps
    13 fraction bits, truncating each aligned term and the sum: each row lies within
    2^-13 x (32 terms x 2 x the largest term + 2 x the sum) of the exact sum, and the
    truncation shows (some rows differ from the exact sum rounded to FP32)."""
    g = rng(13)
    x = g.uniform(-2, 2, (1000, 32)).astype(ml_dtypes.float8_e4m3fn)
    y = g.uniform(-2, 2, (1000, 32)).astype(ml_dtypes.float8_e4m3fn)
    r = tcrtl.dot(x, y, fmt="e4m3", acc="nvidia", preset="hopper")
    prods = x.astype(np.float64) * y.astype(np.float64)
    exact = prods.sum(axis=1)
    largest = np.abs(prods).max(axis=1)
    bound = 2.0 ** -13 * (32 * 2 * largest + 2 * np.abs(exact))
    assert np.all(np.abs(r.values - exact) <= bound)
    assert np.any(r.values != exact.astype(np.float32))


def test_integer_batch_matches_cli(npy):
    g = rng(14)
    for fmt, lo, hi, dt in (("s8", -128, 128, np.int8), ("u8", 0, 256, np.uint8),
                            ("s4", -8, 8, np.int8), ("u4", 0, 16, np.uint8)):
        a = g.integers(lo, hi, (100, 33)).astype(dt)
        b = g.integers(lo, hi, (100, 33)).astype(dt)
        c = g.integers(-1000, 1000, 100).astype(np.int32)
        want = cli_batch(npy, a, b, c, "--format", fmt)
        got = tcrtl.dot(a, b, c, fmt=fmt)
        assert np.array_equal(got.bits.view(np.int32), want), fmt
        assert np.array_equal(got.values, want.astype(np.float64))


def test_integer_satfinite_matches_cli():
    a = np.full((1, 4), 127, np.int8)
    b = np.full((1, 4), 127, np.int8)
    for sat in (False, True):
        opts = ["--satfinite"] if sat else []
        j = cli_json("dot", "--format", "s8", "--a", "127,127,127,127", "--b", "127,127,127,127",
                     "--c", "2147483000", *opts)
        r = tcrtl.dot(a, b, np.array([2147483000], np.int32), fmt="s8", satfinite=sat)
        assert int(j["bits"], 16) == int(r.bits[0])
        assert bool(r.out_of_range[0]) == j["out_of_range"]


@pytest.mark.parametrize("fmt,acc", [("mxfp8e4m3", "fused"), ("mxfp4", "exact"),
                                     ("mxint8", "block-rz"), ("nvfp4", "fused"),
                                     ("mxfp6e3m2", "fused")])
def test_block_scaled_rows_match_cli(fmt, acc):
    g = rng(15)
    k = 64
    q_a = tcrtl.quantize(g.normal(size=(3, k)), fmt)
    q_b = tcrtl.quantize(g.normal(size=(3, k)), fmt)
    r = tcrtl.dot(q_a.elements, q_b.elements, np.float32(0.5), fmt=fmt, acc=acc,
                  a_scales=q_a.scales, b_scales=q_b.scales,
                  a_tensor_scale=q_a.tensor_scale, b_tensor_scale=q_b.tensor_scale)
    for i in range(3):
        opts = ["--format", fmt, "--acc", acc, "--c", "0.5",
                "--a", ",".join(hex(x) if fmt != "mxint8" else str(int(np.int8(x)))
                                for x in q_a.elements[i]),
                "--b", ",".join(hex(x) if fmt != "mxint8" else str(int(np.int8(x)))
                                for x in q_b.elements[i]),
                "--a-scales", ",".join(hex(x) for x in q_a.scales[i]),
                "--b-scales", ",".join(hex(x) for x in q_b.scales[i])]
        if fmt == "nvfp4":
            def f32hex(v):
                return hex(int(np.array(v, np.float32).view(np.uint32)))

            opts += ["--a-tensor-scale", f32hex(q_a.tensor_scale),
                     "--b-tensor-scale", f32hex(q_b.tensor_scale)]
        j = cli_json("dot", *opts)
        assert int(j["bits"], 16) == int(r.bits[i]), (fmt, i)
        assert sorted(j["flags"]) == sorted(r.flag_names(i))


def test_results_do_not_depend_on_threads():
    """Same inputs, same bits: a batch larger than one rayon task, run twice."""
    a = random_patterns("fp16", (20000, 16), seed=16)
    b = random_patterns("fp16", (20000, 16), seed=17)
    c = random_c(20000)
    r1 = tcrtl.dot(a, b, c, acc="nvidia", preset="hopper")
    r2 = tcrtl.dot(a[::-1].copy(), b[::-1].copy(), c[::-1].copy(), acc="nvidia", preset="hopper")
    assert np.array_equal(r1.bits, r2.bits[::-1])
    assert np.array_equal(r1.flags, r2.flags[::-1])
