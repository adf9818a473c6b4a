"""Constrained-random FP16 operands and FP32 accumulators for the PE and mesh benches.

Every operand is drawn from a weighted mix of classes (ordinary normals near 1, wide-range
normals, subnormals, signed zeros, the extreme normals and subnormals, infinities, quiet and
signalling NaNs), and a chain of steps follows one of a few scenarios that random operands
rarely reach on their own: exact cancellation (a step that undoes the one before it, or C
that undoes the first product), sums at the edge of the FP32 range (C at +-FLT_MAX plus
+-65504^2 products), FP16 and FP32 subnormals, and ties. Everything comes from one
`numpy.random.Generator` seeded by the caller, so a seed gives the same vectors, bit for bit.

Bit patterns: FP16 operands are `numpy.uint16`, FP32 accumulators `numpy.uint32`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# FP16 values with a name, the specials every scenario draws from.
FP16_SPECIALS = {
    "+0": 0x0000,
    "-0": 0x8000,
    "+inf": 0x7C00,
    "-inf": 0xFC00,
    "qnan": 0x7E00,
    "-qnan": 0xFE00,
    "snan": 0x7D01,
    "+max": 0x7BFF,  # 65504
    "-max": 0xFBFF,
    "+min_normal": 0x0400,  # 2^-14
    "-min_normal": 0x8400,
    "+min_sub": 0x0001,  # 2^-24
    "-min_sub": 0x8001,
    "+max_sub": 0x03FF,
    "-max_sub": 0x83FF,
    "+1": 0x3C00,
    "-1": 0xBC00,
}

# FP32 accumulator values with a name.
FP32_SPECIALS = {
    "+0": 0x00000000,
    "-0": 0x80000000,
    "+inf": 0x7F800000,
    "-inf": 0xFF800000,
    "qnan": 0x7FC00000,
    "nan_payload": 0x7FC00001,
    "snan": 0x7F800001,
    "+flt_max": 0x7F7FFFFF,
    "-flt_max": 0xFF7FFFFF,
    "+min_normal": 0x00800000,
    "+min_sub": 0x00000001,
    "-min_sub": 0x80000001,
    "+max_sub": 0x007FFFFF,
    "+1": 0x3F800000,
    "-1": 0xBF800000,
}

# The scenarios of a chain, in the order `SCENARIOS` lists them.
SCENARIOS = ("mixed", "cancel", "range_edge", "subnormal", "specials", "ties")


def fp16_product_as_fp32(a: int, b: int) -> int | None:
    """The FP32 bits of the exact product of two finite FP16 patterns, or None.

    An FP16 x FP16 product always fits FP32 exactly (22-bit significand, exponent from -48 to
    +31), so `float(a) * float(b)` in double precision is exact and converts to FP32 exactly;
    used to build a C that cancels a product. None for a NaN or Inf operand.
    """
    for x in (a, b):
        if (x >> 10) & 0x1F == 0x1F:
            return None
    pa = float(np.array([a], np.uint16).view(np.float16)[0])
    pb = float(np.array([b], np.uint16).view(np.float16)[0])
    return int(np.array([pa * pb], np.float32).view(np.uint32)[0])


class OperandSource:
    """Draws FP16 operands and FP32 accumulators by class, from one seeded generator."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        self._fp16_specials = np.array(list(FP16_SPECIALS.values()), np.uint16)
        self._fp32_specials = np.array(list(FP32_SPECIALS.values()), np.uint32)

    def _sign(self, n: int) -> np.ndarray:
        return self.rng.integers(0, 2, n, dtype=np.uint16) << np.uint16(15)

    def fp16(self, n: int, mix: dict[str, float]) -> np.ndarray:
        """n FP16 patterns, each from a class drawn with the weights of `mix`.

        Classes: `near1` (exponent 13..17, so sums of products cancel and round often),
        `wide` (any finite normal), `sub` (subnormal), `special` (one of FP16_SPECIALS),
        `zero` (+-0), `max` (+-65504), `any` (any 16-bit pattern, NaNs included).
        """
        names = list(mix)
        weights = np.array([mix[k] for k in names], float)
        cls = self.rng.choice(len(names), n, p=weights / weights.sum())
        frac = self.rng.integers(0, 1024, n, dtype=np.uint16)
        out = np.empty(n, np.uint16)
        for idx, name in enumerate(names):
            sel = cls == idx
            m = int(sel.sum())
            if m == 0:
                continue
            sign = self._sign(m)
            if name == "near1":
                exp = self.rng.integers(13, 18, m, dtype=np.uint16)
                out[sel] = sign | (exp << np.uint16(10)) | frac[sel]
            elif name == "wide":
                exp = self.rng.integers(1, 31, m, dtype=np.uint16)
                out[sel] = sign | (exp << np.uint16(10)) | frac[sel]
            elif name == "sub":
                out[sel] = sign | self.rng.integers(1, 1024, m, dtype=np.uint16)
            elif name == "special":
                out[sel] = self.rng.choice(self._fp16_specials, m)
            elif name == "zero":
                out[sel] = sign
            elif name == "max":
                out[sel] = sign | np.uint16(0x7BFF)
            elif name == "any":
                out[sel] = self.rng.integers(0, 1 << 16, m, dtype=np.uint16)
            else:
                raise ValueError(f"unknown FP16 operand class {name!r}")
        return out

    def fp32(self, n: int, mix: dict[str, float]) -> np.ndarray:
        """n FP32 accumulator patterns by class: `zero`, `near1` (exponent 120..134),
        `wide` (any finite normal), `sub` (FP32 subnormal), `special` (FP32_SPECIALS),
        `flt_max` (+-FLT_MAX)."""
        names = list(mix)
        weights = np.array([mix[k] for k in names], float)
        cls = self.rng.choice(len(names), n, p=weights / weights.sum())
        frac = self.rng.integers(0, 1 << 23, n, dtype=np.uint32)
        sign = self.rng.integers(0, 2, n, dtype=np.uint32) << np.uint32(31)
        out = np.empty(n, np.uint32)
        for idx, name in enumerate(names):
            sel = cls == idx
            m = int(sel.sum())
            if m == 0:
                continue
            if name == "zero":
                out[sel] = sign[sel]
            elif name == "near1":
                exp = self.rng.integers(120, 135, m, dtype=np.uint32)
                out[sel] = sign[sel] | (exp << np.uint32(23)) | frac[sel]
            elif name == "wide":
                exp = self.rng.integers(1, 255, m, dtype=np.uint32)
                out[sel] = sign[sel] | (exp << np.uint32(23)) | frac[sel]
            elif name == "sub":
                out[sel] = sign[sel] | self.rng.integers(1, 1 << 23, m, dtype=np.uint32)
            elif name == "special":
                out[sel] = self.rng.choice(self._fp32_specials, m)
            elif name == "flt_max":
                out[sel] = sign[sel] | np.uint32(0x7F7FFFFF)
            else:
                raise ValueError(f"unknown FP32 accumulator class {name!r}")
        return out


