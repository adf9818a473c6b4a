//! FP64 tensor-core dot products (`DMMA`: PTX `mma.sync.aligned.m8n8k4.f64`, wmma with
//! `double` fragments), as Fasi, Higham, Mikaitis and Pranesh measured them on the A100
//! ("Numerical behavior of NVIDIA tensor cores", PeerJ CS 2021; their test program
//! `tc_test_numerics-A100-binary64.cu`, repository
//! north-numerical-computing/tensor-cores-numerical-behavior): binary64 subnormals are kept in
//! inputs and outputs, products are accumulated in binary64, every rounding is to nearest with
//! ties to even, no extra alignment or carry bits are visible, and the sum is normalised after
//! each addition. A chain of correctly rounded binary64 fused multiply-adds,
//! `c <- RNE64(a_k * b_k + c)`, k ascending, shows exactly these features, and that is the rule
//! here ([`crate::numerics::fma64`]). The order of the chain (k ascending) is our choice: their
//! directed tests do not tell the orders apart.
//!
//! Which presets have FP64 tensor cores: `ampere` (A100, the measured one), `hopper` and `h200`
//! (H100/H200 `DMMA`) and `blackwell` (B200), the last three assumed to keep the A100's rule
//! (not measured by anyone we know). Volta, Turing and Ada have no FP64 tensor cores.

use super::mode::{DotError, Preset};
use crate::numerics::flags::Flags;
use crate::numerics::fma64::fma64;

/// True if `preset`'s GPU has FP64 tensor cores (see the module documentation).
pub const fn has_fp64(preset: Preset) -> bool {
    matches!(
        preset,
        Preset::Ampere | Preset::Hopper | Preset::H200 | Preset::Blackwell
    )
}

/// `D = c + sum_k a_k * b_k` on the FP64 tensor core: binary64 encodings in and out, the
/// chain of RNE fused multiply-adds in k order; the flags are the OR over the chain.
pub fn dmma_dot(a: &[u64], b: &[u64], c: u64) -> Result<(u64, Flags), DotError> {
    if a.len() != b.len() {
        return Err(DotError::LengthMismatch {
            a: a.len(),
            b: b.len(),
        });
    }
    let mut acc = c;
    let mut flags = Flags::NONE;
    for (&x, &y) in a.iter().zip(b) {
        let (d, f) = fma64(x, y, acc);
        acc = d;
        flags |= f;
    }
    Ok((acc, flags))
}

/// [`dmma_dot`] under `preset`: an error for a GPU without FP64 tensor cores.
pub fn dmma_dot_preset(
    preset: Preset,
    a: &[u64],
    b: &[u64],
    c: u64,
) -> Result<(u64, Flags), DotError> {
    if !has_fp64(preset) {
        return Err(DotError::Unsupported {
            preset: preset.name(),
            fmt_a: "fp64",
            fmt_b: "fp64",
        });
    }
    dmma_dot(a, b, c)
}
