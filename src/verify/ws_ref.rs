//! An independent reference for the weight-stationary order (docs/numerics.md,
//! "Weight-stationary order"), written from that definition and not from
//! `crate::numerics::dot::ws`:
//!
//! - K is cut into folds of `rows * width` elements (the last may be shorter);
//! - each fold's partial sum is this layer's own per-element reference ([`Reference::dot`]:
//!   the chained big-integer roundings of [`super::exact`], [`super::nvidia_ref`]'s block
//!   FMA, or the i64 integer sum) started from the additive identity, the accumulator
//!   format's negative zero (integer 0);
//! - `D = (((C + F_0) + F_1) + ... + F_last)`, each addition done by the host: FP32 by `f32`
//!   addition, FP16 by the `half` crate through `f32`, integers in `i64` then wrapped or
//!   clamped to int32; any NaN becomes the canonical NaN of the format table.
//!
//! The flags of the fold additions come from a second, independent computation (the exact sum
//! of the two operands in big integers, rounded once by [`super::exact`]'s rounding), so the
//! host addition and the big-integer rounding check each other (tests/reference/ws_order.rs).

use super::exact::{
    decode, exact_dot_rounding_acc, exact_of_finite, round_acc_flags, Decoded, RefFlags,
    RefRounding,
};
use super::gemm_ref::Reference;
use crate::gemm::Gemm;
use crate::numerics::format::{Format, FP16, FP32};
use crate::numerics::int::IntOverflow;

/// FP32's negative zero (the sign bit alone): the partial sum entering a column.
pub const FP32_NEG_ZERO: u32 = 0x8000_0000;
/// FP16's negative zero.
pub const FP16_NEG_ZERO: u32 = 0x8000;
/// FP32's canonical NaN, restated from the formats table of docs/numerics.md.
pub const FP32_CANONICAL_NAN: u32 = 0x7FC0_0000;
/// FP16's canonical NaN, restated from the formats table of docs/numerics.md (exponent all
/// ones, the quiet bit, nothing else: `0x7C00 | 0x0200`).
pub const FP16_CANONICAL_NAN: u32 = 0x7E00;

/// The accumulator a problem adds its folds in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WsAcc {
    Fp32,
    Fp16,
    Int(IntOverflow),
}

/// `x + y` in FP32 by the host's `f32` addition (IEEE 754 binary32, round to nearest even:
/// Rust's `+` on `f32`), a NaN result as [`FP32_CANONICAL_NAN`].
pub fn host_add_fp32(x: u32, y: u32) -> u32 {
    let s = f32::from_bits(x) + f32::from_bits(y);
    if s.is_nan() {
        FP32_CANONICAL_NAN
    } else {
        s.to_bits()
    }
}

/// `x + y` in FP16 (low 16 bits of each word) by the `half` crate: both operands widened to
/// `f32` (exact), added in `f32` (one rounding to 24 bits), rounded back with
/// `half::f16::from_f32` (to nearest even). Rounding twice is innocuous here: for a sum of two
/// binary16 values, first rounding to binary32 and then to binary16 gives the correctly rounded
/// binary16 result, because 24 >= 2 * 11 + 2 (the double-rounding theorem for +, -, x, / and
/// square root; sums in FP16's subnormal range are exact in both). A NaN result is
/// [`FP16_CANONICAL_NAN`].
pub fn host_add_fp16(x: u32, y: u32) -> u32 {
    let fx = half::f16::from_bits(x as u16).to_f32();
    let fy = half::f16::from_bits(y as u16).to_f32();
    let s = half::f16::from_f32(fx + fy);
    if s.is_nan() {
        FP16_CANONICAL_NAN
    } else {
        u32::from(s.to_bits())
    }
}

/// Two int32 words added exactly in `i64`, then wrapped modulo 2^32 or clamped to the int32
/// range.
pub fn host_add_int(x: u32, y: u32, overflow: IntOverflow) -> u32 {
    let s = i64::from(x as i32) + i64::from(y as i32);
    let r = match overflow {
        IntOverflow::Wrap => {
            let m = s.rem_euclid(1 << 32);
            if m >= 1 << 31 {
                m - (1 << 32)
            } else {
                m
            }
        }
        IntOverflow::SatFinite => s.clamp(-(1 << 31), (1 << 31) - 1),
    };
    r as u32
}

