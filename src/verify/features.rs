//! Feature detection of a block-FMA dot-product unit from its input/output behaviour alone.
//!
//! The method is the generalised feature testing of Khattak and Mikaitis ("Generalized
//! Methodology for Determining Numerical Features of Hardware Floating-Point Matrix
//! Multipliers: Part I", IEEE HPEC 2025; test programs in faiziktk/IEEE_HPEC2025_block_FMA_tests),
//! which builds on the directed tests of Fasi, Higham, Mikaitis and Pranesh ("Numerical
//! behavior of NVIDIA tensor cores", PeerJ Computer Science, 2021) and on Mikaitis,
//! "Monotonicity of multi-term floating-point adders" (IEEE Trans. Computers, 2024). It is
//! written here in our own terms (docs/numerics.md, "Detecting the features of a block FMA"):
//! every probe is a short dot product whose exact result is a number the FP32 output can hold,
//! so the answer it gives tells one feature apart from the others without depending on the
//! output rounding, and each probe is scaled by a power of two `2^E` chosen per input format,
//! so that FP8 products reach the same relative positions as FP16 ones.
//!
//! The unit under test is a black box `f(a, b, c) -> d`: `a` and `b` hold K bit patterns of
//! the input format, `c` and `d` are FP32 bit patterns, `d = c + sum a_k b_k` as the unit
//! computes it. Nothing here calls the crate's arithmetic; values are encoded from the
//! [`Format`] fields by the code below.

use crate::numerics::format::{Format, FP32, INPUT_FORMATS};
use serde::Serialize;

/// A count the probes either pinned down or could only bound from below (the probe range
/// ran out before the feature showed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Bound {
    /// The value was found.
    Exactly(i32),
    /// Every probe up to this value passed; the true value is this or more.
    AtLeast(i32),
}

impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Bound::Exactly(v) => write!(f, "{v}"),
            Bound::AtLeast(v) => write!(f, ">= {v}"),
        }
    }
}

/// A rounding direction as seen from outside: a value 3/4 of a unit above a grid point is
/// sent to the point below or above, for a positive and a negative sum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Observed {
    /// Both signs go toward zero (truncation).
    TowardZero,
    /// Both signs go to the nearer grid point.
    ToNearest,
    /// Toward +infinity.
    Up,
    /// Toward -infinity.
    Down,
    /// The results fit none of the four.
    Unclassified,
}

impl Observed {
    /// Short name (`rz`, `rn`, `ru`, `rd`, `unclassified`).
    pub const fn name(self) -> &'static str {
        match self {
            Observed::TowardZero => "rz",
            Observed::ToNearest => "rn",
            Observed::Up => "ru",
            Observed::Down => "rd",
            Observed::Unclassified => "unclassified",
        }
    }
}

/// Where a block normalises its sum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Normalisation {
    /// Once, after all the block's terms are added (the block FMA).
    Late,
    /// After each addition, the bits below the precision dropped or rounded to nearest.
    Immediate,
    /// After each addition, rounding up.
    ImmediateRoundUp,
    /// The result fits neither pattern.
    Unclassified,
}

impl Normalisation {
    /// Short name (`late`, `immediate`, `immediate_round_up`, `unclassified`).
    pub const fn name(self) -> &'static str {
        match self {
            Normalisation::Late => "late",
            Normalisation::Immediate => "immediate",
            Normalisation::ImmediateRoundUp => "immediate_round_up",
            Normalisation::Unclassified => "unclassified",
        }
    }
}

