"""Every refusal raises ValueError (OSError for a file) carrying the command line's one-line
message for the same mistake (`tcrtl ... ` exits 2 with `error: MESSAGE`)."""

import numpy as np
import pytest

import tcrtl
from conftest import cli_error

A16 = np.array([[0x3C00, 0x3C00]], np.uint16)
C32 = np.array([0x3F800000], np.uint32)
ONE_ROW = ["--a", "0x3c00,0x3c00", "--b", "0x3c00,0x3c00"]

DOT_CASES = [
    (dict(acc="nvidia"), ["--acc", "nvidia"]),
    (dict(preset="hopper"), ["--preset", "hopper"]),
    (dict(fmt="fp17"), ["--format", "fp17"]),
    (dict(acc="fuzed"), ["--acc", "fuzed"]),
    (dict(acc="nvidia", preset="pascal"), ["--acc", "nvidia", "--preset", "pascal"]),
    (dict(rounding="rna"), ["--rounding", "rna"]),
    (dict(acc="nvidia", preset="hopper", rounding="rtz"),
     ["--acc", "nvidia", "--preset", "hopper", "--rounding", "rtz"]),
    (dict(out_fmt="bf16"), ["--out-format", "bf16"]),
    (dict(satfinite=True), ["--satfinite"]),
    (dict(width=33, acc="fused"), ["--width", "33", "--acc", "fused"]),
    (dict(fmt="e4m3", acc="nvidia", preset="volta"),
     ["--format", "e4m3", "--acc", "nvidia", "--preset", "volta"]),
]


@pytest.mark.parametrize("kw,flags", DOT_CASES, ids=lambda x: str(x))
def test_dot_errors(kw, flags):
    msg = cli_error("dot", *flags, *ONE_ROW)
    a = A16.astype(np.uint8) if kw.get("fmt") == "e4m3" else A16
    with pytest.raises(ValueError) as e:
        tcrtl.dot(a, a, C32, **kw)
    assert str(e.value) == msg


def test_integer_and_block_errors():
    i8 = np.array([[1, 2]], np.int8)
    cases = [
        (dict(fmt="s8", acc="fused"), ["--format", "s8", "--acc", "fused", "--a", "1,2", "--b", "1,2"]),
        (dict(fmt="s8", fmt_b="s4"), ["--format", "s8", "--format-b", "s4", "--a", "1,2", "--b", "1,2"]),
        (dict(fmt="s8", fmt_b="fp16"), ["--format", "s8", "--format-b", "fp16", "--a", "1,2", "--b", "1,2"]),
        (dict(fmt="s8", rounding="rtz"), ["--format", "s8", "--rounding", "rtz", "--a", "1,2", "--b", "1,2"]),
        (dict(fmt="s8", out_fmt="fp16"), ["--format", "s8", "--out-format", "fp16", "--a", "1,2", "--b", "1,2"]),
    ]
    for kw, flags in cases:
        msg = cli_error("dot", *flags)
        with pytest.raises(ValueError) as e:
            tcrtl.dot(i8, i8, None, **kw)
        assert str(e.value) == msg, kw
    # Scales with a plain format; a block format paired with a plain one; a bad MX mode.
    msg = cli_error("dot", *ONE_ROW, "--a-scales", "0x7f")
    with pytest.raises(ValueError) as e:
        tcrtl.dot(A16, A16, a_scales=np.array([[127]], np.uint8))
    assert str(e.value) == msg
    msg = cli_error("dot", "--format", "mxfp4", "--format-b", "fp16", *ONE_ROW)
    with pytest.raises(ValueError) as e:
        tcrtl.dot(A16, A16, fmt="mxfp4", fmt_b="fp16")
    assert str(e.value) == msg
    codes = np.zeros((1, 32), np.uint8)
    sc = np.full((1, 1), 127, np.uint8)
    row = ",".join(["0x0"] * 32)
    msg = cli_error("dot", "--format", "mxfp4", "--acc", "nvidia", "--a", row, "--b", row,
                    "--a-scales", "0x7f", "--b-scales", "0x7f")
    with pytest.raises(ValueError) as e:
        tcrtl.dot(codes, codes, fmt="mxfp4", acc="nvidia", a_scales=sc, b_scales=sc)
    assert str(e.value) == msg
    msg = cli_error("dot", "--format", "mxfp4", "--acc", "fused", "--width", "4", "--a", row,
                    "--b", row, "--a-scales", "0x7f", "--b-scales", "0x7f")
    with pytest.raises(ValueError) as e:
        tcrtl.dot(codes, codes, fmt="mxfp4", acc="fused", width=4, a_scales=sc, b_scales=sc)
    assert str(e.value) == msg