/// Whether `bits` is a signaling NaN of FP32 or FP16 (widths restated: quiet bit = the top
/// fraction bit).
fn is_signaling(acc: Format, bits: u32) -> bool {
    let (exp_mask, quiet, frac_mask) = if acc == FP16 {
        (0x7C00, 0x0200, 0x03FF)
    } else {
        (0x7F80_0000, 0x0040_0000, 0x007F_FFFF)
    };
    bits & exp_mask == exp_mask && bits & frac_mask != 0 && bits & quiet == 0
}

/// The IEEE flags of `x + y` rounded once to nearest even in `acc` (FP32 or FP16), computed
/// apart from the host addition: invalid for a signaling NaN operand or `+Inf + -Inf`;
/// otherwise the flags of the exact sum's one rounding by [`round_acc_flags`] (an addition
/// never underflows: a sum in the subnormal range is exact). With the bits that rounding
/// gives, which equal the host addition's ([`host_add_fp32`], [`host_add_fp16`]) for every
/// pair.
pub fn fold_add_exact(acc: Format, x: u32, y: u32) -> (u32, RefFlags) {
    let nan = if acc == FP16 {
        FP16_CANONICAL_NAN
    } else {
        FP32_CANONICAL_NAN
    };
    let mut flags = RefFlags::default();
    match (decode(acc, u64::from(x)), decode(acc, u64::from(y))) {
        (Decoded::Nan, _) | (_, Decoded::Nan) => {
            flags.invalid = is_signaling(acc, x) || is_signaling(acc, y);
            (nan, flags)
        }
        (Decoded::Inf(a), Decoded::Inf(b)) if a != b => {
            flags.invalid = true;
            (nan, flags)
        }
        (Decoded::Inf(n), _) | (_, Decoded::Inf(n)) => {
            let sign = if acc == FP16 { 0x8000 } else { 0x8000_0000 };
            let inf = if acc == FP16 { 0x7C00 } else { 0x7F80_0000 };
            (if n { sign | inf } else { inf }, flags)
        }
        (Decoded::Finite(a), Decoded::Finite(b)) => {
            round_acc_flags(&exact_of_finite(&[a, b]), RefRounding::NearestEven, acc)
        }
    }
}

impl Reference {
    /// The accumulator of `g` as the fold adder sees it.
    fn ws_acc(&self, g: &Gemm) -> Result<WsAcc, String> {
        Ok(match self {
            Reference::Int(im, _) => WsAcc::Int(im.overflow),
            _ if g.cfg.acc == FP32 => WsAcc::Fp32,
            _ if g.cfg.acc == FP16 => WsAcc::Fp16,
            _ => return Err(format!("{} is not an accumulator format", g.cfg.acc.name)),
        })
    }

    /// The partial sum that enters the top of a column in the weight-stationary order: the
    /// accumulator format's negative zero ([`FP32_NEG_ZERO`], [`FP16_NEG_ZERO`]), or 0 for
    /// integers. Under round to nearest even `-0 + x = x` for every `x`, `+0` included.
    pub fn ws_identity(&self, g: &Gemm) -> Result<u32, String> {
        Ok(match self.ws_acc(g)? {
            WsAcc::Fp32 => FP32_NEG_ZERO,
            WsAcc::Fp16 => FP16_NEG_ZERO,
            WsAcc::Int(_) => 0,
        })
    }

    /// The accumulator block's addition `x + y` by host arithmetic ([`host_add_fp32`],
    /// [`host_add_fp16`], [`host_add_int`]).
    pub fn ws_fold_add(&self, g: &Gemm, x: u32, y: u32) -> Result<u32, String> {
        Ok(match self.ws_acc(g)? {
            WsAcc::Fp32 => host_add_fp32(x, y),
            WsAcc::Fp16 => host_add_fp16(x, y),
            WsAcc::Int(o) => host_add_int(x, y, o),
        })
    }

    /// Elements of K per fold on an array of `rows` rows with `g`'s width, after checking the
    /// shape the weight-stationary core needs: `rows >= 1`, and for `nvidia` whole blocks
    /// per PE (`width >= n`).
    fn ws_fold(&self, g: &Gemm, rows: usize) -> Result<usize, String> {
        if rows == 0 || g.cfg.width == 0 {
            return Err(format!(
                "a fold needs at least one row and one product per PE (rows {rows}, width {})",
                g.cfg.width
            ));
        }
        if let Reference::Nvidia(p) = self {
            if g.cfg.width < p.n || !g.cfg.width.is_multiple_of(p.n.max(1)) {
                return Err(format!(
                    "nvidia in ws needs whole blocks of {} per PE, not width {}",
                    p.n, g.cfg.width
                ));
            }
        }
        Ok(rows * g.cfg.width)
    }

