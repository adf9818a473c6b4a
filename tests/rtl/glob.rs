//! Trace globs: which signal paths a pattern selects.

use tensorcore_rtl::rtl::TraceConfig;

/// Whether a trace with the single glob `pattern` records the signal at `path`.
fn selects(pattern: &str, path: &str) -> bool {
    TraceConfig::vcd("unused.vcd").glob(pattern).selects(path)
}

#[test]
fn globs() {
    assert!(selects("mesh.pe_0_*", "tc.mesh.pe_0_1.acc"));
    assert!(!selects("mesh.pe_0_*", "tc.mesh.pe_1_0.acc"));
    assert!(selects("acc", "tc.mesh.pe_1_0.acc"));
    assert!(!selects("ac", "tc.mesh.pe_1_0.acc"));
    assert!(selects("pe_?_0", "tc.mesh.pe_1_0.acc"));
    assert!(selects("*", "tc.x"));
    assert!(selects("tc.mesh.pe_1_0.acc", "tc.mesh.pe_1_0.acc"));
}