/// What the probes found about a dot-product unit for one input format (FP32 output).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FeatureReport {
    /// The input format probed.
    pub format: &'static str,
    /// The power of two `E` every probe is scaled by (`2^E` is the size of the largest term).
    pub scale_exp: i32,
    /// A subnormal input times a power of two gives its exact product.
    pub subnormal_inputs: bool,
    /// An FP32 subnormal `c` passes through a block unchanged, and (formats whose products
    /// reach the FP32 subnormal range: BF16, TF32) a product can be an FP32 subnormal result.
    pub subnormal_outputs: bool,
    /// Fraction bits a block keeps of `c` when every product is zero: 23 for a full FP32
    /// accumulator, fewer where alignment or the output cuts it (13 for the Hopper FP8 path).
    pub kept_fraction_bits: u32,
    /// Extra alignment bits (`neab`): bits kept below FP32's 23 fraction bits under the
    /// block's largest exponent (negative when fewer than 23 are kept); `None` when a block
    /// holds a single product (the probe needs two in one block).
    pub extra_alignment_bits: Option<Bound>,
    /// How a term's bits below the alignment grid are treated (`None` when the extra bits
    /// were not pinned down).
    pub alignment_rounding: Option<Observed>,
    /// The block (FMA) size `n`: how many products are summed before one normalisation.
    pub block_size: Bound,
    /// Extra carry bits: the integer bits above a term's leading bit that a sum of `n` terms
    /// of the largest significand needs, `floor(log2(n * (2 - 2^(1-p))))` with `p` the input
    /// precision, reported only when such a full block is summed without loss (`None`
    /// otherwise, or when `n` could only be bounded).
    pub carry_bits: Option<u32>,
    /// Where a block normalises.
    pub normalisation: Normalisation,
    /// Rounding of a block's result to the FP32 output, read at the kept precision (a unit
    /// whose output keeps more bits than its alignment may read as unclassified).
    pub output_rounding: Observed,
    /// Rounding where one block's result meets the next block's products (`None` when `n`
    /// could only be bounded).
    pub chained_rounding: Option<Observed>,
    /// Rounding of a block's result to an FP16 output, when an FP16-output unit was given.
    pub fp16_output_rounding: Option<Observed>,
}

/// Why the probes could not run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FeatureError {
    /// The format is not a multiplier input format.
    #[error("{0} is not a multiplier input format (expected e4m3, e5m2, fp16, bf16 or tf32)")]
    NotAnInput(&'static str),
    /// A probe value cannot be written as a product of two values of the format.
    #[error("the {probe} probe needs a product {value} that {format} cannot form")]
    Unreachable {
        /// Which probe.
        probe: &'static str,
        /// The value, as `m * 2^e`.
        value: String,
        /// The input format.
        format: &'static str,
    },
}

/// A unit as a plain function pointer; `None::<&UnitFn>` passes [`detect_features`] no FP16
/// unit.
pub type UnitFn = fn(&[u64], &[u64], u32) -> u32;

/// The largest block size the block-size probe tries.
pub const MAX_BLOCK_PROBE: usize = 64;
/// The largest number of extra alignment bits the alignment probe tries.
pub const MAX_NEAB_PROBE: i32 = 8;

/// `(-1)^neg * m * 2^e`, an exact value the probes use.
#[derive(Clone, Copy, Debug)]
struct Val {
    neg: bool,
    m: u64,
    e: i32,
}

const fn val(m: u64, e: i32) -> Val {
    Val { neg: false, m, e }
}

impl Val {
    const fn negate(self) -> Val {
        Val {
            neg: !self.neg,
            ..self
        }
    }
}

/// The encoding of `v` in `fmt`, or `None` if `v` is not exactly representable.
fn encode(fmt: Format, v: Val) -> Option<u64> {
    if v.m == 0 {
        return Some(fmt.zero(v.neg));
    }
    let tz = v.m.trailing_zeros();
    let m = v.m >> tz;
    let e = v.e + tz as i32;
    let len = 64 - m.leading_zeros() as i32;
    let top = e + len - 1;
    let f = fmt.frac_bits as i32;
    let mag = if top >= fmt.emin() {
        if top > fmt.emax() || len > f + 1 {
            return None;
        }
        let frac = (m << (f + 1 - len)) & fmt.frac_mask();
        (((top + fmt.bias) as u64) << f) | frac
    } else {
        let shift = e - (fmt.emin() - f);
        if shift < 0 {
            return None;
        }
        m << shift
    };
    if mag > fmt.max_finite_magnitude() {
        return None;
    }
    Some(fmt.with_sign(mag, v.neg))
}

/// FP32 bits of `v`, which every caller builds within FP32's range and precision.
fn fp32(v: Val) -> u32 {
    encode(FP32, v).map_or(u32::MAX, |b| b as u32)
}

/// True if `x` and `y` are the same FP32 value (either zero matches either zero).
fn same(x: u32, y: u32) -> bool {
    x == y || (x << 1 == 0 && y << 1 == 0)
}

