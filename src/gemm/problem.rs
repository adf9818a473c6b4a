//! One GEMM problem `D = A x B + C`: shapes, formats, accumulation mode and step width,
//! checked once so that every runner (functional model, clocked tensor core) can trust it.

use super::rng::SplitMix64;
use crate::hw::CoreConfig;
use crate::numerics::dot::{AccMode, DotError, MAX_LANES};
use crate::numerics::flags::Flags;
use crate::numerics::format::{Format, ACC_FORMATS, INPUT_FORMATS};

/// The largest number of elements one matrix of a problem may hold (2^28: 1 GiB of 32-bit
/// words), so that a mistyped dimension is an error rather than an allocation failure.
pub const MAX_ELEMENTS: usize = 1 << 28;

/// The most 4x4 output tiles the tensor core's tile counter holds (`2^24 - 3`).
pub const MAX_TILES: usize = (1 << 24) - 3;

/// The dot-product widths a PE can be built with.
pub const WIDTHS: [usize; 6] = [1, 2, 4, 8, 16, 32];

/// Errors in a problem description.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GemmError {
    /// A dimension is zero.
    #[error("dimension {name} must be at least 1")]
    ZeroDim {
        /// `m`, `n` or `k`.
        name: &'static str,
    },
    /// A matrix holds the wrong number of elements.
    #[error("{matrix} must be {rows} x {cols} ({} elements) but has {len}", rows * cols)]
    Shape {
        /// `A`, `B` or `C`.
        matrix: &'static str,
        /// Expected rows.
        rows: usize,
        /// Expected columns.
        cols: usize,
        /// Elements found.
        len: usize,
    },
    /// The accumulator format is neither FP32 nor FP16.
    #[error("{0} is not an accumulator format (expected fp32 or fp16)")]
    NotAnAccumulator(&'static str),
    /// An element does not fit its format's width.
    #[error("{matrix}[{row}][{col}] = {bits:#x} is not a {format} bit pattern")]
    BitsOutOfRange {
        /// `A`, `B` or `C`.
        matrix: &'static str,
        /// Row.
        row: usize,
        /// Column.
        col: usize,
        /// The offending word.
        bits: u64,
        /// The format's name.
        format: &'static str,
    },
    /// A matrix would hold more than [`MAX_ELEMENTS`] elements.
    #[error("{matrix} would be {rows} x {cols}: more than {max} elements", max = MAX_ELEMENTS)]
    TooLarge {
        /// `A`, `B` or `C`.
        matrix: &'static str,
        /// Rows.
        rows: usize,
        /// Columns.
        cols: usize,
    },
    /// D needs more 4x4 tiles than the tile counter holds ([`MAX_TILES`]).
    #[error("a {m} x {n} D needs {tiles} 4x4 tiles; the tensor core runs at most {max}", max = MAX_TILES)]
    TooManyTiles {
        /// Rows of D.
        m: usize,
        /// Columns of D.
        n: usize,
        /// The 4x4 tiles D needs.
        tiles: usize,
    },
    /// The width is not one a PE can be built with.
    #[error("width {0} is not one of 1, 2, 4, 8, 16, 32")]
    BadWidth(usize),
    /// The format is not a multiplier input format.
    #[error("{0} is not a tensor-core input format (e4m3, e5m2, fp16, bf16)")]
    NotAnInput(&'static str),
    /// The accumulation mode cannot run this configuration.
    #[error(transparent)]
    Dot(#[from] DotError),
}

/// A checked GEMM problem. Matrices are row-major raw bit patterns: `a` is `m x k` in
/// `fmt_a`, `b` is `k x n` in `fmt_b`, `c` is `m x n` FP32 (for [`AccMode::Int`]: A and B
/// in the mode's integer formats, C and D int32 bits).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gemm {
    /// Rows of A, C and D.
    pub m: usize,
    /// Columns of B, C and D.
    pub n: usize,
    /// Inner dimension.
    pub k: usize,
    /// Formats, mode and width.
    pub cfg: CoreConfig,
    /// A, `m x k`, row-major bit patterns.
    pub a: Vec<u64>,
    /// B, `k x n`, row-major bit patterns.
    pub b: Vec<u64>,
    /// C, `m x n`, row-major FP32 bits.
    pub c: Vec<u32>,
}

/// The result of running a GEMM.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GemmOutput {
    /// D, `m x n`, row-major FP32 bits.
    pub d: Vec<u32>,
    /// OR of every element's IEEE flags.
    pub flags: Flags,
}

/// Checks that `m`, `n`, `k` are at least 1 and that no matrix exceeds [`MAX_ELEMENTS`].
pub fn check_dims(m: usize, n: usize, k: usize) -> Result<(), GemmError> {
    for (name, v) in [("m", m), ("n", n), ("k", k)] {
        if v == 0 {
            return Err(GemmError::ZeroDim { name });
        }
    }
    for (matrix, rows, cols) in [("A", m, k), ("B", k, n), ("C", m, n)] {
        if rows.checked_mul(cols).is_none_or(|e| e > MAX_ELEMENTS) {
            return Err(GemmError::TooLarge { matrix, rows, cols });
        }
    }
    Ok(())
}

