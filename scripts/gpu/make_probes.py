#!/usr/bin/env python3
"""Writes structured probe rows for `capture probe` (scripts/gpu/capture.cu): few nonzero
products at chosen positions, C near a product, rounding boundaries. One file per kind in
DIR (default .probe/), each row: K a patterns, K b patterns, C (FP32 word, or FP16 bits for an
FP16 accumulator), hex. Fixed seed: the same rows every run."""
import random
import sys

FMT = {  # name: (exponent bits, mantissa bits, bias, largest exponent field, one)
    "e4m3": (4, 3, 7, 15, 0x38),
    "e5m2": (5, 2, 15, 30, 0x3C),
    "f16": (5, 10, 15, 30, 0x3C00),
    "tf32": (8, 10, 127, 254, 0x3F800000),
}


def bits(fmt, sign, e, m):
    eb, mb, _, _, _ = FMT[fmt]
    v = (sign << (eb + mb)) | (e << mb) | m
    if fmt == "e4m3" and e == 15 and m == 7:
        v -= 1  # 0x7F is NaN: take the largest finite instead
    return v << 13 if fmt == "tf32" else v


def rand_val(r, fmt, elo=None, ehi=None):
    eb, mb, bias, emax, _ = FMT[fmt]
    elo = 1 if elo is None else max(0, elo)
    ehi = emax if ehi is None else min(emax, ehi)
    e = r.randint(min(elo, ehi), ehi)
    return bits(fmt, r.randint(0, 1), e, r.randint(0, (1 << mb) - 1)), e - bias


def fp32(sign, e, m):
    e = max(-126, min(127, e))
    return (sign << 31) | ((e + 127) << 23) | (m & 0x7FFFFF)


def fp16(sign, e, m):
    e = max(-14, min(15, e))
    return (sign << 15) | ((e + 15) << 10) | (m & 0x3FF)


def rows(r, fa, fb, k, acc):
    one = FMT[fb][4]
    out = []

    def c_near(e, spread):
        ce = e + r.randint(-spread, spread)
        s = r.randint(0, 1)
        return fp32(s, ce, r.getrandbits(23)) if acc == "f32" else fp16(s, ce, r.getrandbits(10))

    def row(a, b, c):
        out.append(" ".join(f"{x:x}" for x in a + b + [c]))

    for _ in range(300):  # one product and C
        a, b = [0] * k, [0] * k
        i = r.randrange(k)
        a[i], e = rand_val(r, fa)
        b[i] = one
        row(a, b, c_near(e, 30))
    for _ in range(300):  # two products, C = 0
        a, b = [0] * k, [0] * k
        i, j = r.sample(range(k), 2)
        a[i], e = rand_val(r, fa)
        a[j], _ = rand_val(r, fa, e + FMT[fa][2] - r.randint(0, 12), e + FMT[fa][2])
        b[i] = b[j] = one
        row(a, b, 0)
    for _ in range(300):  # two products and C
        a, b = [0] * k, [0] * k
        i, j = r.sample(range(k), 2)
        a[i], e = rand_val(r, fa)
        a[j], _ = rand_val(r, fa)
        b[i] = b[j] = one
        row(a, b, c_near(e, 26))
    for _ in range(300):  # one large product and many small ones
        a, b = [0] * k, [0] * k
        big = r.randrange(k)
        for x in range(k):
            if x == big:
                a[x], e = rand_val(r, fa, FMT[fa][3] - 3, FMT[fa][3])
            else:
                a[x], _ = rand_val(r, fa, 1, 4)
            b[x] = one
        row(a, b, 0 if r.random() < 0.5 else c_near(e, 10))
    for _ in range(300):  # random products of both operands, few of them
        a, b = [0] * k, [0] * k
        for x in r.sample(range(k), r.randint(2, min(6, k))):
            a[x], _ = rand_val(r, fa)
            b[x], _ = rand_val(r, fb)
        ea = r.randint(-8, 8)
        row(a, b, c_near(ea, 20))
    for _ in range(300):  # C a power of two and one product at its rounding boundary
        a, b = [0] * k, [0] * k
        i = r.randrange(k)
        a[i], e = rand_val(r, fa, FMT[fa][2] - 6, FMT[fa][2] + 6)
        b[i] = one
        w = 24 if acc == "f32" else 11
        ce = e + w + r.randint(-2, 2)
        c = fp32(r.randint(0, 1), ce, 0) if acc == "f32" else fp16(r.randint(0, 1), min(ce, 15), 0)
        row(a, b, c)
    return out


