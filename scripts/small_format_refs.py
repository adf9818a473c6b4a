#!/usr/bin/env python3
"""Independent references for tests/numerics/small_formats.rs.

  small_format_refs.py cast N SEED DIR   N random FP32 inputs (raw uint32, cast_in.bin) and
                                         ml_dtypes' round-to-nearest-even casts into
                                         float4_e2m1fn, float6_e2m3fn, float6_e3m2fn and
                                         float8_e8m0fnu (uint8 each, cast_<name>.bin)
  small_format_refs.py mx N SEED DIR     N random 32-element FP32 blocks (mx_in.bin, uint32;
                                         outliers, zeros, subnormals, NaN and Inf) and gfloat's
                                         MX quantisation of each finite block for every MX
                                         format (mx_<name>.bin: int16 per block, the scale code
                                         then 32 element codes; -1 for a block holding NaN or
                                         Inf, which the test checks against the spec itself)

  small_format_refs.py nvfp4 N SEED DIR  N random 4 x 64 tensors quantised to NVFP4 by
                                         NVIDIA's recipe in numpy float32 (see nvfp4())

Needs numpy, ml_dtypes and gfloat (pip install numpy ml_dtypes gfloat).
"""
import os
import sys

import numpy as np


def interesting_fp32(rng, n):
    """Half uniformly random bit patterns, half values near the small formats' ranges (biased
    exponents 80..160, random or tie-shaped fractions)."""
    bits = rng.integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32)
    half = n // 2
    exp = rng.integers(80, 161, size=half, dtype=np.uint64).astype(np.uint32)
    frac = rng.integers(0, 2**23, size=half, dtype=np.uint64).astype(np.uint32)
    # A third of them with the low fraction bits cleared, so ties and exact values appear.
    keep = rng.integers(1, 24, size=half, dtype=np.uint64).astype(np.uint32)
    tie = rng.random(half) < 0.33
    frac = np.where(tie, frac & ~((np.uint32(1) << (np.uint32(23) - keep)) - np.uint32(1)) & np.uint32(0x7FFFFF), frac)
    sign = rng.integers(0, 2, size=half, dtype=np.uint64).astype(np.uint32) << np.uint32(31)
    bits[:half] = sign | (exp << np.uint32(23)) | frac
    return bits


def cast(n, seed, out):
    import ml_dtypes

    rng = np.random.default_rng(seed)
    bits = interesting_fp32(rng, n)
    bits.tofile(os.path.join(out, "cast_in.bin"))
    x = bits.view(np.float32)
    with np.errstate(all="ignore"):
        for name, t in [
            ("e2m1", ml_dtypes.float4_e2m1fn),
            ("e2m3", ml_dtypes.float6_e2m3fn),
            ("e3m2", ml_dtypes.float6_e3m2fn),
            ("e8m0", ml_dtypes.float8_e8m0fnu),
        ]:
            x.astype(t).view(np.uint8).tofile(os.path.join(out, f"cast_{name}.bin"))


def mx_blocks(rng, n):
    blocks = np.zeros((n, 32), dtype=np.float32)
    for i in range(n):
        kind = i % 8
        e = int(rng.integers(-30, 30))
        v = (rng.standard_normal(32) * 2.0**e).astype(np.float32)
        if kind == 1:  # one outlier
            v[rng.integers(0, 32)] *= np.float32(2.0 ** int(rng.integers(4, 20)))
        elif kind == 2:  # zeros mixed in
            v[rng.random(32) < 0.5] = 0.0
        elif kind == 3:  # all zero (signed)
            v[:] = 0.0
            v[rng.random(32) < 0.5] = -0.0
        elif kind == 4:  # FP32 subnormals and tiny normals
            v = (rng.standard_normal(32) * 2.0 ** -140).astype(np.float32)
        elif kind == 5:  # a NaN or an Inf
            v[rng.integers(0, 32)] = [np.nan, np.inf, -np.inf][i % 3]
        elif kind == 6:  # huge values
            v = (rng.standard_normal(32) * 2.0**120).astype(np.float32)
        elif kind == 7:  # exact grid values and midpoints (ties) of the element grids
            v = (rng.integers(-64, 65, 32) / 8.0 * 2.0**e).astype(np.float32)
        blocks[i] = v
    return blocks


