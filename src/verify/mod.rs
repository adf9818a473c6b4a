//! Independent references: decode bit patterns by their own means (host floats, the `half`
//! crate, FP8 tables written from the OCP definition), sum exactly in wide integers, round by
//! their own code. Nothing here calls the `numerics` arithmetic it checks; only plain data
//! types (format names, `RoundingMode`, `Flags`) are shared so results compare directly.

pub mod check;
pub mod exact;
pub mod features;
pub mod fp8_table;
pub mod gemm_ref;
pub mod measurements;
pub mod mx_ref;
pub mod nvidia_ref;
pub mod promote_ref;
pub mod sparse;
pub mod tma_ref;
pub mod ulps;
pub mod ws_ref;

pub use check::{check, Check};
