//! Tests of the numerics layer: formats, products, the adder, conversions, integer and dot-product steps in every accumulation mode, against host floats, rustc_apfloat, SoftFloat and exact sums.
//!
//! One test binary for the block (`cargo test --test numerics`); each file below is one
//! subject, and `cargo test --test numerics NAME::` runs one of them.

#[path = "../common/mod.rs"]
mod common;

mod add;
mod block_bits;
mod convert;
mod convert_edges;
mod dot_batch;
mod dot_batch_tf32;
mod dot_explain;
mod dot_fp16_rounding;
mod dot_modes;
mod dot_rounding;
mod explain_stages;
mod fixed_lanes;
mod fma64;
mod fma_normal;
mod int;
mod int_rows;
mod products;
mod promote;
mod shift_loss;
mod small_formats;
mod traces;
mod wide_acc;
mod ws_fold;
