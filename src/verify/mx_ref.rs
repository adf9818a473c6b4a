//! The block-scaled dot-product reference (MX floats, MXINT8, NVFP4) in the `fused` chaining
//! the tensor core implements: per K-block `j`, in order,
//! `c <- RNE32(c + X_A,j X_B,j T_A T_B sum_i P_ij Q_ij)`, the block's sum and its scaling
//! exact.
//!
//! Written apart from `numerics::mx_dot` and the PE's `numerics::mx_block`: elements and
//! scales decode through this module's own tables (the OCP MX v1.0 definitions restated here;
//! FP8 through [`super::fp8_table`]), products are exact host `f64`s summed in big integers by
//! [`super::exact::exact_of_finite`], the scale product is a big-integer multiply, and the one
//! rounding per block is [`super::exact::round_fp32`]. Specials come from IEEE `f64`
//! arithmetic on the same factors (a NaN factor, `0 x Inf`, `+Inf + -Inf` give NaN; the sign
//! of a zero term is the XOR of its factors' signs). Only the block format's name (the enum
//! variant) is read from `numerics`.

use super::exact::{
    as_f64, decode_fp8, exact_of_finite, round_fp32, Decoded, ExactValue, RefRounding,
};
use crate::gemm::MxGemm;
use crate::numerics::mx::BlockFormat;
use num_bigint::{BigInt, BigUint, Sign};

/// Elements per block: 16 for NVFP4, 32 for the MX formats (OCP MX v1.0; NVIDIA's NVFP4).
pub fn block_size(f: BlockFormat) -> usize {
    if f == BlockFormat::NvFp4 {
        16
    } else {
        32
    }
}

/// A sign-magnitude float without infinities or NaN: `exp_bits`, `man_bits`, `bias`
/// (the OCP FP6 and FP4 element encodings).
fn minifloat(code: u64, exp_bits: u32, man_bits: u32, bias: i32) -> f64 {
    let man = (code & ((1 << man_bits) - 1)) as f64;
    let e = ((code >> man_bits) & ((1 << exp_bits) - 1)) as i32;
    let sign = code >> (exp_bits + man_bits) & 1 != 0;
    let scale = 2f64.powi(man_bits as i32);
    let mag = if e == 0 {
        man / scale * 2f64.powi(1 - bias)
    } else {
        (1.0 + man / scale) * 2f64.powi(e - bias)
    };
    if sign {
        -mag
    } else {
        mag
    }
}

/// The value of element code `code` of block format `f`.
pub fn element(f: BlockFormat, code: u64) -> Decoded {
    Decoded::Finite(match f {
        BlockFormat::MxFp8E4M3 => return decode_fp8(true, code as u8),
        BlockFormat::MxFp8E5M2 => return decode_fp8(false, code as u8),
        BlockFormat::MxFp6E2M3 => minifloat(code, 2, 3, 1),
        BlockFormat::MxFp6E3M2 => minifloat(code, 3, 2, 3),
        BlockFormat::MxFp4 | BlockFormat::NvFp4 => minifloat(code, 2, 1, 1),
        BlockFormat::MxInt8 => f64::from(code as u8 as i8) / 64.0,
    })
}

/// The value of block-scale code `code` of block format `f`: E8M0 (`2^(x - 127)`, `0xFF`
/// NaN) for the MX formats, E4M3 for NVFP4.
pub fn scale(f: BlockFormat, code: u64) -> Decoded {
    if f == BlockFormat::NvFp4 {
        decode_fp8(true, code as u8)
    } else if code == 0xFF {
        Decoded::Nan
    } else {
        Decoded::Finite(2f64.powi(code as i32 - 127))
    }
}

/// `|v| = m * 2^e` for a finite `f64` (0 for zero).
fn split(v: f64) -> (BigUint, i64) {
    if v == 0.0 {
        return (BigUint::default(), 0);
    }
    let b = v.to_bits();
    let e = ((b >> 52) & 0x7FF) as i64;
    let f = b & ((1u64 << 52) - 1);
    if e == 0 {
        (BigUint::from(f), -1074)
    } else {
        (BigUint::from(f | (1 << 52)), e - 1075)
    }
}

/// `x + y` for exact finite values.
fn add(x: (bool, BigUint, i64), y: (bool, BigUint, i64)) -> (bool, BigUint, i64) {
    let e = x.2.min(y.2);
    let signed = |(n, m, ex): (bool, BigUint, i64)| {
        let v = BigInt::from(m) << ((ex - e) as usize);
        if n {
            -v
        } else {
            v
        }
    };
    let (sign, mag) = (signed(x) + signed(y)).into_parts();
    (sign == Sign::Minus, mag, e)
}

