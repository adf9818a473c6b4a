//! The block-scaled dot product `d = c + sum_j X_A,j * X_B,j * sum_i P_ij * Q_ij` over
//! quantised rows ([`Quantised`]), functional only (no clocks): the MX specification leaves
//! the internal precision to the implementation, so three documented modes are offered.
//!
//! - [`MxDotMode::Exact`]: one rounding (FP32, nearest even) of `c` plus every scaled product;
//! - [`MxDotMode::Fused`]: per block `j` (32 elements for MX, 16 for NVFP4), in order,
//!   `c <- RNE32(c + X_A,j * X_B,j * sum_i P_ij * Q_ij)` with the block's sum exact: one
//!   rounding per block;
//! - [`MxDotMode::BlockTruncate`] (hardware-style): each block's exact scaled sum is truncated
//!   to FP32 (round toward zero, as NVIDIA's block FMA truncates), then added to `c` with
//!   round to nearest even: `c <- RNE32(c + RZ32(block))`. This follows the shape of the rule
//!   inferred for Blackwell FP8 (`d = RNE32(c + RZ32(sum))`); it has not been checked against
//!   any GPU's MX output (we hold no MX measurements).
//!
//! Scales multiply exactly (E8M0 powers of two; NVFP4's E4M3 block scale and FP32 tensor
//! scale as their exact values). Specials: a NaN scale, a NaN element or `c`, `0 x Inf` and
//! `+Inf + -Inf` give FP32's canonical NaN (raising `invalid` whatever made it); otherwise an
//! infinity wins. An exact zero sum is
//! `+0` unless every term (and `c`) is `-0`.

use super::flags::{Flags, RoundingMode};
use super::format::{Class, FP32};
use super::mx::{Element, Quantised, INT8_FRAC_BITS};
use super::round::{round_pack, Overflow, RoundTrace, Rounded, Unrounded};
use super::unpack::unpack;
use num_bigint::{BigInt, Sign};

/// How the block sums are combined (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MxDotMode {
    /// One rounding of everything.
    Exact,
    /// One rounding per block.
    Fused,
    /// Each block truncated to FP32, then added to `c` with round to nearest even.
    BlockTruncate,
}

impl MxDotMode {
    /// Every mode.
    pub const ALL: [MxDotMode; 3] = [MxDotMode::Exact, MxDotMode::Fused, MxDotMode::BlockTruncate];

    /// Short name (`exact`, `fused`, `block-rz`).
    pub const fn name(self) -> &'static str {
        match self {
            MxDotMode::Exact => "exact",
            MxDotMode::Fused => "fused",
            MxDotMode::BlockTruncate => "block-rz",
        }
    }
}

/// Why two rows cannot be multiplied.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MxDotError {
    /// Different block sizes or row lengths, or a row index out of range.
    #[error("{0}")]
    Shape(String),
}

/// A value in one of three states while terms are gathered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Special {
    /// Finite so far.
    None,
    /// An infinity of this sign (`true` = negative).
    Inf(bool),
    /// NaN.
    Nan,
}

impl Special {
    fn add_inf(self, neg: bool) -> Special {
        match self {
            Special::None => Special::Inf(neg),
            Special::Inf(n) if n == neg => self,
            _ => Special::Nan,
        }
    }
}

/// An exact finite term `(-1)^neg * sig * 2^exp`.
#[derive(Clone, Copy, Debug)]
struct Term {
    neg: bool,
    sig: u128,
    exp: i32,
    /// A zero term that is `-0` (for the sign of an exact zero sum).
    neg_zero: bool,
}

/// A decoded factor: special class, sign, significand, exponent of its LSB.
#[derive(Clone, Copy, Debug)]
struct Factor {
    class: Class,
    neg: bool,
    sig: u64,
    exp: i32,
}

fn float_factor(fmt: super::format::Format, code: u64) -> Factor {
    let u = unpack(fmt, code);
    Factor {
        class: u.class,
        neg: u.sign,
        sig: if u.class.is_finite() { u.sig } else { 0 },
        exp: u.lsb_exp(),
    }
}

