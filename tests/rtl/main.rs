//! Tests of the cycle engine: registers, wires, tracing to VCD and FST, order independence.
//!
//! One test binary for the block (`cargo test --test rtl`); each file below is one
//! subject, and `cargo test --test rtl NAME::` runs one of them.

#[path = "../common/mod.rs"]
mod common;

mod bundle;
mod delay_lines;
mod glob;
mod mem;
mod names;
mod output_file;
mod reg_bank;
mod typed_regs;
mod value;
mod waves;