def mx(n, seed, out):
    import gfloat
    from gfloat.formats import (
        format_info_mxfp4_e2m1,
        format_info_mxfp6_e2m3,
        format_info_mxfp6_e3m2,
        format_info_mxfp8_e4m3,
        format_info_mxfp8_e5m2,
        format_info_mxint8,
    )

    rng = np.random.default_rng(seed)
    blocks = mx_blocks(rng, n)
    blocks.view(np.uint32).tofile(os.path.join(out, "mx_in.bin"))
    fmts = [
        ("mxfp8e4m3", format_info_mxfp8_e4m3),
        ("mxfp8e5m2", format_info_mxfp8_e5m2),
        ("mxfp6e2m3", format_info_mxfp6_e2m3),
        ("mxfp6e3m2", format_info_mxfp6_e3m2),
        ("mxfp4", format_info_mxfp4_e2m1),
        ("mxint8", format_info_mxint8),
    ]
    for name, fi in fmts:
        codes = np.full((n, 33), -1, dtype=np.int16)
        for i in range(n):
            vals = blocks[i].astype(np.float64)
            if not np.all(np.isfinite(vals)):
                continue
            scale = gfloat.compute_scale_amax(fi.etype.emax, vals)
            codes[i] = list(gfloat.encode_block(fi, scale, vals / scale))
        codes.tofile(os.path.join(out, f"mx_{name}.bin"))


def nvfp4(n, seed, out):
    """N random tensors of 4 x 64 FP32 values (nvfp4_in.bin, uint32) quantised by NVIDIA's
    two-level NVFP4 recipe (TensorRT Model Optimizer's NVFP4QTensor) in numpy float32
    arithmetic with ml_dtypes casts: nvfp4_out.bin holds per tensor the FP32 tensor scale
    (uint32), 16 E4M3 block-scale codes and 256 E2M1 element codes (uint8 each)."""
    import ml_dtypes

    rng = np.random.default_rng(seed)
    f32 = np.float32
    ins = np.zeros((n, 4, 64), dtype=np.float32)
    outs = bytearray()
    for i in range(n):
        x = (rng.standard_normal((4, 64)) * 2.0 ** int(rng.integers(-20, 20))).astype(f32)
        if i % 4 == 1:
            x[rng.integers(0, 4), rng.integers(0, 64)] *= f32(2.0 ** int(rng.integers(6, 14)))
        elif i % 4 == 2:
            x[rng.random((4, 64)) < 0.3] = 0.0
        elif i % 4 == 3:
            x[1, :32] = 0.0  # all-zero blocks
            x[2, 16:32] *= f32(2.0**-30)  # a block whose scale underflows E4M3
        ins[i] = x
        amax = np.max(np.abs(x))
        t = f32(1.0) if amax == 0 else f32(amax / f32(6.0 * 448.0))
        blocks = x.reshape(4, 4, 16)
        bmax = np.max(np.abs(blocks), axis=2)
        b = ((bmax / f32(6.0)) / t).astype(f32).astype(ml_dtypes.float8_e4m3fn)
        d = (b.astype(f32) * t).astype(f32)
        with np.errstate(all="ignore"):
            v = (blocks / d[:, :, None]).astype(f32)
        e = v.astype(ml_dtypes.float4_e2m1fn).view(np.uint8)
        zero = np.where(np.signbit(blocks), np.uint8(8), np.uint8(0))
        e = np.where((d == 0)[:, :, None], zero, e)
        outs += np.array([t], dtype=np.float32).view(np.uint32).tobytes()
        outs += b.view(np.uint8).tobytes()
        outs += e.astype(np.uint8).tobytes()
    ins.view(np.uint32).tofile(os.path.join(out, "nvfp4_in.bin"))
    with open(os.path.join(out, "nvfp4_out.bin"), "wb") as f:
        f.write(bytes(outs))


def main():
    what, n, seed, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    {"cast": cast, "mx": mx, "nvfp4": nvfp4}[what](n, seed, out)


if __name__ == "__main__":
    main()