fn element_factor(elem: Element, code: u64) -> Factor {
    match elem {
        Element::Float(f) => float_factor(f, code),
        Element::Int8 => {
            let q = code as u8 as i8 as i64;
            Factor {
                class: if q == 0 { Class::Zero } else { Class::Normal },
                neg: q < 0,
                sig: q.unsigned_abs(),
                exp: -INT8_FRAC_BITS,
            }
        }
    }
}

/// The scale of block `blk` of `row` (block scale times tensor scale, as one factor list).
fn scale_factors(q: &Quantised, row: usize, blk: usize) -> [Factor; 2] {
    let per_row = q.blocks_per_row();
    let s = float_factor(q.format.scale_format(), q.scales[row * per_row + blk]);
    let t = match q.tensor_scale {
        Some(bits) => float_factor(FP32, bits as u64),
        None => Factor {
            class: Class::Normal,
            neg: false,
            sig: 1,
            exp: 0,
        },
    };
    [s, t]
}

/// Multiplies factors; returns the term or the special it makes.
fn product(factors: &[Factor]) -> Result<Term, Special> {
    let neg = factors.iter().fold(false, |n, f| n ^ f.neg);
    if factors.iter().any(|f| f.class == Class::Nan) {
        return Err(Special::Nan);
    }
    let inf = factors.iter().any(|f| f.class == Class::Infinite);
    let zero = factors.iter().any(|f| f.class == Class::Zero);
    match (inf, zero) {
        (true, true) => return Err(Special::Nan),
        (true, false) => return Err(Special::Inf(neg)),
        _ => {}
    }
    if zero {
        return Ok(Term {
            neg,
            sig: 0,
            exp: 0,
            neg_zero: neg,
        });
    }
    let mut sig: u128 = 1;
    let mut exp = 0;
    for f in factors {
        sig *= f.sig as u128;
        exp += f.exp;
    }
    Ok(Term {
        neg,
        sig,
        exp,
        neg_zero: false,
    })
}

/// Rounds the exact sum of `terms` once into FP32 under `mode`.
fn round_terms(terms: &[Term], special: Special, mode: RoundingMode) -> Rounded {
    let canon = |bits: u64, flags: Flags| Rounded {
        bits,
        flags,
        trace: RoundTrace::IDLE,
    };
    match special {
        Special::Nan => return canon(FP32.canonical_nan(), Flags::INVALID),
        Special::Inf(n) => return canon(FP32.infinity(n).unwrap_or(0), Flags::NONE),
        Special::None => {}
    }
    let nonzero: Vec<&Term> = terms.iter().filter(|t| t.sig != 0).collect();
    let Some(min_exp) = nonzero.iter().map(|t| t.exp).min() else {
        let all_neg = !terms.is_empty() && terms.iter().all(|t| t.neg_zero);
        return canon(FP32.zero(all_neg), Flags::NONE);
    };
    let mut total = BigInt::default();
    for t in &nonzero {
        let v = BigInt::from(t.sig) << (t.exp - min_exp) as usize;
        if t.neg {
            total -= v;
        } else {
            total += v;
        }
    }
    let (sign, mag) = total.into_parts();
    let neg = sign == Sign::Minus;
    if mag.bits() == 0 {
        // An exact cancellation: +0 (-0 only when rounding down), as IEEE says.
        return canon(FP32.zero(mode == RoundingMode::Down), Flags::NONE);
    }
    // Keep the top 100 bits, the rest as sticky (FP32 needs 24 + guard).
    let bits = mag.bits();
    let drop = bits.saturating_sub(100);
    let kept = &mag >> drop as usize;
    let sticky = drop > 0 && mag.trailing_zeros().unwrap_or(0) < drop;
    let sig = kept
        .to_u64_digits()
        .iter()
        .rev()
        .fold(0u128, |acc, &d| (acc << 64) | d as u128);
    round_pack(
        FP32,
        Unrounded {
            sign: neg,
            exp: min_exp + drop as i32,
            sig,
            sticky,
        },
        mode,
        Overflow::Ieee,
    )
}