def directed_fp16_out():
    """FP16 in, FP16 out, k16: the rows that tell the alignment floor of FP16 output (-19,
    -20, -21 in the published models; the FP32 floor before) and the reading of a subnormal
    FP16 C (its true exponent, or FP16's minimum -14) apart. The first two are the vectors of
    docs/numerics.md "FP16 output" (published models: 0x0000 and 0x0003; the rules before:
    0x0001 and 0x0002)."""
    out = []

    def row(pairs, c):
        a, b = [0] * 16, [0] * 16
        for i, (x, y) in enumerate(pairs):
            a[i], b[i] = x, y
        out.append(" ".join(f"{v:x}" for v in a + b + [c]))

    row([(0x0400, 0x1000), (0x0001, 0x0001)], 0x0000)
    row([(0x0400, 0x1000), (0x0010, 0x0010)], 0x0002)
    # 2^-25 (an FP16 tie) plus 2^-(48 - j): kept only while the grid 2^(floor - 25) reaches
    # it, so the rows with j = 0 .. 9 read the floor off (-21: j >= 2; -20: j >= 3; -19: j >= 4).
    for j in range(10):
        row([(0x0400, 0x1000), (0x0001, 1 << j)], 0x0000)
        row([(0x0400, 0x1000), (0x0001, 1 << j)], 0x8001)  # the same with C = -2^-24
    # Subnormal C of every size with a product tie: C at its true exponent moves the grid.
    for cbits in (0x0001, 0x0002, 0x0003, 0x0010, 0x0100, 0x0200, 0x03FF):
        row([(0x0400, 0x1000), (0x0010, 0x0010)], cbits)
        row([(0x0400, 0x1000), (0x0004, 0x0004)], cbits)
    return out


def directed_tf32_k8():
    """TF32 m16n8k8: the block size (4 or 8) with C = 1 + 2^-23 and a 2^-23 product in the
    second half: one block of 8 gives 0x40000001, two blocks of 4 give 0x40000000."""
    one, tiny = 0x3F800000, 0x34000000
    rows = []
    for pos in range(4, 8):
        a, b = [0] * 8, [0] * 8
        a[0], b[0] = one, one
        a[pos], b[pos] = tiny, one
        rows.append(" ".join(f"{v:x}" for v in a + b + [0x3F800001]))
    return rows


def directed_fp8_c(r):
    """E4M3 k32 into FP32 with a nonzero C: where does C enter Hopper's native FP8 block? The
    `hopper` preset puts C inside the block that is cut to 13 fraction bits (as the measured
    rows, all taken with C = 0 into FP32, cannot contradict); the alternative adds C after
    the cut block with one FP32 RNE addition. Each row has one product of 1.xxx and a C whose
    low bits lie below the 13-bit cut, so the two rules differ. Needs the native FP8 path
    (wgmma, or an mma.sync that the compiler lowers to Hopper's FP8 MMA), not CUDA 13.0's
    mma.sync lowering."""
    out = []
    one = FMT["e4m3"][4]
    for _ in range(64):
        a, b = [0] * 32, [0] * 32
        i = r.randrange(32)
        a[i], e = rand_val(r, "e4m3", 7, 9)  # 2^0 .. 2^2
        b[i] = one
        c = fp32(r.randint(0, 1), e - r.randint(0, 3), r.getrandbits(23) | 1)
        out.append(" ".join(f"{x:x}" for x in a + b + [c]))
    return out


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else ".probe"
    with open(f"{outdir}/directed_native_c.e4m3.e4m3.f32.in", "w") as f:
        f.write("\n".join(directed_fp8_c(random.Random(20261207))) + "\n")
    # Directed rows (run as kinds f16.k16.f16 and tf32.k8.f32; see docs/numerics.md).
    with open(f"{outdir}/directed.f16.k16.f16.in", "w") as f:
        f.write("\n".join(directed_fp16_out()) + "\n")
    with open(f"{outdir}/directed.tf32.k8.f32.in", "w") as f:
        f.write("\n".join(directed_tf32_k8()) + "\n")
    r = random.Random(20261204)
    kinds = [
        ("e4m3.e4m3.f32", "e4m3", "e4m3", 32, "f32"),
        ("e5m2.e5m2.f32", "e5m2", "e5m2", 32, "f32"),
        ("e4m3.e5m2.f32", "e4m3", "e5m2", 32, "f32"),
        ("e4m3.e4m3.f16", "e4m3", "e4m3", 32, "f16"),
        ("e5m2.e5m2.f16", "e5m2", "e5m2", 32, "f16"),
        ("e4m3.e5m2.f16", "e4m3", "e5m2", 32, "f16"),
        ("tf32.k8.f32", "tf32", "tf32", 8, "f32"),
        ("f16.k16.f32", "f16", "f16", 16, "f32"),
    ]
    for name, fa, fb, k, acc in kinds:
        with open(f"{outdir}/{name}.in", "w") as f:
            f.write("\n".join(rows(r, fa, fb, k, acc)) + "\n")


main()
