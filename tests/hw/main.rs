//! Tests of the clocked tensor core: GEMMs against the functional model and references, timing, waves, evaluation order, testbenches, waveform bytes.
//!
//! One test binary for the block (`cargo test --test hw`); each file below is one
//! subject, and `cargo test --test hw NAME::` runs one of them.

#[path = "../common/mod.rs"]
mod common;

mod array_sizes;
mod d_tag;
mod eval_order;
mod fp16_paths;
mod fp16_tf32;
mod gemm;
mod gemm_dispatch;
mod gemm_int;
mod geometry;
mod is;
mod pe_ctl_lanes;
mod pe_fp_products;
mod pe_int_products;
mod promote;
mod shift_cmd;
mod tb_runner;
mod testbenches;
mod timing;
mod traffic;
mod wave_digests;
mod wave_filter;
mod waves;
mod workload_model;
mod ws;
