//! Teaching operands of a generated problem: problems whose values read as small integers in
//! the waves (1, 2, 3 ... instead of random bits) and whose D is known by hand.
//!
//! - `ones`: every element of A and B is 1, C is 0: every element of D is K.
//! - `iota`: element number e of A (and of B, row-major) is `e mod 8 + 1`, C is 0.
//! - `identity`: A is the M x K identity (1 where row = column, else 0), B is `iota`, C is 0:
//!   row i of D is row i of B (zero for i >= K).
//! - `random`: the seeded random problem ([`Gemm::random`]), the default.
//!
//! The integers 0..=8 are exact in every input format (E4M3, E5M2, FP16, BF16).

use crate::gemm::problem::Gemm;
use crate::hw::CoreConfig;
use crate::numerics::{from_fp32, Format, Overflow, RoundingMode};

/// Operand pattern of a generated problem.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Pattern {
    /// Seeded random operands.
    #[default]
    Random,
    /// A and B all ones, C zero.
    Ones,
    /// A and B count 1..8 in row-major order, C zero.
    Iota,
    /// A the identity, B counting 1..8, C zero.
    Identity,
}

impl Pattern {
    /// Every pattern.
    pub const ALL: [Pattern; 4] = [
        Pattern::Random,
        Pattern::Ones,
        Pattern::Iota,
        Pattern::Identity,
    ];

    /// The pattern's name.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Random => "random",
            Pattern::Ones => "ones",
            Pattern::Iota => "iota",
            Pattern::Identity => "identity",
        }
    }

    /// The pattern called `name` (any case).
    pub fn by_name(name: &str) -> Option<Pattern> {
        Pattern::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(name))
    }
}

/// The encoding of the small integer `v` (0..=8) in `fmt`.
fn small_int(fmt: Format, v: u32) -> Result<u64, String> {
    let r = from_fp32(
        fmt,
        (v as f32).to_bits(),
        RoundingMode::NearestEven,
        Overflow::Ieee,
    );
    if r.flags.inexact || r.flags.overflow {
        return Err(format!("{v} is not exact in {fmt}"));
    }
    Ok(r.bits)
}

/// Builds the `m x n x k` problem of `pattern` on `cfg` (`seed` for [`Pattern::Random`]).
pub fn pattern_problem(
    pattern: Pattern,
    m: usize,
    n: usize,
    k: usize,
    cfg: CoreConfig,
    seed: u64,
) -> Result<Gemm, String> {
    let iota = |fmt: Format, len: usize| -> Result<Vec<u64>, String> {
        (0..len)
            .map(|e| small_int(fmt, (e % 8) as u32 + 1))
            .collect()
    };
    let (a, b) = match pattern {
        Pattern::Random => {
            return Gemm::random(m, n, k, cfg, seed).map_err(|e| e.to_string());
        }
        Pattern::Ones => (
            vec![small_int(cfg.fmt_a, 1)?; m * k],
            vec![small_int(cfg.fmt_b, 1)?; k * n],
        ),
        Pattern::Iota => (iota(cfg.fmt_a, m * k)?, iota(cfg.fmt_b, k * n)?),
        Pattern::Identity => {
            let (zero, one) = (small_int(cfg.fmt_a, 0)?, small_int(cfg.fmt_a, 1)?);
            let a = (0..m * k)
                .map(|e| if e / k == e % k { one } else { zero })
                .collect();
            (a, iota(cfg.fmt_b, k * n)?)
        }
    };
    Gemm::new(m, n, k, cfg, a, b, vec![0; m * n]).map_err(|e| e.to_string())
}
