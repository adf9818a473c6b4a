//! `sparse_nibble_0100`: 2:4 sparse mode with every metadata nibble `0b0100` (kept indices
//! (0, 1) of each group of four): a directed case showing that the kept values multiply B
//! rows 0 and 1 of each group, and random FP16/BF16/E4M3 problems (ieee w = 1, 2, 8;
//! fused w = 4), every element checked against `verify::sparse::sparse_reference`
//! ([`crate::tb::sparse::nibble_bench`]).

use crate::tb::Bench;

/// One line for `tcrtl tb list`.
pub const ABOUT: &str = "2:4 sparse, every nibble 0b0100 (indices 0, 1) vs verify::sparse";

/// Runs the testbench.
pub fn run(tb: &mut Bench) -> Result<(), String> {
    crate::tb::sparse::nibble_bench(tb, 0b0100)
}