/// The probing context: the format, the unit and the scale.
struct Prober<'a, F> {
    fmt: Format,
    unit: &'a F,
    subnormal_operands: bool,
}

impl<F: Fn(&[u64], &[u64], u32) -> u32> Prober<'_, F> {
    /// `a * b = v` with `b` a power of two, both normal (or subnormal where allowed), the two
    /// exponents as close as possible.
    fn product(&self, v: Val) -> Option<(u64, u64)> {
        let fmt = self.fmt;
        let mut best: Option<(i32, u64, u64)> = None;
        for eb in fmt.emin()..=fmt.emax() {
            let Some(b) = encode(fmt, val(1, eb)) else {
                continue;
            };
            let Some(a) = encode(fmt, Val { e: v.e - eb, ..v }) else {
                continue;
            };
            let a_exp = fmt.exp_field(a) as i32 - fmt.bias;
            if fmt.exp_field(a) == 0 && !self.subnormal_operands {
                continue;
            }
            let spread = (a_exp - eb).abs();
            if best.is_none_or(|(s, _, _)| spread < s) {
                best = Some((spread, a, b));
            }
        }
        best.map(|(_, a, b)| (a, b))
    }

    /// Runs the unit on K slots with the given products (slot, value) and `c`.
    fn run(
        &self,
        probe: &'static str,
        k: usize,
        products: &[(usize, Val)],
        c: Val,
    ) -> Result<u32, FeatureError> {
        let zero = self.fmt.zero(false);
        let mut a = vec![zero; k];
        let mut b = vec![zero; k];
        for &(slot, v) in products {
            let (x, y) = self.product(v).ok_or_else(|| self.unreachable(probe, v))?;
            a[slot] = x;
            b[slot] = y;
        }
        Ok((self.unit)(&a, &b, fp32(c)))
    }

    fn reachable(&self, v: Val) -> bool {
        self.product(v).is_some()
    }

    fn unreachable(&self, probe: &'static str, v: Val) -> FeatureError {
        FeatureError::Unreachable {
            probe,
            value: format!("{}{} * 2^{}", if v.neg { "-" } else { "" }, v.m, v.e),
            format: self.fmt.name,
        }
    }

    /// Runs a probe for a positive sum and for its negation and sorts the pair of results
    /// into a rounding direction, given the grid points below (`lo`) and above (`hi`) the
    /// exact positive result.
    fn direction(
        &self,
        probe: &'static str,
        k: usize,
        products: &[(usize, Val)],
        c: Val,
        lo: Val,
        hi: Val,
    ) -> Result<Observed, FeatureError> {
        let pos = self.run(probe, k, products, c)?;
        let negated: Vec<(usize, Val)> = products.iter().map(|&(s, v)| (s, v.negate())).collect();
        let neg = self.run(probe, k, &negated, c.negate())?;
        let (lo_p, hi_p, lo_n, hi_n) = (fp32(lo), fp32(hi), fp32(lo.negate()), fp32(hi.negate()));
        Ok(
            match (
                same(pos, lo_p),
                same(pos, hi_p),
                same(neg, lo_n),
                same(neg, hi_n),
            ) {
                (true, _, true, _) => Observed::TowardZero,
                (_, true, _, true) => Observed::ToNearest,
                (_, true, true, _) => Observed::Up,
                (true, _, _, true) => Observed::Down,
                _ => Observed::Unclassified,
            },
        )
    }
}

/// The scale `E` of the probes for `fmt`: the largest term is `2^E`, low enough that sums of
/// a few such terms stay far below FP32's overflow and high enough that terms down to about
/// `2^(E - 33)` are still products of two of the format's values.
fn scale_exp(fmt: Format) -> i32 {
    (2 * fmt.emax() - 2).min(64)
}