    /// One element in the weight-stationary order of an array of `rows` rows: each fold of
    /// `rows * width` elements of K through [`Reference::dot`] from [`Reference::ws_identity`],
    /// then `c` plus the folds in K order by [`Reference::ws_fold_add`].
    pub fn ws_dot(
        &self,
        g: &Gemm,
        rows: usize,
        row: &[u64],
        col: &[u64],
        c: u32,
    ) -> Result<u32, String> {
        let fold = self.ws_fold(g, rows)?;
        let identity = self.ws_identity(g)?;
        let mut d = c;
        for (fa, fb) in row.chunks(fold).zip(col.chunks(fold)) {
            let psum = self.dot(g, fa, fb, identity);
            d = self.ws_fold_add(g, d, psum)?;
        }
        Ok(d)
    }

    /// [`Reference::ws_dot`] with the IEEE flags, where this layer's references give them:
    /// `ieee`, `fused` and `exact` (each fold's chained roundings by
    /// [`exact_dot_rounding_acc`], each fold addition by [`fold_add_exact`]); integers raise
    /// none. `None` for `nvidia`, whose reference computes no flags. The bits are computed the
    /// same way (big integers throughout), so they cross-check [`Reference::ws_dot`]'s host
    /// additions.
    pub fn ws_dot_flags(
        &self,
        g: &Gemm,
        rows: usize,
        row: &[u64],
        col: &[u64],
        c: u32,
    ) -> Result<(u32, Option<RefFlags>), String> {
        let fold = self.ws_fold(g, rows)?;
        let identity = self.ws_identity(g)?;
        let step = match self {
            Reference::Ieee => 1,
            Reference::Fused(w) => (*w).max(1),
            Reference::Exact => fold,
            Reference::Int(..) => {
                return Ok((
                    self.ws_dot(g, rows, row, col, c)?,
                    Some(RefFlags::default()),
                ))
            }
            Reference::Nvidia(_) => return Ok((self.ws_dot(g, rows, row, col, c)?, None)),
        };
        let (fa, fb, acc) = (g.cfg.fmt_a, g.cfg.fmt_b, g.cfg.acc);
        let mut d = c;
        let mut flags = RefFlags::default();
        for (ra, rb) in row.chunks(fold).zip(col.chunks(fold)) {
            let mut psum = identity;
            for (sa, sb) in ra.chunks(step).zip(rb.chunks(step)) {
                let (bits, f) =
                    exact_dot_rounding_acc(acc, fa, fb, sa, sb, psum, RefRounding::NearestEven);
                psum = bits;
                flags |= f;
            }
            let (bits, f) = fold_add_exact(acc, d, psum);
            d = bits;
            flags |= f;
        }
        Ok((d, Some(flags)))
    }

    /// The whole of D in the weight-stationary order of an array of `rows` rows, `m x n`
    /// row-major bits of the accumulator format.
    pub fn ws_gemm(&self, g: &Gemm, rows: usize) -> Result<Vec<u32>, String> {
        let cols: Vec<Vec<u64>> = (0..g.n).map(|j| g.b_col(j)).collect();
        let mut d = Vec::with_capacity(g.m * g.n);
        for i in 0..g.m {
            for (j, col) in cols.iter().enumerate() {
                d.push(self.ws_dot(g, rows, g.a_row(i), col, g.c[i * g.n + j])?);
            }
        }
        Ok(d)
    }

    /// [`Reference::ws_gemm`] through [`Reference::ws_dot_flags`]: D and the OR of every
    /// element's flags (`None` for `nvidia`).
    pub fn ws_gemm_flags(
        &self,
        g: &Gemm,
        rows: usize,
    ) -> Result<(Vec<u32>, Option<RefFlags>), String> {
        let cols: Vec<Vec<u64>> = (0..g.n).map(|j| g.b_col(j)).collect();
        let mut d = Vec::with_capacity(g.m * g.n);
        let mut flags = Some(RefFlags::default());
        for i in 0..g.m {
            for (j, col) in cols.iter().enumerate() {
                let (bits, f) = self.ws_dot_flags(g, rows, g.a_row(i), col, g.c[i * g.n + j])?;
                d.push(bits);
                flags = match (flags, f) {
                    (Some(mut all), Some(f)) => {
                        all |= f;
                        Some(all)
                    }
                    _ => None,
                };
            }
        }
        Ok((d, flags))
    }
}
