//! `tma_swizzle`: the same 2-D box loaded with every swizzle mode (none, 32B, 64B, 128B), each
//! box as wide as the mode's span and 16 rows tall, checked byte for byte against
//! `verify::tma_ref` (16-byte chunk `c` of 128-byte row `r` lands at chunk `c ^ (r & m)`, with
//! m = 0, 1, 3, 7 typed in from docs/memory.md, "Swizzle formula"); plus the formula on chosen
//! addresses. The waveform traces the 128B load.

use crate::hw::memory::{swizzle, ElemType, Swizzle, TensorMap};
use crate::tb::tma::{check_load, doc_mask, pattern};
use crate::tb::Bench;

/// One line for `tcrtl tb list`.
pub const ABOUT: &str = "TMA loads with each swizzle mode (none/32B/64B/128B) vs the chunk-XOR reference";

/// Runs the testbench.
pub fn run(tb: &mut Bench) -> Result<(), String> {
    crate::tb::tma::trace_story(tb);
    let img = pattern(64 * 32 * 2, 13);
    for (mode, span) in [
        (Swizzle::None, 128u32),
        (Swizzle::B32, 32),
        (Swizzle::B64, 64),
        (Swizzle::B128, 128),
    ] {
        let mut m = TensorMap::dense(ElemType::Fp16, 0, &[64, 32], &[span / 2, 16]);
        m.swizzle = mode;
        let trace = (mode == Swizzle::B128).then(|| tb.trace());
        check_load(tb, &format!("swizzle {}", mode.name()), &img, m, [8, 3, 0, 0, 0], 2048, trace.as_ref())?;
        // Chunk 2 of row 5 of a 1024-aligned block lands at chunk 2 ^ (5 & m).
        let a = 1024 + 5 * 128 + 2 * 16 + 3;
        let want = 1024 + 5 * 128 + (2 ^ (5 & doc_mask(mode))) * 16 + 3;
        tb.check_eq(format!("swizzle {}: formula", mode.name()), swizzle(a, mode), want);
    }
    Ok(())
}