/// One row of A (`a`, K codes, with its block scales `sa` and tensor scale `ta`) times one
/// column of B (`b`, `sb`, `tb`) plus `c`, chained block by block with one RNE rounding each:
/// the FP32 result's bits.
#[allow(clippy::too_many_arguments)] // two operands, each with its scales, and c
pub fn fused_dot(
    (fa, fb): (BlockFormat, BlockFormat),
    a: &[u64],
    sa: &[u64],
    ta: Option<u32>,
    b: &[u64],
    sb: &[u64],
    tb: Option<u32>,
    c: u32,
) -> u32 {
    let bs = block_size(fa);
    let tensor = |t: Option<u32>| t.map_or(1.0, |bits| f64::from(f32::from_bits(bits)));
    let (ta, tb) = (tensor(ta), tensor(tb));
    let mut acc = c;
    for (j, (ab, bb)) in a.chunks(bs).zip(b.chunks(bs)).enumerate() {
        let (xa, xb) = (as_f64(scale(fa, sa[j])), as_f64(scale(fb, sb[j])));
        let acc_v = f64::from(f32::from_bits(acc));
        // Every factor of every term in f64: the products P Q are exact; the scaled terms
        // serve only for their class and sign (NaN, infinities, signed zeros).
        let products: Vec<f64> = ab
            .iter()
            .zip(bb)
            .map(|(&p, &q)| as_f64(element(fa, p)) * as_f64(element(fb, q)))
            .collect();
        let terms: Vec<f64> = products.iter().map(|p| p * xa * xb * ta * tb).collect();
        let all = || terms.iter().chain(std::iter::once(&acc_v));
        let value = if all().any(|t| t.is_nan())
            || (all().any(|t| *t == f64::INFINITY) && all().any(|t| *t == f64::NEG_INFINITY))
        {
            ExactValue::Nan
        } else if let Some(inf) = all().find(|t| t.is_infinite()) {
            ExactValue::Inf(*inf < 0.0)
        } else {
            // Exact: the block sum (big integers), times the exact scale product.
            let block = match exact_of_finite(&products) {
                ExactValue::Finite(n, m, e) => {
                    let mut mag = m;
                    let mut exp = e;
                    let mut neg = n;
                    for s in [xa, xb, ta, tb] {
                        let (sm, se) = split(s);
                        mag *= sm;
                        exp += se;
                        neg ^= s < 0.0;
                    }
                    (neg, mag, exp)
                }
                _ => (false, BigUint::default(), 0),
            };
            let (an, am) = (acc_v < 0.0, split(acc_v));
            let (neg, mag, exp) = add((an, am.0, am.1), block);
            if mag.bits() == 0 {
                // Zero: -0 only if c and every term are -0 (IEEE, round to nearest).
                let neg_zero = all().all(|t| *t == 0.0 && t.is_sign_negative());
                ExactValue::Finite(neg_zero, mag, 0)
            } else {
                ExactValue::Finite(neg, mag, exp)
            }
        };
        acc = round_fp32(&value, RefRounding::NearestEven);
    }
    acc
}

/// Row `i` of A and column `jn` of B over elements `k0..k1` of K (whole blocks), each with
/// its block scale codes: `(a, sa, b, sb)`.
fn operands(g: &MxGemm, i: usize, jn: usize, (k0, k1): (usize, usize)) -> [Vec<u64>; 4] {
    let bs = block_size(g.spec.a);
    let blocks = g.k / bs;
    let block_range = k0 / bs..k1.div_ceil(bs);
    [
        g.a[i * g.k + k0..i * g.k + k1].to_vec(),
        block_range
            .clone()
            .map(|j| u64::from(g.a_scales[i * blocks + j]))
            .collect(),
        (k0..k1).map(|t| g.b[t * g.n + jn]).collect(),
        block_range
            .map(|j| u64::from(g.b_scales[j * g.n + jn]))
            .collect(),
    ]
}

/// [`fused_dot`] of row `i` and column `jn` over elements `k0..k1` of K, from `c`.
fn fused_range(g: &MxGemm, i: usize, jn: usize, range: (usize, usize), c: u32) -> u32 {
    let [a, sa, b, sb] = operands(g, i, jn, range);
    let (ta, tb) = (g.spec.a_tensor, g.spec.b_tensor);
    fused_dot((g.spec.a, g.spec.b), &a, &sa, ta, &b, &sb, tb, c)
}

/// D of a block-scaled GEMM on the weight-stationary core of `rows` rows of `width`-lane
/// PEs (row-major FP32 bits), in the order `docs/numerics.md` writes ("Weight-stationary
/// order"): each fold of `rows * width` elements of K by [`fused_dot`] from `-0`, then C plus
/// the folds in K order, each by the host's FP32 addition (a NaN sum as the canonical NaN).
pub fn ws_gemm(g: &MxGemm, rows: usize, width: usize) -> Vec<u32> {
    let fold = rows * width;
    let mut d = Vec::with_capacity(g.m * g.n);
    for i in 0..g.m {
        for jn in 0..g.n {
            let mut acc = g.c[i * g.n + jn];
            for f0 in (0..g.k).step_by(fold) {
                let psum = fused_range(g, i, jn, (f0, (f0 + fold).min(g.k)), 0x8000_0000);
                let sum = f32::from_bits(acc) + f32::from_bits(psum);
                acc = if sum.is_nan() {
                    0x7FC0_0000
                } else {
                    sum.to_bits()
                };
            }
            d.push(acc);
        }
    }
    d
}

/// D of a block-scaled GEMM (row-major FP32 bits) by [`fused_dot`].
pub fn gemm(g: &MxGemm) -> Vec<u32> {
    let mut d = Vec::with_capacity(g.m * g.n);
    for i in 0..g.m {
        for jn in 0..g.n {
            d.push(fused_range(g, i, jn, (0, g.k), g.c[i * g.n + jn]));
        }
    }
    d
}