/// Refuses a problem too large to run before anything is allocated: [`check_dims`], and at
/// most [`MAX_TILES`] 4x4 tiles of D.
pub fn check_size(m: usize, n: usize, k: usize) -> Result<(), GemmError> {
    check_dims(m, n, k)?;
    let tiles = m.div_ceil(4).saturating_mul(n.div_ceil(4));
    if tiles > MAX_TILES {
        return Err(GemmError::TooManyTiles { m, n, tiles });
    }
    Ok(())
}

impl Gemm {
    /// Checks and builds a problem.
    pub fn new(
        m: usize,
        n: usize,
        k: usize,
        cfg: CoreConfig,
        a: Vec<u64>,
        b: Vec<u64>,
        c: Vec<u32>,
    ) -> Result<Gemm, GemmError> {
        check_dims(m, n, k)?;
        if !WIDTHS.contains(&cfg.width) || cfg.width > MAX_LANES {
            return Err(GemmError::BadWidth(cfg.width));
        }
        match cfg.mode {
            // Integers: the formats are the lane containers of the mode's operand formats.
            AccMode::Int(im) => {
                for (f, i) in [(cfg.fmt_a, im.a), (cfg.fmt_b, im.b)] {
                    if f != i.container() {
                        return Err(GemmError::NotAnInput(f.name));
                    }
                }
            }
            _ => {
                for f in [cfg.fmt_a, cfg.fmt_b] {
                    if !INPUT_FORMATS.contains(&f) {
                        return Err(GemmError::NotAnInput(f.name));
                    }
                }
            }
        }
        for (matrix, rows, cols, len) in [
            ("A", m, k, a.len()),
            ("B", k, n, b.len()),
            ("C", m, n, c.len()),
        ] {
            if len != rows * cols {
                return Err(GemmError::Shape {
                    matrix,
                    rows,
                    cols,
                    len,
                });
            }
        }
        if !ACC_FORMATS.contains(&cfg.acc) {
            return Err(GemmError::NotAnAccumulator(cfg.acc.name));
        }
        let c_wide: Vec<u64> = c.iter().map(|&w| u64::from(w)).collect();
        for (matrix, words, cols, fmt) in [
            ("A", &a, k, cfg.fmt_a),
            ("B", &b, n, cfg.fmt_b),
            ("C", &c_wide, n, cfg.acc),
        ] {
            if let Some(i) = words.iter().position(|&w| w & !fmt.mask() != 0) {
                return Err(GemmError::BitsOutOfRange {
                    matrix,
                    row: i / cols,
                    col: i % cols,
                    bits: words[i],
                    format: fmt.name,
                });
            }
        }
        Ok(Gemm {
            m,
            n,
            k,
            cfg,
            a,
            b,
            c,
        })
    }

    /// A reproducible random problem: finite operands whose exponents stay within +-6 of 1
    /// (so sums neither overflow nor vanish), with zeros, subnormals and both signs mixed in;
    /// C likewise in the accumulator format. The same seed gives the same problem everywhere.
    pub fn random(
        m: usize,
        n: usize,
        k: usize,
        cfg: CoreConfig,
        seed: u64,
    ) -> Result<Gemm, GemmError> {
        check_dims(m, n, k)?;
        let mut rng = SplitMix64::new(seed);
        if let AccMode::Int(im) = cfg.mode {
            // Integers: every bit pattern is a value; C any int32.
            let a = (0..m * k).map(|_| rng.next_u64() & im.a.mask()).collect();
            let b = (0..k * n).map(|_| rng.next_u64() & im.b.mask()).collect();
            let c = (0..m * n).map(|_| rng.next_u64() as u32).collect();
            return Gemm::new(m, n, k, cfg, a, b, c);
        }
        let a = (0..m * k)
            .map(|_| random_operand(cfg.fmt_a, &mut rng))
            .collect();
        let b = (0..k * n)
            .map(|_| random_operand(cfg.fmt_b, &mut rng))
            .collect();
        let c = (0..m * n)
            .map(|_| random_operand(cfg.acc, &mut rng) as u32)
            .collect();
        Gemm::new(m, n, k, cfg, a, b, c)
    }

    /// Row `i` of A.
    pub fn a_row(&self, i: usize) -> &[u64] {
        &self.a[i * self.k..(i + 1) * self.k]
    }

    /// Column `j` of B, gathered.
    pub fn b_col(&self, j: usize) -> Vec<u64> {
        (0..self.k).map(|p| self.b[p * self.n + j]).collect()
    }

    /// Useful multiply-accumulates: `m * n * k`.
    pub fn macs(&self) -> u64 {
        (self.m * self.n * self.k) as u64
    }
}

/// One random finite encoding of `fmt`: 1 in 16 a signed zero, 1 in 16 a subnormal, else a
/// normal number with unbiased exponent in -6..=6.
pub fn random_operand(fmt: Format, rng: &mut SplitMix64) -> u64 {
    let sign = rng.next_u64() & 1 == 1;
    let frac = rng.next_u64() & fmt.frac_mask();
    let magnitude = match rng.below(16) {
        0 => 0,
        1 => frac.max(1),
        _ => {
            let e = rng.below(13) as i64 - 6 + fmt.bias as i64;
            let e = e.clamp(1, fmt.exp_field_max() as i64 - 1) as u64;
            let m = (e << fmt.frac_bits) | frac;
            m.min(fmt.max_finite_magnitude())
        }
    };
    fmt.with_sign(magnitude, sign)
}
