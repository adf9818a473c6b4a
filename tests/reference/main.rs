//! Tests of the independent references and the GPU data: measured tensor-core rows, probe inputs, the FP16-output reference, error sweeps, the Verilog reference under Icarus.
//!
//! One test binary for the block (`cargo test --test reference`); each file below is one
//! subject, and `cargo test --test reference NAME::` runs one of them.

#[path = "../common/mod.rs"]
mod common;

mod course_edition;
mod exact_ref;
mod fasi_directed;
mod features;
mod fp16_tf32_probes;
mod fp8_table;
mod gpu_rows;
mod h200_measurements;
mod mx_ref;
mod nvidia_measurements;
mod nvidia_probes;
mod nvidia_ref;
mod nvidia_ref_unit;
mod par_map;
mod promote_sweep;
mod published_models;
mod sweep_stats;
mod ulps;
mod verify_check;
mod verify_fp16_ref;
mod verify_sweep;
mod verilog_batch;
mod verilog_grading;
mod verilog_lint;
mod verilog_reference;
mod verilog_util;
mod ws_order;