def test_convert_errors():
    x = np.array([1.0, np.nan])
    for kw, flags in [
        (dict(to="e9m9"), ["--to", "e9m9"]),
        (dict(to="e4m3", rounding="rnx"), ["--to", "e4m3", "--rounding", "rnx"]),
        (dict(to="e2m1"), ["--to", "e2m1"]),          # NaN into a format without NaN
    ]:
        msg = cli_error("convert", *flags, "--values", "1,nan")
        with pytest.raises(ValueError) as e:
            tcrtl.convert(x, kw.pop("to"), **kw)
        assert str(e.value) == msg
    msg = cli_error("convert", "--to", "mxfp4", "--rounding", "rtz", "--values", "1")
    with pytest.raises(ValueError) as e:
        tcrtl.quantize(np.ones(32), "mxfp4", rounding="rtz")
    assert str(e.value) == msg


def test_gemm_errors(tmp_path):
    for kw, flags in [
        (dict(acc="exact"), ["--acc", "exact"]),
        (dict(acc="nvidia"), ["--acc", "nvidia"]),
        (dict(fmt="fp17"), ["--format", "fp17"]),
    ]:
        msg = cli_error("gemm", "--m", "4", "--n", "4", "--k", "4", *flags)
        with pytest.raises(ValueError) as e:
            tcrtl.gemm(m=4, n=4, k=4, **kw)
        assert str(e.value) == msg, kw
    # The job's own words where the command line names its options: the array and the
    # memory path.
    msg = cli_error("gemm", "--m", "4", "--n", "4", "--k", "4", "--rows", "33")
    with pytest.raises(ValueError) as e:
        tcrtl.gemm(m=4, n=4, k=4, rows=33)
    assert msg.startswith("--rows 33 --cols 4: ")
    assert str(e.value) == "a 33 x 4 array: " + msg[len("--rows 33 --cols 4: "):]
    with pytest.raises(ValueError, match="apply to the TMA memory path only"):
        tcrtl.gemm(m=4, n=4, k=4, stages=2)
    missing = tmp_path / "no" / "such" / "dir" / "w.vcd"
    msg = cli_error("gemm", "--m", "4", "--n", "4", "--k", "4", "--vcd", missing)
    with pytest.raises(OSError) as e:
        tcrtl.gemm(m=4, n=4, k=4, vcd=str(missing))
    assert str(e.value) == msg


def test_no_panic_on_bad_arrays():
    with pytest.raises(ValueError, match="dtype float32"):
        tcrtl.dot(A16.astype(np.float32), A16)
    with pytest.raises(ValueError, match="must match"):
        tcrtl.dot(A16, np.zeros((2, 2), np.uint16))
    with pytest.raises(ValueError, match="C has 3 values"):
        tcrtl.dot(A16, A16, np.zeros(3, np.uint32))
    with pytest.raises(ValueError, match="dtype uint32; fp16 operands are uint16"):
        tcrtl.dot(np.array([[0x1FFFF]], np.uint32), np.array([[1]], np.uint32), fmt="fp16")
    with pytest.raises(ValueError, match="is not a TF32 pattern"):
        tcrtl.dot(np.array([[0x3F800001]], np.uint32), np.array([[0x3F800000]], np.uint32),
                  fmt="tf32")
