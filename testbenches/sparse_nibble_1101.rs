//! `sparse_nibble_1101`: 2:4 sparse mode with every metadata nibble `0b1101` (kept indices
//! (1, 3) of each group of four): a directed case showing that the kept values multiply B
//! rows 1 and 3 of each group, and random FP16/BF16/E4M3 problems (ieee w = 1, 2, 8;
//! fused w = 4), every element checked against `verify::sparse::sparse_reference`
//! ([`crate::tb::sparse::nibble_bench`]).

use crate::tb::Bench;

/// One line for `tcrtl tb list`.
pub const ABOUT: &str = "2:4 sparse, every nibble 0b1101 (indices 1, 3) vs verify::sparse";

/// Runs the testbench.
pub fn run(tb: &mut Bench) -> Result<(), String> {
    crate::tb::sparse::nibble_bench(tb, 0b1101)
}
