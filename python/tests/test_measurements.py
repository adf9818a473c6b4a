"""The vendored real-GPU measurement rows (data/tensor-core-measurements/: the first 300 rows
of each published set, and the project's own H200 sets) through tcrtl.dot in one batch per
set, bit for bit: FP32 outputs and, where the GPU also accumulated into FP16, FP16 outputs (C
rounded to FP16 first)."""

import ml_dtypes
import numpy as np
import pytest

import tcrtl
from conftest import REPO

DATA = REPO / "data" / "tensor-core-measurements"
PRESET = {"V100": "volta", "A100": "ampere", "Ada": "ada", "H100": "hopper", "B200": "blackwell",
          "H200": "h200"}
FMT = {"fp16": "fp16", "fp16_k8": "fp16", "bf16": "bf16", "tf32": "tf32", "tf32_k8": "tf32",
       "E4M3": "e4m3", "E5M2": "e5m2"}
VALUE_DTYPE = {"fp16": np.float16, "bf16": ml_dtypes.bfloat16,
               "e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}


def one(folder, prefix):
    found = sorted(folder.glob(f"{prefix}*.txt"))
    assert len(found) == 1, (folder, prefix, found)
    return found[0]


def words(path):
    """A measurement file: hex words (A, B) or 32-character binary words (C, D)."""
    rows = []
    for line in path.read_text().splitlines():
        toks = line.split()
        if toks:
            rows.append([int(t, 2) if len(t) in (16, 32) and set(t) <= {"0", "1"}
                         else int(t, 16) for t in toks])
    return np.array(rows, dtype=np.uint64).astype(np.uint32)


def operands(folder, fmt):
    """A and B (FP32 words of the values) as arrays of the format, converted by numpy and
    ml_dtypes and checked exact."""
    out = []
    for p in ("a_", "b_"):
        w = words(one(folder, p))
        if fmt == "tf32":
            assert not np.any(w & 0x1FFF)
            out.append(w)
            continue
        vals = w.view(np.float32)
        conv = vals.astype(VALUE_DTYPE[fmt])
        assert np.array_equal(conv.astype(np.float32).view(np.uint32), w), "not exact"
        out.append(conv)
    return out


# (set, zero C) as the Rust test checks them for FP32 output.
FP32_SETS = [("V100/fp16", False), ("A100/fp16", False), ("A100/bf16", False),
             ("A100/tf32", False), ("Ada/fp16", False), ("Ada/bf16", False),
             ("Ada/tf32", False), ("Ada/E4M3", False), ("Ada/E5M2", False),
             ("H100/fp16", False), ("H100/bf16", False), ("H100/tf32", False),
             ("H100/E4M3", True), ("H100/E5M2", True), ("B200/fp16", False),
             ("B200/bf16", False), ("B200/tf32", False),
             # This project's own H200 sets (1,024 rows each; the mixed FP8 sets are in the Rust tests).
             ("H200/fp16", False), ("H200/fp16_k8", False), ("H200/bf16", False),
             ("H200/tf32", False), ("H200/tf32_k8", False), ("H200/E4M3", False),
             ("H200/E5M2", False)]
FP16_SETS = ["V100/fp16", "A100/fp16", "Ada/fp16", "H100/fp16", "B200/fp16", "Ada/E4M3",
             "Ada/E5M2", "H100/E4M3", "H100/E5M2", "B200/E4M3", "B200/E5M2", "H200/fp16",
             "H200/fp16_k8", "H200/E4M3", "H200/E5M2"]


@pytest.mark.parametrize("name,zero_c", FP32_SETS)
def test_fp32_output(name, zero_c):
    folder = DATA / name
    gpu, fmt_dir = name.split("/")
    fmt = FMT[fmt_dir]
    a, b = operands(folder, fmt)
    c = words(one(folder, "c_"))[:, 0]
    d = words(folder / f"d_{gpu}_fp32.txt")[:, 0]
    assert len(a) >= 300
    if zero_c:
        c = np.zeros_like(c)
    r = tcrtl.dot(a, b, c, fmt=fmt, acc="nvidia", preset=PRESET[gpu])
    bad = np.nonzero(r.bits != d)[0]
    assert bad.size == 0, f"{name}: {bad.size} rows differ, first {bad[:5]}"


@pytest.mark.parametrize("name", FP16_SETS)
def test_fp16_output(name):
    folder = DATA / name
    gpu, fmt_dir = name.split("/")
    fmt = FMT[fmt_dir]
    a, b = operands(folder, fmt)
    c32 = words(one(folder, "c_"))[:, 0].view(np.float32)
    with np.errstate(over="ignore"):  # a C beyond FP16's range rounds to an infinity
        c16 = c32.astype(np.float16)  # numpy rounds to nearest even, as the GPU's conversion
    path = folder / f"d_{gpu}_fp16.txt"
    d = words(path)[:, 0]
    if len(path.read_text().split()[0]) == 16:
        want = d.astype(np.uint16)  # FP16 bit patterns
    else:
        # The FP32 words of the FP16 results: narrowed by numpy, checked exact.
        want = d.view(np.float32).astype(np.float16).view(np.uint16)
        back = want.view(np.float16).astype(np.float32).view(np.uint32)
        assert np.array_equal(back, d)
    r = tcrtl.dot(a, b, c16, fmt=fmt, acc="nvidia", preset=PRESET[gpu], out_fmt="fp16")
    bad = np.nonzero(r.bits != want)[0]
    assert bad.size == 0, f"{name}: {bad.size} rows differ, first {bad[:5]}"
