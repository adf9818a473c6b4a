//! Integer tensor-core arithmetic, as PTX `mma ... .s32.{s8,u8,s4,u4}.{s8,u8,s4,u4}.s32`
//! computes it: 8- and 4-bit two's-complement or unsigned lanes, exact products, and a 32-bit
//! two's-complement accumulator that wraps (the default) or, with `.satfinite`, clamps to the
//! int32 range.
//!
//! Integers are not floating-point [`crate::numerics::Format`] rows: an [`IntFormat`] row is
//! a width and a signedness, and the datapath is written once against it, as hardware:
//!
//! 1. **extend** ([`IntFormat::decode`]): each lane is sign-extended (signed rows) or
//!    zero-extended (unsigned rows) to a 9-bit two's-complement operand, so one signed
//!    multiplier serves every mix of signedness;
//! 2. **multiply** ([`product`]): a 9 x 9 signed multiplier; the product is exact and fits
//!    [`PRODUCT_BITS`] bits (u8 x u8 reaches 255 * 255 = 65,025, s8 x u8 reaches
//!    -128 * 255 = -32,640);
//! 3. **accumulate** ([`accumulate`]): an adder tree over the step's `w <= 32` products
//!    ([`TREE_BITS`] bits: 32 * 65,025 < 2^21) plus the 32-bit accumulator: a
//!    [`SUM_BITS`]-bit exact sum, nothing lost;
//! 4. **narrow** ([`narrow`]): the sum goes back into the 32-bit accumulator register, its low
//!    32 bits ([`IntOverflow::Wrap`]) or clamped to `[-2^31, 2^31 - 1]`
//!    ([`IntOverflow::SatFinite`]).
//!
//! When the clamp applies: once per step, on the step's exact sum. PTX clamps the final
//! result of one `mma` instruction (its K is 32 for 8-bit and 64 for 4-bit operands); a
//! dot product longer than one step is a chain of instructions, each clamping its own D. A
//! dot product that fits one step (K <= `w`) therefore clamps exactly once, at the end; a
//! longer one can differ from clamping the whole sum once (an intermediate step may clamp
//! and a later one pull the value back). Wrapping is associative, so a wrapped result does
//! not depend on the step width at all.

use super::format::{Format, E2M1, E4M3};
use num_traits::{AsPrimitive, Bounded};

/// An integer operand format: a width in bits and a signedness.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IntFormat {
    /// Short lower-case name used on the command line and in reports (`s8`, `u4`, ...).
    pub name: &'static str,
    /// Width in bits.
    pub bits: u32,
    /// True for two's complement, false for unsigned.
    pub signed: bool,
}

/// Signed 8-bit integers (PTX `.s8`), -128..=127.
pub const S8: IntFormat = IntFormat {
    name: "s8",
    bits: 8,
    signed: true,
};
/// Unsigned 8-bit integers (PTX `.u8`), 0..=255.
pub const U8: IntFormat = IntFormat {
    name: "u8",
    bits: 8,
    signed: false,
};
/// Signed 4-bit integers (PTX `.s4`), -8..=7.
pub const S4: IntFormat = IntFormat {
    name: "s4",
    bits: 4,
    signed: true,
};
/// Unsigned 4-bit integers (PTX `.u4`), 0..=15.
pub const U4: IntFormat = IntFormat {
    name: "u4",
    bits: 4,
    signed: false,
};
/// The accumulator and result format (PTX `.s32`): C and D.
pub const S32: IntFormat = IntFormat {
    name: "s32",
    bits: 32,
    signed: true,
};

/// The formats the multiplier takes (A and B).
pub const INT_INPUT_FORMATS: [IntFormat; 4] = [S8, U8, S4, U4];

/// Width of one exact product in two's complement (9-bit x 9-bit operands, results in
/// -32,640..=65,025).
pub const PRODUCT_BITS: u32 = 17;
/// Width of the adder tree's output over at most 32 products.
pub const TREE_BITS: u32 = PRODUCT_BITS + 5;
/// Width of the exact step sum: the 32-bit accumulator plus the tree (one carry bit).
pub const SUM_BITS: u32 = 33;

impl IntFormat {
    /// The row of a name (`s8`, `u8`, `s4`, `u4`, `s32`), case-insensitive.
    pub fn by_name(name: &str) -> Option<IntFormat> {
        [S8, U8, S4, U4, S32]
            .into_iter()
            .find(|f| f.name.eq_ignore_ascii_case(name))
    }

    /// The input row of a name (`s8`, `u8`, `s4`, `u4`), case-insensitive.
    pub fn input_by_name(name: &str) -> Option<IntFormat> {
        Self::by_name(name).filter(|f| INT_INPUT_FORMATS.contains(f))
    }

    /// All ones in the format's width.
    pub const fn mask(self) -> u64 {
        (1u64 << self.bits) - 1
    }

    /// The smallest value.
    pub const fn min(self) -> i64 {
        if self.signed {
            -(1i64 << (self.bits - 1))
        } else {
            0
        }
    }

    /// The largest value.
    pub const fn max(self) -> i64 {
        if self.signed {
            (1i64 << (self.bits - 1)) - 1
        } else {
            (1i64 << self.bits) - 1
        }
    }

    /// The extend stage: the value of the low `bits` of `bits_in` (higher bits ignored),
    /// sign-extended for signed rows and zero-extended for unsigned ones.
    pub const fn decode(self, bits_in: u64) -> i64 {
        let field = bits_in & self.mask();
        if self.signed && field >> (self.bits - 1) != 0 {
            field as i64 - (1i64 << self.bits)
        } else {
            field as i64
        }
    }