/// Probes `unit` (FP32 `c` and `d`, inputs in `fmt`) for every feature of the report;
/// `fp16_unit`, if given, is the same unit with an FP16 accumulator (`c` and `d` FP16 bit
/// patterns in the low 16 bits), probed for its output rounding only.
pub fn detect_features<F, G>(
    fmt: Format,
    unit: &F,
    fp16_unit: Option<&G>,
) -> Result<FeatureReport, FeatureError>
where
    F: Fn(&[u64], &[u64], u32) -> u32,
    G: Fn(&[u64], &[u64], u32) -> u32,
{
    if !INPUT_FORMATS.contains(&fmt) {
        return Err(FeatureError::NotAnInput(fmt.name));
    }
    let mut p = Prober {
        fmt,
        unit,
        subnormal_operands: false,
    };
    let e = scale_exp(fmt);

    // Subnormal inputs: the smallest subnormal times a power of two that lifts the product to
    // FP32's normal range (c = 0).
    let tiny_e = fmt.emin() - fmt.frac_bits as i32;
    let lift = (-126 - tiny_e).clamp(0, fmt.emax());
    let sub =
        encode(fmt, val(1, tiny_e)).ok_or_else(|| p.unreachable("subnormal", val(1, tiny_e)))?;
    let two_lift =
        encode(fmt, val(1, lift)).ok_or_else(|| p.unreachable("subnormal", val(1, lift)))?;
    let d = unit(&[sub], &[two_lift], 0);
    let subnormal_inputs = same(d, fp32(val(1, tiny_e + lift))) && d != 0;
    p.subnormal_operands = subnormal_inputs;

    // Subnormal outputs: c = +-2^-127 with zero products comes back; where the format's
    // products reach it, 2^-126 * 2^-1 gives 2^-127.
    let zero = fmt.zero(false);
    let mut subnormal_outputs = [false, true].iter().all(|&neg| {
        unit(&[zero], &[zero], fp32(Val { neg, m: 1, e: -127 })) == fp32(Val { neg, m: 1, e: -127 })
    });
    if let (Some(x), Some(y)) = (encode(fmt, val(1, -126)), encode(fmt, val(1, -1))) {
        subnormal_outputs &= unit(&[x], &[y], 0) == fp32(val(1, -127));
    }

    // Fraction bits kept of c alone: c = 2^E (1 + 2^-m), zero products.
    let mut kept = 0;
    for m in 1..=23 {
        let c = val((1 << m) + 1, e - m);
        if p.run("kept fraction bits", 1, &[], c)? == fp32(c) {
            kept = m as u32;
        } else {
            break;
        }
    }
    let pk = kept as i32;

    // Block size: c = 2^E (1 + U) with U = 2^-kept, a product 2^E in slot 0 and U 2^E in
    // slot j. In one block the sum 2^E (2 + 2U) is exact; once slot j starts a new block, the
    // first block's 2^E (2 + U) has lost its U and the sum differs.
    let mut block = Bound::AtLeast(MAX_BLOCK_PROBE as i32);
    if pk >= 1 {
        let c = val((1 << pk) + 1, e - pk);
        let whole = fp32(val((1 << pk) + 1, e + 1 - pk));
        for j in 1..=MAX_BLOCK_PROBE {
            let d = p.run(
                "block size",
                j + 1,
                &[(0, val(1, e)), (j, val(1, e - pk))],
                c,
            )?;
            if d != whole {
                block = Bound::Exactly(j as i32);
                break;
            }
        }
    }

    // Extra alignment bits: c = -2^E cancels the product 2^E exactly; a third term 2^(E-23-n)
    // is all that remains, and it survives only if the alignment keeps bit n below FP32's
    // last fraction bit. The two products must share a block, so a unit whose blocks hold one
    // product has no answer here.
    let mut neab = None;
    let two_in_a_block = !matches!(block, Bound::Exactly(n) if n < 2);
    for n in (-23..=MAX_NEAB_PROBE).take_while(|_| two_in_a_block) {
        let t = val(1, e - 23 - n);
        if !p.reachable(t) {
            break;
        }
        let d = p.run(
            "extra alignment bits",
            2,
            &[(0, val(1, e)), (1, t)],
            val(1, e).negate(),
        )?;
        if d == fp32(t) {
            neab = Some(Bound::AtLeast(n));
        } else {
            neab = Some(Bound::Exactly(n - 1));
            break;
        }
    }

    // Rounding of the bits below the alignment grid g = 2^(E-23-neab): the same cancelling
    // pair and a term of 3/4 g, of either sign; what is left is 0 or +-g.
    let alignment_rounding = match neab {
        Some(Bound::Exactly(nb)) if p.reachable(val(3, e - 25 - nb)) => Some(p.direction(
            "alignment rounding",
            2,
            &[(0, val(1, e)), (1, val(3, e - 25 - nb))],
            val(1, e).negate(),
            val(0, 0),
            val(1, e - 23 - nb),
        )?),
        _ => None,
    };

    // Output rounding: c = 2^E (1 + 3U) plus two products 1.5 2^E (no term above 2^E, so
    // the alignment grid stays U 2^E): the exact 2^E (4 + 3U) lies 3/4 of the way from 4 2^E
    // to the next output value 2^E (4 + 4U). Blocks of one product (an FMA chain) get one
    // product 3 2^E instead.
    let output_products: &[(usize, Val)] = if matches!(block, Bound::Exactly(1)) {
        &[(0, val(3, e))]
    } else {
        &[(0, val(3, e - 1)), (1, val(3, e - 1))]
    };
    let output_rounding = if pk >= 2 {
        p.direction(
            "output rounding",
            output_products.len(),
            output_products,
            val((1 << pk) + 3, e - pk),
            val(1, e + 2),
            val((1 << pk) + 1, e + 2 - pk),
        )?
    } else {
        Observed::Unclassified
    };

    // Normalisation: c = 2^E (1 - 4u) with u = U / 2, two products 5u 2^E. One normalisation
    // at the end gives the exact 2^E (1 + 6u); normalising after each addition loses the
    // first u (1 + u is not an output value) and gives 1 + 4u, or 1 + 8u rounding up.
    let normalisation = if pk >= 3 {
        let c = val((1 << (pk - 1)) - 1, e - pk + 1);
        let prods = [(0, val(5, e - pk - 1)), (1, val(5, e - pk - 1))];
        let d = p.run("normalisation", 2, &prods, c)?;
        if d == fp32(val((1 << pk) + 3, e - pk)) {
            Normalisation::Late
        } else if d == fp32(val((1 << (pk - 1)) + 1, e - pk + 1)) {
            Normalisation::Immediate
        } else if d == fp32(val((1 << (pk - 2)) + 1, e - pk + 2)) {
            Normalisation::ImmediateRoundUp
        } else {
            Normalisation::Unclassified
        }
    } else {
        Normalisation::Unclassified
    };

    // Carry bits: a whole block of products of the largest significand (2 - 2^(1-p)), whose
    // exact sum FP32 holds, must come back exact.
    let prec = fmt.precision() as i32;
    let carry_bits = match block {
        Bound::Exactly(n) => {
            let top = (1u64 << prec) - 1;
            let e2 = e - 6;
            let prods: Vec<(usize, Val)> = (0..n as usize)
                .map(|k| (k, val(top, e2 - prec + 1)))
                .collect();
            let d = p.run("carry bits", n as usize, &prods, val(0, 0))?;
            let sum = n as u64 * top;
            (d == fp32(val(sum, e2 - prec + 1)))
                .then(|| (63 - sum.leading_zeros() as i32 - (prec - 1)) as u32)
        }
        Bound::AtLeast(_) => None,
    };

    // Chained rounding: c = 2^E (1 + U) passes the first block (zero products) unchanged;
    // the second block adds 3/4 U 2^E in its first slot.
    let chained_rounding = match block {
        Bound::Exactly(n) if pk >= 2 => Some(p.direction(
            "chained rounding",
            n as usize + 1,
            &[(n as usize, val(3, e - pk - 2))],
            val((1 << pk) + 1, e - pk),
            val((1 << pk) + 1, e - pk),
            val((1 << (pk - 1)) + 1, e - pk + 1),
        )?),
        _ => None,
    };

    let fp16_output_rounding = match fp16_unit {
        Some(g) => Some(fp16_rounding(&p, g)?),
        None => None,
    };

    Ok(FeatureReport {
        format: fmt.name,
        scale_exp: e,
        subnormal_inputs,
        subnormal_outputs,
        kept_fraction_bits: kept,
        extra_alignment_bits: neab,
        alignment_rounding,
        block_size: block,
        carry_bits,
        normalisation,
        output_rounding,
        chained_rounding,
        fp16_output_rounding,
    })
}

