"""The benches' stimulus does what stimulus.py says: the same seed gives the same vectors, the
corners are reached, and the constructed scenarios hold exactly (checked with exact rational
arithmetic, independently of the golden model). Needs only numpy."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

import stimulus


def f16(bits: int) -> Fraction | None:
    """The exact value of an FP16 pattern, None for NaN and Inf."""
    v = np.array([bits], np.uint16).view(np.float16)[0]
    return Fraction(float(v)) if np.isfinite(v) else None


def f32(bits: int) -> Fraction | None:
    v = np.array([bits], np.uint32).view(np.float32)[0]
    return Fraction(float(v)) if np.isfinite(v) else None


def test_same_seed_same_vectors_other_seed_others():
    one = stimulus.chains(7, 200, 16)
    two = stimulus.chains(7, 200, 16)
    other = stimulus.chains(8, 200, 16)

    def key(cs):
        return [(c.c, c.a.tobytes(), c.b.tobytes(), c.scenario) for c in cs]

    assert key(one) == key(two)
    assert key(one) != key(other)
    t1, t2 = stimulus.tiles(7, 30, 16), stimulus.tiles(7, 30, 16)
    assert all(
        (x.a == y.a).all() and (x.b == y.b).all() and (x.c == y.c).all() for x, y in zip(t1, t2)
    )


def test_random_chains_reach_every_corner():
    chains = stimulus.chains(1, 300, 16)
    ops = np.concatenate([np.concatenate([c.a, c.b]) for c in chains])
    exp, frac = (ops >> 10) & 0x1F, ops & 0x3FF
    assert ((exp == 31) & (frac != 0)).any(), "NaN operand"
    assert ((exp == 31) & (frac == 0) & (ops >> 15 == 0)).any(), "+Inf operand"
    assert ((exp == 31) & (frac == 0) & (ops >> 15 == 1)).any(), "-Inf operand"
    assert (ops == 0x0000).any() and (ops == 0x8000).any(), "signed zeros"
    assert ((exp == 0) & (frac != 0)).sum() > 100, "FP16 subnormals"
    assert (ops == 0x7BFF).any() and (ops == 0xFBFF).any(), "+-65504"
    cs = np.array([c.c for c in chains], np.uint32)
    assert (cs == 0x7F7FFFFF).any() and (cs == 0xFF7FFFFF).any(), "C at +-FLT_MAX"
    assert (((cs >> 23) & 0xFF == 0) & (cs & 0x7FFFFF != 0)).any(), "FP32 subnormal C"
    assert {c.scenario for c in chains} == set(stimulus.SCENARIOS)


def test_cancel_chains_cancel_exactly():
    pairs = zero_c = 0
    for ch in stimulus.chains(3, 600, 16, scenarios=("cancel",)):
        for i in range(1, len(ch.a), 2):
            p0 = f16(int(ch.a[i - 1])) * f16(int(ch.b[i - 1]))
            p1 = f16(int(ch.a[i])) * f16(int(ch.b[i]))
            pairs += p0 + p1 == 0 and p0 != 0
        if f32(ch.c) + f16(int(ch.a[0])) * f16(int(ch.b[0])) == 0 and ch.c != 0:
            zero_c += 1
    assert pairs > 500, pairs
    assert zero_c > 100, zero_c


def test_ties_chains_sit_exactly_halfway():
    ties = 0
    chains = stimulus.chains(4, 300, 4, scenarios=("ties",))
    for ch in chains:
        c = f32(ch.c)
        exact = c + f16(int(ch.a[0])) * f16(int(ch.b[0]))
        e = ((ch.c >> 23) & 0xFF) - 150  # C's last place is 2^e
        ulp = Fraction(2) ** e
        ties += (abs(exact) / ulp) % 1 == Fraction(1, 2)
    assert ties >= 0.9 * len(chains), (ties, len(chains))


def test_special_pairs_are_the_full_cross_product():
    pairs = stimulus.special_pairs()
    n16, n32 = len(stimulus.FP16_SPECIALS), len(stimulus.FP32_SPECIALS)
    assert len(pairs) == n16 * n16 * n32
    assert len({(p.c, int(p.a[0]), int(p.b[0])) for p in pairs}) == len(pairs)
