#!/usr/bin/env python3
"""Random dot-product rows for replaying the published tensor-core models.

Writes, for one input format, the files of a measurement set (the layout of
data/tensor-core-measurements/README.md): `a_NAME_FMT.txt` and `b_NAME_FMT.txt` (K FP32 words in
hex per line, each exactly representable in FMT) and `c_NAME_fp32.txt` (one FP32 word per line
as 32 binary digits). The rows are chosen to reach the alignment rules: exponents spread over a
window of a few dozen binades so products are truncated away, cancelling signs, zeros,
subnormal inputs, accumulators from zero to far above the products, subnormal FP16 and FP32
accumulators. Deterministic for a given seed. Standard library only.

usage: make_rows.py FMT K ROWS SEED OUT_DIR NAME
"""
import random
import struct
import sys

# name: (exponent bits, fraction bits, minimum normal exponent, largest exponent,
#        largest fraction at the largest exponent)
FORMATS = {
    "fp16": (5, 10, -14, 15, 1023),
    "bf16": (8, 7, -126, 127, 127),
    "tf32": (8, 10, -126, 127, 1023),
    "e4m3": (4, 3, -6, 8, 6),
    "e5m2": (5, 2, -14, 15, 3),
}


def f32_word(v):
    w = struct.unpack(">I", struct.pack(">f", v))[0]
    assert struct.unpack(">f", struct.pack(">I", w))[0] == v, v
    return w


def value(rng, fmt, exp):
    """A random value of `fmt` with exponent `exp` (clamped to the format; below the
    minimum normal exponent, a subnormal)."""
    _, m, emin, emax, maxfrac = FORMATS[fmt]
    sign = -1.0 if rng.random() < 0.5 else 1.0
    exp = min(exp, emax)
    if exp < emin:
        frac = rng.randrange(1, 1 << m)
        return sign * frac * 2.0 ** (emin - m)
    frac = rng.randrange(0, (maxfrac if exp == emax else (1 << m) - 1) + 1)
    return sign * (1.0 + frac / (1 << m)) * 2.0 ** exp


def row(rng, fmt, k):
    _, m, emin, emax, _ = FORMATS[fmt]
    lo = max(emin - 2, -60)
    hi = min(emax - 1, 40)
    base = rng.randint(lo, hi)
    spread = rng.choice([0, 2, m + 3, 2 * m + 6, 30])
    out = []
    for _ in range(k):
        r = rng.random()
        if r < 0.06:
            out.append(0.0)
        elif r < 0.09:
            out.append(value(rng, fmt, emin - 1))  # subnormal
        else:
            out.append(value(rng, fmt, base - rng.randint(0, spread)))
    return out


def acc(rng, a, b):
    """An FP32 accumulator: zero, subnormal FP32, subnormal FP16, or a value near, above or
    far below the largest product."""
    prods = [abs(x * y) for x, y in zip(a, b) if x * y != 0.0]
    top = max(prods) if prods else 1.0
    r = rng.random()
    if r < 0.10:
        return 0.0
    if r < 0.13:
        return rng.choice([-1.0, 1.0]) * rng.randrange(1, 1 << 23) * 2.0 ** -149
    if r < 0.20:
        return rng.choice([-1.0, 1.0]) * rng.randrange(1, 1 << 10) * 2.0 ** -24
    e = int(rng.gauss(0, 12))
    mant = 1.0 + rng.randrange(0, 1 << 23) / (1 << 23)
    v = rng.choice([-1.0, 1.0]) * mant * top * 2.0 ** e
    v = struct.unpack(">f", struct.pack(">f", v))[0]
    if v != v or abs(v) == float("inf"):
        return 0.0
    return v


def main():
    fmt, k, rows, seed, out_dir, name = sys.argv[1:7]
    k, rows, seed = int(k), int(rows), int(seed)
    rng = random.Random(f"{fmt}-{k}-{seed}")
    with open(f"{out_dir}/a_{name}_{fmt}.txt", "w") as fa, open(
        f"{out_dir}/b_{name}_{fmt}.txt", "w"
    ) as fb, open(f"{out_dir}/c_{name}_fp32.txt", "w") as fc:
        for _ in range(rows):
            a = row(rng, fmt, k)
            b = row(rng, fmt, k)
            c = acc(rng, a, b)
            fa.write(" ".join(f"{f32_word(v):08x}" for v in a) + "\n")
            fb.write(" ".join(f"{f32_word(v):08x}" for v in b) + "\n")
            fc.write(f"{f32_word(c):032b}\n")


if __name__ == "__main__":
    main()