@dataclass
class Chain:
    """One PE's work: C, then the steps (a[k], b[k]) in order; `scenario` names its kind."""

    c: int
    a: np.ndarray
    b: np.ndarray
    scenario: str


def _mixed(src: OperandSource, k: int) -> tuple[int, np.ndarray, np.ndarray]:
    mix16 = {"near1": 6, "wide": 2, "sub": 1, "special": 1, "any": 0.5}
    c = src.fp32(1, {"zero": 3, "near1": 4, "wide": 1, "sub": 1, "special": 1})[0]
    return int(c), src.fp16(k, mix16), src.fp16(k, mix16)


def _cancel(src: OperandSource, k: int) -> tuple[int, np.ndarray, np.ndarray]:
    """Pairs of steps that cancel exactly (a, b then -a, b), and a C that cancels the first
    product half of the time: exact zero sums (+0 by RNE, -0 only from -0 + -0)."""
    mix16 = {"near1": 6, "sub": 1, "zero": 1}
    a = src.fp16(k, mix16)
    b = src.fp16(k, mix16)
    for i in range(1, k, 2):
        if src.rng.random() < 0.8:
            a[i] = a[i - 1] ^ np.uint16(0x8000)
            b[i] = b[i - 1]
    c = int(src.fp32(1, {"zero": 1, "near1": 1})[0])
    if src.rng.random() < 0.5:
        p = fp16_product_as_fp32(int(a[0]), int(b[0]))
        if p is not None:
            c = p ^ 0x80000000
    return c, a, b


