#!/usr/bin/env python3
"""Independent references for tests/numerics_small_formats.rs.

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


def main():
    what, n, seed, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    {"cast": cast, "mx": mx}[what](n, seed, out)


if __name__ == "__main__":
    main()
