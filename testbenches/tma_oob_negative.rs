//! `tma_oob_negative`: TMA loads whose boxes start at negative coordinates or run past the end
//! of the tensor (inner starts at 16-byte boundaries, as the GPU requires), with zero and NaN fill, checked byte for byte against `verify::tma_ref`
//! (out-of-bounds elements are filled without a global request; the transaction count is the
//! whole box). Also checks that a box entirely outside issues no global request at all. The
//! waveform traces the (-8, -3) NaN-filled load (watch `tma.state`, `gmem.req_valid`, the fill
//! pieces landing without a response, and `mbar_0.tx`).

use crate::hw::memory::{ElemType, OobFill, TensorMap};
use crate::tb::tma::{check_load, pattern};
use crate::tb::Bench;

/// One line for `tcrtl tb list`.
pub const ABOUT: &str = "TMA loads at negative / past-the-end coordinates, zero and NaN fill, vs verify::tma_ref";

/// Runs the testbench.
pub fn run(tb: &mut Bench) -> Result<(), String> {
    crate::tb::tma::trace_story(tb);
    let img = pattern(40 * 24 * 2, 12);
    let mut m = TensorMap::dense(ElemType::Bf16, 0, &[40, 24], &[16, 8]);
    m.oob_fill = OobFill::Nan;
    let trace = tb.trace();
    let r = check_load(tb, "bf16 nan at (-8,-3)", &img, m, [-8, -3, 0, 0, 0], 0, Some(&trace))?;
    tb.check_eq("(-8,-3): oob elements typed in", r.counters.oob_elements, 3 * 16 + 5 * 8);
    check_load(tb, "bf16 nan at (32,20)", &img, m, [32, 20, 0, 0, 0], 1024, None)?;
    m.oob_fill = OobFill::Zero;
    check_load(tb, "bf16 zero at (-16,21)", &img, m, [-16, 21, 0, 0, 0], 2048, None)?;
    let r = check_load(tb, "bf16 zero far outside", &img, m, [-104, 50, 0, 0, 0], 4096, None)?;
    tb.check_eq("far outside: no global request", r.counters.requests, 0);
    tb.check_eq("far outside: all elements filled", r.counters.oob_elements, 16 * 8);
    let mut m3 = TensorMap::dense(ElemType::Fp32, 0, &[8, 6, 5], &[8, 4, 3]);
    m3.oob_fill = OobFill::Nan;
    check_load(tb, "fp32 3-D at (-4,4,-1)", &img, m3, [-4, 4, -1, 0, 0], 8192, None)?;
    Ok(())
}