def _range_edge(src: OperandSource, k: int) -> tuple[int, np.ndarray, np.ndarray]:
    """C at +-FLT_MAX or large, products of +-65504: sums that must stay finite, and FP16
    products far beyond FP16's own range (65504^2 > 2^31)."""
    a = src.fp16(k, {"max": 3, "wide": 1, "special": 0.3})
    b = src.fp16(k, {"max": 3, "wide": 1, "special": 0.3})
    c = int(src.fp32(1, {"flt_max": 3, "wide": 1, "special": 0.3})[0])
    return c, a, b


def _subnormal(src: OperandSource, k: int) -> tuple[int, np.ndarray, np.ndarray]:
    """FP16 subnormal and tiny operands with FP32 subnormal C: products land on or below
    FP32's subnormal grid 2^-149 (2^-24 x 2^-24 = 2^-48 is still exact in FP32)."""
    a = src.fp16(k, {"sub": 4, "wide": 1, "zero": 0.5})
    b = src.fp16(k, {"sub": 2, "wide": 2, "near1": 1})
    c = int(src.fp32(1, {"sub": 3, "zero": 1, "special": 0.3})[0])
    return c, a, b


def _specials(src: OperandSource, k: int) -> tuple[int, np.ndarray, np.ndarray]:
    """Mostly named specials: NaN in, Inf x 0, Inf - Inf, signed zeros."""
    a = src.fp16(k, {"special": 4, "near1": 1})
    b = src.fp16(k, {"special": 4, "near1": 1})
    c = int(src.fp32(1, {"special": 3, "zero": 1})[0])
    return c, a, b


def _ties(src: OperandSource, k: int) -> tuple[int, np.ndarray, np.ndarray]:
    """C whose last place is twice the first product's lowest set bit: with the product
    written M x 2^q (M odd), C gets exponent q + 24, so the sum lies exactly halfway between
    two FP32 neighbours of C and rounding must pick the even one. Later steps are mixed."""
    a = src.fp16(k, {"near1": 4, "wide": 1})
    b = src.fp16(k, {"near1": 4, "wide": 1})
    p = fp16_product_as_fp32(int(a[0]), int(b[0]))
    pv = float(np.array([p], np.uint32).view(np.float32)[0])
    if pv == 0.0:
        return int(src.fp32(1, {"near1": 1})[0]), a, b
    m, e = np.frexp(abs(pv))  # |p| = m 2^e, 0.5 <= m < 1
    q = int(e) - 53
    mant = int(m * 2.0**53)
    while mant % 2 == 0:
        mant //= 2
        q += 1
    big_e = q + 24 + 127  # biased exponent of C
    big_e = min(max(big_e, 1), 254)
    sign = int(src.rng.integers(0, 2)) << 31
    frac = int(src.rng.integers(0, 1 << 23))
    return sign | (big_e << 23) | frac, a, b


_BUILDERS = {
    "mixed": _mixed,
    "cancel": _cancel,
    "range_edge": _range_edge,
    "subnormal": _subnormal,
    "specials": _specials,
    "ties": _ties,
}


def chains(seed: int, count: int, k_max: int, scenarios=SCENARIOS) -> list[Chain]:
    """`count` chains of 1..k_max steps, scenarios taken in turn, from `seed`."""
    if count < 0 or k_max < 1:
        raise ValueError(f"need count >= 0 and k_max >= 1, got count={count}, k_max={k_max}")
    rng = np.random.default_rng(seed)
    src = OperandSource(rng)
    out = []
    for i in range(count):
        name = scenarios[i % len(scenarios)]
        k = int(rng.integers(1, k_max + 1))
        c, a, b = _BUILDERS[name](src, k)
        out.append(Chain(c=c, a=a, b=b, scenario=name))
    return out