    /// The bit pattern of `value` (two's complement in the format's width), or `None` if the
    /// value is out of range.
    pub const fn encode(self, value: i64) -> Option<u64> {
        if value < self.min() || value > self.max() {
            None
        } else {
            Some(value as u64 & self.mask())
        }
    }
}

impl IntFormat {
    /// The floating-point row of the same width that stands for this format where only a
    /// lane width is needed (the operand buses, skew buffers and tile buffer of the tensor
    /// core, which carry bit patterns): E4M3 for 8-bit lanes, E2M1 for 4-bit lanes. The
    /// arithmetic comes from [`IntMode`], never from this row.
    pub const fn container(self) -> Format {
        if self.bits == 8 {
            E4M3
        } else {
            E2M1
        }
    }
}

impl std::fmt::Display for IntFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// Whether A and B formats may be paired: PTX pairs 8-bit with 8-bit and 4-bit with 4-bit
/// operands, of either signedness.
pub const fn pair_ok(fa: IntFormat, fb: IntFormat) -> bool {
    fa.bits == fb.bits
}

/// What happens when a step's exact sum leaves the accumulator's range.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum IntOverflow {
    /// Keep the low 32 bits (two's-complement wrap-around; PTX's default).
    #[default]
    Wrap,
    /// Clamp to `[-2^31, 2^31 - 1]` (PTX `.satfinite`).
    SatFinite,
}

impl IntOverflow {
    /// `wrap` or `satfinite`.
    pub const fn name(self) -> &'static str {
        match self {
            IntOverflow::Wrap => "wrap",
            IntOverflow::SatFinite => "satfinite",
        }
    }
}

/// The integer accumulation mode of a tensor core ([`crate::numerics::dot::AccMode::Int`]):
/// the operand formats and what the int32 accumulator does on overflow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IntMode {
    /// Format of A.
    pub a: IntFormat,
    /// Format of B.
    pub b: IntFormat,
    /// Wrap or clamp.
    pub overflow: IntOverflow,
}

/// The multiply stage: the exact product of lane `a` of format `fa` and lane `b` of `fb`.
pub const fn product(fa: IntFormat, a: u64, fb: IntFormat, b: u64) -> i64 {
    fa.decode(a) * fb.decode(b)
}

/// The narrow stage: an exact sum into an accumulator register of type `R` (int32 in the
/// tensor core), keeping its low bits or clamping it to `R`'s range. Returns the register
/// value and whether the sum was out of range (wrapped or clamped).
pub fn narrow<R>(sum: i64, overflow: IntOverflow) -> (R, bool)
where
    R: Bounded + AsPrimitive<i64> + Copy + 'static,
    i64: AsPrimitive<R>,
{
    let (lo, hi): (i64, i64) = (R::min_value().as_(), R::max_value().as_());
    let out_of_range = sum < lo || sum > hi;
    let r = match overflow {
        // `as` between integer types keeps the low bits: the wrap.
        IntOverflow::Wrap => sum.as_(),
        IntOverflow::SatFinite => sum.clamp(lo, hi).as_(),
    };
    (r, out_of_range)
}

/// The fields of one accumulate step, as the datapath computes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntStep {
    /// The adder tree's output: the exact sum of the step's products ([`TREE_BITS`] bits).
    pub tree: i64,
    /// The exact step sum `acc + tree` ([`SUM_BITS`] bits).
    pub sum: i64,
    /// The new accumulator value (the narrowed sum).
    pub acc: i32,
    /// The sum left the int32 range (it wrapped or was clamped).
    pub out_of_range: bool,
}

/// The accumulate and narrow stages of one step: `acc + sum(products)`, exact, then narrowed
/// to int32 by `overflow`.
pub fn accumulate(acc: i32, products: &[i64], overflow: IntOverflow) -> IntStep {
    let tree: i64 = products.iter().sum();
    let sum = i64::from(acc) + tree;
    let (acc, out_of_range) = narrow::<i32>(sum, overflow);
    IntStep {
        tree,
        sum,
        acc,
        out_of_range,
    }
}

/// The result of an integer dot product.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntDotResult {
    /// D, the int32 result.
    pub d: i32,
    /// Steps taken (`ceil(K / w)`, at least one).
    pub steps: usize,
    /// Some step's sum left the int32 range (wrapped or clamped).
    pub out_of_range: bool,
}

impl IntDotResult {
    /// D's bit pattern.
    pub const fn bits(&self) -> u32 {
        self.d as u32
    }
}

/// `d = c + sum_k a_k * b_k` over int lanes, `w` products per step (clamped to 1..=32), each
/// step narrowed into the int32 accumulator. `a` and `b` hold bit patterns (their low `bits`
/// are used) and have the same length; a K of zero is one step that returns `c`.
pub fn dot_int(
    fa: IntFormat,
    fb: IntFormat,
    a: &[u64],
    b: &[u64],
    c: i32,
    w: usize,
    overflow: IntOverflow,
) -> IntDotResult {
    let w = w.clamp(1, super::dot::MAX_LANES);
    let k = a.len().min(b.len());
    let mut acc = c;
    let mut out_of_range = false;
    let mut steps = 0;
    let mut prods = [0i64; super::dot::MAX_LANES];
    let mut start = 0;
    loop {
        let end = (start + w).min(k);
        for (i, p) in prods.iter_mut().enumerate().take(end - start) {
            *p = product(fa, a[start + i], fb, b[start + i]);
        }
        let step = accumulate(acc, &prods[..end - start], overflow);
        acc = step.acc;
        out_of_range |= step.out_of_range;
        steps += 1;
        start = end;
        if start >= k {
            break;
        }
    }
    IntDotResult {
        d: acc,
        steps,
        out_of_range,
    }
}
