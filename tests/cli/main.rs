//! Tests of the `tcrtl` command line: every subcommand, bad input, hardening, fuzzing, .npy compatibility.
//!
//! One test binary for the block (`cargo test --test cli`); each file below is one
//! subject, and `cargo test --test cli NAME::` runs one of them.

#[path = "../common/mod.rs"]
mod common;

mod convert;
mod course_labs;
mod dot;
mod dot_all;
mod dot_batch_fp16;
mod dot_batch_tf32;
mod dot_fp16;
mod dot_int;
mod dot_mx;
mod dot_rounding;
mod energy;
mod energy_ws;
mod fuzz_front_door;
mod gemm;
mod gemm_fp16;
mod gemm_int;
mod gemm_is;
mod gemm_mx;
mod gemm_text;
mod golden_writer;
mod gpu_rules;
mod grade;
mod grade_vcd;
mod harden;
mod hostile;
mod hostile_outputs;
mod memh;
mod memory;
mod npy_format;
mod npy_numpy_compat;
mod operand_grammar;
mod output_plan;
mod promote;
mod run_report;
mod saif;
mod sparse;
mod structure;
mod tma;
mod verify_features;
mod wave_filter;
mod workload;
mod workload_energy;
mod workload_operands;
mod workload_shards;
mod workload_slurm;
mod workload_tma;