def special_pairs() -> list[Chain]:
    """One-step chains: every (a, b) pair of FP16_SPECIALS with every C of FP32_SPECIALS
    (17 x 17 x 15 = 4335 chains), in a fixed order."""
    out = []
    for c in FP32_SPECIALS.values():
        for a in FP16_SPECIALS.values():
            for b in FP16_SPECIALS.values():
                out.append(
                    Chain(
                        c=c,
                        a=np.array([a], np.uint16),
                        b=np.array([b], np.uint16),
                        scenario="special_pairs",
                    )
                )
    return out


@dataclass
class Tile:
    """One 4 x 4 mesh tile: A (4 x K), B (K x 4), C (4 x 4 FP32 patterns)."""

    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    scenario: str


# The scenarios of a mesh tile (ties are a per-chain construction: PE bench only).
TILE_SCENARIOS = ("mixed", "cancel", "range_edge", "subnormal", "specials")


def tiles(seed: int, count: int, k_max: int, scenarios=TILE_SCENARIOS) -> list[Tile]:
    """`count` tiles of K = 1..k_max steps, scenarios in turn, from `seed`.

    A tile's operands follow its scenario's classes; in `cancel` tiles step 2m+1 repeats step
    2m with A negated (so every PE cancels the pair), and in `range_edge` tiles C is mostly
    +-FLT_MAX."""
    if count < 0 or k_max < 1:
        raise ValueError(f"need count >= 0 and k_max >= 1, got count={count}, k_max={k_max}")
    rng = np.random.default_rng(seed)
    src = OperandSource(rng)
    out = []
    for t in range(count):
        name = scenarios[t % len(scenarios)]
        k = int(rng.integers(1, k_max + 1))
        if name == "cancel":
            a = src.fp16(4 * k, {"near1": 6, "sub": 1, "zero": 1}).reshape(4, k)
            b = src.fp16(4 * k, {"near1": 6, "sub": 1, "zero": 1}).reshape(k, 4)
            for s in range(1, k, 2):
                a[:, s] = a[:, s - 1] ^ np.uint16(0x8000)
                b[s, :] = b[s - 1, :]
            c = src.fp32(16, {"zero": 2, "near1": 1}).reshape(4, 4)
        elif name == "range_edge":
            a = src.fp16(4 * k, {"max": 3, "wide": 1}).reshape(4, k)
            b = src.fp16(4 * k, {"max": 3, "wide": 1}).reshape(k, 4)
            c = src.fp32(16, {"flt_max": 3, "wide": 1}).reshape(4, 4)
        elif name == "subnormal":
            a = src.fp16(4 * k, {"sub": 4, "wide": 1}).reshape(4, k)
            b = src.fp16(4 * k, {"sub": 2, "near1": 2}).reshape(k, 4)
            c = src.fp32(16, {"sub": 3, "zero": 1}).reshape(4, 4)
        elif name == "specials":
            a = src.fp16(4 * k, {"special": 2, "near1": 3}).reshape(4, k)
            b = src.fp16(4 * k, {"special": 2, "near1": 3}).reshape(k, 4)
            c = src.fp32(16, {"special": 1, "zero": 1, "near1": 1}).reshape(4, 4)
        elif name == "mixed":
            mix16 = {"near1": 6, "wide": 2, "sub": 1, "special": 1}
            a = src.fp16(4 * k, mix16).reshape(4, k)
            b = src.fp16(4 * k, mix16).reshape(k, 4)
            c = src.fp32(16, {"zero": 3, "near1": 4, "sub": 1, "special": 1}).reshape(4, 4)
        else:
            raise ValueError(f"unknown tile scenario {name!r}")
        out.append(Tile(a=a, b=b, c=c, scenario=name))
    return out