/// The FP32 `c` as a term (or its special).
fn c_term(c: u32) -> Result<Term, Special> {
    let f = float_factor(FP32, c as u64);
    match f.class {
        Class::Nan => Err(Special::Nan),
        Class::Infinite => Err(Special::Inf(f.neg)),
        Class::Zero => Ok(Term {
            neg: f.neg,
            sig: 0,
            exp: 0,
            neg_zero: f.neg,
        }),
        _ => Ok(Term {
            neg: f.neg,
            sig: f.sig as u128,
            exp: f.exp,
            neg_zero: false,
        }),
    }
}

fn gather(t: Result<Term, Special>, terms: &mut Vec<Term>, special: &mut Special) {
    match t {
        Ok(t) => terms.push(t),
        Err(Special::Nan) => *special = Special::Nan,
        Err(Special::Inf(n)) => *special = special.add_inf(n),
        Err(Special::None) => {}
    }
}

/// `d = c + sum_j X_A,j X_B,j sum_i P_ij Q_ij` over row `row_a` of `a` and row `row_b` of
/// `b` (same row length and block size), in `mode`; FP32 result with flags.
pub fn mx_dot(
    a: &Quantised,
    row_a: usize,
    b: &Quantised,
    row_b: usize,
    c: u32,
    mode: MxDotMode,
) -> Result<Rounded, MxDotError> {
    let bs = a.format.block_size();
    if bs != b.format.block_size() || a.row_len != b.row_len {
        return Err(MxDotError::Shape(format!(
            "{} rows of {} and {} rows of {} do not pair up",
            a.format, a.row_len, b.format, b.row_len
        )));
    }
    let k = a.row_len;
    if (row_a + 1) * k > a.elements.len() || (row_b + 1) * k > b.elements.len() {
        return Err(MxDotError::Shape("row index out of range".into()));
    }
    let (ea, eb) = (a.format.element(), b.format.element());
    let block_terms = |blk: usize, terms: &mut Vec<Term>, special: &mut Special| {
        let [sa, ta] = scale_factors(a, row_a, blk);
        let [sb, tb] = scale_factors(b, row_b, blk);
        for i in blk * bs..((blk + 1) * bs).min(k) {
            let p = element_factor(ea, a.elements[row_a * k + i]);
            let q = element_factor(eb, b.elements[row_b * k + i]);
            gather(product(&[p, q, sa, ta, sb, tb]), terms, special);
        }
    };
    let blocks = k.div_ceil(bs);
    let mut flags = Flags::NONE;
    let result = match mode {
        MxDotMode::Exact => {
            let (mut terms, mut special) = (Vec::new(), Special::None);
            gather(c_term(c), &mut terms, &mut special);
            for blk in 0..blocks {
                block_terms(blk, &mut terms, &mut special);
            }
            round_terms(&terms, special, RoundingMode::NearestEven)
        }
        MxDotMode::Fused | MxDotMode::BlockTruncate => {
            let mut acc = c;
            let mut last = None;
            for blk in 0..blocks {
                let (mut terms, mut special) = (Vec::new(), Special::None);
                if mode == MxDotMode::Fused {
                    gather(c_term(acc), &mut terms, &mut special);
                    block_terms(blk, &mut terms, &mut special);
                } else {
                    block_terms(blk, &mut terms, &mut special);
                    let s = round_terms(&terms, special, RoundingMode::TowardZero);
                    flags |= s.flags;
                    terms.clear();
                    special = Special::None;
                    gather(c_term(acc), &mut terms, &mut special);
                    gather(c_term(s.bits as u32), &mut terms, &mut special);
                }
                let r = round_terms(&terms, special, RoundingMode::NearestEven);
                flags |= r.flags;
                acc = r.bits as u32;
                last = Some(r);
            }
            last.unwrap_or(Rounded {
                bits: c as u64,
                flags: Flags::NONE,
                trace: RoundTrace::IDLE,
            })
        }
    };
    Ok(Rounded {
        flags: flags | result.flags,
        ..result
    })
}