/// FP16-output rounding: c = 1 + 3 2^-10 (FP16) plus three products 1: the exact 4 + 3 2^-10
/// lies 3/4 of the way from 4 to the next FP16 value 4 + 2^-8.
fn fp16_rounding<F, G>(p: &Prober<'_, F>, g: &G) -> Result<Observed, FeatureError>
where
    F: Fn(&[u64], &[u64], u32) -> u32,
    G: Fn(&[u64], &[u64], u32) -> u32,
{
    use crate::numerics::format::FP16;
    let h = |v: Val| encode(FP16, v).map_or(u32::MAX, |b| b as u32);
    let one = val(1, 0);
    let (a, b) = p
        .product(one)
        .ok_or_else(|| p.unreachable("fp16 output rounding", one))?;
    let (na, _) = p
        .product(one.negate())
        .ok_or_else(|| p.unreachable("fp16 output rounding", one.negate()))?;
    let c = val((1 << 10) + 3, -10);
    let pos = g(&[a, a, a], &[b, b, b], h(c));
    let neg = g(&[na, na, na], &[b, b, b], h(c.negate()));
    let (lo, hi) = (val(1, 2), val((1 << 10) + 1, -8));
    let same16 = |x: u32, y: u32| x == y || (x << 17 == 0 && y << 17 == 0);
    Ok(
        match (
            same16(pos, h(lo)),
            same16(pos, h(hi)),
            same16(neg, h(lo.negate())),
            same16(neg, h(hi.negate())),
        ) {
            (true, _, true, _) => Observed::TowardZero,
            (_, true, _, true) => Observed::ToNearest,
            (_, true, true, _) => Observed::Up,
            (true, _, _, true) => Observed::Down,
            _ => Observed::Unclassified,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numerics::format::{BF16, E4M3, E5M2, FP16, TF32};

    #[test]
    fn encodes_against_host_floats() {
        // 1.5 * 2^-20, 2^-24 (FP16 subnormal), 65504 (FP16 max), 448 (E4M3 max).
        assert_eq!(
            encode(FP16, val(3, -21)),
            Some(half::f16::from_f64(1.5 * 2f64.powi(-20)).to_bits() as u64)
        );
        assert_eq!(encode(FP16, val(1, -24)), Some(1));
        assert_eq!(encode(FP16, val(2047, 5)), Some(0x7BFF));
        assert_eq!(encode(FP16, val(1, -25)), None);
        assert_eq!(encode(FP16, val(2049, 0)), None);
        assert_eq!(encode(E4M3, val(7, 6)), Some(0x7E));
        assert_eq!(encode(E4M3, val(15, 5)), None);
        assert_eq!(encode(FP32, val(3, -150)), None);
        assert_eq!(encode(FP32, val(1, -149)), Some(1));
        assert_eq!(
            encode(
                BF16,
                Val {
                    neg: true,
                    m: 1,
                    e: 0
                }
            ),
            Some(0xBF80)
        );
        assert_eq!(encode(TF32, val(1, 0)), Some(0x3F80_0000 >> 13));
        assert_eq!(encode(E5M2, val(3, -16)), Some(0x03));
    }

    #[test]
    fn a_plain_fp32_fma_chain_reads_as_blocks_of_one() {
        // A unit that adds each product to c with one host FP32 FMA (round to nearest): every
        // product is its own block, normalised and rounded at once, and the exact cancellation
        // keeps every small term.
        let unit = |a: &[u64], b: &[u64], c: u32| {
            let mut acc = f32::from_bits(c);
            for (&x, &y) in a.iter().zip(b) {
                let x = half::f16::from_bits(x as u16).to_f32();
                let y = half::f16::from_bits(y as u16).to_f32();
                acc = x.mul_add(y, acc);
            }
            acc.to_bits()
        };
        let r = detect_features(FP16, &unit, None::<&UnitFn>).unwrap();
        assert_eq!(r.output_rounding, Observed::ToNearest);
        assert_eq!(r.chained_rounding, Some(Observed::ToNearest));
        assert!(r.subnormal_inputs && r.subnormal_outputs);
        assert_eq!(r.kept_fraction_bits, 23);
        assert_eq!(r.block_size, Bound::Exactly(1));
        assert_eq!(r.extra_alignment_bits, None);
        assert_eq!(r.alignment_rounding, None);
        assert_eq!(r.normalisation, Normalisation::Immediate);
        assert_eq!(r.carry_bits, Some(0));
    }
}
