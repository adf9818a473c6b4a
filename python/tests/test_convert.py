"""tcrtl.convert / quantize / dequantize against `tcrtl convert` on the same .npy inputs, and
round trips through ml_dtypes."""

import json

import ml_dtypes
import numpy as np
import pytest

import tcrtl
from conftest import cli, rng


def values(n=500, seed=20):
    g = rng(seed)
    x = g.normal(scale=3.0, size=n) * np.exp2(g.integers(-12, 12, n))
    x[:4] = [0.0, -0.0, np.inf, 1e30]
    return x


@pytest.mark.parametrize("to", ["e4m3", "e5m2", "fp16", "bf16", "tf32", "e2m3", "e8m0"])
@pytest.mark.parametrize("rounding,saturate", [("rne", False), ("rtz", True), ("rup", False)])
def test_convert_matches_cli(npy, to, rounding, saturate):
    x = values()
    if to in ("e2m3",):
        x = x[np.isfinite(x)]
    src = npy("X", x)
    out = src.with_name("Y.npy")
    cli("convert", "--to", to, "--in", src, "--out", out, "--rounding", rounding,
        *(["--saturate"] if saturate else []))
    want = np.load(out)
    got = tcrtl.convert(x, to, rounding=rounding, saturate=saturate)
    assert got.bits.dtype == want.dtype
    assert np.array_equal(got.bits, want)


def test_convert_flags_and_values_match_cli_json():
    x = np.array([0.3, 2.5, 7.0, 1e9, -0.0])
    j = json.loads(cli("convert", "--to", "e4m3", "--values", "0.3,2.5,7,1e9,-0", "--json")[1])
    got = tcrtl.convert(x, "e4m3")
    for i, row in enumerate(j):
        assert int(row["bits"], 16) == int(got.bits[i])
        names = [n for n, b in (("invalid", 8), ("overflow", 4), ("underflow", 2),
                                ("inexact", 1)) if int(got.flags[i]) & b]
        assert sorted(row["flags"]) == sorted(names)
        v = row["value"]
        if isinstance(v, str):
            assert np.isnan(got.values[i]) if v == "nan" else np.isinf(got.values[i])
        else:
            assert v == got.values[i]


@pytest.mark.parametrize("fmt,dt", [("e4m3", ml_dtypes.float8_e4m3fn),
                                    ("e5m2", ml_dtypes.float8_e5m2),
                                    ("bf16", ml_dtypes.bfloat16), ("fp16", np.float16),
                                    ("e2m1", ml_dtypes.float4_e2m1fn)])
def test_ml_dtypes_round_trip(fmt, dt):
    """Values in range: our RNE conversion equals ml_dtypes' cast bit for bit, and the
    ml_dtypes view of our bits converts back (ml_dtypes in, bits of another format out)."""
    g = rng(21)
    finfo = ml_dtypes.finfo(dt)
    x = g.uniform(-float(finfo.max), float(finfo.max), 400).astype(np.float32)
    ours = tcrtl.convert(x, fmt)
    theirs = x.astype(dt)
    assert np.array_equal(ours.as_ml_dtypes().view(np.uint8 if ours.bits.itemsize == 1 else np.uint16),
                          theirs.view(np.uint8 if ours.bits.itemsize == 1 else np.uint16))
    assert np.array_equal(ours.values, theirs.astype(np.float64))
    # ml_dtypes array in: widening to FP32 is exact.
    back = tcrtl.convert(theirs, "fp32")
    assert np.array_equal(back.bits.view(np.float32), theirs.astype(np.float32))
    assert not np.any(back.flags)


@pytest.mark.parametrize("fmt", ["mxfp8e4m3", "mxfp8e5m2", "mxfp6e2m3", "mxfp6e3m2", "mxfp4",
                                 "mxint8", "nvfp4"])
def test_quantize_matches_cli(npy, fmt):
    x = rng(22).normal(size=(6, 70)).astype(np.float32)
    src = npy("X", x)
    q_out, s_out = src.with_name("Q.npy"), src.with_name("S.npy")
    _, text, _ = cli("convert", "--to", fmt, "--in", src, "--out", q_out, "--scales-out", s_out)
    q = tcrtl.quantize(x, fmt)
    assert np.array_equal(q.elements, np.load(q_out))
    assert np.array_equal(q.scales, np.load(s_out))
    assert f"; {q.clamped} clamped" in text
    # Dequantised values against the command line's JSON of the same values.
    j = json.loads(cli("convert", "--to", fmt, "--values", ",".join(repr(float(v)) for v in x[0]),
                       "--json")[1])
    row = tcrtl.quantize(x[0].astype(np.float64), fmt)
    deq = tcrtl.dequantize(row)
    assert [e["dequantised"] for e in j["elements"]] == list(deq)


def test_dequantize_ml_dtypes_codes():
    """Element and scale codes given as ml_dtypes arrays dequantise as their uint8 codes."""
    x = rng(23).normal(size=(2, 64))
    q = tcrtl.quantize(x, "mxfp8e4m3")
    by_codes = tcrtl.dequantize(q)
    by_types = tcrtl.dequantize(elements=q.elements.view(ml_dtypes.float8_e4m3fn),
                                scales=q.scales.view(ml_dtypes.float8_e8m0fnu), fmt="mxfp8e4m3")
    assert np.array_equal(by_codes, by_types)
    # Each value is element x 2^(scale - 127), computed here by ml_dtypes and numpy.
    elem = q.elements.view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    scale = np.exp2(q.scales.astype(np.float64) - 127)
    assert np.array_equal(by_codes, elem * np.repeat(scale, 32, axis=1))
