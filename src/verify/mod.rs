//! Independent references: decode bit patterns by their own means (host `f32`, the `half`
//! crate, an FP8 table written from the OCP definition) and sum exactly in wide integers.
//! Nothing here calls the `numerics` arithmetic it checks.

pub mod exact;
pub mod gemm_ref;
pub mod measurements;
pub mod nvidia_ref;
